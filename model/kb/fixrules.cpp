#include "model/kb/fixrules.h"

#include "model/kb/taxonomy.h"

#include <QFile>
#include <algorithm>
#include <nlohmann/json.hpp>

namespace rankscope {

namespace {

// A leaf no rule covers still gets the fixes that resolved it most often, this many.
constexpr int kStudyFixes = 3;

QStringList stringList(const nlohmann::json& j)
{
    QStringList out;
    if (!j.is_array()) return out;
    for (const nlohmann::json& s : j)
        if (s.is_string()) out << QString::fromStdString(s.get<std::string>());
    return out;
}

bool covers(const QStringList& allowed, const QString& value)
{
    return allowed.isEmpty() || allowed.contains(value);
}

// Rows of the study where `patternId` fixed `leaf` (or, for an unknown leaf, any fault).
int studyCount(const Taxonomy& taxonomy, const QString& leaf, const QString& patternId)
{
    if (const TaxonomyNode* node = taxonomy.node(leaf))
        for (const KeyCount& k : node->fixPatterns)
            if (k.key == patternId) return k.count;
    return 0;
}

QString fill(QString text, const QHash<QString, QString>& values)
{
    for (auto it = values.cbegin(); it != values.cend(); ++it)
        text.replace(QLatin1Char('{') + it.key() + QLatin1Char('}'), it.value());
    return text;
}

QString patternTitle(const Taxonomy& taxonomy, const QString& id)
{
    if (const Walkthrough* w = taxonomy.walkthrough(id)) return w->title;
    if (const FixPattern* p = taxonomy.fixPattern(id)) return p->name;
    return id;
}

} // namespace

const FixRuleBook& FixRuleBook::builtin()
{
    static const FixRuleBook book = [] {
        QFile file(QStringLiteral(":/taxonomy/fix_rules.json"));
        QString error;
        if (!file.open(QIODevice::ReadOnly)) return FixRuleBook();
        return parse(file.readAll(), &error);
    }();
    return book;
}

FixRuleBook FixRuleBook::parse(const QByteArray& json, QString* error)
{
    FixRuleBook book;
    const nlohmann::json doc = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
    if (!doc.is_object() || !doc.contains("rules") || !doc["rules"].is_array()) {
        if (error) *error = QStringLiteral("fix rules: no \"rules\" array");
        return {};
    }
    if (doc.contains("conditions") && doc["conditions"].is_object())
        for (const auto& [id, meaning] : doc["conditions"].items())
            if (meaning.is_string())
                book.m_conditions.insert(QString::fromStdString(id),
                                         QString::fromStdString(meaning.get<std::string>()));
    for (const nlohmann::json& r : doc["rules"]) {
        if (!r.is_object() || !r.contains("id") || !r.contains("fixes") || !r.contains("reason") ||
            !r["fixes"].is_array()) {
            if (error) *error = QStringLiteral("fix rules: a rule lacks id, fixes or reason");
            return {};
        }
        FixRule rule;
        rule.id = QString::fromStdString(r["id"].get<std::string>());
        rule.kinds = stringList(r.value("kinds", nlohmann::json::array()));
        rule.symptoms = stringList(r.value("symptoms", nlohmann::json::array()));
        rule.when = stringList(r.value("when", nlohmann::json::array()));
        for (const nlohmann::json& tier : r["fixes"])
            rule.tiers.push_back(tier.is_string()
                                     ? QStringList{QString::fromStdString(tier.get<std::string>())}
                                     : stringList(tier));
        rule.reason = QString::fromStdString(r["reason"].get<std::string>());
        book.m_rules.push_back(std::move(rule));
    }
    return book;
}

FixChoice FixRuleBook::choose(const Taxonomy& taxonomy, const QString& kind, const QString& symptom,
                              const QStringList& conditions,
                              const QHash<QString, QString>& values) const
{
    FixChoice choice;
    QHash<QString, QString> filled = values;
    const TaxonomyNode* leaf = taxonomy.node(symptom);
    if (!filled.contains(QStringLiteral("leaf")))
        filled.insert(QStringLiteral("leaf"), leaf ? leaf->name : symptom);
    for (const FixRule& rule : m_rules) {
        if (!covers(rule.kinds, kind) || !covers(rule.symptoms, symptom)) continue;
        if (!std::all_of(rule.when.begin(), rule.when.end(),
                         [&](const QString& c) { return conditions.contains(c); }))
            continue;
        choice.ruleId = rule.id;
        for (QStringList tier : rule.tiers) {
            std::stable_sort(tier.begin(), tier.end(), [&](const QString& a, const QString& b) {
                return studyCount(taxonomy, symptom, a) > studyCount(taxonomy, symptom, b);
            });
            for (const QString& id : tier)
                if (!choice.patternIds.contains(id)) choice.patternIds << id;
        }
        if (!choice.patternIds.isEmpty())
            filled.insert(QStringLiteral("first"),
                          patternTitle(taxonomy, choice.patternIds.front()));
        choice.reason = fill(rule.reason, filled);
        return choice;
    }
    if (!leaf) return choice;
    for (const KeyCount& k : leaf->fixPatterns) {
        if (choice.patternIds.size() == kStudyFixes) break;
        choice.patternIds << k.key;
    }
    if (!choice.patternIds.isEmpty())
        choice.reason =
            QStringLiteral("The evidence names no more specific cause; “%1” is what resolved "
                           "“%2” most often in the study (%3 of %4 issues).")
                .arg(patternTitle(taxonomy, choice.patternIds.front()), leaf->name)
                .arg(leaf->fixPatterns.front().count)
                .arg(leaf->issueCount);
    return choice;
}

} // namespace rankscope
