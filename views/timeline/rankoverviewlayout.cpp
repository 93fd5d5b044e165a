#include "views/timeline/rankoverviewlayout.h"

#include <algorithm>
#include <cmath>

namespace rankscope {

void RankOverviewLayout::setRanks(std::vector<int> ranks)
{
    m_ranks = std::move(ranks);
    int maxRank = -1;
    for (int r : m_ranks)
        maxRank = std::max(maxRank, r);
    m_indexOfRank.assign(std::size_t(maxRank + 1), -1);
    for (std::size_t i = 0; i < m_ranks.size(); ++i)
        if (m_ranks[i] >= 0) m_indexOfRank[std::size_t(m_ranks[i])] = int(i);
    update();
}

void RankOverviewLayout::setHeight(int heightPx)
{
    m_heightPx = heightPx;
    update();
}

void RankOverviewLayout::update()
{
    const int n = int(m_ranks.size());
    const int avail = std::max(1, m_heightPx - kMarkStripHeight);
    if (n == 0) {
        m_rowHeight = kMaxRowHeight;
        m_ranksPerRow = 1;
    } else if (n <= avail) {
        m_rowHeight = std::clamp(avail / n, 1, kMaxRowHeight);
        m_ranksPerRow = 1;
    } else {
        m_rowHeight = 1;
        m_ranksPerRow = (n + avail - 1) / avail;
    }
}

int RankOverviewLayout::rowCount() const
{
    return (int(m_ranks.size()) + m_ranksPerRow - 1) / m_ranksPerRow;
}

int RankOverviewLayout::rowOfRank(int rank) const
{
    if (rank < 0 || std::size_t(rank) >= m_indexOfRank.size()) return -1;
    const int i = m_indexOfRank[std::size_t(rank)];
    return i < 0 ? -1 : i / m_ranksPerRow;
}

int RankOverviewLayout::yForRank(int rank) const
{
    const int row = rowOfRank(rank);
    return row < 0 ? -1 : rowTop(row) + m_rowHeight / 2;
}

int RankOverviewLayout::rowAt(int y) const
{
    if (y < kMarkStripHeight) return -1;
    const int row = (y - kMarkStripHeight) / m_rowHeight;
    return row < rowCount() ? row : -1;
}

int RankOverviewLayout::rankAt(int y) const
{
    const int row = rowAt(y);
    return row < 0 ? -1 : m_ranks[std::size_t(row * m_ranksPerRow)];
}

std::pair<int, int> RankOverviewLayout::ranksOfRow(int row) const
{
    const int first = row * m_ranksPerRow;
    return {first, std::min(m_ranksPerRow, int(m_ranks.size()) - first)};
}

std::vector<int> RankOverviewLayout::ranksInRows(int rowA, int rowB) const
{
    const int last = rowCount() - 1;
    if (last < 0) return {};
    const int from = std::clamp(std::min(rowA, rowB), 0, last);
    const int to = std::clamp(std::max(rowA, rowB), 0, last);
    const int end = std::min(int(m_ranks.size()), (to + 1) * m_ranksPerRow);
    return {m_ranks.begin() + from * m_ranksPerRow, m_ranks.begin() + end};
}

int RankOverviewLayout::preferredHeight(int rankCount, int maxPx)
{
    // The rows' own height at the row height `maxPx` allows, so that no strip is left empty
    // under them (256 ranks in 318 px are 256 rows of 1 px).
    const int n = std::max(1, rankCount);
    const int avail = maxPx - kMarkStripHeight;
    if (avail <= 0) return maxPx;
    if (n <= avail) return kMarkStripHeight + n * std::min(kMaxRowHeight, avail / n);
    const int perRow = (n + avail - 1) / avail;
    return kMarkStripHeight + (n + perRow - 1) / perRow;
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
