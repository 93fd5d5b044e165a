#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace rankscope {

// The taxonomy leaves and, per leaf, the fix patterns that resolved the study's issues, read
// from the compiled-in TOSEM23 sheet. A small stand-in the Taxonomy class can later replace.
class SymptomCatalog {
public:
    // Reads :/taxonomy/tosem23_faults.csv.
    static const SymptomCatalog& instance();
    // Parses CSV text with the columns stage, inner_category, leaf_category, fix_pattern.
    explicit SymptomCatalog(std::string_view csv);

    // Lower-case, "&" -> " and ", runs of other non-alphanumerics -> "-", trimmed.
    static std::string slug(std::string_view label);

    bool isLeaf(const std::string& id) const { return m_leaves.count(id) != 0; }
    const std::unordered_set<std::string>& leaves() const { return m_leaves; }
    // The `count` most frequent fix pattern ids of a leaf, most frequent first.
    std::vector<std::string> topFixPatterns(const std::string& leafId, std::size_t count) const;
    bool isFixPattern(const std::string& id) const { return m_fixPatterns.count(id) != 0; }

private:
    std::unordered_set<std::string> m_leaves;
    std::unordered_set<std::string> m_fixPatterns;
    std::unordered_map<std::string, std::vector<std::pair<std::string, int>>> m_fixesByLeaf;
};

} // namespace rankscope
