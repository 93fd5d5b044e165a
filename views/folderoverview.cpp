#include "views/folderoverview.h"

#include "model/analysis/sessionanalysis.h"
#include "model/analysisreport.h"
#include "views/counttext.h"
#include "views/findings/findingsmodel.h"
#include "views/models/sourcetreemodel.h"

#include <QLocale>

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
        items += QStringLiteral("<li><b><font color=\"%1\">%2</font></b> %3%4 — %5</li>")
                     .arg(FindingsModel::severityColor(f.severity).name(),
                          esc(QString::fromStdString(severityName(f.severity))),
                          esc(FindingsModel::findingSymptom(f)),
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
    // Not in parentheses: the world size can carry its own ("unknown (at least 4)").
    html += tr("<p>%1 found, world size %2, %3%4, %5.</p>")
                .arg(countText(folder.ranks().size(), tr("%1 rank"), tr("%1 ranks")))
                .arg(AnalysisReport::worldSize(*session, session->analysis).text())
                .arg(countText(folder.sources().size(), tr("%1 file"), tr("%1 files")))
                .arg(skipped.isEmpty() ? QString()
                                       : tr(" (%n skipped, not read)", nullptr, skipped.size()))
                .arg(QLocale().formattedDataSize(folder.totalBytes()));
    html += QStringLiteral("<table cellspacing=0 cellpadding=4 border=1>");
    html += tr("<tr><th>Rank</th><th>Files</th><th>Kinds</th></tr>");
    for (int rank : folder.ranks()) {
        QStringList kinds;
        const QList<SourceFile> files = folder.sourcesOfRank(rank);
        for (const SourceFile& f : files) {
            const QString k = sourceKindName(f.kind);
            if (!kinds.contains(k)) kinds.append(k);
        }
        html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td></tr>")
                    .arg(rank)
                    .arg(files.size())
                    .arg(esc(kinds.join(QStringLiteral(", "))));
    }
    html += QStringLiteral("</table>");
    // Skipped files are listed once, greyed, under their own heading: they were not read, so
    // they are neither a rank question nor a problem.
    QString rest;
    for (const SourceFile& f : folder.unattributedSources())
        if (f.status != SourceStatus::Skipped)
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
