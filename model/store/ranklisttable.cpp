#include "model/store/ranklisttable.h"

namespace rankscope {

RankListTable::RankListTable()
{
    intern({});
}

RankListId RankListTable::intern(const std::vector<int>& ranks)
{
    if (const auto it = m_index.find(ranks); it != m_index.end()) return it->second;
    const auto id = RankListId(m_lists.size());
    m_lists.push_back(ranks);
    m_index.emplace(ranks, id);
    return id;
}

} // namespace rankscope
