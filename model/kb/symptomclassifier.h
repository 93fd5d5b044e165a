#pragma once

#include "model/kb/signatureset.h"

#include <QByteArray>
#include <QHash>
#include <QList>
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
    QString symptom;      // taxonomy leaf id
    double score = 0.0;   // 0..1
    bool hasRoot = false; // at least one root signature (not only cascade lines or prose cues)
    QList<CandidateEvidence> evidence; // strongest first
};

// Ranks the study's leaf symptoms for an issue report (prose plus pasted logs) or a rank's log.
// Signature hits and prose cues combine by noisy-or per symptom; cascade lines are down-weighted
// (and more so when a root line exists); the report's stage (setup, preparation, training) moves
// a symptom to that stage's leaf; the study's leaf frequencies only break ties.
class SymptomClassifier {
public:
    struct Options {
        bool useCues = true; // prose cues and stage context; off for pure log files
        int maxEvidence = 5; // per candidate
        int maxCandidates = 10;
    };

    explicit SymptomClassifier(SignatureSet signatures);
    // The classifier over the built-in signature data, created once.
    static const SymptomClassifier& instance();

    QList<Candidate> classify(const QByteArray& text) const { return classify(text, Options{}); }
    QList<Candidate> classify(const QByteArray& text, const Options& options) const;
    // For callers that already split a log: lineStarts are byte offsets of each line in `text`
    // (e.g. a rank's log in the event store); evidence line numbers index that list (1-based).
    QList<Candidate> classifyLines(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                   const Options& options) const;

    const SignatureSet& signatures() const { return m_set; }
    // Share of the study's fault rows per leaf id (derived from the CSV at construction).
    double prior(const QString& symptom) const { return m_prior.value(symptom); }

private:
    SignatureSet m_set;
    QHash<QString, double> m_prior;
};

} // namespace rankscope
