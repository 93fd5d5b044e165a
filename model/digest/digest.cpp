#include "model/digest/digest.h"

#include "model/analysis/sessionanalysis.h"
#include "model/digest/digeststream.h"

#include <QDataStream>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <algorithm>
#include <fcntl.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <sqlite3.h>
#include <string_view>
#include <tuple>
#include <unistd.h>

namespace rankscope::Digest {

namespace {

// Integers, enums and bools as qint64: the digest's layout does not follow the structs'.
template <typename T> void put(QDataStream& s, const T& v)
{
    s << qint64(v);
}
template <typename T> void get(QDataStream& s, T& v)
{
    qint64 x = 0;
    s >> x;
    v = static_cast<T>(x);
}
void putString(QDataStream& s, std::string_view v)
{
    s << QByteArray(v.data(), qsizetype(v.size()));
}
std::string getString(QDataStream& s)
{
    QByteArray b;
    s >> b;
    return b.toStdString();
}
void put(QDataStream& s, const std::string& v)
{
    putString(s, v);
}
void get(QDataStream& s, std::string& v)
{
    v = getString(s);
}
template <typename T> void putColumn(QDataStream& s, const std::vector<T>& v)
{
    put(s, v.size());
    for (const T& x : v)
        put(s, x);
}
template <typename T> void getColumn(QDataStream& s, std::vector<T>& v)
{
    std::size_t n = 0;
    get(s, n);
    if (s.status() != QDataStream::Ok) return;
    v.resize(n);
    for (T& x : v)
        get(s, x);
}

} // namespace

void putCollective(QDataStream& s, const CollectiveRecord& c)
{
    CollectiveRecord::forEachField(c, [&s](const char*, const auto& field) { put(s, field); });
}

void getCollective(QDataStream& s, CollectiveRecord& c)
{
    CollectiveRecord::forEachField(c, [&s](const char*, auto& field) { get(s, field); });
}

void putLane(QDataStream& s, const Lane& l)
{
    Lane::forEachHeaderField([&s](const char*, const auto& field) { put(s, field); }, l);
    // Starts as deltas and ends as durations: both compress well.
    std::vector<std::int64_t> delta(l.size()), duration(l.size());
    for (std::size_t i = 0; i < l.size(); ++i) {
        delta[i] = l.startNs[i] - (i ? l.startNs[i - 1] : 0);
        duration[i] = l.endNs[i] - l.startNs[i];
    }
    putColumn(s, delta);
    putColumn(s, duration);
    Lane::forEachEventColumn([&s](const char*, const auto& column) { putColumn(s, column); }, l);
    putColumn(s, l.unfinished);
}

void getLane(QDataStream& s, Lane& l)
{
    Lane::forEachHeaderField([&s](const char*, auto& field) { get(s, field); }, l);
    getColumn(s, l.startNs);
    getColumn(s, l.endNs);
    for (std::size_t i = 0; i < l.startNs.size() && i < l.endNs.size(); ++i) {
        l.startNs[i] += i ? l.startNs[i - 1] : 0;
        l.endNs[i] += l.startNs[i];
    }
    Lane::forEachEventColumn([&s](const char*, auto& column) { getColumn(s, column); }, l);
    getColumn(s, l.unfinished);
}

void putFlow(QDataStream& s, const FlowLink& f)
{
    FlowLink::forEachField(f, [&s](const char*, const auto& field) { put(s, field); });
}

void getFlow(QDataStream& s, FlowLink& f)
{
    FlowLink::forEachField(f, [&s](const char*, auto& field) { get(s, field); });
}

namespace {

// A store's strings and rank lists with `lanes`, `collectives` and `flows` (the store's own, or
// a reduction of them).
void putStore(QDataStream& s, const EventStore& store, const std::vector<Lane>& lanes,
              const std::vector<CollectiveRecord>& collectives, const std::vector<FlowLink>& flows)
{
    put(s, store.strings.size());
    for (std::size_t i = 1; i < store.strings.size(); ++i)
        putString(s, store.strings.view(StringId(i)));
    put(s, store.rankLists.size());
    for (std::size_t i = 1; i < store.rankLists.size(); ++i)
        putColumn(s, store.rankLists.ranks(RankListId(i)));
    put(s, lanes.size());
    for (const Lane& l : lanes)
        putLane(s, l);
    put(s, collectives.size());
    for (const CollectiveRecord& c : collectives)
        putCollective(s, c);
    put(s, flows.size());
    for (const FlowLink& f : flows)
        putFlow(s, f);
}

void getStore(QDataStream& s, EventStore& store)
{
    std::size_t n = 0;
    get(s, n);
    for (std::size_t i = 1; i < n && s.status() == QDataStream::Ok; ++i)
        store.strings.intern(getString(s));
    get(s, n);
    for (std::size_t i = 1; i < n && s.status() == QDataStream::Ok; ++i) {
        std::vector<int> ranks;
        getColumn(s, ranks);
        store.rankLists.intern(ranks);
    }
    get(s, n);
    for (std::size_t k = 0; k < n && s.status() == QDataStream::Ok; ++k) {
        Lane l;
        getLane(s, l);
        store.lanes.push_back(std::move(l));
    }
    get(s, n);
    store.collectives.reserve(n);
    for (std::size_t k = 0; k < n && s.status() == QDataStream::Ok; ++k) {
        CollectiveRecord c;
        getCollective(s, c);
        store.collectives.push_back(c);
    }
    get(s, n);
    for (std::size_t k = 0; k < n && s.status() == QDataStream::Ok; ++k) {
        FlowLink f;
        getFlow(s, f);
        store.flows.push_back(f);
    }
}

// What the digest keeps of one store: its reduced lanes, its collectives pointing into them.
struct Reduced {
    std::vector<Lane> lanes;
    std::vector<CollectiveRecord> collectives;
};

// One trace source's digest: what its reader said, how much was kept, its reduced store.
QByteArray encodeTrace(const TraceSourceRead& r, const Reduced& kept, std::int64_t eventsRead,
                       std::int64_t resolution)
{
    QByteArray bytes;
    QDataStream s(&bytes, QIODevice::WriteOnly);
    s.setVersion(QDataStream::Qt_6_4);
    put(s, r.status);
    putString(s, r.message);
    put(s, r.worldSize);
    putString(s, r.ncclVersion);
    put(s, r.statedRank.has_value());
    put(s, r.statedRank.value_or(0));
    put(s, eventsRead);
    put(s, resolution);
    // Flows name events by index; the reduced lanes keep too few of their endpoints.
    putStore(s, r.events, kept.lanes, kept.collectives, {});
    return qCompress(bytes, 6);
}

// `reduction`, when given, receives the record's resolution and event counts.
TraceSourceRead decodeTrace(const QByteArray& compressed, Reduction* reduction = nullptr)
{
    TraceSourceRead r;
    const QByteArray bytes = qUncompress(compressed);
    QDataStream s(bytes);
    s.setVersion(QDataStream::Qt_6_4);
    get(s, r.status);
    r.message = getString(s);
    get(s, r.worldSize);
    r.ncclVersion = getString(s);
    bool stated = false;
    std::int64_t statedRank = 0, eventsRead = 0, resolution = 0;
    get(s, stated);
    get(s, statedRank);
    if (stated) r.statedRank = statedRank;
    get(s, eventsRead);
    get(s, resolution);
    getStore(s, r.events);
    if (s.status() != QDataStream::Ok || bytes.isEmpty()) {
        r = {};
        r.status = SourceStatus::Error;
        r.message = "its record in the digest is damaged";
    }
    if (reduction) *reduction = {resolution, eventsRead, r.events.eventCount()};
    return r;
}

bool isStepName(std::string_view name)
{
    return name.substr(0, 13) == "ProfilerStep#";
}

// Marks what the analysis reads of a lane (the first event, the one ending last, ProfilerStep
// spans on CPU threads, communication kernels, unfinished events) and its last kTailEvents.
std::vector<char> mustKeep(const EventStore& store, const Lane& lane)
{
    std::vector<char> keep(lane.size(), 0);
    if (lane.size() == 0) return keep;
    keep[0] = 1;
    keep[std::size_t(std::max_element(lane.endNs.begin(), lane.endNs.end()) - lane.endNs.begin())] =
        1;
    for (std::size_t i = lane.size() > kTailEvents ? lane.size() - kTailEvents : 0; i < lane.size();
         ++i)
        keep[i] = 1;
    for (const std::int64_t i : lane.unfinished)
        if (i >= 0 && std::size_t(i) < lane.size()) keep[std::size_t(i)] = 1;
    for (std::size_t i = 0; i < lane.size(); ++i)
        if (lane.category[i] == EventCategory::CommKernel ||
            (lane.kind == LaneKind::CpuThread && isStepName(store.strings.view(lane.nameId[i]))))
            keep[i] = 1;
    return keep;
}

// The events of `lane` that `keep` marks, in order; `newIndex` maps the lane's event indices to
// the subset's (-1: left out).
Lane subset(const Lane& lane, const std::vector<char>& keep, std::vector<std::int64_t>& newIndex)
{
    Lane out;
    Lane::forEachHeaderField([](const char*, auto& to, const auto& from) { to = from; }, out, lane);
    out.maxDepth = 0; // of the events kept
    newIndex.assign(lane.size(), -1);
    for (std::size_t i = 0; i < lane.size(); ++i) {
        if (!keep[i]) continue;
        newIndex[i] = std::int64_t(out.size());
        out.startNs.push_back(lane.startNs[i]);
        out.endNs.push_back(lane.endNs[i]);
        Lane::forEachEventColumn(
            [i](const char*, auto& to, const auto& from) { to.push_back(from[i]); }, out, lane);
        out.maxDepth = std::max(out.maxDepth, lane.depth[i]);
    }
    for (const std::int64_t i : lane.unfinished)
        if (i >= 0 && std::size_t(i) < lane.size() && newIndex[std::size_t(i)] >= 0)
            out.unfinished.push_back(newIndex[std::size_t(i)]);
    return out;
}

// Keeps, besides mustKeep() and the events `marked` (per store, per lane; may be empty), the
// events of depth <= 1 longer than a resolution chosen so that all kept events of `stores` (one
// unit) fit `budget`; returns that resolution (0: all kept) and the reduction in `out`.
std::int64_t reduce(const std::vector<const EventStore*>& stores,
                    const std::vector<std::vector<std::vector<char>>>& marked, std::int64_t budget,
                    std::vector<Reduced>& out)
{
    std::vector<std::vector<std::vector<char>>> keep(stores.size());
    std::int64_t kept = 0;
    std::vector<std::int64_t> candidates;
    for (std::size_t k = 0; k < stores.size(); ++k)
        for (std::size_t l = 0; l < stores[k]->lanes.size(); ++l) {
            const Lane& lane = stores[k]->lanes[l];
            keep[k].push_back(mustKeep(*stores[k], lane));
            std::vector<char>& m = keep[k].back();
            if (k < marked.size() && l < marked[k].size())
                for (std::size_t i = 0; i < lane.size(); ++i)
                    m[i] = char(m[i] | marked[k][l][i]);
            for (std::size_t i = 0; i < lane.size(); ++i) {
                if (m[i])
                    ++kept;
                else if (lane.depth[i] <= 1)
                    candidates.push_back(lane.endNs[i] - lane.startNs[i]);
            }
        }
    const std::int64_t room = std::max<std::int64_t>(0, budget - kept);
    std::int64_t resolution = 0;
    if (std::int64_t(candidates.size()) > room) {
        if (room == 0) {
            resolution = INT64_MAX;
        } else {
            // The room-th longest: keeping only longer ones stays within the budget.
            std::nth_element(candidates.begin(), candidates.begin() + (room - 1), candidates.end(),
                             std::greater<>());
            resolution = candidates[std::size_t(room - 1)];
        }
    }
    out.assign(stores.size(), {});
    for (std::size_t k = 0; k < stores.size(); ++k) {
        const EventStore& store = *stores[k];
        out[k].collectives = store.collectives;
        for (std::size_t l = 0; l < store.lanes.size(); ++l) {
            const Lane& lane = store.lanes[l];
            const std::vector<char>& m = keep[k][l];
            std::vector<char> kept(m);
            for (std::size_t i = 0; i < lane.size(); ++i)
                if (lane.depth[i] <= 1 &&
                    (resolution == 0 || lane.endNs[i] - lane.startNs[i] > resolution))
                    kept[i] = 1;
            std::vector<std::int64_t> newIndex;
            out[k].lanes.push_back(subset(lane, kept, newIndex));
            for (CollectiveRecord& c : out[k].collectives)
                if (c.laneIndex == int(l) && c.eventIndex >= 0 &&
                    std::size_t(c.eventIndex) < newIndex.size())
                    c.eventIndex = newIndex[std::size_t(c.eventIndex)];
        }
    }
    return resolution;
}

// The fields of a rank's breakdown that the digest holds as qint64s, in their order, as
// f(name, field) on `b` (const or not); its largest gaps follow them.
template <typename Breakdown, typename F> void forEachBreakdownField(Breakdown& b, F&& f)
{
    f("rank", b.rank);
    f("sourceIndex", b.sourceIndex);
    f("gpu", b.gpu);
    f("windowStartNs", b.windowStartNs);
    f("windowEndNs", b.windowEndNs);
    f("computeNs", b.computeNs);
    f("commNs", b.commNs);
    f("memNs", b.memNs);
    f("overlapNs", b.overlapNs);
    f("idleNs", b.idleNs);
}

void putBreakdown(QDataStream& s, const RankTimeBreakdown& b)
{
    forEachBreakdownField(b, [&s](const char*, const auto& field) { put(s, field); });
    put(s, b.largestGaps.size());
    for (const IdleGap& g : b.largestGaps) {
        put(s, g.startNs);
        put(s, g.endNs);
    }
}

RankTimeBreakdown getBreakdown(QDataStream& s)
{
    RankTimeBreakdown b;
    forEachBreakdownField(b, [&s](const char*, auto& field) { get(s, field); });
    std::size_t n = 0;
    get(s, n);
    for (std::size_t i = 0; i < n && s.status() == QDataStream::Ok; ++i) {
        IdleGap g;
        get(s, g.startNs);
        get(s, g.endNs);
        b.largestGaps.push_back(g);
    }
    return b;
}

QByteArray breakdownBytes(const RankTimeBreakdown& b)
{
    QByteArray bytes;
    QDataStream s(&bytes, QIODevice::WriteOnly);
    s.setVersion(QDataStream::Qt_6_4);
    putBreakdown(s, b);
    return bytes;
}

bool carriedWhole(const SourceFile& s)
{
    return !isTraceSource(s.kind) && s.kind != SourceKind::Unknown &&
           s.status != SourceStatus::Error;
}

// A prepared statement, finalized on scope exit.
class Stmt {
public:
    Stmt(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
    ~Stmt() { sqlite3_finalize(m_stmt); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    bool ok() const { return m_stmt != nullptr; }
    void bind(int i, std::int64_t v) { sqlite3_bind_int64(m_stmt, i, v); }
    void bind(int i, const QString& v) { bind(i, v.toUtf8(), false); }
    void bind(int i, const QByteArray& v, bool blob)
    {
        if (blob)
            sqlite3_bind_blob64(m_stmt, i, v.constData(), sqlite3_uint64(v.size()),
                                SQLITE_TRANSIENT);
        else
            sqlite3_bind_text(m_stmt, i, v.constData(), int(v.size()), SQLITE_TRANSIENT);
    }
    void bindNull(int i) { sqlite3_bind_null(m_stmt, i); }
    int step() { return sqlite3_step(m_stmt); }
    bool run()
    {
        const int rc = sqlite3_step(m_stmt);
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
        return rc == SQLITE_DONE;
    }
    std::int64_t int64(int col) const { return sqlite3_column_int64(m_stmt, col); }
    bool isNull(int col) const { return sqlite3_column_type(m_stmt, col) == SQLITE_NULL; }
    QByteArray bytes(int col) const
    {
        return QByteArray(static_cast<const char*>(sqlite3_column_blob(m_stmt, col)),
                          sqlite3_column_bytes(m_stmt, col));
    }
    QString text(int col) const { return QString::fromUtf8(bytes(col)); }

private:
    sqlite3_stmt* m_stmt = nullptr;
};

struct Db {
    sqlite3* db = nullptr;
    ~Db() { sqlite3_close(db); }
    QString error() const { return QString::fromUtf8(sqlite3_errmsg(db)); }
    bool exec(const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == 0; }
};

const char* const kSchema = R"(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE sources(idx INTEGER PRIMARY KEY, path TEXT, size INTEGER, kind TEXT, rank INTEGER,
  rank_evidence TEXT, status TEXT, message TEXT, content BLOB);
CREATE TABLE traces(source INTEGER PRIMARY KEY, status TEXT, message TEXT, data BLOB);
CREATE TABLE breakdown(rank INTEGER, source INTEGER, gpu INTEGER, compute_ns INTEGER,
  comm_ns INTEGER, idle_ns INTEGER, data BLOB);
CREATE TABLE findings(idx INTEGER PRIMARY KEY, kind TEXT, severity TEXT, ranks TEXT,
  summary TEXT);
CREATE TABLE windows(finding INTEGER, rank INTEGER, start_ns INTEGER, end_ns INTEGER,
  events INTEGER, narrowed INTEGER, PRIMARY KEY(finding, rank));
)";

// The value of `name` among the enum's values up to `last`; `unknown` for a name none has.
template <typename Enum, typename NameOf>
Enum enumNamed(const QString& name, Enum last, Enum unknown, const NameOf& nameOf)
{
    for (int i = 0; i <= int(last); ++i)
        if (nameOf(Enum(i)) == name) return Enum(i);
    return unknown;
}

} // namespace

std::vector<std::vector<int>> traceUnits(const TraceFolder& folder)
{
    std::map<int, std::vector<int>> byRank;
    std::vector<std::vector<int>> units;
    const QList<SourceFile>& sources = folder.sources();
    for (int i = 0; i < int(sources.size()); ++i) {
        if (!isTraceSource(sources[i].kind)) continue;
        if (sources[i].rank)
            byRank[*sources[i].rank].push_back(i);
        else
            units.push_back({i});
    }
    for (auto& [rank, unit] : byRank)
        units.push_back(std::move(unit));
    std::sort(units.begin(), units.end());
    return units;
}

std::vector<std::vector<int>> partition(const TraceFolder& folder,
                                        const std::vector<std::vector<int>>& units, int processes)
{
    std::vector<std::int64_t> bytes(units.size(), 0);
    for (std::size_t u = 0; u < units.size(); ++u)
        for (const int i : units[u])
            bytes[u] += folder.sources()[i].sizeBytes;
    std::vector<std::size_t> order(units.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });
    const int n = std::max(1, processes);
    std::vector<std::vector<int>> out(static_cast<std::size_t>(n));
    std::vector<std::int64_t> load(static_cast<std::size_t>(n), 0);
    for (const std::size_t u : order) {
        const std::size_t p =
            std::size_t(std::min_element(load.begin(), load.end()) - load.begin());
        load[p] += bytes[u];
        out[p].push_back(int(u));
    }
    for (std::vector<int>& p : out)
        std::sort(p.begin(), p.end());
    return out;
}

namespace {

// What the root asks of every process for one finding and one rank it names: the window
// [startNs, endNs] on the rank's clock, narrowed around `anchorNs` past `cap` events.
struct WindowAsk {
    int finding = -1;
    int rank = -1;
    std::int64_t startNs = 0, endNs = 0, anchorNs = 0, cap = 0;
};

std::vector<WindowAsk> decodeAsks(const QByteArray& bytes)
{
    std::vector<WindowAsk> asks;
    if (bytes.isEmpty()) return asks;
    QDataStream s(bytes);
    s.setVersion(QDataStream::Qt_6_4);
    std::size_t n = 0;
    get(s, n);
    for (std::size_t k = 0; k < n && s.status() == QDataStream::Ok; ++k) {
        WindowAsk& a = asks.emplace_back();
        get(s, a.finding);
        get(s, a.rank);
        get(s, a.startNs);
        get(s, a.endNs);
        get(s, a.anchorNs);
        get(s, a.cap);
    }
    return asks;
}

// The events of `rank`'s lanes in `stores` that overlap [a, b]; marks them when `marks` is given.
std::int64_t eventsIn(const std::vector<const EventStore*>& stores, int rank, std::int64_t a,
                      std::int64_t b, std::vector<std::vector<std::vector<char>>>* marks)
{
    std::int64_t n = 0;
    for (std::size_t k = 0; k < stores.size(); ++k)
        for (std::size_t l = 0; l < stores[k]->lanes.size(); ++l) {
            const Lane& lane = stores[k]->lanes[l];
            if (lane.rank != rank) continue;
            for (std::size_t i = 0; i < lane.size(); ++i) {
                if (lane.startNs[i] > b || lane.endNs[i] < a) continue;
                ++n;
                if (marks) (*marks)[k][l][i] = 1;
            }
        }
    return n;
}

// The window of `ask` on one unit's stores, narrowed to its cap; marks its events in `marks`.
Window placeWindow(const WindowAsk& ask, const std::vector<const EventStore*>& stores,
                   std::vector<std::vector<std::vector<char>>>& marks)
{
    Window w;
    w.finding = ask.finding;
    w.rank = ask.rank;
    w.startNs = ask.startNs;
    w.endNs = ask.endNs;
    if (eventsIn(stores, ask.rank, w.startNs, w.endNs, nullptr) > ask.cap) {
        // The widest half-width around the anchor whose events fit (at least the anchor).
        const std::int64_t anchor = std::clamp(ask.anchorNs, ask.startNs, ask.endNs);
        const auto at = [&](std::int64_t h) {
            return std::pair(std::max(ask.startNs, anchor - h), std::min(ask.endNs, anchor + h));
        };
        std::int64_t lo = 0, hi = std::max(anchor - ask.startNs, ask.endNs - anchor);
        while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo + 1) / 2;
            const auto [a, b] = at(mid);
            if (eventsIn(stores, ask.rank, a, b, nullptr) <= ask.cap)
                lo = mid;
            else
                hi = mid - 1;
        }
        std::tie(w.startNs, w.endNs) = at(lo);
        w.narrowed = true;
    }
    w.events = eventsIn(stores, ask.rank, w.startNs, w.endNs, &marks);
    return w;
}

void putWindow(QDataStream& s, const Window& w)
{
    Window::forEachField(w, [&s](const char*, const auto& field) { put(s, field); });
}

Window getWindow(QDataStream& s)
{
    Window w;
    Window::forEachField(w, [&s](const char*, auto& field) { get(s, field); });
    return w;
}

// One unit's traces as the folder reads them: the rank a trace states labels its events, as
// readFolder does (`statedRanks`, per source, the rank it was given: filled on the first read,
// applied on a read again). `eventsRead` per source.
std::vector<TraceSourceRead> readUnit(TraceFolder& folder, const std::vector<int>& sources,
                                      std::vector<std::optional<int>>& statedRanks,
                                      std::vector<std::int64_t>& eventsRead,
                                      const std::function<void(int, const QString&)>& progress)
{
    const bool first = statedRanks.empty();
    if (first) statedRanks.resize(sources.size());
    std::vector<TraceSourceRead> reads(sources.size());
    eventsRead.assign(sources.size(), 0);
    for (std::size_t k = 0; k < sources.size(); ++k) {
        const int index = sources[k];
        const SourceFile& s = folder.sources()[index];
        if (progress) progress(index, s.relativePath);
        TraceSourceRead& read = reads[k];
        try {
            read = readTraceSource(s, index, {});
        } catch (const std::bad_alloc&) {
            read = {};
            read.status = SourceStatus::Error;
            read.message = "out of memory while reading " + s.relativePath.toStdString() +
                           "; nothing of it is kept";
        }
        if (first && read.statedRank && folder.attributeStatedRank(index, *read.statedRank))
            statedRanks[k] = folder.sources()[index].rank.value_or(-1);
        if (statedRanks[k]) {
            for (Lane& lane : read.events.lanes)
                lane.rank = *statedRanks[k];
            for (CollectiveRecord& c : read.events.collectives)
                c.rank = *statedRanks[k];
        }
        eventsRead[k] = read.events.eventCount();
    }
    return reads;
}

// One unit's records: its lanes reduced to `budget` kept events, at full detail the last events
// of each of its ranks and the windows `asks` name on them (all placed into `windows`).
std::vector<QByteArray> encodeUnit(const std::vector<TraceSourceRead>& reads,
                                   const std::vector<std::int64_t>& eventsRead,
                                   const std::vector<const WindowAsk*>& asks, std::int64_t budget,
                                   std::vector<Window>& windows)
{
    std::vector<const EventStore*> stores;
    std::set<int> ranks;
    for (const TraceSourceRead& r : reads) {
        stores.push_back(&r.events);
        for (const Lane& lane : r.events.lanes)
            ranks.insert(lane.rank);
    }
    std::vector<std::vector<std::vector<char>>> marks(stores.size());
    for (std::size_t k = 0; k < stores.size(); ++k)
        for (const Lane& lane : stores[k]->lanes)
            marks[k].emplace_back(lane.size(), 0);
    // The last events of each rank, whatever the findings: where a hung rank stopped, from
    // kTailWindowNs before its last event starts to when its last event ends.
    for (const int rank : ranks) {
        if (rank < 0) continue;
        std::int64_t lastStart = INT64_MIN, lastEnd = INT64_MIN;
        for (const EventStore* store : stores)
            for (const Lane& lane : store->lanes)
                if (lane.rank == rank && lane.size() > 0) {
                    lastStart = std::max(lastStart, lane.startNs.back());
                    lastEnd =
                        std::max(lastEnd, *std::max_element(lane.endNs.begin(), lane.endNs.end()));
                }
        if (lastStart == INT64_MIN) continue;
        const std::int64_t cap =
            std::min(kTailWindowEvents, std::max<std::int64_t>(kTailEvents, budget / 4));
        windows.push_back(placeWindow(
            {-1, rank, lastStart - kTailWindowNs, lastEnd, lastStart, cap}, stores, marks));
    }
    for (const WindowAsk* a : asks)
        windows.push_back(placeWindow(*a, stores, marks));
    std::vector<Reduced> reduced;
    const std::int64_t resolution = reduce(stores, marks, budget, reduced);
    std::vector<QByteArray> encoded;
    for (std::size_t k = 0; k < reads.size(); ++k)
        encoded.push_back(encodeTrace(reads[k], reduced[k], eventsRead[k], resolution));
    return encoded;
}

} // namespace

// A unit keeps its records without windows, its ranks and its tail windows; its events are read
// again only when a finding names one of its ranks.
struct Share::Unit {
    std::vector<int> sources;
    std::vector<std::optional<int>> statedRanks; // per source (readUnit)
    std::set<int> ranks;
    std::int64_t bytes = 0;
    std::int64_t budget = 0; // kept events
    std::vector<QByteArray> plain;
    std::vector<Window> tails;
};

Share::Share(const TraceFolder& discovered, const std::vector<std::vector<int>>& units,
             const std::function<void(int, const QString&)>& progress)
    : m_folder(std::make_unique<TraceFolder>(discovered)), m_progress(progress)
{
    for (const SourceFile& s : discovered.sources())
        if (isTraceSource(s.kind)) m_traceBytes += s.sizeBytes;
    for (const std::vector<int>& sources : units) {
        Unit& unit = m_units.emplace_back();
        unit.sources = sources;
        for (const int index : sources)
            unit.bytes += discovered.sources()[index].sizeBytes;
        std::vector<std::int64_t> eventsRead;
        const std::vector<TraceSourceRead> reads =
            readUnit(*m_folder, sources, unit.statedRanks, eventsRead, progress);
        for (const TraceSourceRead& r : reads)
            for (const Lane& lane : r.events.lanes)
                unit.ranks.insert(lane.rank);
        // The breakdown is a union over all lanes of the rank: one store of them.
        std::vector<RankTimeBreakdown> b;
        if (reads.size() == 1) {
            b = TimeBreakdown::compute(reads[0].events);
        } else {
            EventStore all;
            for (const TraceSourceRead& r : reads) {
                QByteArray copy;
                QDataStream out(&copy, QIODevice::WriteOnly);
                putStore(out, r.events, r.events.lanes, r.events.collectives, r.events.flows);
                QDataStream in(copy);
                EventStore store;
                getStore(in, store);
                all.merge(std::move(store));
            }
            b = TimeBreakdown::compute(all);
        }
        m_breakdown.insert(m_breakdown.end(), b.begin(), b.end());
        const double share = std::min(double(unit.bytes) * kLaneShare,
                                      double(kMaxLaneBytes) * double(unit.bytes) /
                                          double(std::max<std::int64_t>(1, m_traceBytes)));
        unit.budget = std::max<std::int64_t>(std::int64_t(4 * kTailEvents),
                                             std::int64_t(share) / kBytesPerKeptEvent);
        unit.plain = encodeUnit(reads, eventsRead, {}, unit.budget, unit.tails);
    }
}

Share::~Share() = default;

QByteArray Share::part(const QByteArray& windowBytes) const
{
    const std::vector<WindowAsk> asks = decodeAsks(windowBytes);
    std::vector<std::pair<int, QByteArray>> traces;
    std::vector<Window> windows;
    for (const Unit& unit : m_units) {
        std::vector<const WindowAsk*> mine;
        for (const WindowAsk& a : asks)
            if (unit.ranks.count(a.rank)) mine.push_back(&a);
        std::vector<QByteArray> encoded;
        if (mine.empty()) {
            encoded = unit.plain;
            windows.insert(windows.end(), unit.tails.begin(), unit.tails.end());
        } else {
            // Read again: the events were not kept (a process's memory is one unit's events).
            std::vector<std::optional<int>> statedRanks = unit.statedRanks;
            std::vector<std::int64_t> eventsRead;
            const std::vector<TraceSourceRead> reads =
                readUnit(*m_folder, unit.sources, statedRanks, eventsRead, m_progress);
            encoded = encodeUnit(reads, eventsRead, mine, unit.budget, windows);
        }
        for (std::size_t k = 0; k < unit.sources.size(); ++k)
            traces.emplace_back(unit.sources[k], encoded[k]);
    }
    QByteArray bytes;
    QDataStream s(&bytes, QIODevice::WriteOnly);
    s.setVersion(QDataStream::Qt_6_4);
    put(s, traces.size());
    for (const auto& [index, data] : traces) {
        put(s, index);
        s << data;
    }
    put(s, m_breakdown.size());
    for (const RankTimeBreakdown& b : m_breakdown)
        putBreakdown(s, b);
    put(s, windows.size());
    for (const Window& w : windows)
        putWindow(s, w);
    return bytes;
}

namespace {

// The parts of every process put together and read as the folder would be: the read, the
// breakdown of the full lanes, the windows the processes placed, and the diagnosis.
struct Assembled {
    Opened opened;
    Diagnosis diagnosis;
    std::vector<QByteArray> traces; // per source, its record
};

Assembled assemble(const TraceFolder& discovered, const std::vector<QByteArray>& parts)
{
    Assembled out;
    const QList<SourceFile>& sources = discovered.sources();
    out.traces.resize(std::size_t(sources.size()));
    std::vector<RankTimeBreakdown>& breakdown = out.opened.breakdown;
    for (const QByteArray& part : parts) {
        QDataStream s(part);
        s.setVersion(QDataStream::Qt_6_4);
        std::size_t n = 0;
        get(s, n);
        for (std::size_t k = 0; k < n && s.status() == QDataStream::Ok; ++k) {
            int index = -1;
            get(s, index);
            QByteArray data;
            s >> data;
            if (index >= 0 && index < sources.size()) out.traces[std::size_t(index)] = data;
        }
        get(s, n);
        for (std::size_t k = 0; k < n && s.status() == QDataStream::Ok; ++k)
            breakdown.push_back(getBreakdown(s));
        get(s, n);
        for (std::size_t k = 0; k < n && s.status() == QDataStream::Ok; ++k)
            out.opened.windows.push_back(getWindow(s));
        if (s.status() != QDataStream::Ok) {
            out.opened.error = QStringLiteral("a process sent a damaged part");
            return out;
        }
    }
    // TimeBreakdown::compute's order: by rank, then by source for lanes of no rank.
    std::sort(breakdown.begin(), breakdown.end(),
              [](const RankTimeBreakdown& a, const RankTimeBreakdown& b) {
                  return std::pair(a.rank, a.sourceIndex) < std::pair(b.rank, b.sourceIndex);
              });
    // One window per finding and rank (a rank's lanes in two units, as a trace of no rank that
    // states one, would place two): the first in a total order, so any split gives the same.
    std::vector<Window>& windows = out.opened.windows;
    const auto key = [](const Window& w) {
        return std::tuple(w.finding, w.rank, w.startNs, w.endNs, w.events, w.narrowed);
    };
    std::sort(windows.begin(), windows.end(),
              [&](const Window& a, const Window& b) { return key(a) < key(b); });
    windows.erase(std::unique(windows.begin(), windows.end(),
                              [](const Window& a, const Window& b) {
                                  return a.finding == b.finding && a.rank == b.rank;
                              }),
                  windows.end());
    ReadOptions options;
    const std::vector<QByteArray>& traces = out.traces;
    options.givenTrace = [&traces](int index) {
        if (traces[std::size_t(index)].isEmpty()) {
            TraceSourceRead missing;
            missing.status = SourceStatus::Error;
            missing.message = "no process digested it";
            return missing;
        }
        return decodeTrace(traces[std::size_t(index)]);
    };
    out.opened.read = readFolder(TraceFolder(discovered), {}, {}, options);
    out.diagnosis = diagnose(out.opened.read, {}, &breakdown);
    return out;
}

} // namespace

QByteArray findingWindows(const TraceFolder& discovered, const std::vector<QByteArray>& parts)
{
    const Assembled assembled = assemble(discovered, parts);
    const AnalysisResult& analysis = assembled.diagnosis.analysis;
    std::vector<WindowAsk> asks;
    for (std::size_t f = 0; f < analysis.findings.size(); ++f) {
        const Finding& finding = analysis.findings[f];
        if (finding.startNs < 0 || finding.ranks.empty()) continue;
        const std::int64_t cap = std::max<std::int64_t>(
            kWindowEventsPerRank, kWindowEvents / std::int64_t(finding.ranks.size()));
        for (const int rank : std::set<int>(finding.ranks.begin(), finding.ranks.end())) {
            // Aligned time back on the rank's own clock (rank time - offset = aligned).
            const std::int64_t offset = analysis.clock.offsetOf(rank);
            WindowAsk& a = asks.emplace_back();
            a.finding = int(f);
            a.rank = rank;
            a.anchorNs = finding.startNs + offset;
            a.startNs = a.anchorNs - kWindowMarginNs;
            a.endNs = std::max(finding.endNs, finding.startNs) + offset + kWindowMarginNs;
            a.cap = cap;
        }
    }
    QByteArray bytes;
    QDataStream s(&bytes, QIODevice::WriteOnly);
    s.setVersion(QDataStream::Qt_6_4);
    put(s, asks.size());
    for (const WindowAsk& a : asks)
        for (const std::int64_t v :
             {std::int64_t(a.finding), std::int64_t(a.rank), a.startNs, a.endNs, a.anchorNs, a.cap})
            put(s, v);
    return bytes;
}

QString write(const QString& path, const TraceFolder& discovered,
              const std::vector<QByteArray>& parts, Opened* assembledOut)
{
    Assembled assembled = assemble(discovered, parts);
    if (!assembled.opened.error.isEmpty()) return assembled.opened.error;
    const QList<SourceFile>& sources = discovered.sources();
    const std::vector<QByteArray>& traces = assembled.traces;
    const std::vector<RankTimeBreakdown>& breakdown = assembled.opened.breakdown;
    const TraceRead& read = assembled.opened.read;
    const Diagnosis& diagnosis = assembled.diagnosis;

    const QString partPath = path + QStringLiteral(".part");
    QFile::remove(partPath);
    Db db;
    if (sqlite3_open_v2(partPath.toUtf8().constData(), &db.db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
        return QStringLiteral("cannot write %1: %2").arg(partPath, db.error());
    if (!db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;") || !db.exec(kSchema))
        return QStringLiteral("cannot write %1: %2").arg(partPath, db.error());
    bool ok = true;
    {
        Stmt meta(db.db, "INSERT INTO meta VALUES(?, ?)");
        auto warnings = nlohmann::json::array();
        for (const QString& w : discovered.warnings())
            warnings.push_back(w.toStdString());
        const std::pair<const char*, QString> rows[] = {
            {"schema_version", QString::number(kSchemaVersion)},
            {"folder", discovered.path()},
            {"world_size", QString::number(discovered.worldSize())},
            {"stated_world_size", QString::number(discovered.statedWorldSize())},
            {"folder_warnings", QString::fromStdString(warnings.dump(
                                    -1, ' ', false, nlohmann::json::error_handler_t::replace))},
            {"lane_share", QString::number(kLaneShare)},
            {"max_lane_bytes", QString::number(kMaxLaneBytes)},
            {"tail_events", QString::number(kTailEvents)},
            {"tail_window_ns", QString::number(kTailWindowNs)},
            {"tail_window_events", QString::number(kTailWindowEvents)},
            {"window_margin_ns", QString::number(kWindowMarginNs)},
            {"window_events", QString::number(kWindowEvents)},
        };
        for (const auto& [key, value] : rows) {
            meta.bind(1, QString::fromLatin1(key));
            meta.bind(2, value);
            ok = ok && meta.run();
        }
        Stmt src(db.db, "INSERT INTO sources VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
        Stmt trace(db.db, "INSERT INTO traces VALUES(?, ?, ?, ?)");
        for (int i = 0; i < int(sources.size()); ++i) {
            const SourceFile& s = sources[i];
            src.bind(1, std::int64_t(i));
            src.bind(2, s.relativePath);
            src.bind(3, s.sizeBytes);
            src.bind(4, sourceKindName(s.kind));
            if (s.rank)
                src.bind(5, std::int64_t(*s.rank));
            else
                src.bindNull(5);
            src.bind(6, s.rankEvidence);
            src.bind(7, sourceStatusName(s.status));
            src.bind(8, s.message);
            QFile file;
            QString error;
            if (carriedWhole(s) && s.openForReading(file, &error))
                src.bind(9, qCompress(file.readAll(), 6), true);
            else
                src.bindNull(9);
            ok = ok && src.run();
            if (!isTraceSource(s.kind)) continue;
            const SourceFile& after = read.folder.sources()[i];
            trace.bind(1, std::int64_t(i));
            trace.bind(2, sourceStatusName(after.status));
            trace.bind(3, after.message);
            trace.bind(4, traces[std::size_t(i)], true);
            ok = ok && trace.run();
        }
        Stmt rank(db.db, "INSERT INTO breakdown VALUES(?, ?, ?, ?, ?, ?, ?)");
        for (const RankTimeBreakdown& b : breakdown) {
            rank.bind(1, b.rank);
            rank.bind(2, b.sourceIndex);
            rank.bind(3, b.gpu);
            rank.bind(4, b.computeNs);
            rank.bind(5, b.commNs);
            rank.bind(6, b.idleNs);
            rank.bind(7, breakdownBytes(b), true);
            ok = ok && rank.run();
        }
        // For a look with sqlite3; opening the digest diagnoses it again.
        Stmt finding(db.db, "INSERT INTO findings VALUES(?, ?, ?, ?, ?)");
        std::int64_t n = 0;
        for (const Finding& f : diagnosis.analysis.findings) {
            finding.bind(1, n++);
            finding.bind(2, QString::fromStdString(findingKindName(f.kind)));
            finding.bind(3, QString::fromStdString(severityName(f.severity)));
            finding.bind(4, QString::fromStdString(formatRanks(f.ranks)));
            finding.bind(5, QString::fromStdString(f.summary));
            ok = ok && finding.run();
        }
        Stmt window(db.db, "INSERT INTO windows VALUES(?, ?, ?, ?, ?, ?)");
        for (const Window& w : assembled.opened.windows) {
            window.bind(1, std::int64_t(w.finding));
            window.bind(2, std::int64_t(w.rank));
            window.bind(3, w.startNs);
            window.bind(4, w.endNs);
            window.bind(5, w.events);
            window.bind(6, std::int64_t(w.narrowed));
            ok = ok && window.run();
        }
    }
    if (!ok || !db.exec("COMMIT;"))
        return QStringLiteral("cannot write %1: %2").arg(partPath, db.error());
    sqlite3_close(db.db);
    db.db = nullptr;
    QFile::remove(path);
    if (!QFile::rename(partPath, path))
        return QStringLiteral("cannot move %1 to %2").arg(partPath, path);
    if (assembledOut) *assembledOut = std::move(assembled.opened);
    return {};
}

QString create(const QString& folderPath, const QString& path)
{
    const TraceFolder folder = TraceFolder::discover(folderPath);
    if (!folder.isValid()) return folder.error();
    const Share share(folder, traceUnits(folder));
    return write(path, folder, {share.part(findingWindows(folder, {share.part()}))});
}

bool isDigestPath(const QString& path)
{
    return path.endsWith(QLatin1String(".rsdigest"));
}

Opened open(const QString& path)
{
    Opened out;
    const auto fail = [&](const QString& why) {
        out.error = QStringLiteral("%1: %2").arg(path, why);
        out.read.folder = TraceFolder::restore(path, {}, {}, 0, 0, out.error);
        return std::move(out);
    };
    if (!QFileInfo(path).isFile()) return fail(QStringLiteral("no such file"));
    Db db;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db.db, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK)
        return fail(db.error());
    std::map<std::string, QString> meta;
    {
        Stmt q(db.db, "SELECT key, value FROM meta");
        if (!q.ok()) return fail(QStringLiteral("not a RankScope digest"));
        while (q.step() == SQLITE_ROW)
            meta[q.text(0).toStdString()] = q.text(1);
    }
    if (meta["schema_version"] != QString::number(kSchemaVersion))
        return fail(QStringLiteral("a digest of schema %1, this build reads schema %2 only: "
                                   "digest the folder again with this version's rankscope-digest")
                        .arg(meta["schema_version"].isEmpty() ? QStringLiteral("?")
                                                              : meta["schema_version"])
                        .arg(kSchemaVersion));
    const QString folderPath = meta["folder"];
    QStringList warnings;
    const auto stored =
        nlohmann::json::parse(meta["folder_warnings"].toStdString(), nullptr, false);
    if (stored.is_array())
        for (const nlohmann::json& w : stored)
            if (w.is_string()) warnings.append(QString::fromStdString(w.get<std::string>()));

    // The carried sources are read by the same readers, from a copy on disk.
    QTemporaryDir scratch;
    QList<SourceFile> sources;
    std::map<int, QByteArray> traces;
    {
        Stmt q(db.db, "SELECT idx, path, size, kind, rank, rank_evidence, status, message, "
                      "content FROM sources ORDER BY idx");
        while (q.ok() && q.step() == SQLITE_ROW) {
            SourceFile s;
            s.relativePath = q.text(1);
            s.sizeBytes = q.int64(2);
            s.kind = enumNamed(q.text(3), SourceKind::Unknown, SourceKind::Unknown, sourceKindName);
            if (!q.isNull(4)) s.rank = int(q.int64(4));
            s.rankEvidence = q.text(5);
            s.status =
                enumNamed(q.text(6), SourceStatus::Skipped, SourceStatus::Error, sourceStatusName);
            // Builds before the "skipped" status listed what they did not read as "ok".
            if (s.kind == SourceKind::Unknown && s.status == SourceStatus::Ok)
                s.status = SourceStatus::Skipped;
            s.message = q.text(7);
            // A trace's original file, when it is still there, serves details on demand.
            s.absolutePath = folderPath + QLatin1Char('/') + s.relativePath;
            if (!q.isNull(8)) {
                s.absolutePath = scratch.filePath(s.relativePath);
                QDir().mkpath(QFileInfo(s.absolutePath).path());
                QFile copy(s.absolutePath);
                if (!copy.open(QIODevice::WriteOnly) || copy.write(qUncompress(q.bytes(8))) < 0)
                    return fail(QStringLiteral("cannot unpack %1: %2")
                                    .arg(s.relativePath, copy.errorString()));
            }
            if (!q.isNull(8) || QFileInfo(s.absolutePath).size() == s.sizeBytes) {
                const int fd = ::open(s.absolutePath.toLocal8Bit().constData(),
                                      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fd >= 0) s.descriptor = std::make_shared<SourceDescriptor>(fd, s.absolutePath);
            }
            sources.append(std::move(s));
        }
        Stmt t(db.db, "SELECT source, data FROM traces ORDER BY source");
        while (t.ok() && t.step() == SQLITE_ROW)
            traces[int(t.int64(0))] = t.bytes(1);
        Stmt w(db.db, "SELECT finding, rank, start_ns, end_ns, events, narrowed FROM windows "
                      "ORDER BY finding, rank");
        while (w.ok() && w.step() == SQLITE_ROW)
            out.windows.push_back({int(w.int64(0)), int(w.int64(1)), w.int64(2), w.int64(3),
                                   w.int64(4), w.int64(5) != 0});
        Stmt b(db.db, "SELECT data FROM breakdown ORDER BY rank, source");
        while (b.ok() && b.step() == SQLITE_ROW) {
            const QByteArray bytes = b.bytes(0);
            QDataStream s(bytes);
            s.setVersion(QDataStream::Qt_6_4);
            out.breakdown.push_back(getBreakdown(s));
        }
    }
    // Filled by the readers' workers, one slot per source.
    std::vector<Reduction> reductions(std::size_t(sources.size()));
    ReadOptions options;
    options.givenTrace = [&traces, &reductions](int index) {
        const auto it = traces.find(index);
        if (it != traces.end()) return decodeTrace(it->second, &reductions[std::size_t(index)]);
        TraceSourceRead missing;
        missing.status = SourceStatus::Error;
        missing.message = "the digest holds no record of it";
        return missing;
    };
    out.read = readFolder(TraceFolder::restore(folderPath, std::move(sources), std::move(warnings),
                                               meta["world_size"].toInt(),
                                               meta["stated_world_size"].toInt()),
                          {}, {}, options);
    const QList<SourceFile>& read = out.read.folder.sources();
    for (int i = 0; i < int(read.size()) && std::size_t(i) < reductions.size(); ++i) {
        if (!isTraceSource(read[i].kind) || !read[i].rank) continue;
        Reduction& r = out.reductions[*read[i].rank];
        r.resolutionNs = std::max(r.resolutionNs, reductions[std::size_t(i)].resolutionNs);
        r.eventsRead += reductions[std::size_t(i)].eventsRead;
        r.eventsKept += reductions[std::size_t(i)].eventsKept;
    }
    return out;
}

RawWindow readRawWindow(const TraceFolder& folder, int rank, std::int64_t startNs,
                        std::int64_t endNs)
{
    RawWindow out;
    const auto fail = [&](const QString& why) {
        out.events = {};
        out.error = why;
        return std::move(out);
    };
    const QList<SourceFile>& sources = folder.sources();
    bool any = false;
    for (int index = 0; index < int(sources.size()); ++index) {
        const SourceFile& s = sources[index];
        if (!isTraceSource(s.kind) || s.rank != rank) continue;
        any = true;
        const QFileInfo info(s.absolutePath);
        if (!info.isFile() || info.size() != s.sizeBytes)
            return fail(QStringLiteral("%1 is no longer at %2 as it was digested (%3 bytes)")
                            .arg(s.relativePath, s.absolutePath)
                            .arg(s.sizeBytes));
        TraceSourceRead read = readTraceSource(s, index, {});
        if (read.status == SourceStatus::Error)
            return fail(
                QStringLiteral("%1: %2").arg(s.relativePath, QString::fromStdString(read.message)));
        for (Lane& lane : read.events.lanes) {
            std::vector<char> keep(lane.size(), 0);
            for (std::size_t i = 0; i < lane.size(); ++i)
                keep[i] = lane.startNs[i] <= endNs && lane.endNs[i] >= startNs;
            std::vector<std::int64_t> newIndex;
            lane = subset(lane, keep, newIndex);
            lane.rank = rank; // as readFolder labels a trace of a stated rank
        }
        read.events.collectives.clear();
        read.events.flows.clear();
        out.events.merge(std::move(read.events));
    }
    if (!any) return fail(QStringLiteral("the digest lists no trace of rank %1").arg(rank));
    return out;
}

} // namespace rankscope::Digest
