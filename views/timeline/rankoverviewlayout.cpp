#include "views/timeline/rankoverviewlayout.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rankscope {

void RankOverviewLayout::setRanks(std::vector<int> ranks)
{
    m_ranks = std::move(ranks);
    m_indexOfRank.clear();
    for (std::size_t i = 0; i < m_ranks.size(); ++i)
        m_indexOfRank.emplace(m_ranks[i], int(i));
    update();
}

void RankOverviewLayout::setHeight(int heightPx)
{
    m_heightPx = heightPx;
    update();
}

bool RankOverviewLayout::setEmphasised(std::vector<int> ranks)
{
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (ranks == m_emphasised) return false;
    m_emphasised = std::move(ranks);
    update();
    return true;
}

void RankOverviewLayout::update()
{
    const int n = int(m_ranks.size());
    const int avail = std::max(1, m_heightPx - kMarkStripHeight);
    const auto uniform = [](int count, int px, int& height, int& perRow) {
        if (count == 0 || count <= px) {
            height = count == 0 ? kMaxRowHeight : std::clamp(px / count, 1, kMaxRowHeight);
            perRow = 1;
        } else {
            height = 1;
            perRow = (count + px - 1) / px;
        }
    };
    uniform(n, avail, m_rowHeight, m_ranksPerRow);
    m_rows.clear();
    // The emphasised ranks shown, as indexes in display order.
    std::vector<char> marked(static_cast<std::size_t>(n), 0);
    int e = 0;
    if (m_rowHeight < kMinEmphasisHeight || m_ranksPerRow > 1)
        for (int r : m_emphasised)
            if (const auto it = m_indexOfRank.find(r); it != m_indexOfRank.end()) {
                marked[std::size_t(it->second)] = 1;
                ++e;
            }
    int emphasisH = 0;
    if (e > 0 && e * kMinEmphasisHeight <= avail / 2 && e < n) {
        emphasisH = std::clamp(avail / (4 * e), kMinEmphasisHeight, kMaxEmphasisHeight);
        const int plainPx = avail - e * emphasisH;
        // Plain ranks share what is left: runs between emphasised ones, perRow to a pixel row.
        uniform(n - e, plainPx, m_rowHeight, m_ranksPerRow);
        const auto rowsAt = [&](int perRow) {
            int rows = 0, run = 0;
            for (int i = 0; i <= n; ++i)
                if (i == n || marked[std::size_t(i)]) {
                    rows += (run + perRow - 1) / perRow;
                    run = 0;
                } else {
                    ++run;
                }
            return rows;
        };
        while (m_ranksPerRow > 1 && rowsAt(m_ranksPerRow) > plainPx)
            ++m_ranksPerRow;
        if (m_ranksPerRow == 1 && rowsAt(1) * m_rowHeight > plainPx) m_ranksPerRow = 2;
    } else {
        std::fill(marked.begin(), marked.end(), 0);
    }
    m_gapped = emphasisH == 0 && m_rowHeight >= kGapMinRowHeight;
    int top = kMarkStripHeight;
    for (int i = 0; i < n;) {
        RowSpan row;
        row.first = i;
        row.top = top;
        if (marked[std::size_t(i)]) {
            row.height = emphasisH;
            row.emphasised = true;
        } else {
            while (row.count < m_ranksPerRow && i + row.count < n &&
                   !marked[std::size_t(i + row.count)])
                ++row.count;
            row.height = m_rowHeight;
        }
        m_rows.push_back(row);
        top += row.height;
        i += row.count;
    }
}

int RankOverviewLayout::rowHeight(int row) const
{
    return row >= 0 && row < rowCount() ? m_rows[std::size_t(row)].height : m_rowHeight;
}

int RankOverviewLayout::rowFillHeight(int row) const
{
    const int h = rowHeight(row);
    return m_gapped ? h - 1 : h;
}

bool RankOverviewLayout::isEmphasised(int row) const
{
    return row >= 0 && row < rowCount() && m_rows[std::size_t(row)].emphasised;
}

int RankOverviewLayout::rowTop(int row) const
{
    if (row < 0 || m_rows.empty()) return kMarkStripHeight;
    if (row >= rowCount()) return m_rows.back().top + m_rows.back().height;
    return m_rows[std::size_t(row)].top;
}

int RankOverviewLayout::rowOfRank(int rank) const
{
    const auto it = m_indexOfRank.find(rank);
    if (it == m_indexOfRank.end()) return -1;
    const auto row = std::upper_bound(m_rows.begin(), m_rows.end(), it->second,
                                      [](int i, const RowSpan& r) { return i < r.first; });
    return int(row - m_rows.begin()) - 1;
}

int RankOverviewLayout::yForRank(int rank) const
{
    const int row = rowOfRank(rank);
    return row < 0 ? -1 : rowTop(row) + rowHeight(row) / 2;
}

int RankOverviewLayout::rowAt(int y) const
{
    if (y < kMarkStripHeight || y >= rowsBottom()) return -1;
    const auto row = std::upper_bound(m_rows.begin(), m_rows.end(), y,
                                      [](int v, const RowSpan& r) { return v < r.top; });
    return int(row - m_rows.begin()) - 1;
}

int RankOverviewLayout::rankAt(int y) const
{
    const int row = rowAt(y);
    return row < 0 ? -1 : m_ranks[std::size_t(m_rows[std::size_t(row)].first)];
}

std::pair<int, int> RankOverviewLayout::ranksOfRow(int row) const
{
    return {m_rows[std::size_t(row)].first, m_rows[std::size_t(row)].count};
}

std::vector<int> RankOverviewLayout::ranksInRows(int rowA, int rowB) const
{
    const int last = rowCount() - 1;
    if (last < 0) return {};
    const int from = std::clamp(std::min(rowA, rowB), 0, last);
    const int to = std::clamp(std::max(rowA, rowB), 0, last);
    const RowSpan& a = m_rows[std::size_t(from)];
    const RowSpan& b = m_rows[std::size_t(to)];
    return {m_ranks.begin() + a.first, m_ranks.begin() + b.first + b.count};
}

int RankOverviewLayout::fittedHeight(int maxPx) const
{
    // Laid out at a height, the rows may end above its bottom (256 ranks in 318 px are 256
    // rows of 1 px; emphasised rows leave the others a whole number of ranks a pixel row). Laid
    // out again at their bottom they end there or above: shrink until they fill the height.
    RankOverviewLayout fit = *this;
    int heightPx = maxPx;
    for (;;) {
        fit.setHeight(heightPx);
        const int bottom = fit.rowsBottom();
        if (bottom >= heightPx) return heightPx;
        heightPx = bottom;
    }
}

int RankOverviewLayout::preferredHeight(int rankCount, int maxPx)
{
    std::vector<int> ranks(static_cast<std::size_t>(std::max(1, rankCount)));
    std::iota(ranks.begin(), ranks.end(), 0);
    RankOverviewLayout layout;
    layout.setRanks(std::move(ranks));
    return layout.fittedHeight(maxPx);
}

int RankOverviewLayout::xForTime(const ZoomState& zoom, std::int64_t displayNs) const
{
    return m_trackLeft + int(std::floor(zoom.timeToX(displayNs)));
}

std::int64_t RankOverviewLayout::timeForX(const ZoomState& zoom, int x) const
{
    return zoom.xToTime(double(x - m_trackLeft));
}

} // namespace rankscope
