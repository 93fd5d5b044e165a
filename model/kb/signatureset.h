#pragma once

#include "model/kb/literalindex.h"
#include "model/kb/signature.h"

#include <QByteArrayView>
#include <QHash>
#include <QMap>

namespace rankscope {

// A prose cue that tells which stage of the study a report is about (setup, preparation,
// training), which framework it uses, or a frame of what the reporter did or saw (saved a
// checkpoint; it is slower); all three only re-weight, they never name a leaf on their own.
struct ContextCue {
    QString id;
    QString target; // a stage slug, a framework name or a frame name
    QString name;   // a framework cue's display name ("DeepSpeed"); empty for a stage cue
    QRegularExpression regex;
    QList<QByteArray> literals; // lower-case
    double weight = 0.0;
    bool readsNegation = false; // a negated match does not count (SignatureSet::affirmedMatch)
    // Whether a stage cue reads shell commands: how many hosts a launcher joins says how the job
    // was set up, but the MASTER_ADDR or pip install every reproduction's commands carry does not
    // say when it failed.
    bool readsCommands = false;
};

struct SignatureHit {
    int rule = -1;      // index into SignatureSet::signatures()
    qsizetype line = 0; // 0-based line index
    QString text;       // the line, trimmed, advice spans removed
    QMap<QString, QString> fields;
};

struct ContextHit {
    int cue = -1; // index into stages() or frameworks()
    qsizetype line = 0;
};

// The compiled signature and cue data. Regexes are compiled and optimised once at load.
class SignatureSet {
public:
    static constexpr qsizetype kProseBytes = 512 * 1024;

    // Parses the two JSON documents; on error returns an empty set and sets *error.
    static SignatureSet fromJson(const QByteArray& signaturesJson, const QByteArray& cuesJson,
                                 QString* error);
    // The data compiled into the binary (:/taxonomy/signatures.json, :/taxonomy/cues.json).
    static const SignatureSet& builtin();

    const QList<Signature>& signatures() const { return m_signatures; }
    const QList<ContextCue>& stages() const { return m_stages; }
    const QList<ContextCue>& frameworks() const { return m_frameworks; }
    // Frames: what the report says was done or seen, each consistent with a few leaves.
    const QList<ContextCue>& frames() const { return m_frames; }
    QStringList frameLeaves(const QString& frame) const { return m_frameLeaves.value(frame); }
    bool isEmpty() const { return m_signatures.isEmpty(); }

    // The leaf a symptom stands for when the report is about `stage` (e.g. a hang during
    // init_process_group is the setup stage's "hang and timeout"); empty when there is none.
    QString remap(const QString& stage, const QString& symptom) const;
    // Every leaf some remap can lead to.
    QStringList remapTargets() const;
    // The frameworks and libraries whose messages the log signatures recognise as `symptom`,
    // directly or through a stage remap (a NCCL error in DDP's constructor is the preparation
    // stage's communication error): display names sorted ("DeepSpeed", "NCCL", "PyTorch"…),
    // then kGenericMessages when a signature for any framework (a Python or CUDA error) leads
    // there too. Prose cues are left out.
    QStringList messageFrameworks(const QString& symptom) const;
    static constexpr const char* kGenericMessages = "any framework (generic Python/CUDA/OS errors)";

    // The line as rules read it: without advice text ("run with NCCL_DEBUG=INFO for details",
    // "CUDA_LAUNCH_BLOCKING=1"), so that it never counts as the error it mentions, and without
    // markdown's bold markers, so that "50% **LOWER** than with one GPU" reads "lower than".
    QString textToMatch(const QString& line) const;

    // All hits in `text`; lineStarts holds the byte offset of every line (computed when empty).
    // Cues are skipped unless withCues; they only read the first kProseBytes (a report's prose
    // is at its top; beyond that the input is a log). At most maxHitsPerRule hits per rule.
    QList<SignatureHit> scan(QByteArrayView text, const QList<qsizetype>& lineStarts, bool withCues,
                             int maxHitsPerRule = 64) const;
    // The log signatures' hits in lines given one at a time (a log's lines where they lie in
    // its file), as scan() finds them in those lines joined by '\n'.
    QList<SignatureHit> scanLines(const LineSource& lines, int maxHitsPerRule = 64) const;
    QList<ContextHit> scanContext(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                  const QList<ContextCue>& cues) const;

    static QList<qsizetype> lineStartsOf(QByteArrayView text);

    // Whether every match of `regex` in `line` (a hit's text) comes right after a negation
    // (affirmedMatch): "there is no CUDA out of memory error" denies the message it names.
    bool deniedIn(const QRegularExpression& regex, const QString& line) const
    {
        return !affirmedMatch(regex, line, true).hasMatch();
    }

private:
    // The first match of `regex` in `line` that is not negated: with readsNegation, a match
    // right after cues.json's "negation" ("no", "without any", "never got", "doesn't") is
    // skipped, so "hangs without any error" is a hang and not a failure. A match that is not
    // found has no hasMatch().
    QRegularExpressionMatch affirmedMatch(const QRegularExpression& regex, const QString& line,
                                          bool readsNegation) const;
    // `proseLines`: how many of the first lines the cues read (0: no cues).
    QList<SignatureHit> scan(const LineSource& lines, qsizetype proseLines,
                             int maxHitsPerRule) const;

    QList<Signature> m_signatures;
    QList<ContextCue> m_stages;
    QList<ContextCue> m_frameworks;
    QList<ContextCue> m_frames;
    QHash<QString, QStringList> m_frameLeaves;       // frame -> the leaves it is consistent with
    QRegularExpression m_advice;                     // all advice patterns as one alternation
    QRegularExpression m_negation;                   // words that negate what follows them
    QHash<QString, QHash<QString, QString>> m_remap; // stage -> symptom -> symptom
    // Literal indexes: log signatures (exact case), cues, stage, framework and frame cues.
    LiteralIndex m_signatureIndex, m_cueIndex, m_stageIndex, m_frameworkIndex, m_frameIndex;
    QList<int> m_signatureRules, m_cueRules; // index position -> rule in m_signatures
};

} // namespace rankscope
