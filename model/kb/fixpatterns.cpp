#include "model/kb/fixpatterns.h"

#include "model/kb/slug.h"

#include <QRegularExpression>
#include <algorithm>

namespace rankscope {

namespace {

QString normalizeSpaces(const QString& s)
{
    return s.simplified();
}

QString firstWord(const QString& s)
{
    const qsizetype space = s.indexOf(QLatin1Char(' '));
    return (space < 0 ? s : s.left(space)).toLower();
}

bool hasSeparator(const QString& label)
{
    static const QRegularExpression sep(QStringLiteral(R"( & | / | and )"));
    return sep.match(label).hasMatch();
}

QString singular(const QString& word)
{
    if (word.size() > 3 && word.endsWith(QLatin1Char('s')) && !word.endsWith(QLatin1String("ss")) &&
        !word.endsWith(QLatin1String("us")) && !word.endsWith(QLatin1String("is")))
        return word.chopped(1);
    return word;
}

} // namespace

QString FixPatternCatalog::mergeKey(const QString& part)
{
    QStringList alternatives = part.toLower().split(QLatin1Char('/'));
    // "fix data partition/batch size" and "fix batch size/data partition" name one pattern: the
    // verb belongs to the first alternative, so strip it before sorting and put it back.
    QString verb;
    if (!alternatives.isEmpty()) {
        const QString head = alternatives.first().trimmed();
        const qsizetype space = head.indexOf(QLatin1Char(' '));
        if (alternatives.size() > 1 && space > 0) {
            verb = head.left(space);
            alternatives.first() = head.mid(space + 1);
        }
    }
    for (QString& alternative : alternatives) {
        QStringList words =
            alternative.split(QRegularExpression(QStringLiteral("[^a-z0-9]+")), Qt::SkipEmptyParts);
        for (QString& w : words)
            w = singular(w);
        alternative = words.join(QLatin1Char(' '));
    }
    std::sort(alternatives.begin(), alternatives.end());
    return (verb.isEmpty() ? QString() : verb + QLatin1Char(' ')) +
           alternatives.join(QLatin1Char('/'));
}

QStringList FixPatternCatalog::splitLabel(const QString& label) const
{
    // " and " splits only when a verb follows; otherwise it is part of a name.
    static const QRegularExpression hard(QStringLiteral(R"(\s+&\s+|\s+/\s+)"));
    QStringList parts;
    for (const QString& piece : normalizeSpaces(label).split(hard, Qt::SkipEmptyParts)) {
        QString rest = piece;
        for (;;) {
            qsizetype at = -1;
            for (qsizetype from = 0;;) {
                const qsizetype found = rest.indexOf(QLatin1String(" and "), from);
                if (found < 0) break;
                if (m_verbs.contains(firstWord(rest.mid(found + 5)))) {
                    at = found;
                    break;
                }
                from = found + 5;
            }
            if (at < 0) break;
            parts << rest.left(at);
            rest = rest.mid(at + 5);
        }
        parts << rest;
    }
    // Only a part that starts with a word the sheet uses as an object inherits the verb;
    // "run docker in privileged mode" keeps its own verb although no plain label starts with it.
    for (qsizetype i = 1; i < parts.size(); ++i)
        if (!m_verbs.contains(firstWord(parts[i])) && m_objectWords.contains(firstWord(parts[i])))
            parts[i] = firstWord(parts[i - 1]) + QLatin1Char(' ') + parts[i];
    return parts;
}

FixPatternCatalog FixPatternCatalog::build(const QStringList& labels)
{
    FixPatternCatalog catalog;
    for (const QString& label : labels) {
        const QString clean = normalizeSpaces(label);
        if (clean.isEmpty() || hasSeparator(clean)) continue;
        const QStringList words = clean.toLower().split(QLatin1Char(' '));
        catalog.m_verbs.insert(words.first());
        for (qsizetype i = 1; i < words.size(); ++i)
            catalog.m_objectWords.insert(words[i]);
    }
    // key -> spelling -> occurrences, to name each pattern after its most frequent spelling.
    QHash<QString, QHash<QString, int>> spellings;
    QHash<QString, QStringList> keysOfLabel;
    for (const QString& label : labels) {
        if (normalizeSpaces(label).isEmpty()) continue;
        QStringList keys;
        for (const QString& part : catalog.splitLabel(label)) {
            const QString key = mergeKey(part);
            if (keys.contains(key)) continue;
            keys << key;
            ++spellings[key][part];
        }
        keysOfLabel.insert(label, keys);
    }
    QHash<QString, QString> idOfKey;
    for (auto it = spellings.cbegin(); it != spellings.cend(); ++it) {
        QString best;
        int bestCount = -1;
        for (auto s = it.value().cbegin(); s != it.value().cend(); ++s)
            if (s.value() > bestCount || (s.value() == bestCount && s.key() < best)) {
                best = s.key();
                bestCount = s.value();
            }
        const QString id = slugify(best);
        idOfKey.insert(it.key(), id);
        catalog.m_names.insert(id, best);
    }
    for (auto it = keysOfLabel.cbegin(); it != keysOfLabel.cend(); ++it) {
        QStringList ids;
        for (const QString& key : it.value()) {
            const QString id = idOfKey.value(key);
            if (!ids.contains(id)) ids << id;
            if (!catalog.m_labelsOfId[id].contains(it.key())) catalog.m_labelsOfId[id] << it.key();
        }
        catalog.m_idsOfLabel.insert(it.key(), ids);
    }
    for (QStringList& l : catalog.m_labelsOfId)
        l.sort();
    return catalog;
}

} // namespace rankscope
