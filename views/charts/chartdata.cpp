#include "views/charts/chartdata.h"

#include <QCoreApplication>
#include <algorithm>
#include <limits>

namespace rankscope {

namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("rankscope::ChartData", text);
}

// Enter and exit of one record on the timeline's clock; -1 when the source gave no time.
std::pair<std::int64_t, std::int64_t> enterExit(const CollectiveRecord& c,
                                                const TimelineClock& clock)
{
    const std::int64_t enter = c.issueStartNs >= 0 ? c.issueStartNs : c.execStartNs;
    const std::int64_t exit = c.execEndNs >= 0 ? c.execEndNs : c.issueEndNs;
    return {enter < 0 ? -1 : clock.toDisplay(c.rank, enter),
            exit < 0 ? -1 : clock.toDisplay(c.rank, exit)};
}

// Earliest enter, latest enter and latest exit over the members that have a record.
struct Span {
    std::int64_t firstEnter = std::numeric_limits<std::int64_t>::max();
    std::int64_t lastEnter = -1;
    std::int64_t lastExit = -1;
    int lastRank = -1;
    bool valid() const { return lastEnter >= 0; }
};

Span spanOf(const EventStore& store, const TimelineClock& clock, const MatchedCollective& m)
{
    Span s;
    for (std::int32_t rec : m.records) {
        if (rec < 0 || std::size_t(rec) >= store.collectives.size()) continue;
        const CollectiveRecord& c = store.collectives[std::size_t(rec)];
        const auto [enter, exit] = enterExit(c, clock);
        if (enter < 0) continue;
        s.firstEnter = std::min(s.firstEnter, enter);
        if (enter > s.lastEnter) {
            s.lastEnter = enter;
            s.lastRank = c.rank;
        }
        s.lastExit = std::max(s.lastExit, std::max(exit, enter));
    }
    return s;
}

} // namespace

ChartUnit ChartData::unitFor(std::int64_t maxNs)
{
    if (maxNs >= 10'000'000'000) return {1e9, QStringLiteral("s")};
    if (maxNs >= 1'000'000) return {1e6, QStringLiteral("ms")};
    if (maxNs >= 1'000) return {1e3, QStringLiteral("µs")};
    return {1.0, QStringLiteral("ns")};
}

BreakdownBars ChartData::breakdown(const std::vector<RankTimeBreakdown>& breakdown)
{
    BreakdownBars bars;
    std::int64_t maxNs = 0;
    for (const RankTimeBreakdown& b : breakdown)
        maxNs = std::max({maxNs, b.computeNs + b.commNs + b.memNs + b.idleNs, b.windowNs()});
    bars.unit = unitFor(maxNs);
    const double d = bars.unit.nsPerUnit;
    for (const RankTimeBreakdown& b : breakdown) {
        bars.ranks.append(b.rank);
        bars.gpu.append(b.gpu);
        bars.compute.append(double(b.computeNs) / d);
        bars.comm.append(double(b.commNs) / d);
        bars.mem.append(double(b.memNs) / d);
        bars.idle.append(double(b.idleNs) / d);
        bars.overlap.append(double(b.overlapNs) / d);
    }
    return bars;
}

CollectiveBars ChartData::collective(const TraceSession& session, int group, int index,
                                     const TimelineClock& clock)
{
    CollectiveBars bars;
    bars.clock = clock;
    const AnalysisResult& a = session.analysis;
    if (group < 0 || std::size_t(group) >= a.groups.size()) return bars;
    const CollectiveGroup& g = a.groups[std::size_t(group)];
    if (index < 0 || std::size_t(index) >= g.collectives.size()) return bars;
    const MatchedCollective& m = g.collectives[std::size_t(index)];
    const EventStore& store = session.events;
    bars.group = group;
    bars.index = index;
    const QString op = QString::fromUtf8(store.strings.view(m.op).data(),
                                         qsizetype(store.strings.view(m.op).size()));
    const QString groupName =
        g.name.empty() ? tr("unnamed group") : tr("group %1").arg(QString::fromStdString(g.name));
    bars.title = (g.byOrdinal ? tr("%1 #%2 (%3)") : tr("%1 seq %2 (%3)"))
                     .arg(op.isEmpty() ? tr("collective") : op)
                     .arg(m.seq)
                     .arg(groupName);
    const Span span = spanOf(store, clock, m);
    bars.spanNs = span.valid() ? span.lastExit - span.firstEnter : 0;
    bars.lastArrivingRank = span.lastRank;
    bars.unit = unitFor(bars.spanNs);
    const double d = bars.unit.nsPerUnit;
    for (std::size_t slot = 0; slot < g.members.size(); ++slot) {
        bars.ranks.append(g.members[slot]);
        const std::int32_t rec = slot < m.records.size() ? m.records[slot] : -1;
        const bool have = rec >= 0 && std::size_t(rec) < store.collectives.size();
        const auto [enter, exit] = have ? enterExit(store.collectives[std::size_t(rec)], clock)
                                        : std::pair<std::int64_t, std::int64_t>{-1, -1};
        bars.records.append(have ? rec : -1);
        bars.arrival.append(enter >= 0 ? double(enter - span.firstEnter) / d : 0.0);
        bars.duration.append(enter >= 0 && exit >= enter ? double(exit - enter) / d : 0.0);
    }
    return bars;
}

std::vector<CollectiveBars> ChartData::slowestCollectives(const TraceSession& session,
                                                          std::size_t n, const TimelineClock& clock)
{
    struct Candidate {
        std::int64_t spanNs;
        int group, index;
    };
    std::vector<Candidate> all;
    const AnalysisResult& a = session.analysis;
    for (std::size_t g = 0; g < a.groups.size(); ++g)
        for (std::size_t i = 0; i < a.groups[g].collectives.size(); ++i) {
            const Span s = spanOf(session.events, clock, a.groups[g].collectives[i]);
            if (s.valid()) all.push_back({s.lastExit - s.firstEnter, int(g), int(i)});
        }
    const auto longer = [](const Candidate& x, const Candidate& y) {
        if (x.spanNs != y.spanNs) return x.spanNs > y.spanNs;
        return std::pair(x.group, x.index) < std::pair(y.group, y.index);
    };
    const std::size_t k = std::min(n, all.size());
    std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(k), all.end(), longer);
    std::vector<CollectiveBars> out;
    out.reserve(k);
    for (std::size_t i = 0; i < k; ++i)
        out.push_back(collective(session, all[i].group, all[i].index, clock));
    return out;
}

std::optional<std::pair<int, int>> ChartData::findCollective(const AnalysisResult& analysis,
                                                             std::size_t record)
{
    for (std::size_t g = 0; g < analysis.groups.size(); ++g) {
        const auto& cs = analysis.groups[g].collectives;
        for (std::size_t i = 0; i < cs.size(); ++i)
            if (std::find(cs[i].records.begin(), cs[i].records.end(), std::int32_t(record)) !=
                cs[i].records.end())
                return std::pair(int(g), int(i));
    }
    return std::nullopt;
}

} // namespace rankscope
