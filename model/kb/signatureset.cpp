#include "model/kb/signatureset.h"

#include <QByteArrayMatcher>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cstring>

namespace rankscope {

namespace {

// Lines longer than this are cut before the regexes see them: a minified JSON blob in a log
// must not cost seconds, and no signature needs more context than this.
constexpr qsizetype kMaxLineBytes = 4096;

QList<QByteArray> literalsOf(const QJsonValue& value, bool lower)
{
    QList<QByteArray> out;
    for (const QJsonValue& v : value.toArray()) {
        QByteArray literal = v.toString().toUtf8();
        if (lower) literal = literal.toLower();
        if (!literal.isEmpty()) out.append(literal);
    }
    return out;
}

bool compile(QRegularExpression& regex, const QString& pattern, bool caseInsensitive,
             const QString& id, QString* error)
{
    QRegularExpression::PatternOptions options = QRegularExpression::UseUnicodePropertiesOption;
    if (caseInsensitive) options |= QRegularExpression::CaseInsensitiveOption;
    regex = QRegularExpression(pattern, options);
    if (!regex.isValid()) {
        *error = QStringLiteral("rule '%1': bad regex at offset %2: %3")
                     .arg(id)
                     .arg(regex.patternErrorOffset())
                     .arg(regex.errorString());
        return false;
    }
    regex.optimize();
    return true;
}

bool parseContext(const QJsonArray& array, const QString& targetKey, QList<ContextCue>& out,
                  QString* error)
{
    for (const QJsonValue& v : array) {
        const QJsonObject o = v.toObject();
        ContextCue cue;
        cue.id = o.value(QLatin1String("id")).toString();
        cue.target = o.value(targetKey).toString(cue.id);
        cue.weight = o.value(QLatin1String("weight")).toDouble(1.0);
        cue.literals = literalsOf(o.value(QLatin1String("literals")), true);
        if (cue.literals.isEmpty()) {
            *error = QStringLiteral("context cue '%1' has no literals").arg(cue.id);
            return false;
        }
        if (!compile(cue.regex, o.value(QLatin1String("pattern")).toString(), true, cue.id, error))
            return false;
        out.append(cue);
    }
    return true;
}

// Calls f(line) once per line whose bytes contain the matcher's pattern.
template <typename F>
void forEachLineContaining(QByteArrayView hay, const QByteArrayMatcher& matcher,
                           const QList<qsizetype>& starts, F&& f)
{
    qsizetype from = 0;
    while (from < hay.size()) {
        const qsizetype pos = matcher.indexIn(hay.data(), hay.size(), from);
        if (pos < 0) return;
        const auto it = std::upper_bound(starts.begin(), starts.end(), pos);
        const qsizetype line = qsizetype(it - starts.begin()) - 1;
        f(line);
        from = line + 1 < starts.size() ? starts[line + 1] : hay.size();
    }
}

QByteArrayView lineBytes(QByteArrayView text, const QList<qsizetype>& starts, qsizetype line)
{
    const qsizetype begin = starts[line];
    qsizetype end = line + 1 < starts.size() ? starts[line + 1] : text.size();
    while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r'))
        --end;
    return text.sliced(begin, std::min(end - begin, kMaxLineBytes));
}

// The candidate lines of one rule, ascending and unique.
std::vector<qsizetype> candidateLines(QByteArrayView hay, const QList<QByteArray>& literals,
                                      const QList<qsizetype>& starts)
{
    std::vector<qsizetype> lines;
    for (const QByteArray& literal : literals) {
        const QByteArrayMatcher matcher(literal);
        forEachLineContaining(hay, matcher, starts, [&](qsizetype l) { lines.push_back(l); });
    }
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    return lines;
}

} // namespace

QList<qsizetype> SignatureSet::lineStartsOf(QByteArrayView text)
{
    QList<qsizetype> starts;
    starts.reserve(text.size() / 80 + 1);
    starts.append(0);
    const char* data = text.data();
    const char* end = data + text.size();
    for (const char* p = data; p < end;) {
        const void* nl = std::memchr(p, '\n', size_t(end - p));
        if (!nl) break;
        p = static_cast<const char*>(nl) + 1;
        if (p < end) starts.append(qsizetype(p - data));
    }
    return starts;
}

SignatureSet SignatureSet::fromJson(const QByteArray& signaturesJson, const QByteArray& cuesJson,
                                    QString* error)
{
    SignatureSet set;
    QJsonParseError parseError;
    const QJsonDocument sigDoc = QJsonDocument::fromJson(signaturesJson, &parseError);
    if (!sigDoc.isObject()) {
        *error = QStringLiteral("signatures: %1").arg(parseError.errorString());
        return {};
    }
    const QJsonDocument cueDoc = QJsonDocument::fromJson(cuesJson, &parseError);
    if (!cueDoc.isObject()) {
        *error = QStringLiteral("cues: %1").arg(parseError.errorString());
        return {};
    }
    const QJsonObject sigs = sigDoc.object();
    const QJsonObject cues = cueDoc.object();

    for (const QJsonValue& v : sigs.value(QLatin1String("advice")).toArray()) {
        QRegularExpression advice;
        const QJsonObject o = v.toObject();
        if (!compile(advice, o.value(QLatin1String("pattern")).toString(), false,
                     o.value(QLatin1String("id")).toString(), error))
            return {};
        set.m_advice.append(advice);
    }

    auto parseRules = [&](const QJsonArray& array, bool isCue) {
        for (const QJsonValue& v : array) {
            const QJsonObject o = v.toObject();
            Signature s;
            s.id = o.value(QLatin1String("id")).toString();
            s.caseInsensitive = isCue;
            s.symptom = o.value(QLatin1String("symptom")).toString();
            s.weight = std::clamp(o.value(QLatin1String("weight")).toDouble(), 0.0, 1.0);
            const QString role = o.value(QLatin1String("role")).toString();
            s.role = isCue ? SignatureRole::Cue
                           : (role == QLatin1String("cascade") ? SignatureRole::Cascade
                                                               : SignatureRole::Root);
            for (const QJsonValue& f : o.value(QLatin1String("frameworks")).toArray())
                s.frameworks.append(f.toString());
            if (s.frameworks.isEmpty()) s.frameworks.append(QStringLiteral("any"));
            s.literals = literalsOf(o.value(QLatin1String("literals")), isCue);
            s.positive = o.value(QLatin1String("positive")).toString();
            s.negative = o.value(QLatin1String("negative")).toString();
            if (s.id.isEmpty() || s.symptom.isEmpty() || s.literals.isEmpty()) {
                *error = QStringLiteral("rule '%1' lacks an id, a symptom or literals").arg(s.id);
                return false;
            }
            if (!compile(s.regex, o.value(QLatin1String("pattern")).toString(), isCue, s.id, error))
                return false;
            for (const QString& name : s.regex.namedCaptureGroups())
                if (!name.isEmpty()) s.fields.append(name);
            set.m_signatures.append(s);
        }
        return true;
    };
    if (!parseRules(sigs.value(QLatin1String("signatures")).toArray(), false)) return {};
    if (!parseRules(cues.value(QLatin1String("cues")).toArray(), true)) return {};
    if (!parseContext(cues.value(QLatin1String("stages")).toArray(), QStringLiteral("stage"),
                      set.m_stages, error) ||
        !parseContext(cues.value(QLatin1String("frameworks")).toArray(), QStringLiteral("id"),
                      set.m_frameworks, error))
        return {};
    const QJsonObject remap = cues.value(QLatin1String("stage_remap")).toObject();
    for (auto it = remap.begin(); it != remap.end(); ++it) {
        const QJsonObject m = it.value().toObject();
        for (auto jt = m.begin(); jt != m.end(); ++jt)
            set.m_remap[it.key()].insert(jt.key(), jt.value().toString());
    }
    return set;
}

const SignatureSet& SignatureSet::builtin()
{
    static const SignatureSet set = [] {
        QFile sigs(QStringLiteral(":/taxonomy/signatures.json"));
        QFile cues(QStringLiteral(":/taxonomy/cues.json"));
        QString error;
        SignatureSet s;
        if (sigs.open(QIODevice::ReadOnly) && cues.open(QIODevice::ReadOnly))
            s = fromJson(sigs.readAll(), cues.readAll(), &error);
        if (s.isEmpty())
            qWarning("rankscope: the built-in signatures did not load: %s", qPrintable(error));
        return s;
    }();
    return set;
}

QString SignatureSet::remap(const QString& stage, const QString& symptom) const
{
    return m_remap.value(stage).value(symptom);
}

QString SignatureSet::stripAdvice(const QString& line) const
{
    QString out = line;
    for (const QRegularExpression& advice : m_advice)
        if (out.contains(advice)) out.remove(advice);
    return out.trimmed();
}

QList<SignatureHit> SignatureSet::scan(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                       bool withCues, int maxHitsPerRule) const
{
    const QList<qsizetype> starts = lineStarts.isEmpty() ? lineStartsOf(text) : lineStarts;
    QList<SignatureHit> hits;
    if (text.isEmpty()) return hits;
    QByteArray lower;
    if (withCues) lower = text.toByteArray().toLower();
    QHash<qsizetype, QString> decoded; // a line is decoded and stripped once for all rules

    for (int r = 0; r < m_signatures.size(); ++r) {
        const Signature& s = m_signatures[r];
        if (s.role == SignatureRole::Cue && !withCues) continue;
        const QByteArrayView hay = s.caseInsensitive ? QByteArrayView(lower) : text;
        int found = 0;
        for (qsizetype line : candidateLines(hay, s.literals, starts)) {
            auto it = decoded.find(line);
            if (it == decoded.end())
                it = decoded.insert(line,
                                    stripAdvice(QString::fromUtf8(lineBytes(text, starts, line))));
            const QRegularExpressionMatch m = s.regex.match(*it);
            if (!m.hasMatch()) continue;
            SignatureHit hit;
            hit.rule = r;
            hit.line = line;
            hit.text = *it;
            for (const QString& field : s.fields) {
                const QString value = m.captured(field);
                if (!value.isNull()) hit.fields.insert(field, value);
            }
            hits.append(hit);
            if (++found >= maxHitsPerRule) break;
        }
    }
    std::stable_sort(hits.begin(), hits.end(),
                     [](const SignatureHit& a, const SignatureHit& b) { return a.line < b.line; });
    return hits;
}

QList<ContextHit> SignatureSet::scanContext(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                            const QList<ContextCue>& cues) const
{
    const QList<qsizetype> starts = lineStarts.isEmpty() ? lineStartsOf(text) : lineStarts;
    const QByteArray lower = text.toByteArray().toLower();
    QList<ContextHit> hits;
    for (int c = 0; c < cues.size(); ++c) {
        int found = 0;
        for (qsizetype line : candidateLines(lower, cues[c].literals, starts)) {
            if (!cues[c].regex.match(QString::fromUtf8(lineBytes(text, starts, line))).hasMatch())
                continue;
            hits.append({c, line});
            if (++found >= 8) break; // context saturates; more lines add nothing
        }
    }
    return hits;
}

} // namespace rankscope
