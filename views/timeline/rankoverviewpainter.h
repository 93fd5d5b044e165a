#pragma once

#include "model/overview/rankactivity.h"
#include "views/timeline/rankoverviewlayout.h"
#include "views/timeline/timelineview.h"

#include <QFont>
#include <QImage>
#include <utility>
#include <vector>

namespace rankscope {

// Everything one frame of the rank overview shows.
struct RankOverviewFrame {
    const RankActivity* activity = nullptr;
    ZoomState zoom;                // the detail view's: same range, same width
    TimelineClock clock;           // raw rank time + offset = what the view shows
    std::vector<char> crashed;     // by rank of the analysed job: a finding says it crashed
    QList<TimelineMarker> markers; // the findings' marks, on the common (aligned) clock
    // Added to a marker's time on `rank`'s row: 0 on aligned clocks, -offset on raw ones.
    QHash<int, qint64> markerShiftNs;
    // The selected collective: each member's arrival on the view's clock.
    std::vector<std::pair<int, std::int64_t>> arrivals;
    int highlightedRank = -1;
    // Where the folder mixes jobs and every job is shown: rows labelled "j2·0" (job 2, rank 0);
    // keys below LaneJobs::kJobKeyStride are the analysed job's.
    bool labelJobs = false;
    int analysedJob = -1;
    std::vector<int> selected; // the brushed rows' keys, sorted (the detail view shows these)
};

// Paints the rank overview into an image: the states row by row straight into the scanlines
// (no QPainter call per pixel run), then the marks, the wavefront and the labels.
class RankOverviewPainter {
public:
    void paint(QImage& image, const RankOverviewLayout& layout, const RankOverviewFrame& frame,
               const QFont& font);
    // The state drawn for ranks()[index] at track pixel x of the last paint; Idle when unknown.
    RankState stateAt(int index, int x) const;
    // How much later than its job's typical rank `key`'s row arrives at collectives (median);
    // -1 when it shared none.
    static std::int64_t excessLatenessNs(const RankActivity& activity, int key);

private:
    void paintStates(QImage& image, const RankOverviewLayout& layout,
                     const RankOverviewFrame& frame);
    // The lateness gutter: each row coloured by the latest of its ranks (latenessStep of its
    // median lateness beyond its job's typical rank), so that a straggler sharing a pixel row
    // is not averaged away. Fills m_lateRows.
    void paintGutter(QImage& image, const RankOverviewLayout& layout,
                     const RankOverviewFrame& frame);
    void paintMarks(QImage& image, const RankOverviewLayout& layout, const RankOverviewFrame& frame,
                    const QFont& font);

    std::vector<RankState> m_states; // ranks() order x width
    int m_width = 0;
    // The rows late by kLabelledLatenessStep or more, latest first, at most kMaxLateLabels: a
    // marker beside the gutter and the late rank's number, so that a straggler in a 1-px row
    // among 1,024 is found at a glance. `key` is the row's latest rank.
    struct LateRow {
        int row = -1;
        int key = -1;
        std::int64_t excessNs = 0;
    };
    static constexpr int kLabelledLatenessStep = 2; // 1 ms and more
    static constexpr std::size_t kMaxLateLabels = 8;
    std::vector<LateRow> m_lateRows;
};

} // namespace rankscope
