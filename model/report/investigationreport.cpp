#include "model/report/investigationreport.h"

#include "model/analysisreport.h"
#include "model/investigation/investigationstore.h"
#include "model/kb/taxonomy.h"
#include "model/report/markdownhtml.h"
#include "model/tracesession.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QTextStream>

namespace rankscope {

namespace {

// Text inside a table cell: one line, pipes escaped.
QString cell(QString s)
{
    s.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    s.replace(QLatin1Char('|'), QLatin1String("\\|"));
    s.replace(QLatin1Char('\n'), QLatin1Char(' '));
    s.replace(QLatin1Char('`'), QLatin1String("\\`"));
    s.replace(QLatin1Char('*'), QLatin1String("\\*"));
    return s;
}

QString micros(qint64 ns)
{
    return AnalysisReport::wholeMicros(ns) + QStringLiteral(" µs");
}

const AutoCheckResult* resultOf(const TraceSession& session, const QString& id)
{
    for (const AutoCheckResult& r : session.autoChecks)
        if (r.checkId == id) return &r;
    return nullptr;
}

// The analysis document is a section of this one: its headings go one level down.
QString demoted(const QString& markdown)
{
    QStringList lines = markdown.split(QLatin1Char('\n'));
    bool fenced = false;
    for (QString& line : lines) {
        if (line.startsWith(QLatin1String("```"))) fenced = !fenced;
        if (!fenced && line.startsWith(QLatin1Char('#'))) line.prepend(QLatin1Char('#'));
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace

InvestigationReport::InvestigationReport(const TraceSession& session)
    : m_session(session), m_generatedAt(QDateTime::currentDateTimeUtc())
{}

void InvestigationReport::readInvestigation(const InvestigationStore& store, qint64 id)
{
    m_checklists.clear();
    const QString current = store.currentStep(id).first;
    for (const Walkthrough& w : Taxonomy::instance().walkthroughs()) {
        QHash<int, StepState> steps = store.checklist(id, w.patternId);
        if (steps.isEmpty() && w.patternId != current) continue;
        m_checklists.push_back({w.patternId, std::move(steps)});
    }
    m_notes = store.notes(id);
    m_bookmarks = store.bookmarks(id);
}

QString InvestigationReport::toMarkdown() const
{
    QString out;
    QTextStream ts(&out);
    ts << "# RankScope investigation report\n\n";
    ts << "- Folder: `" << m_session.folder.path() << "`\n";
    ts << "- Exported: " << m_generatedAt.toUTC().toString(Qt::ISODate) << "\n\n";
    ts << demoted(AnalysisReport::toMarkdown(m_session, m_session.analysis)) << "\n";

    ts << "## Auto-checks\n\n";
    if (m_session.autoChecks.empty()) ts << "No auto-check was evaluated on this folder.\n\n";
    for (const AutoCheckResult& r : m_session.autoChecks) {
        const AutoCheck* check = Taxonomy::instance().autoCheck(r.checkId);
        ts << "### `" << r.checkId << "` · " << autoCheckOutcomeLabel(r.outcome) << "\n\n";
        if (check) ts << cell(check->description) << "\n\n";
        ts << cell(r.summary) << "\n\n";
        for (const QString& m : r.missing)
            ts << "- Missing: " << cell(m) << '\n';
        if (!r.missing.isEmpty()) ts << '\n';
        if (!r.evidence.empty()) {
            ts << "| source | where | evidence |\n| --- | --- | --- |\n";
            for (const Evidence& e : r.evidence) {
                const QString where = e.line > 0      ? QStringLiteral("line %1").arg(e.line)
                                      : e.timeNs >= 0 ? micros(e.timeNs)
                                                      : QString();
                ts << "| `" << cell(QString::fromStdString(e.path)) << "` | " << where << " | "
                   << cell(QString::fromStdString(e.text)) << " |\n";
            }
            ts << '\n';
        }
    }

    ts << "## Checklists\n\n";
    if (m_checklists.empty()) ts << "No checklist was worked on.\n\n";
    for (const Checklist& c : m_checklists) {
        const Walkthrough* w = Taxonomy::instance().walkthrough(c.patternId);
        if (!w) continue;
        int done = 0;
        QString rows;
        for (int i = 0; i < int(w->steps.size()); ++i) {
            const WalkthroughStep& step = w->steps[size_t(i)];
            const AutoCheckResult* r =
                step.autoCheck.isEmpty() ? nullptr : resultOf(m_session, step.autoCheck);
            StepStatus status = StepStatus::ToDo;
            QString origin;
            if (c.steps.contains(i)) {
                status = c.steps.value(i).status;
            } else if (r && suggestedStepStatus(r->outcome)) {
                status = *suggestedStepStatus(r->outcome);
                origin = QStringLiteral(" (from the auto-check)");
            }
            done += status == StepStatus::Done ? 1 : 0;
            rows += QStringLiteral("| %1 | %2 | %3%4 | %5 | %6 |\n")
                        .arg(i + 1)
                        .arg(cell(step.title), stepStatusLabel(status), origin,
                             r ? QStringLiteral("`%1`: %2")
                                     .arg(step.autoCheck, autoCheckOutcomeLabel(r->outcome))
                               : QString(),
                             cell(c.steps.value(i).note));
        }
        ts << "### " << cell(w->title) << " (`" << c.patternId << "`) · " << done << " of "
           << w->steps.size() << " done\n\n";
        ts << "| # | step | status | auto-check | note |\n| --- | --- | --- | --- | --- |\n"
           << rows << '\n';
    }

    ts << "## Notes\n\n";
    if (m_notes.trimmed().isEmpty()) {
        ts << "No notes.\n\n";
    } else {
        ts << "```\n";
        for (const QString& line : m_notes.split(QLatin1Char('\n')))
            ts << (line.startsWith(QLatin1String("```")) ? QStringLiteral(" ") + line : line)
               << '\n';
        ts << "```\n\n";
    }

    ts << "## Timeline bookmarks\n\n";
    if (m_bookmarks.isEmpty()) {
        ts << "No bookmarks.\n\n";
    } else {
        ts << "| label | from | to |\n| --- | --- | --- |\n";
        for (const TimelineBookmark& b : m_bookmarks)
            ts << "| " << cell(b.label) << " | " << micros(b.t0Ns) << " | " << micros(b.t1Ns)
               << " |\n";
        ts << '\n';
    }

    ts << "## Timeline snapshot\n\n";
    if (m_png.isEmpty())
        ts << "No snapshot (the folder has no trace, or none was taken).\n";
    else
        ts << "![Timeline](data:image/png;base64," << QString::fromLatin1(m_png.toBase64())
           << ")\n";
    return out;
}

QString InvestigationReport::toHtml() const
{
    const QString title =
        QStringLiteral("RankScope report: %1").arg(QFileInfo(m_session.folder.path()).fileName());
    return QStringLiteral(
               "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<title>%1</title>\n<style>\n"
               "body{font-family:sans-serif;max-width:72em;margin:1em auto;padding:0 1em;"
               "line-height:1.4}\n"
               "table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #999;"
               "padding:.2em .5em;text-align:left;vertical-align:top}\n"
               "code,pre{font-family:monospace}pre{background:rgba(127,127,127,.12);padding:.5em;"
               "white-space:pre-wrap}\nimg{max-width:100%}\n"
               "</style>\n</head>\n<body>\n%2</body>\n</html>\n")
        .arg(title.toHtmlEscaped(), MarkdownHtml::render(toMarkdown()));
}

bool InvestigationReport::writeFile(const QString& path, QString* error) const
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    const bool html = suffix == QLatin1String("html") || suffix == QLatin1String("htm");
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error) *error = file.errorString();
        return false;
    }
    file.write((html ? toHtml() : toMarkdown()).toUtf8());
    if (!file.commit()) {
        if (error) *error = file.errorString();
        return false;
    }
    return true;
}

} // namespace rankscope
