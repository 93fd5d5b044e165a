#include "views/folderoverview.h"

#include "model/analysis/sessionanalysis.h"
#include "model/analysisreport.h"
#include "views/counttext.h"
#include "views/findings/findingsmodel.h"
#include "views/models/sourcetreemodel.h"

#include <QLocale>
#include <limits>
#include <map>

namespace rankscope {

namespace {

QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

} // namespace

// Errors and warnings only: info findings are in the Findings dock, the page stays short.
QString FolderOverview::diagnosisHtml(const TraceSession& session)
{
    QString items;
    for (const Finding& f : session.analysis.findings) {
        if (f.severity == Severity::Info) continue;
        const QString ranks = FindingsModel::ranksText(f.ranks);
        // A fact about the folder (missing ranks) has no symptom: its kind says what it is.
        const QString what = f.symptom.empty() ? QString::fromStdString(findingKindName(f.kind))
                                                     .replace(QLatin1Char('_'), QLatin1Char(' '))
                                               : FindingsModel::findingSymptom(f);
        items += QStringLiteral("<li><b><font color=\"%1\">%2</font></b> %3%4 — %5</li>")
                     .arg(FindingsModel::severityColor(f.severity).name(),
                          esc(QString::fromStdString(severityName(f.severity))), esc(what),
                          ranks.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(esc(ranks)),
                          esc(QString::fromStdString(f.summary)));
    }
    if (const std::string why = nothingReadableReason(session); !why.empty())
        return tr("<h3>Diagnosis</h3><p>Nothing readable in this folder: %1.</p>")
            .arg(esc(QString::fromStdString(why)));
    if (items.isEmpty())
        return tr("<h3>Diagnosis</h3><p>No errors or warnings found (%1 and %2 checked).</p>")
            .arg(countText(session.analysis.collectiveCount, tr("%1 collective"),
                           tr("%1 collectives")),
                 countText(session.analysis.logLineCount, tr("%1 log line"), tr("%1 log lines")));
    return tr("<h3>Diagnosis</h3><ul>") + items + QStringLiteral("</ul>");
}

std::vector<OverviewRankRow> FolderOverview::rankRows(const TraceFolder& folder,
                                                      const JobSplit& split)
{
    const int analysed = split.mixed() ? split.analysed : -1;
    std::map<std::pair<int, int>, OverviewRankRow> byJobAndRank;
    const QList<SourceFile> sources = folder.sources();
    for (int i = 0; i < int(sources.size()); ++i) {
        const SourceFile& f = sources[i];
        const int job = split.mixed() ? split.jobOf(i) : -1;
        // The analysed job's files of no rank are listed under their own heading, with why.
        if (!f.rank && job == analysed) continue;
        // A job's files of no rank after its ranks.
        OverviewRankRow& row =
            byJobAndRank[{job, f.rank.value_or(std::numeric_limits<int>::max())}];
        row.job = job;
        row.rank = f.rank.value_or(-1);
        row.files << f.relativePath;
        if (const QString kind = sourceKindName(f.kind); !row.kinds.contains(kind))
            row.kinds << kind;
    }
    std::vector<OverviewRankRow> rows;
    for (auto& [key, row] : byJobAndRank)
        if (row.job == analysed) rows.push_back(std::move(row));
    for (auto& [key, row] : byJobAndRank)
        if (row.job != analysed) rows.push_back(std::move(row));
    return rows;
}

FolderOverview::FolderOverview(QWidget* parent) : QTextBrowser(parent)
{
    setOpenLinks(false);
    showWelcome();
}

void FolderOverview::showWelcome()
{
    setHtml(tr("<h2>No trace folder open</h2>"
               "<p>Open the folder that holds your job's per-rank traces and logs with "
               "<b>File &gt; Open Folder…</b> (Ctrl+O), or drop it on this window.</p>"));
}

void FolderOverview::setSession(const SessionPtr& session, const QString& diagnosisNote)
{
    if (!session) {
        showWelcome();
        return;
    }
    const TraceFolder& folder = session->folder;
    QString html;
    html += QStringLiteral("<h2>%1</h2>").arg(esc(folder.path()));
    html += diagnosisNote.isEmpty() ? diagnosisHtml(*session)
                                    : tr("<h3>Diagnosis</h3><p>%1</p>").arg(esc(diagnosisNote));
    QList<SourceFile> skipped;
    for (const SourceFile& f : folder.sources())
        if (f.status == SourceStatus::Skipped) skipped.append(f);
    // Which files are the analysed job's, as the diagnosis splits the folder.
    const JobSplit& split = session->jobs;
    const std::vector<OverviewRankRow> rows = rankRows(folder, split);
    const int analysed = split.mixed() ? split.analysed : -1;
    qsizetype analysedRanks = 0, setAsideFiles = 0;
    for (const OverviewRankRow& row : rows)
        if (row.job == analysed) ++analysedRanks;
    for (const bool aside : split.setAside)
        if (aside) ++setAsideFiles;
    QStringList notRead;
    if (setAsideFiles > 0)
        notRead << tr("%n set aside as another job's", nullptr, int(setAsideFiles));
    if (!skipped.isEmpty()) notRead << tr("%n skipped, not read", nullptr, int(skipped.size()));
    // Not in parentheses: the world size can carry its own ("unknown (at least 4)").
    html += tr("<p>%1 found%2, world size %3, %4%5, %6.</p>")
                .arg(countText(analysedRanks, tr("%1 rank"), tr("%1 ranks")),
                     split.mixed() ? tr(" in the analysed job") : QString(),
                     AnalysisReport::worldSize(*session, session->analysis).text(),
                     countText(folder.sources().size(), tr("%1 file"), tr("%1 files")),
                     notRead.isEmpty()
                         ? QString()
                         : QStringLiteral(" (%1)").arg(notRead.join(QStringLiteral(", "))),
                     QLocale().formattedDataSize(folder.totalBytes()));
    if (split.mixed())
        html += tr("<p>The folder mixes the files of %1 jobs (%2): job %3 is analysed, and the "
                   "other jobs' files are set aside, none of them a rank of job %3.</p>")
                    .arg(split.jobs.size())
                    .arg(esc(QString::fromStdString(splitReason(split))))
                    .arg(split.analysed + 1);
    // One table per job, the analysed job's first, then the set-aside ones in the split's order.
    std::vector<int> tables{analysed};
    for (int j = 0; split.mixed() && j < int(split.jobs.size()); ++j)
        if (j != analysed) tables.push_back(j);
    for (const int job : tables) {
        if (job >= 0) {
            const TraceJob& t = split.jobs[std::size_t(job)];
            html += QStringLiteral("<h3>%1</h3><p>%2</p>")
                        .arg(job == analysed ? tr("Job %1, analysed").arg(job + 1)
                                             : tr("Job %1, set aside as another run").arg(job + 1),
                             esc(QString::fromStdString(jobFacts(t))));
            if (!t.launch.empty())
                html += (split.byStart ? tr("<p>Started %1: <i>%2</i> line %3: %4</p>")
                                       : tr("<p>Launched with %1: <i>%2</i> line %3: %4</p>"))
                            .arg(esc(QString::fromStdString(t.launch)),
                                 esc(QString::fromStdString(t.launchLine.path)))
                            .arg(t.launchLine.line)
                            .arg(esc(QString::fromStdString(t.launchLine.text)));
        }
        html += QStringLiteral("<table cellspacing=0 cellpadding=4 border=1>");
        html += tr("<tr><th>Rank</th><th>Files</th><th>Kinds</th></tr>");
        for (const OverviewRankRow& row : rows) {
            if (row.job != job) continue;
            html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td></tr>")
                        .arg(row.rank >= 0 ? QString::number(row.rank) : tr("no rank"),
                             esc(row.files.join(QStringLiteral(", "))),
                             esc(row.kinds.join(QStringLiteral(", "))));
        }
        html += QStringLiteral("</table>");
    }
    // Skipped files are listed once, greyed, under their own heading: they were not read, so
    // they are neither a rank question nor a problem.
    QString rest;
    const QList<SourceFile> sources = folder.sources();
    for (int i = 0; i < int(sources.size()); ++i)
        if (const SourceFile& f = sources[i]; !f.rank && f.status != SourceStatus::Skipped &&
                                              (!split.mixed() || split.jobOf(i) == analysed))
            rest += QStringLiteral("<li>%1 <i>(%2)</i>: %3</li>")
                        .arg(esc(f.relativePath), esc(sourceKindName(f.kind)), esc(f.rankEvidence));
    if (!rest.isEmpty())
        html += tr("<h3>Not attributed to a rank</h3><ul>") + rest + QStringLiteral("</ul>");
    QStringList problems;
    for (const SourceFile& f : folder.sources())
        if (f.status == SourceStatus::Truncated || f.status == SourceStatus::Error)
            problems << QStringLiteral("<li>%1: %2</li>").arg(esc(f.relativePath), esc(f.message));
    if (!problems.isEmpty())
        html += tr("<h3>Problems</h3><ul>") + problems.join(QString()) + QStringLiteral("</ul>");
    if (!skipped.isEmpty()) {
        html += tr("<h3>Skipped (not read)</h3><ul>");
        for (const SourceFile& f : skipped)
            html += QStringLiteral("<li><font color=\"%1\">%2: %3</font></li>")
                        .arg(SourceTreeModel::kSkippedColor.name(), esc(f.relativePath),
                             esc(f.message));
        html += QStringLiteral("</ul>");
    }
    setHtml(html);
}

} // namespace rankscope
