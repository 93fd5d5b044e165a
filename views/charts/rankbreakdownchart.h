#pragma once

#include "model/tracesession.h"
#include "views/charts/chartdata.h"

#include <QFutureWatcher>
#include <QTimer>
#include <QWidget>

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QStackedBarSeries;

namespace rankscope {

// Per rank, stacked: compute, communication, memcpy/memset and idle time (GPU streams, or CPU
// threads for a rank without GPU lanes), over the whole run (the analysis' breakdown) or over
// the window visible on the timeline, computed off the GUI thread once the view stops moving.
// Clicking a bar emits rankClicked; the bar of the timeline's selected rank is highlighted.
class RankBreakdownChart : public QWidget {
    Q_OBJECT
public:
    enum SetIndex { ComputeSet, CommSet, MemSet, IdleSet, SetCount };
    enum Scope { WholeRun, VisibleWindow };
    // Pans and zooms come as bursts of range changes: the window is computed once they pause.
    static constexpr int kWindowDelayMs = 120;

    explicit RankBreakdownChart(QWidget* parent = nullptr);

    void setSession(SessionPtr session);
    // The timeline's visible range [startNs, endNs) on `clock`.
    void setVisibleWindow(std::int64_t startNs, std::int64_t endNs, const TimelineClock& clock);
    void setScope(Scope scope);
    Scope scope() const { return m_scope; }
    QComboBox* scopeChoice() const { return m_scopeChoice; }
    // A window breakdown is waiting for the view to pause or being computed.
    bool isUpdating() const;
    // The timeline's selected rank (-1: none).
    void setHighlightedRank(int rank);
    int highlightedBar() const; // index into bars(), -1 when none
    const BreakdownBars& bars() const { return m_bars; }
    // Null when there is nothing to chart (the note says why).
    QStackedBarSeries* series() const { return m_series; }
    QChart* chart() const { return m_chart; }
    QChartView* chartView() const { return m_chartView; }
    QLabel* note() const { return m_note; }
    // Centre of rank slot `index`'s bar in chart-view viewport coordinates (for tests).
    QPoint barCentre(int index) const;

Q_SIGNALS:
    void rankClicked(int rank);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void style();
    void requestWindow();
    void startWindow();
    void windowFinished();

    SessionPtr m_session;
    BreakdownBars m_bars;
    Scope m_scope = WholeRun;
    std::int64_t m_windowStartNs = 0, m_windowEndNs = 0;
    TimelineClock m_clock;
    int m_highlightRank = -1;
    // The window breakdown: m_request counts the windows asked for, m_computing is the one the
    // running (or last) computation answers; a stale answer is dropped and the current asked.
    // m_awaitingResult runs from starting a computation to handling its finished signal: the
    // watcher's isRunning() turns false on the worker thread before that signal is delivered.
    std::vector<RankTimeBreakdown> m_windowBreakdown;
    quint64 m_request = 0, m_computing = 0;
    bool m_awaitingResult = false;
    QTimer m_delay;
    QFutureWatcher<std::vector<RankTimeBreakdown>> m_watcher;
    QComboBox* m_scopeChoice = nullptr;
    QLabel* m_note = nullptr;
    QChart* m_chart = nullptr;
    QChartView* m_chartView = nullptr;
    QStackedBarSeries* m_series = nullptr;
};

} // namespace rankscope
