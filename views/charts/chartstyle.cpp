#include "views/charts/chartstyle.h"

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QLegend>
#include <QPalette>

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

} // namespace rankscope
