#pragma once

#include "model/overview/lanejobs.h"
#include "model/store/eventstore.h"
#include "model/zoomstate.h"

#include <QCoreApplication>
#include <QHash>
#include <QSet>
#include <QString>
#include <functional>
#include <utility>
#include <vector>

namespace rankscope {

// One event of the store: lane index and event index inside the lane. `raw`: the event is one of
// the lane's events read back from the original trace of a digest and drawn in place of the
// digest's (TimelineView::rawDetail); `event` indexes that lane, not the store's.
struct TimelineEventRef {
    int lane = -1;
    std::int64_t event = -1;
    bool raw = false;
    bool isValid() const { return lane >= 0 && event >= 0; }
    bool operator==(const TimelineEventRef&) const = default;
};

// Which rows the detail timeline has and where they are, without a screen. Per rank: a header
// row, then a lane per GPU stream (first) and per CPU thread. A lane shows its top levels only
// (kDefaultLevels for a GPU stream; one summary row for a CPU thread of a rank that has GPU
// streams, since by containment its top level spans everything it holds); toggling a lane
// shows all its levels, or folds a lane that shows them all by default to one row. A folded rank
// keeps one summary row: its GPU streams' top levels (its threads' without GPU streams).
// Lane names come from the trace's metadata and are unique within a rank. In a folder that mixes
// jobs (setLaneJobs), a rank's lanes are grouped by job, each lane's name starts with its job
// ("job 2 · GPU 0 · stream 7") and the rank's title names its job or jobs. y is content y: 0 at
// the first rank's header, before any scrolling.
class TimelineLayout {
    Q_DECLARE_TR_FUNCTIONS(TimelineLayout)

public:
    static constexpr int kRankHeaderHeight = 20;
    static constexpr int kRowHeight = 16;
    static constexpr int kLaneGap = 2;
    static constexpr int kDefaultLevels = 3;

    enum class RowKind : std::uint8_t { RankHeader, Lane, RankSummary };
    struct Row {
        int y = 0;
        int height = 0;
        int rank = -1;
        int lane = -1; // the lane of a Lane row, -1 otherwise
        int depth = 0;
        RowKind kind = RowKind::Lane;
    };

    // `toggledLanes`: lanes shown the other way from their default (see above). `shownRanks`:
    // the ranks brushed on the overview, the others left out (empty: every rank).
    void build(const EventStore* store, const QSet<int>& collapsedRanks,
               const QSet<int>& toggledLanes = {}, const QSet<int>& shownRanks = {});

    // The job of each lane, from the model (LaneJobs::of); used from the next build().
    void setLaneJobs(LaneJobs jobs) { m_jobs = std::move(jobs); }
    const LaneJobs& laneJobs() const { return m_jobs; }

    const std::vector<int>& ranks() const { return m_ranks; }
    // "Rank 3"; where the folder mixes jobs "Job 2 · rank 3", or "Rank 0 · jobs 1, 2" when the
    // rank's lanes come from several jobs.
    QString rankTitle(int rank) const;
    // Lanes of ranks()[index] in display order.
    const std::vector<int>& lanesOfRankIndex(std::size_t index) const { return m_rankLanes[index]; }
    const std::vector<Row>& rows() const { return m_rows; }
    int contentHeight() const { return m_contentHeight; }
    bool isRankCollapsed(int rank) const { return m_collapsed.contains(rank); }
    // Index into ranks() of `rank`, -1 when absent.
    int rankIndex(int rank) const;
    // Levels (rows) `lane` shows when its rank is unfolded, and how many it has.
    int shownLevels(int lane) const;
    int levelCount(int lane) const;
    // Toggling `lane` changes what it shows (it has more than one level).
    bool isLaneToggleable(int lane) const { return levelCount(lane) > 1; }
    // The lanes drawn in `rank`'s summary row when it is folded.
    std::vector<int> summaryLanes(int rank) const;
    // Unique within the lane's rank, e.g. "GPU 0 · stream 7", "thread 4515 (python3.8)".
    QString laneName(int lane) const;
    // Everything the metadata says about the lane, one fact a line (the name column's tooltip).
    QString laneDescription(int lane) const;

    // Index into rows() of `lane`'s first row, -1 when the lane is not shown.
    int firstRowOfLane(int lane) const;
    // Content y of the top of `depth`'s row of `lane`, -1 when that row is not shown.
    int rowTop(int lane, int depth) const;
    const Row* rowAt(int contentY) const;
    // Index into rows() of the first row that ends below `contentY`.
    std::size_t firstRowEndingBelow(int contentY) const;
    // Content y range [top, bottom) of `rank`'s group; top = -1 when the rank is unknown.
    std::pair<int, int> rankContentRange(int rank) const;
    // Position of `lane` among its rank's lanes (for alternating backgrounds), 0 when unknown.
    int laneOrdinal(int lane) const;

    // The event of `row` nearest to track x `trackX` within two pixels, as drawn at `zoom` with
    // the row's rank shifted by `offsetNs` (in a summary row: of the summarised lanes' top
    // level); invalid when none. `drawnInstead(lane)` gives the lane drawn in place of the
    // store's (a raw ref is then returned for its events), nullptr for the store's.
    using DrawnInstead = std::function<const Lane*(int lane)>;
    TimelineEventRef eventAt(const Row& row, const ZoomState& zoom, double trackX,
                             std::int64_t offsetNs, const DrawnInstead& drawnInstead = {}) const;

private:
    void nameLanes();

    const EventStore* m_store = nullptr;
    LaneJobs m_jobs;
    QSet<int> m_collapsed;
    std::vector<int> m_ranks;                  // in order
    std::vector<std::vector<int>> m_rankLanes; // per m_ranks entry: GPU lanes first
    std::vector<Row> m_rows;
    std::vector<int> m_laneRow;     // first row index of each lane, -1 when collapsed
    std::vector<int> m_laneOrdinal; // position among the rank's lanes
    std::vector<int> m_shownLevels; // per lane
    std::vector<QString> m_laneNames;
    int m_contentHeight = 0;
};

} // namespace rankscope
