#include "model/kb/symptomclassifier.h"

#include "model/kb/reporttext.h"
#include "model/kb/taxonomy.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QSet>
#include <algorithm>
#include <cmath>

namespace rankscope {

namespace {

// A cascade line is a consequence; a third of a root's weight keeps it visible without letting a
// watchdog teardown outrank the error that caused it, and halving again when a root exists.
constexpr double kCascadeFactor = 0.35;
constexpr double kCascadeWithRootFactor = 0.5;
// A signature tied to frameworks the report does not use is weaker evidence.
constexpr double kForeignFrameworkFactor = 0.6;
// Issue titles state the symptom the reporter sees.
constexpr double kTitleCueFactor = 1.4;
// A stage named in the program's output says how far the run got, and a log walks through every
// stage it passed ("Loading dataset" before a crash in the first step), so it counts for less
// than the reporter saying when it failed.
constexpr double kOutputStageFactor = 0.5;
// Unranked, the prior only breaks ties: the largest leaf share (~0.13) moves a score by ~0.001.
constexpr double kPriorFactor = 0.01;
// CandidateEvidence quotes a line, not a minified blob.
constexpr qsizetype kEvidenceChars = 300;
// An exception no signature knows is what the program died of, but says less than a known
// signature (0.6 to 0.95): it outweighs a stray cue word in a log line ("timeout=0:00:10" in an
// init line), not a report's prose that names another symptom several times.
constexpr double kUncaughtExceptionWeight = 0.5;

// The last line shaped like the line Python ends a traceback with ("KeyError: 'x'",
// "torch.distributed.DistBackendError: ...", after a "[rank1]:" prefix) that no signature
// matched; -1 when there is none.
qsizetype uncaughtExceptionLine(QByteArrayView text, const QList<qsizetype>& starts,
                                const QList<SignatureHit>& hits)
{
    static const QRegularExpression exceptionLine(QStringLiteral(
        "^(?:\\[[\\w-]+\\]:\\s*)?(?:[A-Za-z_]\\w*\\.)*[A-Z]\\w*(?:Error|Exception)(?::\\s.*)?$"));
    QSet<qsizetype> matched;
    for (const SignatureHit& h : hits)
        matched.insert(h.line);
    for (qsizetype i = starts.size() - 1; i >= 0; --i) {
        const qsizetype end = i + 1 < starts.size() ? starts[i + 1] : text.size();
        const QByteArrayView line = text.sliced(starts[i], end - starts[i]).trimmed();
        if (!line.contains("Error") && !line.contains("Exception")) continue;
        if (!matched.contains(i) && exceptionLine.match(QString::fromUtf8(line)).hasMatch())
            return i;
    }
    return -1;
}

// The kind of each line prose cues read: those of the first SignatureSet::kProseBytes.
QList<ReportLine> proseLineKinds(QByteArrayView text, const QList<qsizetype>& starts)
{
    return reportLineKinds(
        text, starts,
        std::lower_bound(starts.begin(), starts.end(), SignatureSet::kProseBytes) - starts.begin());
}

// The lines a log signature (not a prose cue) matched, 0-based.
QSet<qsizetype> signatureLinesOf(const SignatureSet& set, const QList<SignatureHit>& hits)
{
    QSet<qsizetype> lines;
    for (const SignatureHit& h : hits)
        if (set.signatures()[h.rule].role != SignatureRole::Cue) lines.insert(h.line);
    return lines;
}

QHash<QString, double> studyPriors()
{
    QHash<QString, double> prior;
    const Taxonomy& taxonomy = Taxonomy::instance();
    for (const QString& leaf : taxonomy.leaves())
        prior[leaf] = taxonomy.node(leaf)->studyShare;
    return prior;
}

QString stageOf(const QString& symptom)
{
    return symptom.section(QLatin1Char('/'), 0, 0);
}

// Products and sums below run over ordered maps: a QHash's order changes from run to run, and
// with it the last bits of a product, so the same report would print different probabilities.
struct Accumulator {
    QMap<QString, double> ruleWeight; // per rule id, the strongest hit
    QList<CandidateEvidence> evidence;
    bool hasRoot = false;
    bool hasCascade = false;
    bool pinned = false; // a root line whose hit pins its stage (Signature::pinsStageOf)
};

double noisyOr(const QMap<QString, double>& weights)
{
    double miss = 1.0;
    for (double w : weights)
        miss *= 1.0 - std::clamp(w, 0.0, 0.999);
    return 1.0 - miss;
}

void add(Accumulator& acc, const CandidateEvidence& e)
{
    double& w = acc.ruleWeight[e.signature];
    w = std::max(w, e.weight);
    acc.evidence.append(e);
    acc.hasRoot = acc.hasRoot || e.role == SignatureRole::Root;
    acc.hasCascade = acc.hasCascade || e.role == SignatureRole::Cascade;
}

} // namespace

bool RankerParameters::fromJson(const QByteArray& json, RankerParameters* out, QString* error)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (!doc.isObject()) {
        *error = QStringLiteral("ranker parameters: %1").arg(parseError.errorString());
        return false;
    }
    const QJsonObject o = doc.object();
    RankerParameters r;
    const auto number = [&](const char* key, double* value, double low, double high) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined()) return true;
        if (!v.isDouble() || v.toDouble() < low || v.toDouble() > high) {
            *error = QStringLiteral("ranker parameters: %1 must be a number in [%2, %3]")
                         .arg(QLatin1String(key))
                         .arg(low)
                         .arg(high);
            return false;
        }
        *value = v.toDouble();
        return true;
    };
    double minCandidates = r.minCandidates;
    double neighbourCount = r.neighbourCount;
    double neighbourMinTokens = r.neighbourMinTokens;
    if (!number("evidence_scale", &r.evidenceScale, 0.0, 100.0) ||
        !number("stage_scale", &r.stageScale, 0.0, 100.0) ||
        !number("prior_weight", &r.priorWeight, 0.0, 10.0) ||
        !number("prior_smoothing", &r.priorSmoothing, 0.0, 1e6) ||
        !number("unsure_below", &r.unsureBelow, 0.0, 1.0) ||
        !number("temperature", &r.temperature, 0.05, 100.0) ||
        !number("exception_weight", &r.exceptionWeight, 0.0, 0.95) ||
        !number("secondary_stage_share", &r.secondaryStageShare, 0.0, 1.0) ||
        !number("leading_stage_share", &r.leadingStageShare, 0.0, 1.0) ||
        !number("cross_stage_share", &r.crossStageShare, 0.0, 1.0) ||
        !number("unstaged_share", &r.unstagedShare, 0.0, 1.0) ||
        !number("term_scale", &r.termScale, 0.0, 100.0) ||
        !number("neighbour_scale", &r.neighbourScale, 0.0, 100.0) ||
        !number("neighbour_count", &neighbourCount, 1.0, 1000.0) ||
        !number("neighbour_floor", &r.neighbourFloor, 1e-6, 1.0) ||
        !number("neighbour_half_tokens", &r.neighbourHalfTokens, 0.0, 1e6) ||
        !number("neighbour_min_tokens", &neighbourMinTokens, 1.0, 1e6) ||
        !number("neighbour_prior_power", &r.neighbourPriorPower, 0.0, 2.0) ||
        !number("min_candidates", &minCandidates, 1.0, 38.0))
        return false;
    if (o.value(QLatin1String("unstaged_share")).isUndefined()) r.unstagedShare = r.crossStageShare;
    r.minCandidates = int(minCandidates);
    r.neighbourCount = int(neighbourCount);
    r.neighbourMinTokens = int(neighbourMinTokens);
    *out = r;
    return true;
}

SymptomClassifier::SymptomClassifier(SignatureSet signatures, RankerParameters ranking,
                                     TermModel terms, NeighbourModel neighbours)
    : m_set(std::move(signatures)), m_ranking(ranking), m_terms(std::move(terms)),
      m_neighbours(std::move(neighbours)), m_prior(studyPriors())
{
    const Taxonomy& taxonomy = Taxonomy::instance();
    for (const QString& leaf : taxonomy.leaves())
        for (const KeyCount& f : taxonomy.node(leaf)->frameworks) {
            m_frameworkRows[f.key.toLower()][leaf] += f.count;
            m_frameworkTotal[f.key.toLower()] += f.count;
        }
}

const SymptomClassifier& SymptomClassifier::instance()
{
    static const SymptomClassifier classifier = [] {
        RankerParameters ranking;
        QFile f(QStringLiteral(":/taxonomy/ranker.json"));
        QString error;
        if (!f.open(QIODevice::ReadOnly) ||
            !RankerParameters::fromJson(f.readAll(), &ranking, &error))
            qWarning("rankscope: built-in ranker parameters unusable (%s), using defaults",
                     qPrintable(error.isEmpty() ? f.errorString() : error));
        TermModel terms;
        QFile t(QStringLiteral(":/taxonomy/terms.json"));
        error.clear();
        if (!t.open(QIODevice::ReadOnly) || !TermModel::fromJson(t.readAll(), &terms, &error))
            qWarning("rankscope: built-in term model unusable (%s), ranking without it",
                     qPrintable(error.isEmpty() ? t.errorString() : error));
        NeighbourModel neighbours;
        QFile n(QStringLiteral(":/taxonomy/neighbours.tsv"));
        error.clear();
        if (!n.open(QIODevice::ReadOnly) ||
            !NeighbourModel::fromTsv(n.readAll(), &neighbours, &error))
            qWarning("rankscope: built-in labelled reports unusable (%s), ranking without them",
                     qPrintable(error.isEmpty() ? n.errorString() : error));
        return SymptomClassifier(SignatureSet::builtin(), ranking, std::move(terms),
                                 std::move(neighbours));
    }();
    return classifier;
}

double SymptomClassifier::baseRate(const QString& symptom, const QSet<QString>& frameworks) const
{
    // The mean over the report's frameworks of each one's smoothed leaf share.
    const double overall = prior(symptom);
    double sum = 0.0;
    int known = 0;
    // Summed in name order, as the products below (see Accumulator).
    QStringList names(frameworks.cbegin(), frameworks.cend());
    names.sort();
    for (const QString& f : std::as_const(names)) {
        const auto total = m_frameworkTotal.constFind(f);
        if (total == m_frameworkTotal.constEnd()) continue;
        const double rows = m_frameworkRows.value(f).value(symptom);
        sum += (rows + m_ranking.priorSmoothing * overall) / (*total + m_ranking.priorSmoothing);
        ++known;
    }
    return known ? sum / known : overall;
}

bool SymptomClassifier::isUnsure(const QList<Candidate>& ranked) const
{
    return ranked.isEmpty() || ranked.first().probability < m_ranking.unsureBelow;
}

QList<Candidate> SymptomClassifier::classify(const QByteArray& text, const Options& options) const
{
    return classifyLines(text, SignatureSet::lineStartsOf(text), options);
}

QList<Candidate> SymptomClassifier::classify(const QByteArray& text, const Options& options,
                                             QStringList* tokens) const
{
    return rankLeaves(text, SignatureSet::lineStartsOf(text), options, tokens);
}

QList<Candidate> SymptomClassifier::classifyLines(QByteArrayView text,
                                                  const QList<qsizetype>& lineStarts,
                                                  const Options& options) const
{
    return rankLeaves(text, lineStarts, options, nullptr);
}

QList<Candidate> SymptomClassifier::rankLeaves(QByteArrayView text,
                                               const QList<qsizetype>& lineStarts,
                                               const Options& options, QStringList* tokens) const
{
    const QList<qsizetype> starts =
        lineStarts.isEmpty() ? SignatureSet::lineStartsOf(text) : lineStarts;
    QList<SignatureHit> hits = m_set.scan(text, starts, options.useCues);
    if (hits.isEmpty() && (!options.ranked || text.trimmed().isEmpty())) return {};

    // Prose cues read the reporter's words and the program's output, not a pasted report's
    // template scaffolding, environment dumps, code or commands; stage context also reads
    // commands (reporttext.h).
    const QList<ReportLine> lineKinds =
        options.useCues ? proseLineKinds(text, starts) : QList<ReportLine>{};
    // No rule reads an issue template's scaffolding (its instructions, an HTML comment's example
    // error): the template's words, not what the program printed. In the reporter's own words
    // a log message can be denied ("there is no CUDA out of memory error"), read as the prose
    // cues read negation.
    hits.removeIf([&](const SignatureHit& h) {
        if (h.line >= lineKinds.size()) return false;
        const Signature& s = m_set.signatures()[h.rule];
        return lineKinds[h.line] == ReportLine::Scaffold ||
               (lineKinds[h.line] == ReportLine::Prose && s.role != SignatureRole::Cue &&
                !s.readsNegation() && m_set.deniedIn(s.regex, h.text));
    });
    const auto readsProse = [&](qsizetype line) {
        return line >= lineKinds.size() || readsAsProse(lineKinds[line]);
    };

    QSet<QString> frameworks;
    QMap<QString, double> stageMiss; // stage -> product of (1 - w) over its context lines
    QMap<QString, double> frameMiss; // frame -> product of (1 - w) over its cues, each once
    // (frame, the first line of one of its cues): shown as the context of the frame's leaves.
    QList<std::pair<QString, CandidateEvidence>> frameLines;
    // The rules that counted as evidence, which the term model reads beside the words.
    QSet<QString> evidenceIds;
    if (options.useCues) {
        for (const ContextHit& c : m_set.scanContext(text, starts, m_set.frameworks()))
            frameworks.insert(m_set.frameworks()[c.cue].target);
        for (const ContextHit& c : m_set.scanContext(text, starts, m_set.stages())) {
            const ContextCue& cue = m_set.stages()[c.cue];
            if (c.line < lineKinds.size() &&
                (!readsAsContext(lineKinds[c.line]) ||
                 (lineKinds[c.line] == ReportLine::Command && !cue.readsCommands)))
                continue;
            const double w = c.line < lineKinds.size() && lineKinds[c.line] == ReportLine::Output
                                 ? cue.weight * kOutputStageFactor
                                 : cue.weight;
            stageMiss[cue.target] = stageMiss.value(cue.target, 1.0) * (1.0 - w);
        }
        // A frame is what the reporter says was done or seen: read where prose cues read. It is
        // said or not: a phrase repeated over the lines of a log says it no more.
        QSet<int> framesSeen;
        for (const ContextHit& c : m_set.scanContext(text, starts, m_set.frames()))
            if (readsProse(c.line) && !framesSeen.contains(c.cue)) {
                framesSeen.insert(c.cue);
                const ContextCue& cue = m_set.frames()[c.cue];
                evidenceIds.insert(cue.id);
                frameMiss[cue.target] = frameMiss.value(cue.target, 1.0) * (1.0 - cue.weight);
                const qsizetype end = c.line + 1 < starts.size() ? starts[c.line + 1] : text.size();
                frameLines.append(
                    {cue.target,
                     CandidateEvidence{
                         c.line + 1,
                         QString::fromUtf8(text.sliced(starts[c.line], end - starts[c.line]))
                             .trimmed()
                             .left(kEvidenceChars),
                         cue.id,
                         SignatureRole::Cue,
                         cue.weight,
                         {}}});
            }
    }
    if (frameworks.contains(QStringLiteral("keras")))
        frameworks.insert(QStringLiteral("tensorflow"));

    // The first non-empty line of a report is its title.
    qsizetype titleLine = -1;
    for (qsizetype i = 0; i < starts.size() && titleLine < 0; ++i) {
        const qsizetype end = i + 1 < starts.size() ? starts[i + 1] : text.size();
        if (!text.sliced(starts[i], end - starts[i]).trimmed().isEmpty()) titleLine = i;
    }

    // A timeout waiting for a peer beside a failure it follows from (Signature::cascadeAfter:
    // one rank's CUDA OOM, the others' watchdog timeouts) is that failure's cascade.
    QSet<QString> failures; // the leaves of root hits that follow from nothing else
    for (const SignatureHit& h : hits)
        if (const Signature& s = m_set.signatures()[h.rule];
            s.role == SignatureRole::Root && s.cascadeAfter.isEmpty())
            failures.insert(s.symptomOf(h.fields));
    const auto roleOf = [&](const Signature& s) {
        if (s.role != SignatureRole::Root || s.cascadeAfter.isEmpty()) return s.role;
        for (const QString& leaf : failures)
            if (leaf.startsWith(s.cascadeAfter)) return SignatureRole::Cascade;
        return SignatureRole::Root;
    };
    bool anyRoot = false;
    for (const SignatureHit& h : hits)
        anyRoot = anyRoot || roleOf(m_set.signatures()[h.rule]) == SignatureRole::Root;
    const QSet<qsizetype> logLines = signatureLinesOf(m_set, hits);

    QHash<QString, Accumulator> bySymptom;
    if (!anyRoot)
        if (const qsizetype line = uncaughtExceptionLine(text, starts, hits); line >= 0) {
            const qsizetype end = line + 1 < starts.size() ? starts[line + 1] : text.size();
            add(bySymptom[QLatin1String(kUncaughtExceptionLeaf)],
                CandidateEvidence{line + 1,
                                  QString::fromUtf8(text.sliced(starts[line], end - starts[line]))
                                      .trimmed()
                                      .left(kEvidenceChars),
                                  QLatin1String(kUncaughtExceptionSignature),
                                  SignatureRole::Root,
                                  options.ranked && !hits.isEmpty() ? m_ranking.exceptionWeight
                                                                    : kUncaughtExceptionWeight,
                                  {}});
            evidenceIds.insert(QLatin1String(kUncaughtExceptionSignature));
            anyRoot = true;
        }
    for (const SignatureHit& h : hits) {
        const Signature& s = m_set.signatures()[h.rule];
        // A message a log signature knows is read as that message; the prose words inside it
        // ("timed out" in a teardown line, "hang" in a watchdog's advice) are not a second
        // opinion.
        if (s.role == SignatureRole::Cue && (logLines.contains(h.line) || !readsProse(h.line)))
            continue;
        const SignatureRole role = roleOf(s);
        double w = s.weight;
        if (role == SignatureRole::Cascade)
            w *= kCascadeFactor * (anyRoot ? kCascadeWithRootFactor : 1.0);
        if (s.role == SignatureRole::Cue && h.line == titleLine)
            w = std::min(0.95, w * kTitleCueFactor);
        if (!frameworks.isEmpty() && !s.frameworks.contains(QStringLiteral("any"))) {
            bool shared = false;
            for (const QString& f : s.frameworks)
                shared = shared || frameworks.contains(f);
            if (!shared) w *= kForeignFrameworkFactor;
        }
        if (w <= 0.0) continue;
        evidenceIds.insert(s.id);
        Accumulator& acc = bySymptom[s.symptomOf(h.fields)];
        acc.pinned = acc.pinned || (role == SignatureRole::Root && s.pinsStageOf(h.fields));
        add(acc,
            CandidateEvidence{h.line + 1, h.text.left(kEvidenceChars), s.id, role, w, h.fields});
    }

    // The report's stage: the strongest context, if it clearly leads.
    QString stage;
    double stageConfidence = 0.0, runnerUp = 0.0;
    for (auto it = stageMiss.begin(); it != stageMiss.end(); ++it) {
        const double c = 1.0 - it.value();
        if (c > stageConfidence) {
            runnerUp = stageConfidence;
            stageConfidence = c;
            stage = it.key();
        } else {
            runnerUp = std::max(runnerUp, c);
        }
    }
    const double lead = stageConfidence - runnerUp;

    QMap<QString, double> score;
    for (auto it = bySymptom.begin(); it != bySymptom.end(); ++it) {
        double s = noisyOr(it->ruleWeight);
        if (!it->hasRoot && it->hasCascade && anyRoot) s *= kCascadeWithRootFactor;
        score[it.key()] = s;
    }
    const QMap<QString, double> evidenced = score; // before any stage moves it
    // Ranked, a stage whose context is clearly stronger than the symptom's own but does not lead
    // gets a part of the symptom as its own leaf (a hang at DDP's constructor in a multi-node
    // report: setup context leads, preparation context is there too), so that leaf can reach
    // the top three; the symptom keeps its score.
    if (options.ranked && m_ranking.secondaryStageShare > 0.0) {
        const QMap<QString, double> before = score;
        for (auto st = stageMiss.cbegin(); st != stageMiss.cend(); ++st) {
            const double c = 1.0 - st.value();
            if (st.key() == stage && lead > 0.1) continue; // the leading stage moves it below
            for (auto it = before.cbegin(); it != before.cend(); ++it) {
                const QString target = m_set.remap(st.key(), it.key());
                if (target.isEmpty() || stageOf(it.key()) == st.key() ||
                    bySymptom.value(it.key()).pinned)
                    continue;
                const double own = 1.0 - stageMiss.value(stageOf(it.key()), 1.0);
                if (c < own + 0.1) continue;
                const double moved = it.value() * m_ranking.secondaryStageShare * (c - own) / c;
                double& t = score[target];
                t = 1.0 - (1.0 - t) * (1.0 - moved);
                Accumulator& to = bySymptom[target];
                for (const CandidateEvidence& e : std::as_const(bySymptom[it.key()].evidence))
                    to.evidence.append(e);
            }
        }
    }
    if (!stage.isEmpty() && lead > 0.1) {
        const QStringList symptoms = score.keys();
        for (const QString& symptom : symptoms) {
            const QString target = m_set.remap(stage, symptom);
            if (target.isEmpty() || stageOf(symptom) == stage || bySymptom.value(symptom).pinned)
                continue;
            // The share that moves: how much more the report's context points at the leading
            // stage than at the symptom's own stage ("hangs" with only setup context moves
            // whole; with training context as strong as the setup context it stays).
            const double own = 1.0 - stageMiss.value(stageOf(symptom), 1.0);
            const double share = std::clamp((stageConfidence - own) / stageConfidence, 0.0, 1.0) *
                                 (options.ranked ? m_ranking.leadingStageShare : 1.0);
            const double moved = score[symptom] * share;
            double& t = score[target];
            t = 1.0 - (1.0 - t) * (1.0 - moved);
            score[symptom] *= 1.0 - 0.5 * share;
            Accumulator& to = bySymptom[target];
            for (const CandidateEvidence& e : std::as_const(bySymptom[symptom].evidence)) {
                to.evidence.append(e);
                to.hasRoot = to.hasRoot || e.role == SignatureRole::Root;
            }
        }
    }

    // Ranked, every other stage's leaf for the symptom gets a fixed part of it, context or not.
    // With no stage context at all the text does not say which stage's leaf the symptom is: the
    // study gives a hang to the setup and the training stage about equally often, and an NCCL
    // error to set-up failures about as often as to training's communication errors. Only a
    // message that pins its stage keeps it.
    if (options.ranked) {
        QSet<QString> stages;
        for (const ContextCue& cue : m_set.stages())
            stages.insert(cue.target);
        for (auto it = evidenced.cbegin(); it != evidenced.cend(); ++it) {
            const double share = stageMiss.isEmpty() && !bySymptom.value(it.key()).pinned
                                     ? m_ranking.unstagedShare
                                     : m_ranking.crossStageShare;
            if (share <= 0.0) continue;
            for (const QString& other : std::as_const(stages)) {
                const QString target = m_set.remap(other, it.key());
                if (target.isEmpty() || stageOf(it.key()) == other) continue;
                double& t = score[target];
                t = 1.0 - (1.0 - t) * (1.0 - it.value() * share);
                Accumulator& to = bySymptom[target];
                for (const CandidateEvidence& e : std::as_const(bySymptom[it.key()].evidence))
                    to.evidence.append(e);
            }
        }
    }

    QList<Candidate> out;
    const auto addCandidate = [&](const QString& symptom, double evidence) {
        Candidate c;
        c.symptom = symptom;
        c.score = std::clamp(evidence, 0.0, 1.0);
        const Accumulator& acc = bySymptom.value(symptom);
        c.hasRoot = acc.hasRoot;
        c.evidence = acc.evidence;
        std::stable_sort(c.evidence.begin(), c.evidence.end(),
                         [](const CandidateEvidence& a, const CandidateEvidence& b) {
                             return a.weight > b.weight;
                         });
        // One line per rule is enough to explain a score.
        QSet<QString> seen;
        QList<CandidateEvidence> kept;
        for (const CandidateEvidence& e : std::as_const(c.evidence))
            if (!seen.contains(e.signature) && kept.size() < options.maxEvidence) {
                seen.insert(e.signature);
                kept.append(e);
            }
        // Then the frame lines that fit the leaf, which explain its context hint (a leaf with
        // no evidence of its own ranks by them and its base rate).
        if (options.ranked)
            for (const auto& [frame, line] : std::as_const(frameLines))
                if (kept.size() < options.maxEvidence && m_set.frameLeaves(frame).contains(symptom))
                    kept.append(line);
        c.evidence = kept;
        out.append(c);
    };

    if (!options.ranked) {
        for (auto it = score.begin(); it != score.end(); ++it)
            addCandidate(it.key(), it.value() + kPriorFactor * prior(it.key()));
        std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
            if (a.score != b.score) return a.score > b.score;
            return a.symptom < b.symptom;
        });
        if (out.size() > options.maxCandidates) out.resize(options.maxCandidates);
        return out;
    }

    // Every leaf competes: base rate, evidence and context hint as logits, then a softmax. A
    // leaf's context hint is its stage's confidence plus that of the frames (what the reporter
    // did, what they saw) it is consistent with, so that with no evidence the leaves that fit
    // the stage and the complaint lead, not the study's most common ones.
    const Taxonomy& taxonomy = Taxonomy::instance();
    QHash<QString, double> contextHint;
    for (const QString& leaf : taxonomy.leaves())
        contextHint[leaf] = 1.0 - stageMiss.value(stageOf(leaf), 1.0);
    QMap<QString, double> frameLeafMiss; // leaf -> product of (1 - c) over its frames
    for (auto it = frameMiss.cbegin(); it != frameMiss.cend(); ++it)
        for (const QString& leaf : m_set.frameLeaves(it.key()))
            frameLeafMiss[leaf] = frameLeafMiss.value(leaf, 1.0) * it.value();
    for (auto it = frameLeafMiss.cbegin(); it != frameLeafMiss.cend(); ++it)
        contextHint[it.key()] += 1.0 - it.value();
    // The learned term model reads the words of the lines prose cues read (TermModel::tokens)
    // and the rules that counted as evidence: a rule whose leaf the labelled reports often
    // disagree with gets a learned correction, as a word does.
    QStringList termInput;
    if (options.useCues) {
        termInput = TermModel::tokens(text, starts, lineKinds, logLines);
        for (const QString& id : std::as_const(evidenceIds))
            termInput.append(TermModel::evidenceToken(id));
        termInput.sort();
    }
    if (tokens) *tokens = termInput;
    const QMap<QString, TermModel::LeafScore> termScores =
        options.useCues ? m_terms.score(termInput) : QMap<QString, TermModel::LeafScore>{};
    // The labelled reports most alike read the same tokens as the term model.
    // A report of fewer words than neighbourMinTokens gets no vote, and shows none.
    qsizetype neighbourTokens = 0;
    QList<NeighbourReport> nearest =
        options.useCues && m_ranking.neighbourScale > 0.0
            ? m_neighbours.nearest(termInput, m_ranking.neighbourCount, &neighbourTokens)
            : QList<NeighbourReport>{};
    if (neighbourTokens < m_ranking.neighbourMinTokens) nearest.clear();
    QMap<QString, double> neighbourShares =
        m_neighbours.leafShares(nearest, m_ranking.neighbourPriorPower);
    // A root line that pins its stage (a watchdog on a group's first collective, a rendezvous
    // timeout) says where the failure happened; the labelled reports alike say what happened,
    // each in the stage its own words gave. Their vote for the symptom's leaf in another stage
    // goes to the pinned stage's leaf. A pinned leaf keeps its own vote; where two pinned leaves
    // could take another's, the one of stronger evidence does (then the first by name), so the
    // result does not depend on the order of a hash.
    QList<QString> pinnedLeaves;
    for (auto it = evidenced.cbegin(); it != evidenced.cend(); ++it)
        if (bySymptom.value(it.key()).pinned) pinnedLeaves.append(it.key());
    std::stable_sort(pinnedLeaves.begin(), pinnedLeaves.end(),
                     [&](const QString& a, const QString& b) {
                         return evidenced.value(a) > evidenced.value(b);
                     });
    QHash<QString, QString> voteMovedTo;
    for (const QString& pinned : std::as_const(pinnedLeaves)) {
        const QString pinnedStage = stageOf(pinned);
        for (const QString& leaf : taxonomy.leaves())
            if (!pinnedLeaves.contains(leaf) && !voteMovedTo.contains(leaf) &&
                m_set.remap(pinnedStage, leaf) == pinned) {
                neighbourShares[pinned] += neighbourShares.take(leaf);
                voteMovedTo.insert(leaf, pinned);
            }
    }
    const double neighbourWeight =
        nearest.isEmpty() ? 0.0
                          : m_ranking.neighbourScale * double(neighbourTokens) /
                                (double(neighbourTokens) + m_ranking.neighbourHalfTokens);
    QList<std::pair<QString, double>> logits;
    double maxLogit = -1e300;
    for (const QString& leaf : taxonomy.leaves()) {
        const double base = std::max(baseRate(leaf, frameworks), 1e-6);
        const double logit =
            (m_ranking.priorWeight * std::log(base) + m_ranking.evidenceScale * score.value(leaf) +
             m_ranking.stageScale * contextHint.value(leaf) +
             m_ranking.termScale * termScores.value(leaf).score +
             neighbourWeight * std::log(neighbourShares.value(leaf) + m_ranking.neighbourFloor)) /
            m_ranking.temperature;
        logits.append({leaf, logit});
        maxLogit = std::max(maxLogit, logit);
    }
    double sum = 0.0;
    for (auto& [leaf, logit] : logits)
        sum += std::exp(logit - maxLogit);
    for (const auto& [leaf, logit] : std::as_const(logits)) {
        addCandidate(leaf, score.value(leaf));
        Candidate& c = out.last();
        c.probability = std::exp(logit - maxLogit) / sum;
        c.baseRate = baseRate(leaf, frameworks);
        c.stageHint = contextHint.value(leaf);
        c.termScore = termScores.value(leaf).score;
        c.terms = termScores.value(leaf).terms;
        c.neighbourShare = neighbourShares.value(leaf);
        c.neighbourTokens = neighbourTokens;
        for (const NeighbourReport& n : nearest)
            for (const QString& voted : n.leaves)
                if (voteMovedTo.value(voted, voted) == leaf) {
                    c.neighbours.append(n);
                    break;
                }
    }
    std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
        if (a.probability != b.probability) return a.probability > b.probability;
        return a.symptom < b.symptom;
    });
    const qsizetype keep = std::max(options.maxCandidates, m_ranking.minCandidates);
    if (out.size() > keep) out.resize(keep);
    return out;
}

} // namespace rankscope
