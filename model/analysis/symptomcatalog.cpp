#include "model/analysis/symptomcatalog.h"

#include <QFile>
#include <algorithm>
#include <map>

namespace rankscope {

namespace {

// RFC 4180 fields: quoted fields may hold commas, doubled quotes and newlines.
std::vector<std::vector<std::string>> parseCsv(std::string_view text)
{
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            row.push_back(std::move(field));
            field.clear();
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            row.push_back(std::move(field));
            field.clear();
            rows.push_back(std::move(row));
            row.clear();
        } else {
            field += c;
        }
    }
    if (!field.empty() || !row.empty()) {
        row.push_back(std::move(field));
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<std::string> splitCompound(const std::string& label)
{
    std::vector<std::string> parts;
    std::size_t from = 0;
    while (true) {
        const std::size_t at = label.find(" & ", from);
        parts.push_back(
            label.substr(from, at == std::string::npos ? std::string::npos : at - from));
        if (at == std::string::npos) break;
        from = at + 3;
    }
    return parts;
}

} // namespace

const SymptomCatalog& SymptomCatalog::instance()
{
    static const SymptomCatalog catalog = [] {
        QFile f(QStringLiteral(":/taxonomy/tosem23_faults.csv"));
        const QByteArray data = f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        return SymptomCatalog(std::string_view(data.constData(), std::size_t(data.size())));
    }();
    return catalog;
}

SymptomCatalog::SymptomCatalog(std::string_view csv)
{
    const auto rows = parseCsv(csv);
    if (rows.empty()) return;
    const auto& header = rows.front();
    auto column = [&](const char* name) {
        const auto it = std::find(header.begin(), header.end(), name);
        return it == header.end() ? -1 : int(it - header.begin());
    };
    const int stage = column("stage"), inner = column("inner_category"),
              leaf = column("leaf_category"), fix = column("fix_pattern");
    if (stage < 0 || inner < 0 || leaf < 0) return;
    std::map<std::string, std::map<std::string, int>> counts;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const auto& r = rows[i];
        if (int(r.size()) <= std::max({stage, inner, leaf})) continue;
        if (r[std::size_t(leaf)].empty()) continue;
        std::string id = slug(r[std::size_t(stage)]);
        if (!r[std::size_t(inner)].empty()) id += '/' + slug(r[std::size_t(inner)]);
        id += '/' + slug(r[std::size_t(leaf)]);
        m_leaves.insert(id);
        if (fix >= 0 && int(r.size()) > fix && !r[std::size_t(fix)].empty()) {
            for (const std::string& part : splitCompound(r[std::size_t(fix)])) {
                const std::string fixId = slug(part);
                if (fixId.empty()) continue;
                m_fixPatterns.insert(fixId);
                ++counts[id][fixId];
            }
        }
    }
    for (auto& [leafId, fixes] : counts) {
        auto& list = m_fixesByLeaf[leafId];
        list.assign(fixes.begin(), fixes.end());
        std::stable_sort(list.begin(), list.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
    }
}

std::string SymptomCatalog::slug(std::string_view label)
{
    std::string expanded;
    for (char c : label) {
        if (c == '&')
            expanded += " and ";
        else
            expanded += c;
    }
    std::string out;
    bool pendingDash = false;
    for (char c : expanded) {
        const unsigned char u = static_cast<unsigned char>(c);
        if ((u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || (u >= 'A' && u <= 'Z')) {
            if (pendingDash && !out.empty()) out += '-';
            pendingDash = false;
            out += char(u >= 'A' && u <= 'Z' ? u - 'A' + 'a' : u);
        } else {
            pendingDash = true;
        }
    }
    return out;
}

std::vector<std::string> SymptomCatalog::topFixPatterns(const std::string& leafId,
                                                        std::size_t count) const
{
    std::vector<std::string> out;
    const auto it = m_fixesByLeaf.find(leafId);
    if (it == m_fixesByLeaf.end()) return out;
    for (const auto& [fixId, n] : it->second) {
        if (out.size() == count) break;
        out.push_back(fixId);
    }
    return out;
}

} // namespace rankscope
