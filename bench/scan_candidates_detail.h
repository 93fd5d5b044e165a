#pragma once

#include "bench/scan_candidates.h"
#include "model/trace/jsonscanner.h"

// Shared by the candidates of scan_candidates.cpp and scan_candidates_simdjson.cpp (compiled for
// AVX2: simdjson's On-Demand front end takes its kernel from the compile flags).
namespace rankscope::bench::detail {

using json::Scan;

// What the reader keeps of an event.
struct Fields {
    char ph = 0;
    std::string_view name, cat;
    std::string_view pid, tid, id; // number tokens, or string contents
    std::string_view ts, dur;
    bool args = false;
};

inline std::uint64_t idValue(std::string_view v)
{
    std::int64_t n = 0;
    return json::toInt64(v, n) ? std::uint64_t(n) : v.size();
}

inline bool fold(ScanDigest& d, const Fields& f)
{
    std::int64_t ts = 0, dur = 0;
    if (!f.ts.empty() && !json::microsToNanos(f.ts, ts)) return false;
    if (!f.dur.empty() && !json::microsToNanos(f.dur, dur)) return false;
    std::uint64_t h = std::uint64_t(f.ph) * 131 + std::uint64_t(ts) * 31 + std::uint64_t(dur) * 17;
    h += f.name.size() * 7 + (f.name.empty() ? 0 : std::uint64_t(f.name.back()));
    h += f.cat.size() * 13 + (f.cat.empty() ? 0 : std::uint64_t(f.cat.front()));
    h += idValue(f.pid) * 3 + idValue(f.tid) * 5 + idValue(f.id) * 11 + (f.args ? 19 : 0);
    d.sum = d.sum * 1099511628211ull + h;
    ++d.events;
    return true;
}

// The events array's first byte after '['.
inline const char* eventsBegin(std::string_view text)
{
    const std::size_t k = text.find("\"traceEvents\"");
    if (k == std::string_view::npos) return nullptr;
    const std::size_t b = text.find('[', k);
    return b == std::string_view::npos ? nullptr : text.data() + b + 1;
}

// Walks the array: `parse(p, end, fields)` consumes one event object.
template <typename ParseEvent> ScanDigest walk(std::string_view text, ParseEvent&& parse)
{
    ScanDigest d;
    const char* p = eventsBegin(text);
    const char* end = text.data() + text.size();
    if (!p) return {0, 0, false};
    for (;;) {
        p = json::skipWs(p, end);
        if (p >= end) return {d.events, d.sum, false};
        if (*p == ']') return d;
        if (*p == ',') p = json::skipWs(p + 1, end);
        Fields f;
        if (p >= end || *p != '{' || parse(p, end, f) != Scan::Ok || !fold(d, f))
            return {d.events, d.sum, false};
    }
}

ScanDigest simdjsonOnDemand(std::string_view text);
ScanDigest simdjsonWindows(std::string_view text);

} // namespace rankscope::bench::detail
