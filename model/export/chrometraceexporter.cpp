#include "model/export/chrometraceexporter.h"

#include <QSaveFile>
#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace rankscope {

namespace {

const char* categoryName(EventCategory c)
{
    switch (c) {
    case EventCategory::CpuOp:
        return "cpu_op";
    case EventCategory::UserAnnotation:
        return "user_annotation";
    case EventCategory::PythonFunction:
        return "python_function";
    case EventCategory::Runtime:
        return "cuda_runtime";
    case EventCategory::Kernel:
        return "kernel";
    case EventCategory::CommKernel:
        return "comm_kernel";
    case EventCategory::Memcpy:
        return "gpu_memcpy";
    case EventCategory::Memset:
        return "gpu_memset";
    case EventCategory::Other:
        return "other";
    }
    return "other";
}

// Chrome-trace timestamps are microseconds; three decimals keep every nanosecond.
void appendMicros(std::string& out, std::int64_t ns)
{
    if (ns < 0) {
        out += '-';
        ns = -ns;
    }
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, ns / 1000);
    out.append(buf, r.ptr);
    const int frac = int(ns % 1000);
    if (frac != 0) {
        out += '.';
        out += char('0' + frac / 100);
        out += char('0' + frac / 10 % 10);
        out += char('0' + frac % 10);
    }
}

void appendInt(std::string& out, std::int64_t v)
{
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

std::string jsonString(std::string_view s)
{
    return nlohmann::json(std::string(s))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

ChromeTraceExporter::ChromeTraceExporter(const EventStore& store, QHash<int, qint64> offsetNs)
    : m_store(store), m_offsetNs(std::move(offsetNs))
{}

bool ChromeTraceExporter::writeFile(const QString& path)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        m_error = file.errorString();
        return false;
    }
    if (!write(file)) return false;
    if (!file.commit()) {
        m_error = file.errorString();
        return false;
    }
    return true;
}

std::int64_t ChromeTraceExporter::offsetOf(int rank) const
{
    return m_offsetNs.value(rank, 0);
}

bool ChromeTraceExporter::write(QIODevice& out)
{
    m_error.clear();
    // Names are escaped once per string, not once per event.
    std::vector<std::string> names(m_store.strings.size());
    for (std::size_t i = 0; i < names.size(); ++i)
        names[i] = jsonString(m_store.strings.view(StringId(i)));
    std::map<std::pair<int, std::int64_t>, const CollectiveRecord*> collectiveAt;
    for (const CollectiveRecord& c : m_store.collectives)
        if (c.laneIndex >= 0 && c.eventIndex >= 0) collectiveAt[{c.laneIndex, c.eventIndex}] = &c;

    // Perfetto's trace processor rejects negative timestamps and treats pid/tid 0 as the
    // kernel's idle task, so everything is shifted to start at >= 0 and numbered from 1.
    std::int64_t minNs = 0;
    for (const Lane& lane : m_store.lanes)
        if (lane.size() > 0) minNs = std::min(minNs, lane.startNs.front() + offsetOf(lane.rank));
    m_shiftNs = -minNs;

    std::string buf;
    buf.reserve(1 << 20);
    bool first = true;
    const auto flush = [&]() {
        if (out.write(buf.data(), qint64(buf.size())) != qint64(buf.size())) {
            m_error = out.errorString();
            return false;
        }
        buf.clear();
        return true;
    };
    const auto sep = [&] {
        if (!first) buf += ",\n";
        first = false;
    };
    buf += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"rankscope_pid\":\"rank + 1\","
           "\"rankscope_tid\":\"lane index + 1\",\"rankscope_shift_ns\":";
    appendInt(buf, m_shiftNs);
    buf += "},\"traceEvents\":[\n";

    std::set<int> ranks;
    for (const Lane& lane : m_store.lanes)
        ranks.insert(lane.rank);
    for (int rank : ranks) {
        sep();
        buf += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
        appendInt(buf, pidOf(rank));
        buf += ",\"tid\":0,\"args\":{\"name\":\"Rank ";
        appendInt(buf, rank);
        buf += "\"}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":";
        appendInt(buf, pidOf(rank));
        buf += ",\"tid\":0,\"args\":{\"sort_index\":";
        appendInt(buf, rank);
        buf += "}}";
    }
    for (std::size_t li = 0; li < m_store.lanes.size(); ++li) {
        const Lane& lane = m_store.lanes[li];
        const bool gpu = lane.kind == LaneKind::GpuStream;
        std::string label = lane.name;
        if (label.empty())
            label = gpu ? "GPU " + std::to_string(lane.pid) + " stream " + std::to_string(lane.tid)
                        : "thread " + std::to_string(lane.tid);
        sep();
        buf += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":";
        appendInt(buf, pidOf(lane.rank));
        buf += ",\"tid\":";
        appendInt(buf, std::int64_t(li) + 1);
        buf += ",\"args\":{\"name\":";
        buf += jsonString(label);
        buf += "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":";
        appendInt(buf, pidOf(lane.rank));
        buf += ",\"tid\":";
        appendInt(buf, std::int64_t(li) + 1);
        buf += ",\"args\":{\"sort_index\":";
        appendInt(buf, (gpu ? 0 : 1'000'000) + std::int64_t(li));
        buf += "}}";

        const std::int64_t offset = offsetOf(lane.rank) + m_shiftNs;
        for (std::size_t i = 0; i < lane.size(); ++i) {
            sep();
            buf += "{\"ph\":\"X\",\"pid\":";
            appendInt(buf, pidOf(lane.rank));
            buf += ",\"tid\":";
            appendInt(buf, std::int64_t(li) + 1);
            buf += ",\"ts\":";
            appendMicros(buf, lane.startNs[i] + offset);
            buf += ",\"dur\":";
            appendMicros(buf, std::max<std::int64_t>(0, lane.endNs[i] - lane.startNs[i]));
            buf += ",\"name\":";
            buf += names[std::size_t(lane.nameId[i])];
            buf += ",\"cat\":\"";
            buf += categoryName(lane.category[i]);
            buf += '"';
            if (!collectiveAt.empty()) {
                auto it = collectiveAt.find({int(li), std::int64_t(i)});
                if (it != collectiveAt.end()) {
                    const CollectiveRecord& c = *it->second;
                    buf += ",\"args\":{\"process_group\":";
                    buf += names[std::size_t(c.processGroupName)];
                    buf += ",\"seq\":";
                    appendInt(buf, c.seq);
                    buf += ",\"op\":";
                    buf += names[std::size_t(c.op)];
                    buf += '}';
                }
            }
            buf += '}';
            if (buf.size() > (1 << 20) && !flush()) return false;
        }
    }
    // Flows (kernel launch -> kernel, ...) as flow-v1 pairs: the start binds to the source slice
    // that encloses its ts, the finish ("bp":"e") to the destination slice starting at its ts.
    std::int64_t flowId = 0;
    const auto validEvent = [&](std::int32_t lane, std::uint32_t event) {
        return lane >= 0 && std::size_t(lane) < m_store.lanes.size() &&
               event < m_store.lanes[std::size_t(lane)].size();
    };
    for (const FlowLink& f : m_store.flows) {
        if (!validEvent(f.fromLane, f.fromEvent) || !validEvent(f.toLane, f.toEvent)) continue;
        ++flowId;
        const std::string& cat = names[std::size_t(f.category)];
        const bool emptyCat = cat.size() <= 2; // the escaped "" of an unnamed category
        for (int end = 0; end < 2; ++end) {
            const std::int32_t li = end ? f.toLane : f.fromLane;
            const Lane& lane = m_store.lanes[std::size_t(li)];
            const std::size_t i = end ? f.toEvent : f.fromEvent;
            sep();
            buf += end ? "{\"ph\":\"f\",\"bp\":\"e\",\"id\":" : "{\"ph\":\"s\",\"id\":";
            appendInt(buf, flowId);
            buf += ",\"pid\":";
            appendInt(buf, pidOf(lane.rank));
            buf += ",\"tid\":";
            appendInt(buf, std::int64_t(li) + 1);
            buf += ",\"ts\":";
            appendMicros(buf, lane.startNs[i] + offsetOf(lane.rank) + m_shiftNs);
            buf += ",\"name\":\"flow\",\"cat\":";
            buf += emptyCat ? std::string("\"flow\"") : cat;
            buf += '}';
        }
        if (buf.size() > (1 << 20) && !flush()) return false;
    }
    buf += "\n]}\n";
    return flush();
}

} // namespace rankscope
