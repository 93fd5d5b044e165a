#pragma once

#include "model/tracesession.h"

#include <QWidget>
#include <vector>

class QComboBox;
class QLabel;
class QListView;
class QPushButton;

namespace rankscope {

class LogLinesModel;

// A read-only view of one rank's log: line numbers, the cited lines highlighted, next/previous
// cited line. It shows what the session's RankLogs hold and never reads a file.
class LogViewer : public QWidget {
    Q_OBJECT
public:
    explicit LogViewer(QWidget* parent = nullptr);

    void setSession(SessionPtr session);
    // The lines to highlight (log evidence; trace-event evidence is ignored), in the log shown
    // and in any shown later; the logs list marks the logs that have some. Until a log is picked
    // in the list, the log shown is that of the first cited line, at that line; a picked log
    // stays, at the reader's place or else at its first cited line.
    void setCitations(const std::vector<Evidence>& evidence);
    // Shows the log of `path` (folder-relative, as the evidence cites it; `rank` picks among the
    // rank streams split from one combined log, -1 for any) scrolled to source line `line`.
    // False when the session has no such log or line.
    bool openAt(const QString& path, int line, int rank = -1);

    // Source line number of the current row, -1 when none.
    int currentLineNumber() const;
    bool isHighlighted(int lineNumber) const;
    QList<int> citedLineNumbers() const; // of the log shown, ascending
    const RankLog* currentLog() const;

    QListView* lineView() const { return m_view; }
    QComboBox* logBox() const { return m_logBox; }

public Q_SLOTS:
    void nextCited();
    void previousCited();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void showLog(int logIndex);
    QString logTitle(int logIndex) const;
    QList<int> citedRowsOf(const RankLog& log) const; // ascending, distinct
    void goToRow(int row);
    void updateStatus();

    SessionPtr m_session;
    std::vector<Evidence> m_citations;
    bool m_logsWithCitations = false; // some log of the session has cited lines
    bool m_logPicked = false;         // the user chose the log shown in the list
    bool m_centerOnShow = false;      // a line was gone to while hidden, at a size not yet known
    int m_logIndex = -1;
    QList<int> m_citedRows; // rows of the cited lines in the shown log, ascending
    LogLinesModel* m_model = nullptr;
    QComboBox* m_logBox = nullptr;
    QListView* m_view = nullptr;
    QPushButton* m_prev = nullptr;
    QPushButton* m_next = nullptr;
    QLabel* m_status = nullptr;
};

} // namespace rankscope
