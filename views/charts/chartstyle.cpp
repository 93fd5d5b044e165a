#include "views/charts/chartstyle.h"

#include <QAbstractAxis>
#include <QAbstractBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QLegend>
#include <QPalette>
#include <QValueAxis>

namespace rankscope {

void applyChartPalette(QChart* chart, QChartView* view, const QPalette& pal)
{
    chart->setBackgroundBrush(pal.base());
    chart->setTitleBrush(pal.text());
    chart->legend()->setLabelBrush(pal.text());
    for (QAbstractAxis* axis : chart->axes()) {
        axis->setLabelsBrush(pal.text());
        axis->setTitleBrush(pal.text());
        axis->setLinePenColor(pal.color(QPalette::Mid));
        axis->setGridLineColor(pal.color(QPalette::Midlight));
    }
    view->setBackgroundBrush(pal.base());
}

QColor highlightedBarColor(const QColor& color, const QPalette& pal)
{
    return pal.color(QPalette::Base).lightness() >= 128 ? color.darker(165) : color.lighter(150);
}

QValueAxis* barValueAxis(double maxTotal, const QString& title)
{
    auto* axis = new QValueAxis;
    axis->setRange(0, maxTotal > 0 ? maxTotal * 1.05 : 1.0);
    axis->applyNiceNumbers();
    axis->setLabelFormat(QStringLiteral("%g"));
    axis->setTitleText(title);
    return axis;
}

void styleBarSets(QAbstractBarSeries* series, const QList<QColor>& colors, int highlighted,
                  const QPalette& pal)
{
    if (!series) return;
    const QList<QBarSet*> sets = series->barSets();
    for (qsizetype s = 0; s < sets.size() && s < colors.size(); ++s) {
        sets[s]->setBrush(colors[s]);
        sets[s]->setPen(Qt::NoPen);
        sets[s]->setSelectedColor(highlightedBarColor(colors[s], pal));
        sets[s]->deselectAllBars();
        if (highlighted >= 0 && highlighted < sets[s]->count()) sets[s]->selectBar(highlighted);
    }
}

} // namespace rankscope
