#pragma once

#include "model/kb/neighbourmodel.h"
#include "model/kb/signatureset.h"
#include "model/kb/termmodel.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

namespace rankscope {

// Why a symptom was proposed: one line of the input and the rule that matched it.
struct CandidateEvidence {
    qsizetype line = 0; // 1-based
    QString text;
    QString signature; // signature or cue id
    SignatureRole role = SignatureRole::Root;
    double weight = 0.0; // the contribution after cascade/framework/stage adjustments
    QMap<QString, QString> fields;
};

struct Candidate {
    QString symptom;    // taxonomy leaf id
    double score = 0.0; // 0..1, the strength of the evidence alone (0 when there is none)
    // Ranked classification only: the calibrated probability that this is the report's leaf
    // (candidates of one text sum to at most 1), the study's base rate it started from (given
    // the report's frameworks) and the context hint: the confidence of the leaf's stage plus
    // that of the frames (what was done, what was seen) the leaf is consistent with.
    double probability = 0.0;
    double baseRate = 0.0;
    double stageHint = 0.0;
    bool hasRoot = false; // at least one root signature (not only cascade lines or prose cues)
    // Ranked only: the learned term model's score for the leaf (TermModel) and the report's
    // words that made it, those for the leaf first.
    double termScore = 0.0;
    QList<TermWeight> terms;
    // Ranked only: the leaf's share of the vote of the labelled reports nearest this one
    // (NeighbourModel::leafShares) and those of them that gave it the leaf, nearest first.
    double neighbourShare = 0.0;
    QList<NeighbourReport> neighbours;
    // Ranked only: n, the report's tokens the neighbour search could read (the same for every
    // candidate of a report).
    qsizetype neighbourTokens = 0;
    QList<CandidateEvidence> evidence; // strongest first
};

// How the ranked classification weighs its parts (taxonomy/ranker.json; see SymptomClassifier).
struct RankerParameters {
    double evidenceScale = 4.0;
    double stageScale = 1.0;
    double priorWeight = 1.0;
    // Pseudo-rows of the overall leaf shares mixed into a framework's own leaf counts.
    double priorSmoothing = 10.0;
    double unsureBelow = 0.35;
    // Calibration: every logit is divided by it before the softmax, so stated probabilities match
    // how often the first guess is right (fitted by scripts/ranker.py on held-in study reports;
    // the ranking does not change with it).
    double temperature = 1.0;
    // Ranked, when anything else in the text is evidence (a prose cue, a cascade line): the
    // weight an exception no signature knows gives the catch-all leaf. The study gives that leaf
    // to under 1 % of its reports, so beside other evidence it should not outvote it. Alone, the
    // exception keeps SymptomClassifier's fixed weight, so `classify` and log analysis agree.
    double exceptionWeight = 0.5;
    // Ranked, the part of a symptom's evidence a stage gets as its own leaf when that stage's
    // context is clearly stronger than the symptom's own stage but does not lead (0: only the
    // leading stage moves a symptom).
    double secondaryStageShare = 0.0;
    // Ranked, the part of a symptom's evidence that the report's leading stage moves to that
    // stage's leaf (unranked: all of it). The stage also raises that leaf through its context
    // hint, so moving all of it counted one stage cue twice ("my DDP script hangs on 4 GPUs,
    // nothing is printed after the model summary" was a set-up hang at 0.996).
    double leadingStageShare = 1.0;
    // Ranked, the part of a symptom's evidence every other stage gets as its own leaf whatever
    // the report's context says (a hang also counts a little for the setup and preparation
    // hangs): the study labels the same symptom in different stages from details a text rarely
    // states, so those leaves should follow the symptom into the top three (0: off).
    double crossStageShare = 0.0;
    // Ranked, that part when the report has no stage context at all (absent from the file:
    // cross_stage_share).
    double unstagedShare = 0.0;
    // The weight of the learned term model's score (taxonomy/terms.json) in a leaf's logit.
    double termScale = 0.0;
    // The weight of the log of a leaf's share of the nearest labelled reports' vote
    // (taxonomy/neighbours.tsv, NeighbourModel) in its logit, how many of them vote, and the
    // share added to every leaf's before the log, so that a leaf no neighbour gave is held back
    // by at most log(floor / (1 + floor)) against one they all gave, not ruled out (0: off).
    double neighbourScale = 0.0;
    int neighbourCount = 25;
    double neighbourFloor = 0.02;
    // The vote counts in full only for a report of many words: times n / (n + this), n the
    // report's words some labelled report holds, and not at all below neighbourMinTokens. Raw
    // posts read 10 to 47 such words (10th to 90th percentile); a report of two words has
    // "neighbours" that share those two and nothing else.
    double neighbourHalfTokens = 10.0;
    int neighbourMinTokens = 3;
    // The power of a leaf's share of the labelled reports its votes are divided by
    // (NeighbourModel::leafShares): the base rate is in the logit already.
    double neighbourPriorPower = 0.0;
    int minCandidates = 3;
    // Parses taxonomy/ranker.json; missing keys keep their defaults. False with *error on
    // malformed JSON or out-of-range values.
    static bool fromJson(const QByteArray& json, RankerParameters* out, QString* error);
};

// Ranks the study's leaf symptoms for an issue report (prose plus pasted logs) or a rank's log.
// Signature hits and prose cues combine by noisy-or per symptom into an evidence score; cascade
// lines are down-weighted (and more so when a root line exists); the report's stage (setup,
// preparation, training) moves a symptom to that stage's leaf.
//
// A ranked classification (the default) then scores every leaf of the taxonomy as
//   logit = (priorWeight * log(base rate | frameworks) + evidenceScale * evidence
//            + stageScale * context hint + termScale * term score
//            + neighbourScale * n / (n + neighbourHalfTokens)
//              * log(neighbour share + neighbourFloor)) / temperature
// where a leaf's context hint is the confidence of its stage plus that of the frames it fits:
// what the prose says the reporter did (saved a checkpoint, read the data) and saw (a
// hang, a slowdown, different values), data in taxonomy/cues.json ("frames", "frame_leaves"),
// a leaf's term score is what the learned term model (taxonomy/terms.json) makes of the
// report's words, and its neighbour share is how much of the vote of the labelled reports most
// alike this one (taxonomy/neighbours.tsv) gave it the leaf.
// It turns the logits into probabilities (softmax), so any non-empty text gets at least
// minCandidates candidates; below unsureBelow the top one is a guess (isUnsure()). The
// parameters are data (taxonomy/ranker.json), fitted by scripts/ranker.py from labelled reports.
// Unranked (log analysis) returns only leaves with evidence, by evidence score.
//
// A Python exception line ("KeyError: 'features'") in a text where no root signature matched is
// root evidence for the study's catch-all leaf of program failures: the line proves the program
// failed but not how that relates to the distributed setup. Log analysis and `rankscope
// classify` both name a leaf through this one rule, so they agree on an exception no signature
// knows.
class SymptomClassifier {
public:
    static constexpr const char* kUncaughtExceptionLeaf =
        "training-and-evaluation/program-failure/others";
    static constexpr const char* kUncaughtExceptionSignature = "python.uncaught-exception";

    struct Options {
        bool useCues = true; // prose cues and stage context; off for pure log files
        bool ranked = true;  // every leaf by probability; off: only leaves with evidence
        int maxEvidence = 5; // per candidate
        int maxCandidates = 10;
    };

    explicit SymptomClassifier(SignatureSet signatures, RankerParameters ranking = {},
                               TermModel terms = {}, NeighbourModel neighbours = {});
    // The classifier over the built-in signature data, created once.
    static const SymptomClassifier& instance();

    QList<Candidate> classify(const QByteArray& text) const { return classify(text, Options{}); }
    QList<Candidate> classify(const QByteArray& text, const Options& options) const;
    // The same ranking, also giving in `tokens` what its term model read: the words
    // (TermModel::tokens) and, as TermModel::evidenceToken, the id of every signature, cue and
    // frame that counted as evidence, so that the learned terms can correct a rule whose leaf the
    // labelled reports disagree with.
    QList<Candidate> classify(const QByteArray& text, const Options& options,
                              QStringList* tokens) const;
    // For callers that already split a log: lineStarts are byte offsets of each line in `text`
    // (e.g. a rank's log in the event store); evidence line numbers index that list (1-based).
    QList<Candidate> classifyLines(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                   const Options& options) const;

    const SignatureSet& signatures() const { return m_set; }
    const RankerParameters& ranking() const { return m_ranking; }
    const TermModel& terms() const { return m_terms; }
    const NeighbourModel& neighbours() const { return m_neighbours; }
    // Share of the study's fault rows per leaf id (derived from the CSV at construction).
    double prior(const QString& symptom) const { return m_prior.value(symptom); }
    // The leaf's base rate among the study's reports of these frameworks (lower-case names as
    // the framework cues name them); the overall share when none of them is in the study.
    double baseRate(const QString& symptom, const QSet<QString>& frameworks) const;
    // True when a ranked classification's best candidate is below the confidence threshold.
    bool isUnsure(const QList<Candidate>& ranked) const;

private:
    // classifyLines(), and with `tokens` what the term model read.
    QList<Candidate> rankLeaves(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                const Options& options, QStringList* tokens) const;

    SignatureSet m_set;
    RankerParameters m_ranking;
    TermModel m_terms;
    NeighbourModel m_neighbours;
    QHash<QString, double> m_prior;
    QHash<QString, QHash<QString, int>> m_frameworkRows; // framework -> leaf -> fault rows
    QHash<QString, int> m_frameworkTotal;                // framework -> fault rows
};

} // namespace rankscope
