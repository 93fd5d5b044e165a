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

// A word of a report that counts for a leaf, and how much (taxonomy/terms.json).
struct TermWeight {
    QString term;
    double weight = 0.0;
};

// "slow, throughput": how the CLI and the GUI show the words that made a leaf's term score.
QString termListText(const QList<TermWeight>& terms);

// The learned lexical part of the ranker: per leaf, the words whose presence in a labelled report
// made that leaf more likely (smoothed log-odds against the other leaves' reports, learned and
// cut to the strongest few per leaf by scripts/ranker.py terms). A report's term score for a
// leaf is 1 - exp(-sum of the weights of the leaf's words the report contains), each word
// counting once however often it is repeated, so a long raw post cannot outvote a short one by
// length alone and the score stays in [0, 1) as the evidence score does.
//
// The tokenizer is the program's, and the only one: scripts/ranker.py learns from the tokens
// `rankscope classify --json` prints, never from its own reading of a text.
class TermModel {
public:
    struct LeafScore {
        double score = 0.0;      // 1 - exp(-sum of weights), in [0, 1)
        QList<TermWeight> terms; // the leaf's words the report contains, strongest first
    };

    // The distinct words the term model reads in a report, sorted: the lines cues read as prose
    // (the reporter's words and program output, readsAsProse: not template scaffolding,
    // environment dumps, code or commands) but not `signatureLines` (0-based), the lines a log
    // signature explains: a message a signature knows is weighed as that message, and the words
    // inside it ("due", "timed", "size") are not a second opinion. Lines past lineKinds.size()
    // are not read at all. SymptomClassifier::termTokens gives them for a text. A word is a
    // run of ASCII letters, lower-cased, of 3 to 24 letters, not a stop word: digits and
    // punctuation split words ("all_reduce" reads "all", "reduce"; "fp16" nothing), and a
    // camel-case name stays one word ("ChildFailedError" reads "childfailederror").
    static QStringList tokens(QByteArrayView text, const QList<qsizetype>& lineStarts,
                              const QList<ReportLine>& lineKinds,
                              const QSet<qsizetype>& signatureLines);

    // Parses taxonomy/terms.json ({"leaves": {leaf: {term: weight}}}); false with *error on
    // malformed JSON, a weight that is not a positive number or a term the tokenizer would not
    // produce.
    static bool fromJson(const QByteArray& json, TermModel* out, QString* error);

    bool isEmpty() const { return m_leaves.isEmpty(); }
    // Per leaf with at least one of its words among `tokens` (sorted, distinct, as tokens()
    // gives them), the score and the words.
    QMap<QString, LeafScore> score(const QStringList& tokens) const;

private:
    QMap<QString, QMap<QString, double>> m_leaves; // leaf -> term -> weight
};

} // namespace rankscope
