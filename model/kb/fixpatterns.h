#pragma once

#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <vector>

namespace rankscope {

// The study labels each fault with one fix label, but some labels name several fixes
// ("fix dependency version & fix network setting", "fix tensor dtype / fix distributed API usage")
// and some fixes are spelled several ways ("fix dependency versions", "fix data partition/batch
// size"). FixPatternCatalog turns the labels into patterns with this rule, learnt from the data:
//  - a label is split at " & ", at " / " (a slash with spaces) and at " and " when the words after
//    it start with a verb; a slash without spaces joins alternatives inside one pattern
//    ("fix build/install configuration") and does not split;
//  - the verbs are the first words of the labels that have no separator ("fix", "change", ...);
//    a part that does not start with one but with a word the labels use as an object inherits
//    the verb of the part before it ("fix dependency version & framework version" ->
//    "... & fix framework version");
//  - two parts are the same pattern when they agree after lower-casing, dropping plural "s" and
//    ordering slash alternatives; the pattern is named after its most frequent spelling and its
//    id is slugify(name).
class FixPatternCatalog {
public:
    // `labels` holds one label per fault row (empty labels are skipped).
    static FixPatternCatalog build(const QStringList& labels);

    // The pattern ids a raw label splits into, in label order, without duplicates.
    QStringList patternIds(const QString& label) const { return m_idsOfLabel.value(label); }
    // The parts a label splits into before merging (exposed for tests and the corpus).
    QStringList splitLabel(const QString& label) const;
    // Pattern id -> display name, for every pattern.
    const QHash<QString, QString>& names() const { return m_names; }
    // The raw labels that contributed to a pattern.
    QStringList labelsOf(const QString& patternId) const { return m_labelsOfId.value(patternId); }
    const QSet<QString>& verbs() const { return m_verbs; }

    // The key under which spelling variants merge (lower-case, singular words, sorted slash
    // alternatives).
    static QString mergeKey(const QString& part);

private:
    QSet<QString> m_verbs;
    QSet<QString> m_objectWords; // words after the verb in labels without a separator
    QHash<QString, QStringList> m_idsOfLabel;
    QHash<QString, QString> m_names;
    QHash<QString, QStringList> m_labelsOfId;
};

} // namespace rankscope
