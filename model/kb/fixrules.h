#pragma once

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QStringList>
#include <vector>

namespace rankscope {

class Taxonomy;

// One rule of taxonomy/fix_rules.json: for findings of these kinds and leaves whose evidence
// meets every condition of `when`, the fixes to try, best first, and why.
struct FixRule {
    QString id;
    QStringList kinds;    // finding kinds; empty: any
    QStringList symptoms; // taxonomy leaf ids; empty: any
    QStringList when;     // conditions the evidence must meet, all of them
    // Tiers of fix-pattern ids: the evidence orders the tiers; inside one tier it cannot tell
    // the fixes apart, and the study's counts for the finding's leaf order them.
    std::vector<QStringList> tiers;
    // One line for people; {ranks}, {detail}, {leaf} and {first} (the first fix's title) are
    // filled in from the finding.
    QString reason;
};

// The fixes a finding's evidence calls for, and why the first one.
struct FixChoice {
    QString ruleId; // empty when no rule matched and the study's frequencies decided
    QStringList patternIds;
    QString reason;
};

// The evidence-to-fix rules. A finding takes the first rule, in file order, that matches its
// kind, leaf and conditions (so specific rules come before general ones); a finding no rule
// covers gets the fixes that resolved its leaf most often in the study.
class FixRuleBook {
public:
    static const FixRuleBook& builtin(); // taxonomy/fix_rules.json, parsed once
    // Parses the document; on a malformed one returns an empty book and sets *error.
    static FixRuleBook parse(const QByteArray& json, QString* error);

    const std::vector<FixRule>& rules() const { return m_rules; }
    // Every condition a rule may name, with what it means (the file's "conditions" table).
    const QHash<QString, QString>& conditions() const { return m_conditions; }

    // `values` fills the reason's placeholders ("ranks", "detail", "leaf").
    FixChoice choose(const Taxonomy& taxonomy, const QString& kind, const QString& symptom,
                     const QStringList& conditions, const QHash<QString, QString>& values) const;

private:
    std::vector<FixRule> m_rules;
    QHash<QString, QString> m_conditions;
};

} // namespace rankscope
