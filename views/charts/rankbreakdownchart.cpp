#include "views/charts/rankbreakdownchart.h"

#include "views/charts/chartstyle.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QLabel>
#include <QLegend>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>
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
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("breakdownNote"));
    m_note->setWordWrap(true);
    m_note->setContentsMargins(6, 4, 6, 4);
    m_chart = new QChart;
    m_chart->legend()->setAlignment(Qt::AlignRight); // the pane is wider than tall
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chartView = new QChartView(m_chart, this);
    m_chartView->setObjectName(QStringLiteral("breakdownChart"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumHeight(fontMetrics().height() * 13);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_note);
    layout->addWidget(m_chartView, 1);
    rebuild();
}

void RankBreakdownChart::setSession(SessionPtr session)
{
    m_session = std::move(session);
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

void RankBreakdownChart::rebuild()
{
    m_chart->removeAllSeries(); // deletes the series and its sets
    m_series = nullptr;
    for (QAbstractAxis* axis : m_chart->axes()) {
        m_chart->removeAxis(axis);
        delete axis;
    }
    m_bars = m_session ? ChartData::breakdown(m_session->analysis.breakdown) : BreakdownBars{};
    if (!m_session) {
        m_note->setText(tr("Open a trace folder to see where each rank's time went."));
        m_chartView->hide();
        return;
    }
    if (m_bars.ranks.isEmpty()) {
        m_note->setText(m_session->events.lanes.empty()
                            ? tr("No trace events in this folder, so there is no time to break "
                                 "down (logs only?).")
                            : tr("No analysis: the time breakdown was not computed for this "
                                 "folder."));
        m_chartView->hide();
        return;
    }
    QStringList cpuRanks;
    for (qsizetype i = 0; i < m_bars.ranks.size(); ++i)
        if (!m_bars.gpu[i]) cpuRanks << QString::number(m_bars.ranks[i]);
    if (m_bars.allGpu())
        m_note->setText(tr("GPU stream time per rank (%1), each over its own first to last "
                           "event; communication hidden under compute counts in both. Click "
                           "a bar to show the rank.")
                            .arg(m_bars.unit.name));
    else if (m_bars.noGpu())
        m_note->setText(tr("This folder has no GPU lanes: CPU thread time per rank (%1), each "
                           "over its own first to last event. Click a bar to show the rank.")
                            .arg(m_bars.unit.name));
    else
        m_note->setText(tr("GPU stream time per rank (%1); rank(s) %2 have no GPU lanes and "
                           "show CPU thread time. Click a bar to show the rank.")
                            .arg(m_bars.unit.name, cpuRanks.join(QStringLiteral(", "))));

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
        labels << QString::number(r);
    categories->append(labels);
    categories->setTitleText(tr("rank"));
    categories->setTruncateLabels(false);
    auto* axis = new QValueAxis;
    axis->setRange(0, maxTotal > 0 ? maxTotal * 1.05 : 1.0);
    axis->applyNiceNumbers();
    axis->setTitleText(m_bars.unit.name);
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
