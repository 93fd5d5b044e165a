#pragma once

// The study's sheets read independently of IssueCorpus::seed(), so tests derive the counts a
// filter must give from the data instead of hard-coding them.

#include "model/kb/csvtable.h"
#include "model/kb/issuecorpus.h"
#include "model/kb/slug.h"
#include "model/kb/taxonomy.h"

#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <algorithm>

namespace rankscope::testing {

// What the sheets say about one link, derived here independently of IssueCorpus::seed().
struct SheetIssue {
    QString origin, source;
    QStringList frameworks;
    QSet<QString> symptoms, fixPatterns;
    QString words;        // the labels and link text full-text search sees
    int distributed = -1; // -1: not labelled (how-to)
    bool howTo = false;   // a how-to question (a labelled fault issue may be one too)
};

inline QList<SheetIssue> sheetIssues()
{
    const Taxonomy& t = Taxonomy::instance();
    QList<SheetIssue> out;
    QHash<QString, qsizetype> index;
    QFile faultsFile(QStringLiteral(":/taxonomy/tosem23_faults.csv"));
    QFile howtoFile(QStringLiteral(":/taxonomy/tosem23_howto.csv"));
    if (!faultsFile.open(QIODevice::ReadOnly) || !howtoFile.open(QIODevice::ReadOnly)) return out;
    const CsvTable faults = CsvTable::parse(faultsFile.readAll());
    for (qsizetype i = 0; i < faults.rowCount(); ++i) {
        const QStringList& f = faults.row(i);
        if (!index.contains(f[1])) {
            index.insert(f[1], out.size());
            SheetIssue s;
            s.origin = QStringLiteral("study");
            s.source = f[0];
            s.frameworks = Taxonomy::frameworksOfSource(f[0]);
            s.words = f[1];
            s.distributed = 0;
            out << s;
        }
        SheetIssue& s = out[index[f[1]]];
        QString leaf = slugify(f[3]) +
                       (f[4].isEmpty() ? QString() : QLatin1Char('/') + slugify(f[4])) +
                       QLatin1Char('/') + slugify(f[5]);
        s.symptoms.insert(leaf);
        for (const QString& p : t.fixPatternIdsOfLabel(f[6]))
            s.fixPatterns.insert(p);
        s.words += QLatin1Char(' ') + f.mid(3).join(QLatin1Char(' ')) + QLatin1Char(' ') + leaf;
        if (f[2] == QLatin1String("1")) s.distributed = 1;
    }
    const CsvTable howto = CsvTable::parse(howtoFile.readAll());
    for (qsizetype i = 0; i < howto.rowCount(); ++i) {
        const QStringList& h = howto.row(i);
        if (index.contains(h[1])) {
            SheetIssue& s = out[index[h[1]]];
            s.howTo = true;
            if (s.origin == QLatin1String("study"))
                s.words += QStringLiteral(" how-to %1 %2").arg(h[2], h[3]);
            continue;
        }
        index.insert(h[1], out.size());
        SheetIssue s;
        s.origin = QStringLiteral("howto");
        s.source = h[0];
        s.frameworks = Taxonomy::frameworksOfSource(h[0]);
        s.words = QStringLiteral("how-to %1 %2 %3").arg(h[1], h[2], h[3]);
        s.howTo = true;
        out << s;
    }
    return out;
}

// FTS5's unicode61 tokens, case-folded; a query word matches a token it begins.
inline bool wordsHavePrefix(const QString& words, const QString& prefix)
{
    static const QRegularExpression sep(QStringLiteral("[^A-Za-z0-9]+"));
    for (const QString& token : words.toLower().split(sep, Qt::SkipEmptyParts))
        if (token.startsWith(prefix.toLower())) return true;
    return false;
}

inline int expectedMatches(const IssueFilter& filter)
{
    const QStringList words =
        filter.text.split(QRegularExpression(QStringLiteral("[^A-Za-z0-9]+")), Qt::SkipEmptyParts);
    int expected = 0;
    for (const SheetIssue& s : sheetIssues()) {
        if (!filter.framework.isEmpty() && !s.frameworks.contains(filter.framework)) continue;
        if (!filter.source.isEmpty() && s.source != filter.source) continue;
        if (filter.stage == IssueCorpus::kHowToStage && !s.howTo) continue;
        if (!filter.stage.isEmpty() && filter.stage != IssueCorpus::kHowToStage &&
            std::none_of(s.symptoms.begin(), s.symptoms.end(), [&](const QString& leaf) {
                return leaf.startsWith(filter.stage + QLatin1Char('/'));
            }))
            continue;
        if (!filter.leaf.isEmpty() && !s.symptoms.contains(filter.leaf)) continue;
        if (!filter.fixPattern.isEmpty() && !s.fixPatterns.contains(filter.fixPattern)) continue;
        if (filter.distributed == IssueFilter::Distributed::Yes && s.distributed != 1) continue;
        if (filter.distributed == IssueFilter::Distributed::No && s.distributed != 0) continue;
        if (!filter.text.isEmpty() && words.isEmpty()) continue;
        if (std::any_of(words.begin(), words.end(),
                        [&](const QString& w) { return !wordsHavePrefix(s.words, w); }))
            continue;
        ++expected;
    }
    return expected;
}

} // namespace rankscope::testing
