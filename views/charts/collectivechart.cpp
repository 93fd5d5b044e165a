#include "views/charts/collectivechart.h"

#include "model/zoomstate.h"
#include "views/charts/chartstyle.h"
#include "views/timeline/timelinecolors.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QSignalBlocker>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>

namespace rankscope {

namespace {

const QColor kDurationColor(225, 100, 50);

} // namespace

CollectiveChart::CollectiveChart(QWidget* parent) : QWidget(parent)
{
    m_choice = new QComboBox(this);
    m_choice->setObjectName(QStringLiteral("collectiveChoice"));
    m_choice->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("collectiveNote"));
    m_note->setWordWrap(true);
    m_chart = new QChart;
    m_chart->legend()->setAlignment(Qt::AlignRight); // the pane is wider than tall
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chartView = new QChartView(m_chart, this);
    m_chartView->setObjectName(QStringLiteral("collectiveChart"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    auto* top = new QHBoxLayout;
    top->setContentsMargins(6, 4, 6, 2);
    top->addWidget(new QLabel(tr("Collective:"), this));
    top->addWidget(m_choice);
    top->addStretch(1);
    // Under the choice, across the pane: beside it the three sentences wrapped into a column
    // tall enough to push the chart's axis out of a 1280x800 window.
    m_note->setContentsMargins(6, 0, 6, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(top);
    layout->addWidget(m_note);
    layout->addWidget(m_chartView, 1);
    connect(m_choice, &QComboBox::currentIndexChanged, this, &CollectiveChart::showChoice);
    setSession({});
}

void CollectiveChart::setSession(SessionPtr session)
{
    m_session = std::move(session);
    m_bars = {};
    reloadChoices();
}

void CollectiveChart::reloadChoices()
{
    m_hasSelectedEntry = false;
    m_choices = m_session ? ChartData::slowestCollectives(*m_session, kSlowestCount, m_clock)
                          : std::vector<CollectiveBars>{};
    {
        const QSignalBlocker quiet(m_choice);
        m_choice->clear();
        for (const CollectiveBars& b : m_choices)
            m_choice->addItem(tr("%1 — %2").arg(b.title, ZoomState::formatDuration(b.spanNs)));
    }
    m_choice->setEnabled(!m_choices.empty());
    if (!m_choices.empty()) {
        showChoice(0);
        return;
    }
    clearChart();
    if (!m_session)
        m_note->setText(tr("Open a trace folder to compare ranks in a collective."));
    else if (m_session->events.collectives.empty())
        m_note->setText(tr("No collectives in this folder's traces (no NCCL/gloo kernels, "
                           "c10d calls or Flight Recorder entries)."));
    else
        m_note->setText(tr("No analysis: the collectives were not matched across ranks, so "
                           "there is nothing to compare."));
}

void CollectiveChart::setClock(const TimelineClock& clock)
{
    if (clock == m_clock) return;
    m_clock = clock;
    const int group = m_bars.group, index = m_bars.index;
    reloadChoices();
    if (group >= 0) showCollective(group, index);
}

bool CollectiveChart::showRecord(std::size_t record)
{
    if (!m_session) return false;
    const auto found = ChartData::findCollective(m_session->analysis, record);
    if (!found) return false;
    showCollective(found->first, found->second);
    return true;
}

void CollectiveChart::showCollective(int group, int index)
{
    // Already shown (e.g. the click on its bar selected it on the timeline): keep the series,
    // whose signal may still be on the stack.
    if (m_bars.group == group && m_bars.index == index) return;
    for (std::size_t i = 0; i < m_choices.size(); ++i)
        if (m_choices[i].group == group && m_choices[i].index == index) {
            m_choice->setCurrentIndex(int(i)); // plots through showChoice when it changes
            if (m_bars.group != group || m_bars.index != index) showChoice(int(i));
            return;
        }
    // Not among the slowest: list it first, as the timeline's selection.
    CollectiveBars bars = ChartData::collective(*m_session, group, index, m_clock);
    const QSignalBlocker quiet(m_choice);
    if (m_hasSelectedEntry) {
        m_choices.erase(m_choices.begin());
        m_choice->removeItem(0);
    }
    m_hasSelectedEntry = true;
    m_choices.insert(m_choices.begin(), bars);
    m_choice->insertItem(
        0, tr("%1 — %2 (selected)").arg(bars.title, ZoomState::formatDuration(bars.spanNs)));
    m_choice->setCurrentIndex(0);
    m_choice->setEnabled(true);
    showChoice(0);
}

void CollectiveChart::setHighlight(int rank, int record)
{
    m_highlightRank = rank;
    m_highlightRecord = record;
    style();
}

int CollectiveChart::highlightedBar() const
{
    if (m_highlightRecord >= 0) {
        const qsizetype i = m_bars.records.indexOf(m_highlightRecord);
        if (i >= 0) return int(i);
    }
    return m_highlightRank >= 0 ? int(m_bars.ranks.indexOf(m_highlightRank)) : -1;
}

void CollectiveChart::showChoice(int index)
{
    if (index < 0 || std::size_t(index) >= m_choices.size()) return;
    plot(m_choices[std::size_t(index)]);
}

void CollectiveChart::clearChart()
{
    m_chart->removeAllSeries();
    m_series = nullptr;
    for (QAbstractAxis* axis : m_chart->axes()) {
        m_chart->removeAxis(axis);
        delete axis;
    }
    m_bars = {};
    m_chartView->hide();
}

void CollectiveChart::plot(const CollectiveBars& bars)
{
    clearChart();
    m_bars = bars;
    QStringList missing;
    for (qsizetype i = 0; i < bars.ranks.size(); ++i)
        if (bars.records[i] < 0) missing << QString::number(bars.ranks[i]);
    // A rank that never arrived is the one the others wait for; the latest arrival among the
    // rest matters only after it.
    QString note =
        missing.isEmpty()
            ? tr("%1 from the first rank's arrival to the last exit; rank %2 arrived "
                 "last.")
                  .arg(ZoomState::formatDuration(bars.spanNs))
                  .arg(bars.lastArrivingRank)
            : (missing.size() == 1
                   ? tr("Rank %1 never arrived (no record of it); the others spent up to "
                        "%2 in it. Of those that arrived, rank %3 was last.")
                   : tr("Ranks %1 never arrived (no record of them); the others spent up to "
                        "%2 in it. Of those that arrived, rank %3 was last."))
                  .arg(missing.join(QStringLiteral(", ")), ZoomState::formatDuration(bars.spanNs))
                  .arg(bars.lastArrivingRank);
    // On raw timestamps the arrivals mix the ranks' clocks: say so, as the timeline does.
    note += bars.clock.aligned ? tr(" Times on aligned clocks.")
                               : tr(" Times are raw timestamps: the arrival order includes the "
                                    "ranks' clock offsets.");
    m_note->setText(note);
    m_series = new QStackedBarSeries;
    auto* arrival = new QBarSet(tr("Arrived after the first rank"));
    auto* duration = new QBarSet(tr("Inside (enter → exit)"));
    QList<qreal> a, d;
    double maxTotal = 0;
    for (qsizetype i = 0; i < bars.ranks.size(); ++i) {
        a.append(bars.arrival[i]);
        d.append(bars.duration[i]);
        maxTotal = std::max(maxTotal, bars.arrival[i] + bars.duration[i]);
    }
    arrival->append(a);
    duration->append(d);
    m_series->append(arrival);
    m_series->append(duration);
    m_series->setBarWidth(0.8);
    m_chart->addSeries(m_series);
    auto* categories = new QBarCategoryAxis;
    QStringList labels;
    for (qsizetype i = 0; i < bars.ranks.size(); ++i)
        labels << (bars.records[i] < 0 ? tr("%1 (none)").arg(bars.ranks[i])
                                       : QString::number(bars.ranks[i]));
    categories->append(labels);
    categories->setTitleText(tr("rank"));
    categories->setTruncateLabels(false);
    QValueAxis* axis =
        barValueAxis(maxTotal, tr("%1 (%2)").arg(bars.unit.name, bars.clock.shortName()));
    m_chart->addAxis(categories, Qt::AlignBottom);
    m_chart->addAxis(axis, Qt::AlignLeft);
    m_series->attachAxis(categories);
    m_series->attachAxis(axis);
    connect(m_series, &QStackedBarSeries::clicked, this, [this](int index, QBarSet*) {
        if (index >= 0 && index < m_bars.ranks.size())
            Q_EMIT collectiveClicked(m_bars.ranks[index], m_bars.records[index]);
    });
    connect(m_series, &QStackedBarSeries::hovered, this, [this](bool on, int index, QBarSet*) {
        if (!on || index < 0 || index >= m_bars.ranks.size()) {
            m_chartView->setToolTip({});
            return;
        }
        m_chartView->setToolTip(tr("Rank %1: arrived %2 %4 after the first, inside %3 %4")
                                    .arg(m_bars.ranks[index])
                                    .arg(m_bars.arrival[index], 0, 'f', 3)
                                    .arg(m_bars.duration[index], 0, 'f', 3)
                                    .arg(m_bars.unit.name));
    });
    m_chartView->show();
    style();
}

QPoint CollectiveChart::barCentre(int index) const
{
    if (!m_series || index < 0 || index >= m_bars.ranks.size()) return {};
    const double total = m_bars.arrival[index] + m_bars.duration[index];
    const QPointF scene =
        m_chart->mapToScene(m_chart->mapToPosition(QPointF(index, total / 2), m_series));
    return m_chartView->mapFromScene(scene);
}

void CollectiveChart::style()
{
    const QPalette pal = palette();
    applyChartPalette(m_chart, m_chartView, pal);
    styleBarSets(m_series, {timelinecolors::kArrivalSkew, kDurationColor}, highlightedBar(), pal);
}

void CollectiveChart::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) style();
    QWidget::changeEvent(event);
}

} // namespace rankscope
