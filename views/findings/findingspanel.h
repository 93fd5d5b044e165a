#pragma once

#include "model/tracesession.h"

#include <QWidget>

class QListWidget;
class QPushButton;
class QSplitter;
class QTableView;
class QTextBrowser;

namespace rankscope {

class FindingsModel;
class LogViewer;
class TimelineView;
class WalkthroughPanel;

// The "Findings" dock: the session's findings (errors first), the selected one's summary and
// evidence, and what to do with it: read the cited log lines, see it on the timeline, follow
// the checklist of its top fix pattern. The ranked symptoms are listed below.
// The panel drives the attached views; the window only makes them visible on the signals.
class FindingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit FindingsPanel(QWidget* parent = nullptr);

    // Whether the session's diagnosis is there: while it is computed, or once it was cancelled,
    // the panel says so instead of "no errors or warnings found".
    enum class Diagnosis { Done, Running, Cancelled };
    void setSession(SessionPtr session, Diagnosis state = Diagnosis::Done);
    // Any of them may be null: its button is then disabled. They must outlive the panel.
    void setTargets(LogViewer* logViewer, TimelineView* timeline, WalkthroughPanel* walkthrough);

    FindingsModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QListWidget* evidenceList() const { return m_evidence; }
    QListWidget* symptomList() const { return m_symptoms; }
    // The finding's summary and its other fix patterns as links.
    QTextBrowser* summaryView() const { return m_summary; }
    QPushButton* evidenceButton() const { return m_evidenceButton; }
    QPushButton* timelineButton() const { return m_timelineButton; }
    QPushButton* fixButton() const { return m_fixButton; }

    const Finding* currentFinding() const;
    // Wide enough for the table's summary column and the head of an evidence line.
    QSize sizeHint() const override;
    void selectFinding(int row);

public Q_SLOTS:
    // The selected evidence line, else the finding's first log evidence.
    bool showEvidence();
    bool showOnTimeline();
    bool fixIt();

Q_SIGNALS:
    void logViewerShown();
    void timelineShown();
    void walkthroughShown();

protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override; // the summary's resizes

private:
    void refreshDetail();
    // The findings and the ranked symptoms as tall as their rows (a few, then they scroll), the
    // finding's detail the rest of the height.
    void fitSplit();
    // The summary as tall as its text (at least four lines; a shorter dock scrolls it).
    void fitSummary();
    // The evidence list as tall as its rows, up to kEvidenceRowsShown (then it scrolls).
    void fitEvidence();
    static constexpr int kEvidenceRowsShown = 10;
    void refreshSymptoms();
    bool openFix(const QString& patternId);

    SessionPtr m_session;
    Diagnosis m_state = Diagnosis::Done;
    FindingsModel* m_model = nullptr;
    LogViewer* m_logViewer = nullptr;
    TimelineView* m_timeline = nullptr;
    WalkthroughPanel* m_walkthrough = nullptr;

    QSplitter* m_split = nullptr;
    bool m_tableScrolls = false; // the findings' columns are wider than the table
    QTableView* m_table = nullptr;
    QTextBrowser* m_summary = nullptr;
    QListWidget* m_evidence = nullptr;
    QPushButton* m_evidenceButton = nullptr;
    QPushButton* m_timelineButton = nullptr;
    QPushButton* m_fixButton = nullptr;
    QListWidget* m_symptoms = nullptr;
};

} // namespace rankscope
