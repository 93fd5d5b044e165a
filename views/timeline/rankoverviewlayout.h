#pragma once

#include "model/zoomstate.h"

#include <unordered_map>
#include <vector>

namespace rankscope {

// Where the rank overview puts things, without a screen: a strip for the findings' marks on
// top, then one row per rank (1-18 px: as tall as the height allows, so a few ranks get rows
// tall enough to read and 1,024 get a pixel each) in the chosen order, or, when the ranks
// outnumber the pixel rows, several ranks a pixel row. Where rows are that thin (under 3 px), the
// emphasised ranks (those the findings name) get rows of their own 3-8 px tall, the others share
// what is left (a fisheye), so that a hung rank among 1,024 is a band, not a pixel. x follows the
// detail view's ZoomState, shifted by the label column, so that a time is at the same x in both.
// The "ranks" are the rows' keys: LaneJobs::overviewKey, the rank unless the folder mixes jobs.
class RankOverviewLayout {
public:
    static constexpr int kMarkStripHeight = 12;
    static constexpr int kMaxRowHeight = 18;
    static constexpr int kMinEmphasisHeight = 3;
    static constexpr int kMaxEmphasisHeight = 8;
    static constexpr int kGapMinRowHeight = 4;
    // The label column's right end holds, from the tracks leftwards, the selected rank's tab
    // (2-6 px left of them), the findings' tabs (7-12 px) and the lateness gutter; the rank
    // numbers end left of the gutter.
    static constexpr int kGutterWidth = 8;
    static constexpr int kGutterRightGap = 14; // from the gutter's right edge to the tracks

    // `ranks` in display order; `heightPx` the whole area, marks strip included.
    void setRanks(std::vector<int> ranks);
    void setHeight(int heightPx);
    void setTrackLeft(int x) { m_trackLeft = x; }
    // Ranks drawn taller when rows are thin; false when it changes nothing. Not applied when
    // they would take more than half the height at kMinEmphasisHeight.
    bool setEmphasised(std::vector<int> ranks);

    const std::vector<int>& ranks() const { return m_ranks; }
    int trackLeft() const { return m_trackLeft; }
    // x of the lateness gutter's left edge; kGutterWidth wide.
    int gutterLeft() const { return m_trackLeft - kGutterRightGap - kGutterWidth; }
    // Where the rank numbers end (right-aligned), left of the gutter and of the wedge that
    // points at a late row (RankOverviewPainter).
    int numbersRight() const { return gutterLeft() - 9; }
    // The plain rows' height and ranks per row (an emphasised row holds one rank, taller).
    int rowHeight() const { return m_rowHeight; }
    int ranksPerRow() const { return m_ranksPerRow; }
    int rowHeight(int row) const;
    // The pixel rows of `row` its states fill, from its top: all of them, but where every row is
    // a plain one at least kGapMinRowHeight tall, the last is left as a gap so that neighbouring
    // ranks stay apart. A fisheye (emphasised rows among thin ones) has no gaps: a gap under the
    // emphasised rows alone would read as a line across the tracks, not as a rank's edge.
    int rowFillHeight(int row) const;
    bool isEmphasised(int row) const;
    int rowCount() const { return int(m_rows.size()); }
    // Top of `row`; rowTop(rowCount()) is the rows' bottom.
    int rowTop(int row) const;
    // Rows area bottom (exclusive).
    int rowsBottom() const { return rowTop(rowCount()); }
    // The pixel row holding `rank`, -1 when the rank is not shown.
    int rowOfRank(int rank) const;
    // Vertical centre of `rank`'s row, -1 when not shown.
    int yForRank(int rank) const;
    // The row under `y`, -1 outside the rows.
    int rowAt(int y) const;
    // The first rank of the row under `y` (the row's only rank unless ranks share rows), -1.
    int rankAt(int y) const;
    // [first, first + count) of ranks() in `row`.
    std::pair<int, int> ranksOfRow(int row) const;
    // Every rank of the rows from `rowA` to `rowB` (either order, clamped to the rows), in
    // display order: what a brush across rows selects.
    std::vector<int> ranksInRows(int rowA, int rowB) const;
    const std::vector<int>& emphasised() const { return m_emphasised; }
    // The height, at most `maxPx`, whose rows (these ranks, these emphasised) end at its bottom:
    // the strip and the rows at the largest row height that fits, no pixel row left empty under
    // them (the emphasised rows taken into account).
    int fittedHeight(int maxPx) const;
    // fittedHeight of `rankCount` ranks, none emphasised.
    static int preferredHeight(int rankCount, int maxPx);

    int xForTime(const ZoomState& zoom, std::int64_t displayNs) const;
    std::int64_t timeForX(const ZoomState& zoom, int x) const;

private:
    void update();

    std::vector<int> m_ranks;
    std::unordered_map<int, int> m_indexOfRank; // rank -> index into m_ranks
    std::vector<int> m_emphasised;
    struct RowSpan {
        int first = 0, count = 1; // ranks()[first, first + count)
        int top = 0, height = 1;
        bool emphasised = false;
    };
    std::vector<RowSpan> m_rows;
    int m_heightPx = 0;
    int m_rowHeight = 1;
    int m_ranksPerRow = 1;
    bool m_gapped = false; // rowFillHeight leaves a gap under each row
    int m_trackLeft = 0;
};

} // namespace rankscope
