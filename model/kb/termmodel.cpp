#include "model/kb/termmodel.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <algorithm>
#include <cmath>

namespace rankscope {

namespace {

constexpr qsizetype kMinTermLetters = 3;
constexpr qsizetype kMaxTermLetters = 24;

// English function words of three letters or more: they say nothing of a symptom, and left in
// they would only be weighed away by the learning's smoothing.
const QSet<QString>& stopWords()
{
    static const QSet<QString> words = [] {
        const QStringList list =
            QStringLiteral(
                "about above after again all also and any are aren because been before being "
                "below between both but can cannot could did didn does doesn doing don down "
                "during each few for from further had has hasn have having her here hers him his "
                "how into isn its itself just more most myself nor not now off once only other "
                "our ours out over own same she should since some such than that the their theirs "
                "them then there these they this those through too under until very was wasn were "
                "weren what when where which while who whom why will with won would you your "
                "yours")
                .split(QLatin1Char(' '));
        return QSet<QString>(list.cbegin(), list.cend());
    }();
    return words;
}

bool isLetter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Whether `term` is a word tokens() can produce or an evidence token (terms.json holds no
// other): "@" and a rule id of lower-case letters, digits, '.', '-' and '_'.
bool isToken(const QString& term)
{
    if (term.startsWith(QLatin1Char('@'))) {
        if (term.size() < 2) return false;
        for (QChar c : QStringView(term).sliced(1))
            if (!((c >= QLatin1Char('a') && c <= QLatin1Char('z')) ||
                  (c >= QLatin1Char('0') && c <= QLatin1Char('9')) || c == QLatin1Char('.') ||
                  c == QLatin1Char('-') || c == QLatin1Char('_')))
                return false;
        return true;
    }
    if (term.size() < kMinTermLetters || term.size() > kMaxTermLetters) return false;
    for (QChar c : term)
        if (c < QLatin1Char('a') || c > QLatin1Char('z')) return false;
    return !stopWords().contains(term);
}

// Adds the words of `text` (TermModel::words) to `out`.
void addWords(QByteArrayView text, QSet<QString>& out)
{
    qsizetype p = 0;
    while (p < text.size()) {
        if (!isLetter(text[p])) {
            ++p;
            continue;
        }
        const qsizetype start = p;
        while (p < text.size() && isLetter(text[p]))
            ++p;
        const qsizetype length = p - start;
        if (length < kMinTermLetters || length > kMaxTermLetters) continue;
        const QString word = QString::fromLatin1(text.sliced(start, length)).toLower();
        if (!stopWords().contains(word)) out.insert(word);
    }
}

} // namespace

QSet<QString> TermModel::words(QByteArrayView text)
{
    QSet<QString> out;
    addWords(text, out);
    return out;
}

QString termListText(const QList<TermWeight>& terms)
{
    QStringList groups;
    for (const bool positive : {true, false}) {
        QStringList words;
        double sum = 0.0;
        for (const TermWeight& t : terms)
            if ((t.weight > 0.0) == positive) {
                words.append(t.term);
                sum += t.weight;
            }
        if (!words.isEmpty())
            groups.append(QStringLiteral("%1%2: %3")
                              .arg(positive ? QStringLiteral("+") : QString())
                              .arg(sum, 0, 'f', 2)
                              .arg(words.join(QLatin1String(", "))));
    }
    return groups.join(QLatin1String("; "));
}

QStringList TermModel::tokens(QByteArrayView text, const QList<qsizetype>& lineStarts,
                              const QList<ReportLine>& lineKinds,
                              const QSet<qsizetype>& signatureLines)
{
    QSet<QString> seen;
    for (qsizetype i = 0; i < lineKinds.size() && i < lineStarts.size(); ++i) {
        if (!readsAsProse(lineKinds[i]) || signatureLines.contains(i)) continue;
        const qsizetype end = i + 1 < lineStarts.size() ? lineStarts[i + 1] : text.size();
        const QByteArrayView line = text.sliced(lineStarts[i], end - lineStarts[i]);
        // A traceback frame's path says where Python keeps a file ("/usr/lib/python3/dist-
        // packages/torch/.../__init__.py"), not what went wrong: read from its line number on,
        // the function that ran.
        addWords(line.sliced(std::max<qsizetype>(0, tracebackFramePathEnd(line))), seen);
    }
    QStringList out(seen.cbegin(), seen.cend());
    out.sort();
    return out;
}

bool TermModel::fromJson(const QByteArray& json, TermModel* out, QString* error)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (!doc.isObject()) {
        *error = QStringLiteral("term model: %1").arg(parseError.errorString());
        return false;
    }
    const QString schema = doc.object().value(QLatin1String("schema")).toString();
    if (schema != QLatin1String("rankscope.terms/2")) {
        *error = QStringLiteral("term model: schema \"%1\" is not rankscope.terms/2").arg(schema);
        return false;
    }
    if (!doc.object().value(QLatin1String("leaves")).isObject()) {
        *error = QStringLiteral("term model: no \"leaves\" object");
        return false;
    }
    TermModel model;
    const QJsonObject leaves = doc.object().value(QLatin1String("leaves")).toObject();
    for (auto leaf = leaves.begin(); leaf != leaves.end(); ++leaf) {
        if (!leaf.value().isObject()) {
            *error = QStringLiteral("term model: leaf %1 is not an object").arg(leaf.key());
            return false;
        }
        const QJsonObject terms = leaf.value().toObject();
        for (auto t = terms.begin(); t != terms.end(); ++t) {
            if (!isToken(t.key()) || !t.value().isDouble() || t.value().toDouble() == 0.0) {
                *error = QStringLiteral("term model: %1 of leaf %2 must be a word the tokenizer "
                                        "reads with a non-zero weight")
                             .arg(t.key(), leaf.key());
                return false;
            }
            model.m_leaves[leaf.key()][t.key()] = t.value().toDouble();
        }
    }
    *out = model;
    return true;
}

QMap<QString, TermModel::LeafScore> TermModel::score(const QStringList& tokens) const
{
    QMap<QString, LeafScore> out;
    for (auto leaf = m_leaves.cbegin(); leaf != m_leaves.cend(); ++leaf) {
        LeafScore s;
        double sum = 0.0; // in the tokens' (alphabetical) order, so every run sums alike
        for (const QString& token : tokens)
            if (const auto w = leaf->constFind(token); w != leaf->cend()) {
                sum += *w;
                s.terms.append({token, *w});
            }
        if (s.terms.isEmpty()) continue;
        s.score = sum;
        std::stable_sort(s.terms.begin(), s.terms.end(),
                         [](const TermWeight& a, const TermWeight& b) {
                             if ((a.weight > 0.0) != (b.weight > 0.0)) return a.weight > 0.0;
                             return std::abs(a.weight) > std::abs(b.weight);
                         });
        out.insert(leaf.key(), s);
    }
    return out;
}

} // namespace rankscope
