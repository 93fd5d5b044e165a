#pragma once

#include <QByteArrayView>
#include <QHash>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace rankscope {

// A labelled report found near a new one: its link, the leaves its labeller gave it and how
// alike the two reports' words are (cosine, 0..1).
struct NeighbourReport {
    QString link;
    QStringList leaves;
    double similarity = 0.0;
};

// "0.42 of the vote: pytorch/pytorch#123 (0.61), ...": how the CLI and the GUI show a leaf's
// share of the nearest labelled reports' vote and the first `shown` of those that gave it the
// leaf, each with its similarity; a GitHub issue link is written owner/repo#N.
QString neighbourListText(double share, const QList<NeighbourReport>& neighbours, int shown = 3);

// The labelled reports the ranker knows by their words (taxonomy/neighbours.tsv, written by
// scripts/ranker.py neighbours from the raw first posts' words of the labelled harvests): a new
// report's nearest ones vote for their leaves. The term model weighs each word for a leaf on its
// own, a line through all reports; the neighbours answer from the reports that share the most
// words with this one, so word combinations a line cannot weigh ("loss" with "curves" and
// "match", not "loss" with "nan") still count. Out of fold on 2,089 labelled raw posts, adding the
// vote raised the first guess more than any rule or term setting had (BENCHMARKS.md).
//
// A report is the set of its words (TermModel::tokens: the words of the lines cues read as
// prose, not the lines a log signature explains). Two reports are as alike as the cosine of
// their word sets, each word weighed by its inverse document frequency (log(reports / reports
// holding it)): a word most reports hold ("error", "gpu") says little about which two are alike.
// A token no labelled report holds (a rule's evidence token: the file holds none) is not read.
class NeighbourModel {
public:
    // Parses taxonomy/neighbours.tsv: "#" comment lines, then one report per line,
    // "leaf|leaf<TAB>link<TAB>word word ..." (distinct, space-separated). False with
    // *error on a line without three fields, an empty leaf list or no tokens.
    static bool fromTsv(QByteArrayView tsv, NeighbourModel* out, QString* error);

    bool isEmpty() const { return m_reports.isEmpty(); }
    qsizetype size() const { return m_reports.size(); }

    // The `count` labelled reports most alike `tokens` (distinct), most alike first (equal
    // similarity: by link); only reports that share a token with them. `known`, when given, is
    // set to how many of the tokens some labelled report holds: the words the search could read.
    QList<NeighbourReport> nearest(const QStringList& tokens, int count,
                                   qsizetype* known = nullptr) const;

    // Per leaf, its share of the vote of `nearest`: each report votes with its similarity
    // squared (a close report counts far more than a loose one), split evenly between its
    // leaves, and a leaf's votes are divided by (its share of all the labelled reports) to the
    // power `priorPower`. The nearest reports of any report are mostly of the common leaves, and
    // the ranker's logit already holds each leaf's base rate: undivided, the vote would count it
    // twice. The shares sum to 1, or the map is empty when no report shares a token.
    QMap<QString, double> leafShares(const QList<NeighbourReport>& nearest,
                                     double priorPower = 0.0) const;
    // A leaf's share of the labelled reports (each report's leaves share it evenly).
    double leafPrior(const QString& leaf) const { return m_leafPrior.value(leaf); }

private:
    struct Report {
        QString link;
        QStringList leaves;
        double norm = 0.0; // of its idf-weighted token vector
    };
    QList<Report> m_reports;
    QHash<QString, QList<int>> m_postings; // token -> reports holding it
    QHash<QString, double> m_idf;
    QHash<QString, double> m_leafPrior;
};

} // namespace rankscope
