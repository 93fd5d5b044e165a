#pragma once

#include "model/tracesession.h"
#include "views/charts/chartdata.h"

#include <QWidget>

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QStackedBarSeries;

namespace rankscope {

// One matched collective by member rank, stacked: how long after the first rank each rank
// arrived, then how long it spent inside, on the timeline's clock. A straggler shows as the tall
// first segment (others wait for it in their second). The choice lists the slowest matched
// collectives and the one selected on the timeline. Clicking a bar emits collectiveClicked; the
// bar of the timeline's selection is highlighted.
class CollectiveChart : public QWidget {
    Q_OBJECT
public:
    static constexpr int kSlowestCount = 20;
    enum SetIndex { ArrivalSet, DurationSet, SetCount };

    explicit CollectiveChart(QWidget* parent = nullptr);

    void setSession(SessionPtr session);
    // Shows the matched collective holding store record `record`; false when the analysis
    // matched none.
    bool showRecord(std::size_t record);
    // Times follow the timeline's clock: the slowest are ranked again on it, and the collective
    // shown stays.
    void setClock(const TimelineClock& clock);
    const TimelineClock& clock() const { return m_clock; }
    // The timeline's selection: the bar of store record `record` when the collective shown
    // holds it, else the bar of `rank` (-1 for either: none).
    void setHighlight(int rank, int record);
    int highlightedBar() const; // index into bars(), -1 when none
    const CollectiveBars& bars() const { return m_bars; }
    QStackedBarSeries* series() const { return m_series; } // null when nothing is shown
    QComboBox* choice() const { return m_choice; }
    QLabel* note() const { return m_note; }
    QChartView* chartView() const { return m_chartView; }
    QPoint barCentre(int index) const; // chart-view viewport coordinates (for tests)

Q_SIGNALS:
    // `record` is the index into events.collectives, -1 when that rank has no record of it.
    void collectiveClicked(int rank, int record);

protected:
    void changeEvent(QEvent* event) override;

private:
    void reloadChoices();
    // Shows matched collective (group, index), listing it first when it is not a slowest one.
    void showCollective(int group, int index);
    void showChoice(int index);
    void plot(const CollectiveBars& bars);
    void clearChart();
    void style();

    SessionPtr m_session;
    TimelineClock m_clock;
    int m_highlightRank = -1;
    int m_highlightRecord = -1;
    std::vector<CollectiveBars> m_choices;
    CollectiveBars m_bars;
    QComboBox* m_choice = nullptr;
    QLabel* m_note = nullptr;
    QChart* m_chart = nullptr;
    QChartView* m_chartView = nullptr;
    QStackedBarSeries* m_series = nullptr;
    bool m_hasSelectedEntry = false; // m_choices[0] is the timeline's selection, not a slowest
};

} // namespace rankscope
