#pragma once

#include <QColor>
#include <QList>

class QAbstractBarSeries;
class QString;
class QValueAxis;
class QChart;
class QChartView;
class QPalette;

namespace rankscope {

// Paints a chart's background, title, legend and axes from the widget palette, so every chart
// follows a dark or light desktop the same way. Series colours stay with each chart.
void applyChartPalette(QChart* chart, QChartView* view, const QPalette& pal);

// Colours the series' sets in order, borderless, and marks bar `highlighted` (-1: none) of
// every set, so the bar of the timeline's selection stands out: darker on a light base,
// lighter on a dark one.
void styleBarSets(QAbstractBarSeries* series, const QList<QColor>& colors, int highlighted,
                  const QPalette& pal);
QColor highlightedBarColor(const QColor& color, const QPalette& pal);
// The value axis of a bar chart whose tallest stack is `maxTotal`: from 0 with a little
// headroom, round ticks labelled without trailing zeros ("3000", "2.5").
QValueAxis* barValueAxis(double maxTotal, const QString& title);

} // namespace rankscope
