#pragma once

#include "model/tracesession.h"
#include "model/zoomstate.h"

#include <QList>
#include <QString>
#include <cstdint>
#include <optional>
#include <vector>

namespace rankscope {

// A time unit that keeps a chart's axis readable: values are nanoseconds / nsPerUnit.
struct ChartUnit {
    double nsPerUnit = 1e6;
    QString name = QStringLiteral("ms");
};

// A per-rank time breakdown as the four stacked series of the chart, in `unit`.
struct BreakdownBars {
    QList<int> ranks;
    QList<bool> gpu; // per rank: GPU streams measured, else CPU threads
    QList<double> compute, comm, mem, idle, overlap;
    ChartUnit unit;
    bool allGpu() const { return !gpu.contains(false); }
    bool noGpu() const { return !gpu.contains(true); }
};

// One matched collective across its member ranks. Times are on the timeline's clock, so the
// arrival order is the one the timeline shows.
struct CollectiveBars {
    int group = -1; // index into analysis.groups
    int index = -1; // index into that group's collectives
    QString title;  // "all_reduce seq 12 (group 0)"
    QList<int> ranks;
    QList<int> records;      // index into events.collectives; -1: the rank has no record of it
    QList<double> arrival;   // enter minus the earliest member's enter, in `unit`
    QList<double> duration;  // exit minus enter, in `unit`
    std::int64_t spanNs = 0; // latest exit minus earliest enter
    int lastArrivingRank = -1;
    ChartUnit unit;
    TimelineClock clock;
};

// What the charts show, prepared from a session without any widget, so it can be tested and
// stays small (Qt Charts wants few points).
class ChartData {
public:
    static ChartUnit unitFor(std::int64_t maxNs);
    static BreakdownBars breakdown(const std::vector<RankTimeBreakdown>& breakdown);
    static CollectiveBars collective(const TraceSession& session, int group, int index,
                                     const TimelineClock& clock);
    // The `n` matched collectives with the longest span from first enter to last exit on
    // `clock`, longest first.
    static std::vector<CollectiveBars>
    slowestCollectives(const TraceSession& session, std::size_t n, const TimelineClock& clock);
    // The matched collective holding store record `record`, as (group, index).
    static std::optional<std::pair<int, int>> findCollective(const AnalysisResult& analysis,
                                                             std::size_t record);
};

} // namespace rankscope
