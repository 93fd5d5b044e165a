#pragma once

#include "model/kb/signaturewitness.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

namespace rankscope {

// Root lines name the failure; cascade lines are its consequences (watchdog teardown, "Horovod has
// been shut down", launcher SIGTERM) and must not outrank it; cues are prose phrases of a report.
enum class SignatureRole { Root, Cascade, Cue };

// One rule of taxonomy/signatures.json or taxonomy/cues.json. A line is only handed to the regex
// when it contains one of the literals, which is what keeps a 10 MB log fast.
struct Signature {
    QString id;
    QRegularExpression regex;
    QList<QByteArray> literals;   // lower-case when caseInsensitive
    bool caseInsensitive = false; // cues match prose in any case; log signatures are exact
    QString symptom;              // a taxonomy leaf id
    double weight = 0.0;          // 0..1, how strongly one hit implies the symptom
    SignatureRole role = SignatureRole::Root;
    SignatureWitness witness = SignatureWitness::None; // "witness": what a root line saw of a peer
    QStringList frameworks;                            // "any" or pytorch/horovod/tensorflow/keras
    // "pins_stage": the message is only printed in its leaf's stage (a store client connecting at
    // rendezvous), so a report's words about another stage ("while training") do not move it.
    // Root rules only (SignatureSet::fromJson rejects it elsewhere).
    bool pinsStage = false;
    // "early": a hit whose numeric field `earlyField` is at most `earlyAtMost` happened before
    // training could have begun, and reads as `earlySymptom` in that leaf's stage (pinned). A
    // watchdog timeout on one of a group's first collectives (SeqNum 1-4: DDP's shape check and
    // parameter broadcast, a barrier after loading) is a rank not done preparing its model or
    // data; one at SeqNum 5,000 is training stalling. Root rules only, on one of the regex's
    // named groups.
    QString earlyField;
    qint64 earlyAtMost = -1;
    QString earlySymptom;
    // "cascade_after": a taxonomy prefix. A timeout waiting for a peer follows from whatever
    // stopped that peer: when the same text holds a root line of a leaf under the prefix (a rank's
    // CUDA OOM, a crash), this rule's hits are that failure's cascade. Root rules only.
    QString cascadeAfter;
    QStringList fields; // the regex's named groups, extracted into each hit
    QString positive;   // a line the rule must match (checked by the tests)
    QString negative;   // a near miss it must not match
    // A cue with a "negated" example reads negation (SignatureSet::affirmedMatch): "without OOM
    // warnings" is not an OOM. The example is a line it must not match for that reason.
    QString negated;
    bool readsNegation() const { return !negated.isEmpty(); }
    // Whether a hit with these captured fields reads early (see earlyField).
    bool readsEarly(const QMap<QString, QString>& hitFields) const;
    // The leaf a hit with these captured fields names, and whether its stage is pinned: every
    // reader of a hit (the report classifier, a folder's log evidence) asks here.
    QString symptomOf(const QMap<QString, QString>& hitFields) const
    {
        return readsEarly(hitFields) ? earlySymptom : symptom;
    }
    bool pinsStageOf(const QMap<QString, QString>& hitFields) const
    {
        return pinsStage || readsEarly(hitFields);
    }
};

QString signatureRoleName(SignatureRole role);

} // namespace rankscope
