#pragma once

class QChart;
class QChartView;
class QPalette;

namespace rankscope {

// Paints a chart's background, title, legend and axes from the widget palette, so every chart
// follows a dark or light desktop the same way. Series colours stay with each chart.
void applyChartPalette(QChart* chart, QChartView* view, const QPalette& pal);

} // namespace rankscope
