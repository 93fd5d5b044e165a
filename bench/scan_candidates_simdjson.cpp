#include "bench/scan_candidates_detail.h"

#include <simdjson.h>

namespace rankscope::bench::detail {

namespace {

namespace od = simdjson::ondemand;

bool onDemandFields(od::object obj, Fields& f)
{
    const auto token = [](od::value& v, std::string_view& out) {
        if (v.type() == od::json_type::string) return v.get_string().get(out) == simdjson::SUCCESS;
        out = v.raw_json_token();
        while (!out.empty() && (out.back() == ' ' || out.back() == '\n' || out.back() == '\r' ||
                                out.back() == '\t'))
            out.remove_suffix(1);
        return true;
    };
    for (auto field : obj) {
        od::raw_json_string key;
        od::value v;
        if (field.key().get(key) || field.value().get(v)) return false;
        std::string_view ph;
        bool ok = true;
        if (key.unsafe_is_equal("ph")) {
            ok = v.get_string().get(ph) == simdjson::SUCCESS;
            f.ph = ph.size() == 1 ? ph[0] : 0;
        } else if (key.unsafe_is_equal("name")) {
            ok = v.get_string().get(f.name) == simdjson::SUCCESS;
        } else if (key.unsafe_is_equal("cat")) {
            ok = v.get_string().get(f.cat) == simdjson::SUCCESS;
        } else if (key.unsafe_is_equal("pid")) {
            ok = token(v, f.pid);
        } else if (key.unsafe_is_equal("tid")) {
            ok = token(v, f.tid);
        } else if (key.unsafe_is_equal("ts")) {
            ok = token(v, f.ts);
        } else if (key.unsafe_is_equal("dur")) {
            ok = token(v, f.dur);
        } else if (key.unsafe_is_equal("id")) {
            ok = token(v, f.id);
        } else if (key.unsafe_is_equal("args")) {
            f.args = true;
        }
        if (!ok) return false;
    }
    return true;
}

} // namespace

ScanDigest simdjsonOnDemand(std::string_view text)
{
    od::parser parser;
    const char* bufferEnd = text.data() + text.size() + simdjson::SIMDJSON_PADDING;
    return walk(text, [&](const char*& p, const char* end, Fields& f) {
        // The event's end by the boundary scan, then simdjson over the event.
        const char* q = p;
        const Scan s = json::skipValue(q, end);
        if (s != Scan::Ok) return s;
        od::document doc;
        od::object obj;
        if (parser.iterate(p, std::size_t(q - p), std::size_t(bufferEnd - p)).get(doc) ||
            doc.get_object().get(obj) || !onDemandFields(obj, f))
            return Scan::Error;
        p = q;
        return Scan::Ok;
    });
}

// simdjson's own structural index over each window of about 8 MB, the reader's window: the
// boundary scan finds the window's last complete event, the events are copied between '[' and
// ']' into a padded buffer (simdjson 3.0 has no comma-separated document stream), and one
// On-Demand document walks them.
ScanDigest simdjsonWindows(std::string_view text)
{
    constexpr std::size_t kWindow = std::size_t(8) << 20;
    od::parser parser;
    std::string buffer;
    ScanDigest d;
    const char* p = eventsBegin(text);
    const char* end = text.data() + text.size();
    if (!p) return {0, 0, false};
    for (;;) {
        // Locate the window's complete events.
        const char* windowEnd = std::min(end, p + kWindow);
        const char* first = json::skipWs(p, windowEnd);
        if (first < windowEnd && *first == ',') first = json::skipWs(first + 1, windowEnd);
        const char* last = first;
        for (const char* q = first;;) {
            q = json::skipWs(q, windowEnd);
            if (q < windowEnd && *q == ',') q = json::skipWs(q + 1, windowEnd);
            if (q >= windowEnd || *q != '{' || json::skipValue(q, windowEnd) != Scan::Ok) break;
            last = q;
        }
        if (last == first) {
            const char* q = json::skipWs(p, end);
            return q < end && *q == ']' ? d : ScanDigest{d.events, d.sum, false};
        }
        buffer.assign(1, '[');
        buffer.append(first, last);
        buffer += ']';
        const std::size_t len = buffer.size();
        buffer.append(simdjson::SIMDJSON_PADDING, ' ');
        od::document doc;
        od::array events;
        if (parser.iterate(buffer.data(), len, buffer.size()).get(doc) ||
            doc.get_array().get(events))
            return {d.events, d.sum, false};
        for (auto item : events) {
            od::object obj;
            Fields f;
            if (item.get_object().get(obj) || !onDemandFields(obj, f) || !fold(d, f))
                return {d.events, d.sum, false};
        }
        p = last;
    }
}

} // namespace rankscope::bench::detail
