#include "model/zoomstate.h"

#include <QCoreApplication>
#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace rankscope {

QString TimelineClock::name() const
{
    return aligned ? QCoreApplication::translate("rankscope::TimelineClock", "aligned clocks")
                   : QCoreApplication::translate("rankscope::TimelineClock", "raw timestamps");
}

QString TimelineClock::shortName() const
{
    return aligned ? QCoreApplication::translate("rankscope::TimelineClock", "aligned")
                   : QCoreApplication::translate("rankscope::TimelineClock", "raw");
}

void ZoomState::setTraceRange(std::int64_t startNs, std::int64_t endNs)
{
    m_traceStartNs = startNs;
    m_traceEndNs = std::max(endNs, startNs + kMinSpanNs);
    fitAll();
}

void ZoomState::setWidthPx(int widthPx)
{
    m_widthPx = std::max(1, widthPx);
}

void ZoomState::setVisibleRange(std::int64_t startNs, std::int64_t endNs)
{
    if (endNs < startNs) std::swap(startNs, endNs);
    const std::int64_t traceSpan = m_traceEndNs - m_traceStartNs;
    std::int64_t span = std::clamp(endNs - startNs, kMinSpanNs, traceSpan);
    if (endNs - startNs < kMinSpanNs) startNs -= (kMinSpanNs - (endNs - startNs)) / 2;
    startNs = std::clamp(startNs, m_traceStartNs, m_traceEndNs - span);
    m_visStartNs = startNs;
    m_visEndNs = startNs + span;
}

void ZoomState::zoomAt(double x, double factor)
{
    const std::int64_t anchor = xToTime(x);
    const double span = std::max(double(kMinSpanNs), double(visibleSpanNs()) * factor);
    const double frac = std::clamp(x / double(m_widthPx), 0.0, 1.0);
    const auto start = std::int64_t(std::llround(double(anchor) - frac * span));
    setVisibleRange(start, start + std::int64_t(std::llround(span)));
}

void ZoomState::panByPx(double dx)
{
    const auto deltaNs = std::int64_t(std::llround(dx * nsPerPx()));
    setVisibleRange(m_visStartNs + deltaNs, m_visEndNs + deltaNs);
}

std::int64_t ZoomState::xToTime(double x) const
{
    return m_visStartNs + std::int64_t(std::llround(x * nsPerPx()));
}

void ZoomState::setSelection(std::int64_t startNs, std::int64_t endNs)
{
    m_hasSelection = true;
    m_selStartNs = std::min(startNs, endNs);
    m_selEndNs = std::max(startNs, endNs);
}

std::int64_t ZoomState::tickStepNs(double nsPerPx, double minPx)
{
    const double wanted = std::max(1.0, nsPerPx * minPx);
    // Past 50 s, steps a clock reads: minutes, hours, then days by 1-2-5.
    constexpr std::int64_t kMinute = 60'000'000'000, kHour = 60 * kMinute, kDay = 24 * kHour;
    if (wanted > double(kMinute) * 5 / 6) { // past 50 s, where 1-2-5 would step 100 s
        for (const std::int64_t step :
             {kMinute, 2 * kMinute, 5 * kMinute, 10 * kMinute, 15 * kMinute, 30 * kMinute, kHour,
              2 * kHour, 3 * kHour, 6 * kHour, 12 * kHour, kDay})
            if (double(step) >= wanted) return step;
        return kDay * tickStepNs(nsPerPx / double(kDay), minPx);
    }
    std::int64_t decade = 1;
    while (double(decade) * 10 <= wanted)
        decade *= 10;
    for (const std::int64_t m : {1, 2, 5, 10})
        if (double(decade * m) >= wanted) return decade * m;
    return decade * 10;
}

QString ZoomState::formatNs(std::int64_t ns, std::int64_t resolutionNs)
{
    constexpr std::int64_t kSecond = 1'000'000'000, kMinute = 60 * kSecond, kHour = 60 * kMinute,
                           kDay = 24 * kHour;
    const std::int64_t resolution = std::max<std::int64_t>(1, resolutionNs);
    const std::int64_t mag = std::max<std::int64_t>(std::llabs(ns), resolution);
    if (mag >= kMinute) {
        // A minute and more: whole days, hours, minutes, then the seconds that the resolution
        // keeps ("57 d 20 h", "1 h 10 min", "2 min 3.5 s"), never "5000000 s".
        if (ns < 0) return QLatin1Char('-') + formatNs(-ns, resolution);
        struct Big {
            std::int64_t ns;
            const char* name;
        };
        static constexpr Big bigs[] = {{kDay, "d"}, {kHour, "h"}, {kMinute, "min"}};
        // Rounded to the coarsest of these units (or a second) that the resolution spans.
        std::int64_t grain = 1;
        for (const std::int64_t g : {kDay, kHour, kMinute, kSecond})
            if (resolution >= g) {
                grain = g;
                break;
            }
        const std::int64_t total = (ns + grain / 2) / grain * grain;
        for (const Big& b : bigs) {
            if (std::max(total, resolution) < b.ns) continue;
            const std::int64_t whole = total / b.ns, rest = total - whole * b.ns;
            const QString head = QString::number(whole) + QLatin1Char(' ') + QLatin1String(b.name);
            return rest == 0 ? head : head + QLatin1Char(' ') + formatNs(rest, resolution);
        }
    }
    struct Unit {
        std::int64_t ns;
        const char* name;
    };
    static constexpr Unit units[] = {{kSecond, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};
    for (const Unit& u : units) {
        if (mag < u.ns && u.ns != 1) continue;
        int decimals = 0;
        for (std::int64_t r = u.ns; r > resolution && decimals < 3; r /= 10)
            ++decimals;
        QString unit = QString::fromLatin1(u.name);
        if (unit == QLatin1String("us")) unit = QStringLiteral("\u00b5s");
        return QString::number(double(ns) / double(u.ns), 'f', decimals) + QLatin1Char(' ') + unit;
    }
    return QString::number(ns) + QStringLiteral(" ns");
}

} // namespace rankscope
