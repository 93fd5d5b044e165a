#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace rankscope {

using RankListId = std::int32_t;

// Interned member lists of process groups: a collective record holds a 4-byte id instead of its
// group's ranks, which in a 1,024-rank job would be 4 KB per record, and records compare group
// membership by id. Id 0 is the empty list (the source does not say). Not thread-safe, like
// StringTable: readers intern into their own store and the store merges them.
class RankListTable {
public:
    RankListTable();

    RankListId intern(const std::vector<int>& ranks);
    const std::vector<int>& ranks(RankListId id) const { return m_lists[std::size_t(id)]; }
    std::size_t size() const { return m_lists.size(); }

private:
    std::vector<std::vector<int>> m_lists;
    std::map<std::vector<int>, RankListId> m_index;
};

} // namespace rankscope
