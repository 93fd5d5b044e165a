#pragma once

#include "model/kb/signaturewitness.h"

#include <QByteArray>
#include <QList>
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
    QStringList fields; // the regex's named groups, extracted into each hit
    QString positive;   // a line the rule must match (checked by the tests)
    QString negative;   // a near miss it must not match
    // A cue with a "negated" example reads negation (SignatureSet::affirmedMatch): "without OOM
    // warnings" is not an OOM. The example is a line it must not match for that reason.
    QString negated;
    bool readsNegation() const { return !negated.isEmpty(); }
};

QString signatureRoleName(SignatureRole role);

} // namespace rankscope
