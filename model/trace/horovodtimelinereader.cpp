#include "model/trace/horovodtimelinereader.h"

#include "model/trace/jsonscanner.h"

#include <QFile>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

namespace rankscope {

namespace {

constexpr std::int64_t kPollBytes = 1024 * 1024;

struct OpenSpan {
    std::string name;
    std::int64_t startNs = 0;
    std::int64_t offset = 0;
};

struct SpanEvent {
    std::int64_t startNs = 0, endNs = 0, offset = 0;
    std::string name;
    EventCategory category = EventCategory::Other;
    bool unfinished = false;
};

// One NEGOTIATE_<OP> of a tensor, what the coordinator saw of it.
struct Negotiation {
    int ordinal = 0;
    std::string op;                      // ALLREDUCE, ALLGATHER, ...
    std::map<int, std::int64_t> readyNs; // rank -> when it reported the tensor ready
    bool closed = false;
    std::int64_t opStartNs = -1, opEndNs = -1, execStartNs = -1, execEndNs = -1;
    std::size_t opEvent = std::size_t(-1); // index into the tensor's events (before sorting)
    std::string dtype;
    std::int64_t nelems = -1;
};

struct Tensor {
    std::string name;
    std::vector<OpenSpan> open;
    std::vector<SpanEvent> events;
    std::vector<Negotiation> negotiations;
    std::optional<Negotiation> current;
};

bool isTransfer(std::string_view name)
{
    return name.starts_with("NCCL_") || name.starts_with("MPI_") || name.starts_with("GLOO_") ||
           name.starts_with("CCL_") || name.starts_with("ROCM_");
}

EventCategory categoryOf(std::string_view name)
{
    if (isTransfer(name)) return EventCategory::CommKernel;
    if (name.starts_with("MEMCPY_")) return EventCategory::Memcpy;
    return EventCategory::Other;
}

// Microseconds as the file writes them -> ns. Values no clock holds (a corrupt or hostile
// file) are clamped to +-3e18 ns (95 years), so base + ts + dur cannot overflow.
std::int64_t usToNs(double us)
{
    constexpr double kLimit = 3e18;
    const double ns = us * 1000.0;
    if (std::isnan(ns)) return 0;
    return std::llround(std::clamp(ns, -kLimit, kLimit));
}

// A string field, "" when absent or of another type (json::value() would throw on a number).
std::string stringField(const nlohmann::json& object, const char* key)
{
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<int> rankName(std::string_view name)
{
    if (name.empty() || name.size() > 7) return std::nullopt;
    int r = 0;
    for (const char c : name) {
        if (c < '0' || c > '9') return std::nullopt;
        r = r * 10 + (c - '0');
    }
    return r;
}

// `shape` is written as a string "[1024, 3]" (or an array in some versions): element count.
std::int64_t elementsOf(const nlohmann::json& shape)
{
    std::int64_t n = 1;
    bool any = false;
    if (shape.is_array()) {
        for (const auto& d : shape) {
            if (!d.is_number_integer() || d.get<std::int64_t>() < 0) return -1;
            if (__builtin_mul_overflow(n, d.get<std::int64_t>(), &n)) return -1;
            any = true;
        }
        return n;
    }
    if (!shape.is_string()) return -1;
    const std::string s = shape.get<std::string>();
    std::int64_t v = -1;
    for (const char c : s + ",") {
        if (c >= '0' && c <= '9') {
            v = (v < 0 ? 0 : v * 10) + (c - '0');
            if (v > (std::int64_t(1) << 40)) return -1;
        } else if (v >= 0) {
            if (__builtin_mul_overflow(n, v, &n)) return -1; // no tensor is that large
            any = true;
            v = -1;
        }
    }
    return any || s.find('[') != std::string::npos ? n : -1;
}

} // namespace

std::string HorovodTimelineReader::normalizeOp(std::string_view op)
{
    if (op.starts_with("NEGOTIATE_")) op.remove_prefix(10);
    static const std::map<std::string_view, std::string_view> names = {
        {"ALLREDUCE", "all_reduce"},
        {"ALLGATHER", "all_gather"},
        {"BROADCAST", "broadcast"},
        {"ALLTOALL", "all_to_all"},
        {"REDUCESCATTER", "reduce_scatter"},
        {"BARRIER", "barrier"},
        {"JOIN", "join"},
    };
    if (const auto it = names.find(op); it != names.end()) return std::string(it->second);
    std::string lower(op);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; });
    return lower;
}

HorovodReadResult HorovodTimelineReader::readBytes(std::string_view data, EventStore& out,
                                                   const Options& options)
{
    HorovodReadResult result;
    const char* const begin = data.data();
    const char* const end = begin + data.size();
    const char* p = json::skipWs(begin, end);
    if (p < end &&
        std::string_view(p, std::size_t(std::min<std::ptrdiff_t>(3, end - p))) == "\xEF\xBB\xBF")
        p = json::skipWs(p + 3, end);
    if (p >= end || *p != '[') {
        result.status = SourceStatus::Error;
        result.message = "not a Horovod timeline: no JSON array";
        return result;
    }
    ++p;
    std::map<std::int64_t, Tensor> tensors;
    std::int64_t baseNs = 0, lastNs = 0, skipped = 0, reported = 0;
    bool closedArray = false;
    std::int64_t cutAt = -1;
    while (true) {
        p = json::skipWs(p, end);
        if (p < end && *p == ',') p = json::skipWs(p + 1, end);
        if (p >= end) break;
        if (*p == ']') {
            closedArray = true;
            break;
        }
        const char* objectStart = p;
        const json::Scan scan = json::skipValue(p, end);
        if (scan != json::Scan::Ok) {
            cutAt = objectStart - begin;
            break;
        }
        const std::int64_t offset = objectStart - begin;
        if (offset - reported >= kPollBytes) {
            if (options.progressBytes) options.progressBytes->fetch_add(offset - reported);
            reported = offset;
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
                result.status = SourceStatus::Error;
                result.message = "cancelled";
                return result;
            }
        }
        const nlohmann::json e = nlohmann::json::parse(objectStart, p, nullptr, false);
        if (!e.is_object()) {
            ++skipped;
            continue;
        }
        const std::string ph = stringField(e, "ph");
        const nlohmann::json& pidValue = e.contains("pid") ? e["pid"] : nlohmann::json();
        if (!pidValue.is_number_integer()) {
            ++skipped;
            continue;
        }
        const std::int64_t pid = pidValue.get<std::int64_t>();
        const nlohmann::json args =
            e.contains("args") && e["args"].is_object() ? e["args"] : nlohmann::json::object();
        if (ph == "M") {
            if (stringField(e, "name") == "process_name" && args.contains("name") &&
                args["name"].is_string())
                tensors[pid].name = args["name"].get<std::string>();
            if (args.contains("start_time_since_epoch_in_micros") &&
                args["start_time_since_epoch_in_micros"].is_number())
                baseNs = usToNs(args["start_time_since_epoch_in_micros"].get<double>());
            continue;
        }
        if (!e.contains("ts") || !e["ts"].is_number()) {
            ++skipped;
            continue;
        }
        const std::int64_t ts = baseNs + usToNs(e["ts"].get<double>());
        lastNs = std::max(lastNs, ts);
        const std::string name = stringField(e, "name");
        Tensor& t = tensors[pid];
        if (ph == "B") {
            if (name.starts_with("NEGOTIATE_")) {
                if (t.current) t.negotiations.push_back(std::move(*t.current));
                t.current = Negotiation{};
                t.current->ordinal = int(t.negotiations.size());
                t.current->op = name.substr(10);
            } else if (t.current && t.open.empty() && name == t.current->op) {
                t.current->opStartNs = ts;
                t.current->opEvent = t.events.size(); // its event is pushed when it closes
            } else if (t.current && isTransfer(name) && t.current->execStartNs < 0) {
                t.current->execStartNs = ts;
            }
            t.open.push_back({name, ts, offset});
        } else if (ph == "E") {
            if (t.open.empty()) {
                ++skipped;
                continue;
            }
            OpenSpan s = std::move(t.open.back());
            t.open.pop_back();
            // An E stamped before its B (a clock step, a corrupt file) closes an empty span.
            const std::int64_t endNs = std::max(ts, s.startNs);
            if (t.current) {
                Negotiation& n = *t.current;
                if (s.name.starts_with("NEGOTIATE_")) n.closed = true;
                if (t.open.empty() && s.name == n.op && n.opStartNs == s.startNs) {
                    n.opEndNs = endNs;
                    n.opEvent = t.events.size();
                    if (args.contains("dtype") && args["dtype"].is_string())
                        n.dtype = args["dtype"].get<std::string>();
                    if (args.contains("shape")) n.nelems = elementsOf(args["shape"]);
                }
                if (isTransfer(s.name) && n.execEndNs < 0 && n.execStartNs == s.startNs)
                    n.execEndNs = endNs;
            }
            t.events.push_back({s.startNs, endNs, s.offset, s.name, categoryOf(s.name), false});
        } else if (ph == "X" || ph == "i" || ph == "I") {
            std::int64_t durNs = 0;
            if (ph == "X" && e.contains("dur") && e["dur"].is_number())
                durNs = std::max<std::int64_t>(0, usToNs(e["dur"].get<double>()));
            if (const auto r = rankName(name); r && ph == "X" && t.current && !t.current->closed)
                t.current->readyNs.emplace(*r, ts);
            t.events.push_back({ts, ts + durNs, offset, name, categoryOf(name), false});
        } else {
            ++skipped;
        }
    }
    if (options.progressBytes)
        options.progressBytes->fetch_add(std::int64_t(data.size()) - reported);

    const StringId empty = out.strings.intern("");
    for (auto& entry : tensors) {
        // A named reference, not a structured binding: the sort below captures it.
        const std::int64_t pid = entry.first;
        Tensor& t = entry.second;
        for (OpenSpan& s : t.open) // a B without its E: the job stopped inside it
            t.events.push_back({s.startNs, lastNs, s.offset, s.name, categoryOf(s.name), true});
        if (t.current) t.negotiations.push_back(std::move(*t.current));
        if (t.events.empty()) continue;
        if (t.name.empty()) t.name = "tensor " + std::to_string(pid);
        ++result.tensors;

        std::vector<std::size_t> order(t.events.size());
        for (std::size_t k = 0; k < order.size(); ++k)
            order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const SpanEvent &x = t.events[a], &y = t.events[b];
            return x.startNs != y.startNs ? x.startNs < y.startNs : x.endNs > y.endNs;
        });
        std::vector<std::int64_t> position(order.size());
        Lane lane;
        lane.rank = options.coordinatorRank;
        lane.kind = LaneKind::CpuThread;
        lane.pid = pid;
        lane.tid = 0;
        lane.name = t.name;
        lane.sourceIndex = options.sourceIndex;
        std::vector<std::int64_t> enclosing; // ends of the spans that contain the current event
        for (std::size_t k = 0; k < order.size(); ++k) {
            const SpanEvent& ev = t.events[order[k]];
            position[order[k]] = std::int64_t(k);
            while (!enclosing.empty() && enclosing.back() < ev.endNs)
                enclosing.pop_back();
            const auto depth = std::uint8_t(std::min<std::size_t>(enclosing.size(), 255));
            lane.startNs.push_back(ev.startNs);
            lane.endNs.push_back(ev.endNs);
            lane.nameId.push_back(out.strings.intern(ev.name));
            lane.category.push_back(ev.category);
            lane.depth.push_back(depth);
            lane.sourceOffset.push_back(ev.offset);
            lane.maxDepth = std::max(lane.maxDepth, depth);
            if (ev.unfinished) lane.unfinished.push_back(std::int64_t(k));
            enclosing.push_back(ev.endNs);
        }
        result.events += std::int64_t(lane.size());
        const int laneIndex = int(out.lanes.size());
        out.lanes.push_back(std::move(lane));

        const StringId group = out.strings.intern(t.name);
        for (const Negotiation& n : t.negotiations) {
            const StringId op = out.strings.intern(normalizeOp(n.op));
            const StringId dtype = n.dtype.empty() ? empty : out.strings.intern(n.dtype);
            using State = CollectiveRecord::State;
            const State state = n.opEndNs >= 0     ? State::Completed
                                : n.opStartNs >= 0 ? State::Started
                                                   : State::Issued;
            for (const auto& [rank, readyNs] : n.readyNs) {
                CollectiveRecord c;
                c.rank = rank;
                c.op = op;
                c.processGroupName = group;
                c.processGroupDesc = empty;
                c.seq = n.ordinal;
                c.seqFromSource = false;
                c.inNelems = n.nelems;
                c.outNelems = n.op == "ALLREDUCE" || n.op == "BROADCAST" ? n.nelems : -1;
                c.dtype = dtype;
                c.issueStartNs = readyNs;
                c.state = state;
                c.sourceIndex = options.sourceIndex;
                if (rank == options.coordinatorRank) {
                    c.execStartNs = n.execStartNs >= 0 ? n.execStartNs : n.opStartNs;
                    c.execEndNs = n.execEndNs >= 0 ? n.execEndNs : n.opEndNs;
                    c.laneIndex = laneIndex;
                    if (n.opEvent < position.size()) c.eventIndex = position[n.opEvent];
                }
                result.worldSize = std::max(result.worldSize, rank + 1);
                out.collectives.push_back(c);
                ++result.collectives;
            }
        }
    }
    if (result.events == 0 && result.collectives == 0 && skipped > 0) {
        result.status = SourceStatus::Error;
        result.message = "not a Horovod timeline: " + std::to_string(skipped) +
                         " array elements, none of them an event";
        return result;
    }
    result.message = std::to_string(result.events) + " events, " + std::to_string(result.tensors) +
                     " tensors, " + std::to_string(result.collectives) + " collectives over " +
                     std::to_string(result.worldSize) + " ranks";
    if (skipped) result.message += ", " + std::to_string(skipped) + " events skipped";
    if (cutAt >= 0 || !closedArray) {
        result.status = SourceStatus::Truncated;
        const std::int64_t at = cutAt >= 0 ? cutAt : std::int64_t(data.size());
        result.message += "; cut at byte " + std::to_string(at);
    }
    return result;
}

HorovodReadResult HorovodTimelineReader::readFile(const QString& path, EventStore& out,
                                                  const Options& options)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        HorovodReadResult r;
        r.status = SourceStatus::Error;
        r.message = "cannot open: " + file.errorString().toStdString();
        return r;
    }
    return readOpened(file, out, options);
}

HorovodReadResult HorovodTimelineReader::readSource(const SourceFile& source, EventStore& out,
                                                    const Options& options)
{
    QString error;
    QFile file;
    if (!source.openForReading(file, &error)) {
        HorovodReadResult r;
        r.status = SourceStatus::Error;
        r.message = error.toStdString();
        return r;
    }
    return readOpened(file, out, options);
}

HorovodReadResult HorovodTimelineReader::readOpened(QFile& file, EventStore& out,
                                                    const Options& options)
{
    HorovodReadResult r;
    QByteArray bytes;
    bytes.reserve(file.size());
    while (!file.atEnd()) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
            r.status = SourceStatus::Error;
            r.message = "cancelled";
            return r;
        }
        const QByteArray slice = file.read(4 * kPollBytes);
        if (slice.isEmpty()) break;
        bytes.append(slice);
    }
    return readBytes(std::string_view(bytes.constData(), std::size_t(bytes.size())), out, options);
}

} // namespace rankscope
