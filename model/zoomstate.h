#pragma once

#include <QHash>
#include <QString>
#include <cstdint>

namespace rankscope {

// The clock the timeline's times are on, which the charts and the details pane must share so
// that their numbers match what the user sees: a rank's raw timestamp plus offsetNs[rank]
// (absent: 0). Raw timestamps have no offsets.
struct TimelineClock {
    QHash<int, qint64> offsetNs;
    bool aligned = true;

    std::int64_t toDisplay(int rank, std::int64_t rawNs) const
    {
        return rawNs + offsetNs.value(rank, 0);
    }
    // "aligned clocks" or "raw timestamps", for sentences; "aligned" or "raw" where room is
    // short (a chart's vertical axis).
    QString name() const;
    QString shortName() const;
    bool operator==(const TimelineClock&) const = default;
};

// The timeline's horizontal state: the whole trace range, the visible range inside it, the
// width in pixels it maps to, and a selected time span. Pure arithmetic, testable without a
// screen; x is measured from the left edge of the track area.
class ZoomState {
public:
    // Narrowest visible span: below this, pixels would stand for fractions of a nanosecond.
    static constexpr std::int64_t kMinSpanNs = 16;

    void setTraceRange(std::int64_t startNs, std::int64_t endNs); // and shows all of it
    void setWidthPx(int widthPx);
    // Clamped into the trace range, at least kMinSpanNs wide; keeps the span when shifting.
    void setVisibleRange(std::int64_t startNs, std::int64_t endNs);
    void fitAll() { setVisibleRange(m_traceStartNs, m_traceEndNs); }
    // factor < 1 zooms in; the time under `x` stays under `x`.
    void zoomAt(double x, double factor);
    void panByPx(double dx);

    std::int64_t traceStartNs() const { return m_traceStartNs; }
    std::int64_t traceEndNs() const { return m_traceEndNs; }
    std::int64_t visibleStartNs() const { return m_visStartNs; }
    std::int64_t visibleEndNs() const { return m_visEndNs; }
    std::int64_t visibleSpanNs() const { return m_visEndNs - m_visStartNs; }
    int widthPx() const { return m_widthPx; }
    double nsPerPx() const { return double(visibleSpanNs()) / double(m_widthPx); }

    double timeToX(std::int64_t tNs) const { return double(tNs - m_visStartNs) / nsPerPx(); }
    std::int64_t xToTime(double x) const;

    void setSelection(std::int64_t startNs, std::int64_t endNs);
    void clearSelection() { m_hasSelection = false; }
    bool hasSelection() const { return m_hasSelection; }
    std::int64_t selectionStartNs() const { return m_selStartNs; }
    std::int64_t selectionEndNs() const { return m_selEndNs; }

    // A 1-2-5 step of at least `minPx` pixels at `nsPerPx`, for ruler ticks; from a minute on
    // 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, then days by 1-2-5.
    static std::int64_t tickStepNs(double nsPerPx, double minPx);
    // "12.5 ms", "300 ns", "1.25 s": the unit is the largest that keeps `resolutionNs` visible;
    // from a minute on days, hours, minutes and seconds ("57 d 20 h", "1 h 10 min", "2 min 3.5 s").
    static QString formatNs(std::int64_t ns, std::int64_t resolutionNs);
    static QString formatDuration(std::int64_t ns) { return formatNs(ns, ns / 100); }

private:
    std::int64_t m_traceStartNs = 0;
    std::int64_t m_traceEndNs = 1000;
    std::int64_t m_visStartNs = 0;
    std::int64_t m_visEndNs = 1000;
    int m_widthPx = 1;
    bool m_hasSelection = false;
    std::int64_t m_selStartNs = 0;
    std::int64_t m_selEndNs = 0;
};

} // namespace rankscope
