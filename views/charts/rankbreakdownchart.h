#pragma once

#include "model/tracesession.h"
#include "views/charts/chartdata.h"

#include <QWidget>

class QChart;
class QChartView;
class QLabel;
class QStackedBarSeries;

namespace rankscope {

// Per rank, stacked: compute, communication, memcpy/memset and idle time of the analysis' time
// breakdown (GPU streams, or CPU threads for a rank without GPU lanes). Clicking a bar emits
// rankClicked; the bar of the timeline's selected rank is highlighted.
class RankBreakdownChart : public QWidget {
    Q_OBJECT
public:
    enum SetIndex { ComputeSet, CommSet, MemSet, IdleSet, SetCount };

    explicit RankBreakdownChart(QWidget* parent = nullptr);

    void setSession(SessionPtr session);
    const BreakdownBars& bars() const { return m_bars; }
    // Null when there is nothing to chart (the note says why).
    QStackedBarSeries* series() const { return m_series; }
    QChart* chart() const { return m_chart; }
    QChartView* chartView() const { return m_chartView; }
    QLabel* note() const { return m_note; }
    // Centre of rank slot `index`'s bar in chart-view viewport coordinates (for tests).
    QPoint barCentre(int index) const;
    // The timeline's selected rank (-1: none).
    void setHighlightedRank(int rank);
    int highlightedBar() const; // index into bars(), -1 when none

Q_SIGNALS:
    void rankClicked(int rank);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void style();

    SessionPtr m_session;
    BreakdownBars m_bars;
    int m_highlightRank = -1;
    QLabel* m_note = nullptr;
    QChart* m_chart = nullptr;
    QChartView* m_chartView = nullptr;
    QStackedBarSeries* m_series = nullptr;
};

} // namespace rankscope
