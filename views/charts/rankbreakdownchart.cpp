#include "views/charts/rankbreakdownchart.h"

#include "model/analysis/timebreakdown.h"
#include "views/charts/chartstyle.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent>
#include <algorithm>

namespace rankscope {

namespace {

// The timeline's hue families: compute blue, communication red-orange, memory green; idle is
// a neutral grey that reads on light and dark palettes.
const QList<QColor> kSetColors = {QColor(70, 120, 200), QColor(225, 100, 50), QColor(80, 165, 90),
                                  QColor(175, 175, 180)};

} // namespace

RankBreakdownChart::RankBreakdownChart(QWidget* parent) : QWidget(parent)
{
    m_scopeChoice = new QComboBox(this);
    m_scopeChoice->setObjectName(QStringLiteral("breakdownScope"));
    m_scopeChoice->addItem(tr("Whole run"));
    m_scopeChoice->addItem(tr("Visible window"));
    m_scopeChoice->setToolTip(tr("Break down each rank's whole trace, or only the time range "
                                 "the timeline shows (zoom into a stall to see what each rank "
                                 "did there)"));
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("breakdownNote"));
    m_note->setWordWrap(true);
    m_chart = new QChart;
    m_chart->legend()->setAlignment(Qt::AlignRight); // the pane is wider than tall
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chartView = new QChartView(m_chart, this);
    m_chartView->setObjectName(QStringLiteral("breakdownChart"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    auto* top = new QHBoxLayout;
    top->setContentsMargins(6, 4, 6, 4);
    top->addWidget(m_scopeChoice, 0, Qt::AlignTop);
    top->addWidget(m_note, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(top);
    layout->addWidget(m_chartView, 1);
    m_delay.setSingleShot(true);
    m_delay.setInterval(kWindowDelayMs);
    connect(&m_delay, &QTimer::timeout, this, &RankBreakdownChart::startWindow);
    connect(&m_watcher, &QFutureWatcher<std::vector<RankTimeBreakdown>>::finished, this,
            &RankBreakdownChart::windowFinished);
    connect(m_scopeChoice, &QComboBox::currentIndexChanged, this,
            [this](int index) { setScope(Scope(index)); });
    rebuild();
}

void RankBreakdownChart::setVisibleWindow(std::int64_t startNs, std::int64_t endNs,
                                          const TimelineClock& clock)
{
    if (startNs == m_windowStartNs && endNs == m_windowEndNs && clock == m_clock) return;
    m_windowStartNs = startNs;
    m_windowEndNs = endNs;
    m_clock = clock;
    if (m_scope == VisibleWindow) requestWindow();
}

void RankBreakdownChart::setScope(Scope scope)
{
    if (scope == m_scope) return;
    m_scope = scope;
    m_scopeChoice->setCurrentIndex(int(scope));
    if (scope == VisibleWindow)
        requestWindow();
    else
        rebuild();
}

bool RankBreakdownChart::isUpdating() const
{
    return m_scope == VisibleWindow && (m_delay.isActive() || m_awaitingResult);
}

void RankBreakdownChart::requestWindow()
{
    ++m_request;
    if (m_session && !m_session->events.lanes.empty())
        m_note->setText(tr("Breaking down the visible window…"));
    m_delay.start();
}

void RankBreakdownChart::startWindow()
{
    if (m_awaitingResult) return; // windowFinished asks again
    m_computing = m_request;
    if (!m_session) {
        m_windowBreakdown.clear();
        rebuild();
        return;
    }
    m_awaitingResult = true;
    // The task holds the session, so closing the folder meanwhile does not free its events.
    m_watcher.setFuture(QtConcurrent::run(
        [session = m_session, t0 = m_windowStartNs, t1 = m_windowEndNs, clock = m_clock] {
            return TimeBreakdown::computeWindow(session->events, t0, t1, clock.offsetNs);
        }));
}

void RankBreakdownChart::windowFinished()
{
    m_awaitingResult = false;
    if (m_computing != m_request) {
        if (!m_delay.isActive()) startWindow();
        return;
    }
    m_windowBreakdown = m_watcher.result();
    rebuild();
}

void RankBreakdownChart::setHighlightedRank(int rank)
{
    m_highlightRank = rank;
    style();
}

int RankBreakdownChart::highlightedBar() const
{
    return m_highlightRank >= 0 ? int(m_bars.ranks.indexOf(m_highlightRank)) : -1;
}

void RankBreakdownChart::setSession(SessionPtr session)
{
    m_session = std::move(session);
    m_windowBreakdown.clear();
    if (m_scope == VisibleWindow)
        requestWindow();
    else
        rebuild();
}

void RankBreakdownChart::rebuild()
{
    m_chart->removeAllSeries(); // deletes the series and its sets
    m_series = nullptr;
    for (QAbstractAxis* axis : m_chart->axes()) {
        m_chart->removeAxis(axis);
        delete axis;
    }
    const bool window = m_scope == VisibleWindow;
    m_bars = !m_session ? BreakdownBars{}
             : window   ? ChartData::breakdown(m_windowBreakdown)
                        : ChartData::breakdown(m_session->analysis.breakdown);
    if (!m_session) {
        m_note->setText(tr("Open a trace folder to see where each rank's time went."));
        m_chartView->hide();
        return;
    }
    if (m_bars.ranks.isEmpty()) {
        // A window breakdown measures every rank with events, so nothing means no events.
        m_note->setText(m_session->events.lanes.empty() || window
                            ? tr("No trace events in this folder, so there is no time to break "
                                 "down (logs only?).")
                            : tr("No analysis: the time breakdown was not computed for this "
                                 "folder."));
        m_chartView->hide();
        return;
    }
    QStringList cpuRanks, emptyRanks;
    for (qsizetype i = 0; i < m_bars.ranks.size(); ++i) {
        if (!m_bars.gpu[i]) cpuRanks << QString::number(m_bars.ranks[i]);
        if (m_bars.compute[i] + m_bars.comm[i] + m_bars.mem[i] + m_bars.idle[i] <= 0)
            emptyRanks << QString::number(m_bars.ranks[i]);
    }
    // In a window every rank is measured over the same range of the timeline's clock, so the
    // clock is named; over the whole run each rank has its own span and no clock matters.
    const QString over =
        window
            ? tr("over the visible window (%1 on %2)")
                  .arg(ZoomState::formatDuration(m_windowEndNs - m_windowStartNs), m_clock.name())
            : tr("each over its own first to last event");
    if (m_bars.allGpu())
        m_note->setText(tr("GPU stream time per rank (%1), %2; communication hidden under "
                           "compute counts in both. Click a bar to show the rank.")
                            .arg(m_bars.unit.name, over));
    else if (m_bars.noGpu())
        m_note->setText(tr("This folder has no GPU lanes: CPU thread time per rank (%1), %2. "
                           "Click a bar to show the rank.")
                            .arg(m_bars.unit.name, over));
    else
        m_note->setText((cpuRanks.size() == 1
                             ? tr("GPU stream time per rank (%1), %2; rank %3 has no GPU lanes "
                                  "and shows CPU thread time. Click a bar to show the rank.")
                             : tr("GPU stream time per rank (%1), %2; ranks %3 have no GPU lanes "
                                  "and show CPU thread time. Click a bar to show the rank."))
                            .arg(m_bars.unit.name, over, cpuRanks.join(QStringLiteral(", "))));
    // A rank with only annotations (a hung rank often is one) would be a silent gap.
    if (!emptyRanks.isEmpty())
        m_note->setText(m_note->text() +
                        (emptyRanks.size() == 1
                             ? tr(" Rank %1: no compute, communication or memcpy event in the "
                                  "trace, so no bar.")
                             : tr(" Ranks %1: no compute, communication or memcpy event in the "
                                  "trace, so no bar."))
                            .arg(emptyRanks.join(QStringLiteral(", "))));

    const QString names[SetCount] = {tr("Compute"), tr("Communication"), tr("Memcpy/memset"),
                                     tr("Idle")};
    const QList<double>* values[SetCount] = {&m_bars.compute, &m_bars.comm, &m_bars.mem,
                                             &m_bars.idle};
    m_series = new QStackedBarSeries;
    double maxTotal = 0;
    for (qsizetype i = 0; i < m_bars.ranks.size(); ++i)
        maxTotal =
            std::max(maxTotal, m_bars.compute[i] + m_bars.comm[i] + m_bars.mem[i] + m_bars.idle[i]);
    for (int s = 0; s < SetCount; ++s) {
        auto* set = new QBarSet(names[s]);
        QList<qreal> v;
        v.reserve(values[s]->size());
        for (double x : *values[s])
            v.append(x);
        set->append(v);
        m_series->append(set);
    }
    m_series->setBarWidth(0.8);
    m_chart->addSeries(m_series);
    auto* categories = new QBarCategoryAxis;
    QStringList labels;
    for (int r : std::as_const(m_bars.ranks))
        labels << (emptyRanks.contains(QString::number(r)) ? tr("%1 (none)").arg(r)
                                                           : QString::number(r));
    categories->append(labels);
    categories->setTitleText(tr("rank"));
    categories->setTruncateLabels(false);
    QValueAxis* axis = barValueAxis(maxTotal, m_bars.unit.name);
    m_chart->addAxis(categories, Qt::AlignBottom);
    m_chart->addAxis(axis, Qt::AlignLeft);
    m_series->attachAxis(categories);
    m_series->attachAxis(axis);
    connect(m_series, &QStackedBarSeries::clicked, this, [this](int index, QBarSet*) {
        if (index >= 0 && index < m_bars.ranks.size()) Q_EMIT rankClicked(m_bars.ranks[index]);
    });
    connect(m_series, &QStackedBarSeries::hovered, this, [this](bool on, int index, QBarSet*) {
        if (!on || index < 0 || index >= m_bars.ranks.size()) {
            m_chartView->setToolTip({});
            return;
        }
        const QString u = m_bars.unit.name;
        m_chartView->setToolTip(
            tr("Rank %1 (%2)\ncompute %3 %8\ncommunication %4 %8 (%5 %8 hidden under "
               "compute)\nmemcpy/memset %6 %8\nidle %7 %8")
                .arg(m_bars.ranks[index])
                .arg(m_bars.gpu[index] ? tr("GPU streams") : tr("CPU threads"))
                .arg(m_bars.compute[index], 0, 'f', 3)
                .arg(m_bars.comm[index], 0, 'f', 3)
                .arg(m_bars.overlap[index], 0, 'f', 3)
                .arg(m_bars.mem[index], 0, 'f', 3)
                .arg(m_bars.idle[index], 0, 'f', 3)
                .arg(u));
    });
    m_chartView->show();
    style();
}

QPoint RankBreakdownChart::barCentre(int index) const
{
    if (!m_series || index < 0 || index >= m_bars.ranks.size()) return {};
    double total = 0;
    for (QBarSet* set : m_series->barSets())
        total += set->at(index);
    const QPointF scene =
        m_chart->mapToScene(m_chart->mapToPosition(QPointF(index, total / 2), m_series));
    return m_chartView->mapFromScene(scene);
}

void RankBreakdownChart::style()
{
    const QPalette pal = palette();
    applyChartPalette(m_chart, m_chartView, pal);
    styleBarSets(m_series, kSetColors, highlightedBar(), pal);
}

void RankBreakdownChart::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) style();
    QWidget::changeEvent(event);
}

} // namespace rankscope
