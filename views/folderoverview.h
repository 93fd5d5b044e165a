#pragma once

#include "model/tracesession.h"

#include <QStringList>
#include <QTextBrowser>
#include <vector>

namespace rankscope {

// One row of the Overview's rank table: the files one rank left for one job of the folder.
struct OverviewRankRow {
    int job = -1;      // the row's job in the folder's JobSplit, -1 where the folder holds one job
    int rank = -1;     // -1: the job's files that state no rank (listed for a set-aside job only)
    QStringList files; // folder-relative paths
    QStringList kinds; // the files' kinds, each once, in the files' order
};

// The first page a user sees after opening a folder: what was found, per rank, and what could
// not be read or attributed. Without a session it says how to open one.
class FolderOverview : public QTextBrowser {
    Q_OBJECT
public:
    explicit FolderOverview(QWidget* parent = nullptr);
    // `diagnosisNote`, when given, stands in place of the diagnosis section: the session is read
    // but not (yet) diagnosed ("Diagnosing…").
    void setSession(const SessionPtr& session, const QString& diagnosisNote = {});
    // The "Diagnosis" section at the top of the page: the error and warning findings.
    static QString diagnosisHtml(const TraceSession& session);
    // The rank table's rows, as the model splits the folder into jobs (JobSplit, the split the
    // diagnosis analyses): where it holds one job, a row per rank; where it mixes jobs, the
    // analysed job's ranks first, then each set-aside job's ranks and its files of no rank, so
    // that no set-aside file counts as a rank of the analysed job.
    static std::vector<OverviewRankRow> rankRows(const TraceFolder& folder, const JobSplit& split);

private:
    void showWelcome();
};

} // namespace rankscope
