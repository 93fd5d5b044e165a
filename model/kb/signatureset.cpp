#include "model/kb/signatureset.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
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
    // ASCII \w, \b, \d and \s (no UseUnicodePropertiesOption): the rules are written for
    // English and log text, and reports in Chinese or Japanese write English words and error names
    // straight after their own characters ("就报OOM问题"); with Unicode word classes those
    // characters are word characters and "\bOOM\b" never matches there.
    QRegularExpression::PatternOptions options = QRegularExpression::NoPatternOption;
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
        cue.name = o.value(QLatin1String("name")).toString();
        cue.weight = o.value(QLatin1String("weight")).toDouble(1.0);
        cue.readsNegation = !o.value(QLatin1String("negated")).toString().isEmpty();
        cue.readsCommands = o.value(QLatin1String("commands")).toBool(false);
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

// The lines of `text`, `starts` holding where each begins, without their '\n'.
LineSource linesOf(QByteArrayView text, const QList<qsizetype>& starts)
{
    return {starts.size(), [text, &starts](qsizetype line) {
                const qsizetype begin = starts[line];
                qsizetype end = line + 1 < starts.size() ? starts[line + 1] : text.size();
                if (end > begin && text[end - 1] == '\n') --end;
                return text.sliced(begin, end - begin);
            }};
}

// What the regexes read of a line: its head, without line-break bytes at its end.
QByteArrayView regexBytes(QByteArrayView line)
{
    qsizetype end = line.size();
    while (end > 0 && (line[end - 1] == '\n' || line[end - 1] == '\r'))
        --end;
    return line.first(std::min(end, kMaxLineBytes));
}

// How many lines of `starts` begin before `byteLimit`.
qsizetype linesBefore(const QList<qsizetype>& starts, qsizetype byteLimit)
{
    return std::lower_bound(starts.begin(), starts.end(), byteLimit) - starts.begin();
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

    // Each advice pattern is checked alone (a clear error names it), then all are joined into
    // one alternation so a line is searched once, not once per pattern.
    QStringList advicePatterns;
    for (const QJsonValue& v : sigs.value(QLatin1String("advice")).toArray()) {
        QRegularExpression advice;
        const QJsonObject o = v.toObject();
        const QString pattern = o.value(QLatin1String("pattern")).toString();
        if (!compile(advice, pattern, false, o.value(QLatin1String("id")).toString(), error))
            return {};
        advicePatterns.append(QStringLiteral("(?:") + pattern + QLatin1Char(')'));
    }
    if (!advicePatterns.isEmpty() && !compile(set.m_advice, advicePatterns.join(QLatin1Char('|')),
                                              false, QStringLiteral("advice"), error))
        return {};

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
            const QString witness = o.value(QLatin1String("witness")).toString();
            if (witness == QLatin1String("peer_failure"))
                s.witness = SignatureWitness::PeerFailure;
            else if (witness == QLatin1String("collective_wait"))
                s.witness = SignatureWitness::CollectiveWait;
            else if (witness == QLatin1String("collective_mismatch"))
                s.witness = SignatureWitness::CollectiveMismatch;
            else if (!witness.isEmpty()) {
                *error = QStringLiteral("rule '%1': unknown witness '%2'").arg(s.id, witness);
                return false;
            }
            s.pinsStage = o.value(QLatin1String("pins_stage")).toBool();
            if (s.pinsStage && s.role != SignatureRole::Root) {
                // Only a root line names where the failure happened; a cascade or a cue does not.
                *error =
                    QStringLiteral("rule '%1': pins_stage on a rule that is not a root").arg(s.id);
                return false;
            }
            s.cascadeAfter = o.value(QLatin1String("cascade_after")).toString();
            if (!s.cascadeAfter.isEmpty() && s.role != SignatureRole::Root) {
                *error = QStringLiteral("rule '%1': cascade_after on a rule that is not a root")
                             .arg(s.id);
                return false;
            }
            for (const QJsonValue& f : o.value(QLatin1String("frameworks")).toArray())
                s.frameworks.append(f.toString());
            if (s.frameworks.isEmpty()) s.frameworks.append(QStringLiteral("any"));
            s.literals = literalsOf(o.value(QLatin1String("literals")), isCue);
            s.positive = o.value(QLatin1String("positive")).toString();
            s.negative = o.value(QLatin1String("negative")).toString();
            s.negated = o.value(QLatin1String("negated")).toString();
            if (s.id.isEmpty() || s.symptom.isEmpty() || s.literals.isEmpty()) {
                *error = QStringLiteral("rule '%1' lacks an id, a symptom or literals").arg(s.id);
                return false;
            }
            if (!compile(s.regex, o.value(QLatin1String("pattern")).toString(), isCue, s.id, error))
                return false;
            for (const QString& name : s.regex.namedCaptureGroups())
                if (!name.isEmpty()) s.fields.append(name);
            if (const QJsonValue early = o.value(QLatin1String("early")); !early.isUndefined()) {
                const QJsonObject e = early.toObject();
                s.earlyField = e.value(QLatin1String("field")).toString();
                s.earlyAtMost = e.value(QLatin1String("at_most")).toInteger(-1);
                s.earlySymptom = e.value(QLatin1String("symptom")).toString();
                // Like pins_stage: only a root line says where the failure happened.
                if (s.role != SignatureRole::Root || !s.fields.contains(s.earlyField) ||
                    s.earlyAtMost < 0 || s.earlySymptom.isEmpty()) {
                    *error = QStringLiteral("rule '%1': 'early' needs a root rule, a named group "
                                            "of its pattern, a non-negative at_most and a symptom")
                                 .arg(s.id);
                    return false;
                }
            }
            set.m_signatures.append(s);
        }
        return true;
    };
    const QString negation = cues.value(QLatin1String("negation")).toString();
    if (!negation.isEmpty() &&
        !compile(set.m_negation, QStringLiteral("(?:") + negation + QStringLiteral(")$"), true,
                 QStringLiteral("negation"), error))
        return {};
    if (!parseRules(sigs.value(QLatin1String("signatures")).toArray(), false)) return {};
    if (!parseRules(cues.value(QLatin1String("cues")).toArray(), true)) return {};
    if (!parseContext(cues.value(QLatin1String("stages")).toArray(), QStringLiteral("stage"),
                      set.m_stages, error) ||
        !parseContext(cues.value(QLatin1String("frameworks")).toArray(),
                      QStringLiteral("framework"), set.m_frameworks, error) ||
        !parseContext(cues.value(QLatin1String("frames")).toArray(), QStringLiteral("frame"),
                      set.m_frames, error))
        return {};
    const QJsonObject frameLeaves = cues.value(QLatin1String("frame_leaves")).toObject();
    for (auto it = frameLeaves.begin(); it != frameLeaves.end(); ++it)
        for (const QJsonValue& leaf : it.value().toArray())
            set.m_frameLeaves[it.key()].append(leaf.toString());
    for (const ContextCue& c : std::as_const(set.m_frames))
        if (set.m_frameLeaves.value(c.target).isEmpty()) {
            *error = QStringLiteral("frame cue '%1': frame '%2' has no leaves in frame_leaves")
                         .arg(c.id, c.target);
            return {};
        }
    const QJsonObject remap = cues.value(QLatin1String("stage_remap")).toObject();
    for (auto it = remap.begin(); it != remap.end(); ++it) {
        const QJsonObject m = it.value().toObject();
        for (auto jt = m.begin(); jt != m.end(); ++jt)
            set.m_remap[it.key()].insert(jt.key(), jt.value().toString());
    }
    QList<QList<QByteArray>> exact, folded, stages, frameworks, frames;
    for (int r = 0; r < set.m_signatures.size(); ++r) {
        const Signature& s = set.m_signatures[r];
        (s.caseInsensitive ? folded : exact).append(s.literals);
        (s.caseInsensitive ? set.m_cueRules : set.m_signatureRules).append(r);
    }
    for (const ContextCue& c : std::as_const(set.m_stages))
        stages.append(c.literals);
    for (const ContextCue& c : std::as_const(set.m_frameworks))
        frameworks.append(c.literals);
    for (const ContextCue& c : std::as_const(set.m_frames))
        frames.append(c.literals);
    set.m_signatureIndex = LiteralIndex(exact, false);
    set.m_cueIndex = LiteralIndex(folded, true);
    set.m_stageIndex = LiteralIndex(stages, true);
    set.m_frameworkIndex = LiteralIndex(frameworks, true);
    set.m_frameIndex = LiteralIndex(frames, true);
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

QStringList SignatureSet::remapTargets() const
{
    QStringList out;
    for (const QHash<QString, QString>& m : m_remap)
        for (const QString& target : m)
            if (!out.contains(target)) out.append(target);
    return out;
}

QStringList SignatureSet::messageFrameworks(const QString& symptom) const
{
    static const QHash<QString, QString> names{
        {QStringLiteral("pytorch"), QStringLiteral("PyTorch")},
        {QStringLiteral("horovod"), QStringLiteral("Horovod")},
        {QStringLiteral("tensorflow"), QStringLiteral("TensorFlow")},
        {QStringLiteral("keras"), QStringLiteral("Keras")},
        {QStringLiteral("deepspeed"), QStringLiteral("DeepSpeed")},
        {QStringLiteral("megatron"), QStringLiteral("Megatron-LM")},
        {QStringLiteral("fsdp"), QStringLiteral("FSDP/FSDP2")},
        {QStringLiteral("torchrun"), QStringLiteral("torchrun/elastic")},
        {QStringLiteral("accelerate"), QStringLiteral("accelerate")},
        {QStringLiteral("colossalai"), QStringLiteral("Colossal-AI")},
        {QStringLiteral("nccl"), QStringLiteral("NCCL")},
        {QStringLiteral("jax"), QStringLiteral("JAX")}};
    // The leaves whose signatures can end as `symptom`: itself and those a stage moves to it.
    QSet<QString> sources{symptom};
    for (const QHash<QString, QString>& m : m_remap)
        for (auto it = m.cbegin(); it != m.cend(); ++it)
            if (it.value() == symptom) sources.insert(it.key());
    QStringList out;
    bool generic = false;
    for (const Signature& s : m_signatures) {
        if ((!sources.contains(s.symptom) && !sources.contains(s.earlySymptom)) ||
            s.role == SignatureRole::Cue)
            continue;
        for (const QString& f : s.frameworks) {
            if (f == QLatin1String("any")) {
                generic = true;
                continue;
            }
            const QString name = names.value(f, f);
            if (!out.contains(name)) out << name;
        }
    }
    out.sort(Qt::CaseInsensitive);
    if (generic) out << QLatin1String(kGenericMessages);
    return out;
}

QRegularExpressionMatch SignatureSet::affirmedMatch(const QRegularExpression& regex,
                                                    const QString& line, bool readsNegation) const
{
    if (!readsNegation || m_negation.pattern().isEmpty()) return regex.match(line);
    // Negation is read in the few words before a match, not across the line: "no error at
    // first, then it hangs" still hangs.
    constexpr qsizetype kNegationReach = 64;
    QRegularExpressionMatchIterator it = regex.globalMatch(line);
    while (it.hasNext()) {
        QRegularExpressionMatch m = it.next();
        const qsizetype from = std::max<qsizetype>(0, m.capturedStart() - kNegationReach);
        if (!m_negation.match(line.mid(from, m.capturedStart() - from)).hasMatch()) return m;
    }
    return {};
}

QString SignatureSet::textToMatch(const QString& line) const
{
    // Only "**": "__" is also Python's dunder (__init__), a single "*" or "_" a glob or a name.
    const QString plain =
        line.contains(QLatin1String("**")) ? QString(line).remove(QStringLiteral("**")) : line;
    if (m_advice.pattern().isEmpty() || !plain.contains(m_advice)) return plain.trimmed();
    return QString(plain).remove(m_advice).trimmed();
}

QList<SignatureHit> SignatureSet::scan(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                       bool withCues, int maxHitsPerRule) const
{
    if (text.isEmpty()) return {};
    const QList<qsizetype> starts = lineStarts.isEmpty() ? lineStartsOf(text) : lineStarts;
    return scan(linesOf(text, starts), withCues ? linesBefore(starts, kProseBytes) : 0,
                maxHitsPerRule);
}

QList<SignatureHit> SignatureSet::scanLines(const LineSource& lines, int maxHitsPerRule) const
{
    return scan(lines, 0, maxHitsPerRule);
}

QList<SignatureHit> SignatureSet::scan(const LineSource& lines, qsizetype proseLines,
                                       int maxHitsPerRule) const
{
    QList<SignatureHit> hits;
    QHash<qsizetype, QString> decoded; // a line is decoded and stripped once for all rules

    auto run = [&](const LiteralIndex& index, const QList<int>& rules, qsizetype limit) {
        const std::vector<std::vector<qsizetype>> candidates = index.candidateLines(lines, limit);
        for (size_t k = 0; k < candidates.size(); ++k) {
            const int r = rules[qsizetype(k)];
            const Signature& s = m_signatures[r];
            int found = 0;
            for (qsizetype line : candidates[k]) {
                auto it = decoded.find(line);
                if (it == decoded.end())
                    it = decoded.insert(
                        line, textToMatch(QString::fromUtf8(regexBytes(lines.line(line)))));
                const QRegularExpressionMatch m = affirmedMatch(s.regex, *it, s.readsNegation());
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
    };
    run(m_signatureIndex, m_signatureRules, lines.count);
    if (proseLines > 0) run(m_cueIndex, m_cueRules, proseLines);
    std::stable_sort(hits.begin(), hits.end(),
                     [](const SignatureHit& a, const SignatureHit& b) { return a.line < b.line; });
    return hits;
}

QList<ContextHit> SignatureSet::scanContext(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                            const QList<ContextCue>& cues) const
{
    const QList<qsizetype> starts = lineStarts.isEmpty() ? lineStartsOf(text) : lineStarts;
    const LiteralIndex& index = &cues == &m_stages   ? m_stageIndex
                                : &cues == &m_frames ? m_frameIndex
                                                     : m_frameworkIndex;
    const LineSource lines = linesOf(text, starts);
    const std::vector<std::vector<qsizetype>> candidates =
        index.candidateLines(lines, linesBefore(starts, kProseBytes));
    QList<ContextHit> hits;
    for (int c = 0; c < cues.size() && size_t(c) < candidates.size(); ++c) {
        int found = 0;
        for (qsizetype line : candidates[size_t(c)]) {
            if (!affirmedMatch(cues[c].regex,
                               textToMatch(QString::fromUtf8(regexBytes(lines.line(line)))),
                               cues[c].readsNegation)
                     .hasMatch())
                continue;
            hits.append({c, line});
            if (++found >= 8) break; // context saturates; more lines add nothing
        }
    }
    return hits;
}

} // namespace rankscope
