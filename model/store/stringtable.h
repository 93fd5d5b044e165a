#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rankscope {

using StringId = std::int32_t;

// Interned strings: events store a 4-byte id instead of a name. Id 0 is the empty string.
// Not thread-safe; readers intern into their own table and the store merges them.
class StringTable {
public:
    StringTable();

    StringId intern(std::string_view s);
    std::string_view view(StringId id) const { return m_strings[std::size_t(id)]; }
    // -1 when `s` was never interned.
    StringId find(std::string_view s) const;
    std::size_t size() const { return m_strings.size(); }

private:
    std::deque<std::string> m_strings; // deque: views into it stay valid as it grows
    std::unordered_map<std::string_view, StringId> m_index;
};

} // namespace rankscope
