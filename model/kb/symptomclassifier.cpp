#include "model/kb/symptomclassifier.h"

#include "model/kb/taxonomy.h"

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
// The prior only breaks ties: the largest leaf share (~0.13) moves a score by ~0.001.
constexpr double kPriorFactor = 0.01;
// CandidateEvidence quotes a line, not a minified blob.
constexpr qsizetype kEvidenceChars = 300;

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

struct Accumulator {
    QHash<QString, double> ruleWeight; // per rule id, the strongest hit
    QList<CandidateEvidence> evidence;
    bool hasRoot = false;
    bool hasCascade = false;
};

double noisyOr(const QHash<QString, double>& weights)
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

SymptomClassifier::SymptomClassifier(SignatureSet signatures)
    : m_set(std::move(signatures)), m_prior(studyPriors())
{}

const SymptomClassifier& SymptomClassifier::instance()
{
    static const SymptomClassifier classifier(SignatureSet::builtin());
    return classifier;
}

QList<Candidate> SymptomClassifier::classify(const QByteArray& text, const Options& options) const
{
    return classifyLines(text, SignatureSet::lineStartsOf(text), options);
}

QList<Candidate> SymptomClassifier::classifyLines(QByteArrayView text,
                                                  const QList<qsizetype>& lineStarts,
                                                  const Options& options) const
{
    const QList<qsizetype> starts =
        lineStarts.isEmpty() ? SignatureSet::lineStartsOf(text) : lineStarts;
    const QList<SignatureHit> hits = m_set.scan(text, starts, options.useCues);
    if (hits.isEmpty()) return {};

    QSet<QString> frameworks;
    QHash<QString, double> stageMiss; // stage -> product of (1 - w) over its context lines
    if (options.useCues) {
        for (const ContextHit& c : m_set.scanContext(text, starts, m_set.frameworks()))
            frameworks.insert(m_set.frameworks()[c.cue].target);
        for (const ContextHit& c : m_set.scanContext(text, starts, m_set.stages())) {
            const ContextCue& cue = m_set.stages()[c.cue];
            stageMiss[cue.target] = stageMiss.value(cue.target, 1.0) * (1.0 - cue.weight);
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

    bool anyRoot = false;
    for (const SignatureHit& h : hits)
        anyRoot = anyRoot || m_set.signatures()[h.rule].role == SignatureRole::Root;

    QHash<QString, Accumulator> bySymptom;
    for (const SignatureHit& h : hits) {
        const Signature& s = m_set.signatures()[h.rule];
        double w = s.weight;
        if (s.role == SignatureRole::Cascade)
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
        add(bySymptom[s.symptom],
            CandidateEvidence{h.line + 1, h.text.left(kEvidenceChars), s.id, s.role, w, h.fields});
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

    QHash<QString, double> score;
    for (auto it = bySymptom.begin(); it != bySymptom.end(); ++it) {
        double s = noisyOr(it->ruleWeight);
        if (!it->hasRoot && it->hasCascade && anyRoot) s *= kCascadeWithRootFactor;
        score[it.key()] = s;
    }
    if (!stage.isEmpty() && lead > 0.1) {
        const QStringList symptoms = score.keys();
        for (const QString& symptom : symptoms) {
            const QString target = m_set.remap(stage, symptom);
            if (target.isEmpty() || stageOf(symptom) == stage) continue;
            const double moved = score[symptom] * lead;
            double& t = score[target];
            t = 1.0 - (1.0 - t) * (1.0 - moved);
            score[symptom] *= 1.0 - 0.5 * lead;
            Accumulator& to = bySymptom[target];
            for (const CandidateEvidence& e : std::as_const(bySymptom[symptom].evidence)) {
                to.evidence.append(e);
                to.hasRoot = to.hasRoot || e.role == SignatureRole::Root;
            }
        }
    }

    QList<Candidate> out;
    for (auto it = score.begin(); it != score.end(); ++it) {
        Candidate c;
        c.symptom = it.key();
        c.score = std::clamp(it.value() + kPriorFactor * prior(it.key()), 0.0, 1.0);
        const Accumulator& acc = bySymptom[it.key()];
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
        c.evidence = kept;
        out.append(c);
    }
    std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
        if (a.score != b.score) return a.score > b.score;
        return a.symptom < b.symptom;
    });
    if (out.size() > options.maxCandidates) out.resize(options.maxCandidates);
    return out;
}

} // namespace rankscope
