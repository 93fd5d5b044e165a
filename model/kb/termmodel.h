#pragma once

#include "model/kb/reporttext.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

namespace rankscope {

// A word of a report that counts for a leaf, and how much (taxonomy/terms.json): positive makes
// the leaf more likely, negative less.
struct TermWeight {
    QString term;
    double weight = 0.0;
};

// "+1.30: throughput, slower; -0.80: nccl": how the CLI and the GUI show the words that made a
// leaf's term score, the ones for the leaf and the ones against it, each group with its sum.
QString termListText(const QList<TermWeight>& terms);

// The learned lexical part of the ranker: per leaf, signed weights of words, fitted by
// scripts/ranker.py terms as a multinomial logistic regression on what the rest of the ranker
// (base rate, evidence, context hint) gets wrong on the labelled reports, L2-regularised, over
// the words of the taxonomy's own texts and the evidence tokens of its rules (evidenceToken: a
// rule's learned weights correct its leaf where the labelled reports disagree with it), cut to
// the largest few per leaf. A report's term score for a leaf is the sum of the weights of the
// leaf's words the report contains, each word counting once however often it is repeated, so
// that a long raw post does not outvote a short one by repetition; it enters the leaf's logit
// as it was fitted (term_scale, about 1).
//
// The tokenizer is the program's, and the only one: scripts/ranker.py learns from the tokens
// `rankscope classify --json` prints, never from its own reading of a text.
class TermModel {
public:
    struct LeafScore {
        double score = 0.0;      // the sum of the weights
        QList<TermWeight> terms; // the leaf's words the report contains: for it, then against it,
                                 // each group by decreasing magnitude
    };

    // The distinct words the term model reads in a report, sorted: the lines cues read as prose
    // (the reporter's words and program output, readsAsProse: not template scaffolding,
    // environment dumps, code or commands) but not `signatureLines` (0-based), the lines a log
    // signature explains: a message a signature knows is weighed as that message, and the words
    // inside it ("due", "timed", "size") are not a second opinion. Lines past lineKinds.size()
    // are not read at all, nor a traceback frame's path (only from its line number on: the
    // function). SymptomClassifier::classify gives them for a text. A word is a
    // run of ASCII letters, lower-cased, of 3 to 24 letters, not a stop word: digits and
    // punctuation split words ("all_reduce" reads "all", "reduce"; "fp16" nothing), and a
    // camel-case name stays one word ("ChildFailedError" reads "childfailederror").
    static QStringList tokens(QByteArrayView text, const QList<qsizetype>& lineStarts,
                              const QList<ReportLine>& lineKinds,
                              const QSet<qsizetype>& signatureLines);

    // The words of `text` by the rule tokens() reads a line with: its runs of 3 to 24 ASCII
    // letters, lower-cased, that are not stop words.
    static QSet<QString> words(QByteArrayView text);

    // The token a rule (a signature, cue or frame id of taxonomy/signatures.json or cues.json)
    // that counted as evidence adds to a report's words: "@" and the id, e.g.
    // "@torch.unfinished-reduction". No word starts with "@", so a rule never meets a word.
    static QString evidenceToken(const QString& ruleId) { return QLatin1Char('@') + ruleId; }

    // Parses taxonomy/terms.json ({"schema": "rankscope.terms/2", "leaves": {leaf: {term:
    // weight}}}); false with *error on malformed JSON, another schema (the positive-only weights
    // of rankscope.terms/1 meant a different score), a weight that is not a non-zero number or a
    // term that is neither a word the tokenizer would produce nor an evidence token.
    static bool fromJson(const QByteArray& json, TermModel* out, QString* error);

    bool isEmpty() const { return m_leaves.isEmpty(); }
    // Per leaf with at least one of its words among `tokens` (sorted, distinct, as tokens()
    // gives them), the score and the words.
    QMap<QString, LeafScore> score(const QStringList& tokens) const;

private:
    QMap<QString, QMap<QString, double>> m_leaves; // leaf -> term -> weight
};

} // namespace rankscope
