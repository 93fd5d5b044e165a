#include "model/store/stringtable.h"

namespace rankscope {

StringTable::StringTable()
{
    intern({});
}

StringId StringTable::intern(std::string_view s)
{
    if (auto it = m_index.find(s); it != m_index.end()) return it->second;
    const auto id = StringId(m_strings.size());
    m_strings.emplace_back(s);
    m_index.emplace(m_strings.back(), id);
    return id;
}

StringId StringTable::find(std::string_view s) const
{
    const auto it = m_index.find(s);
    return it == m_index.end() ? -1 : it->second;
}

} // namespace rankscope
