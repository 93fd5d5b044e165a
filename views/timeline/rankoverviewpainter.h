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

private:
    void paintStates(QImage& image, const RankOverviewLayout& layout,
                     const RankOverviewFrame& frame);
    void paintMarks(QImage& image, const RankOverviewLayout& layout, const RankOverviewFrame& frame,
                    const QFont& font);

    std::vector<RankState> m_states; // ranks() order x width
    int m_width = 0;
};

} // namespace rankscope
