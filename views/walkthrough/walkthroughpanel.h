#pragma once

#include "model/analysis/autocheckevaluator.h"
#include "model/analysis/finding.h"
#include "model/investigation/investigation.h"

#include <QHash>
#include <QWidget>
#include <optional>
#include <vector>

class QAbstractButton;
class QButtonGroup;
class QComboBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QSplitter;
class QTextBrowser;
class QTimer;

namespace rankscope {

class InvestigationStore;
struct Walkthrough;

// The checklist of one fix pattern: steps with a status (to do / done / skipped / failed) and a
// note each, the instructions for the chosen framework, auto-check results from the analysis,
// progress and next/previous. With an investigation attached every change is written to the
// store at once (notes after a short pause in typing, and whenever the user leaves the step), and
// the panel resumes on the pattern and step the user was last on.
class WalkthroughPanel : public QWidget {
    Q_OBJECT
public:
    explicit WalkthroughPanel(QWidget* parent = nullptr);
    ~WalkthroughPanel() override;

    // The store must outlive the panel or be detached with setInvestigation(nullptr, -1).
    void setInvestigation(InvestigationStore* store, qint64 investigationId);
    qint64 investigationId() const { return m_investigationId; }

    // With a symptom (taxonomy node id), its other walkthroughs are offered as links.
    bool openWalkthrough(const QString& patternId, const QString& symptomId = {});
    // Opens the most used walkthrough for a taxonomy node and lists the node's other
    // walkthroughs as links; false when the node has none.
    bool openForSymptom(const QString& nodeId);
    // What "Fix it" on a finding does: opens `patternId` (empty: the finding's first fix that
    // has a checklist) at the step the evidence points at (stepForEvidence), says why the
    // evidence calls for the first fix (Finding::fixReason) and lists the finding's other fixes
    // as links; without fixes, openForSymptom(its leaf).
    bool openForFinding(const Finding& finding, const QString& patternId = {});
    // "Why this fix: ..." while the finding's first fix is open, hidden otherwise.
    QLabel* reasonLabel() const { return m_reasonLabel; }
    // The other walkthroughs offered for the current symptom, most used first.
    QStringList alternativePatterns() const { return m_alternatives; }
    QLabel* alternativesLabel() const { return m_alternativesLabel; }
    QString patternId() const;
    int stepCount() const;
    int currentStep() const { return m_step; }
    void setCurrentStep(int step);

    // The user's status of a step, or for a step the user never touched, what its auto-check
    // concluded (passed: done, failed: failed); a status the user sets always wins.
    StepStatus stepStatus(int step) const;
    // True when stepStatus(step) comes from the auto-check rather than from the user.
    bool isStepPrefilled(int step) const;
    QString stepNote(int step) const { return m_state.value(step).note; }
    void setStepStatus(int step, StepStatus status);
    void setStepNote(int step, const QString& note);
    int doneCount() const;
    QString progressText() const;

    // "pytorch", "horovod" or "tensorflow".
    void setFramework(const QString& framework);
    QString framework() const;

    // Writes the note being typed now instead of after the pause.
    void flush();

    QByteArray saveState() const;
    // Applied when the widget is first shown if it is hidden now, so the sizes meet the real
    // geometry instead of being stretched from a default one.
    void restoreState(const QByteArray& state);

    QComboBox* patternBox() const { return m_patternBox; }
    QComboBox* frameworkBox() const { return m_frameworkBox; }
    QListWidget* stepList() const { return m_steps; }
    QTextBrowser* detail() const { return m_detail; }
    QLabel* autoCheckLabel() const { return m_autoCheck; }
    QPlainTextEdit* noteEdit() const { return m_note; }
    QAbstractButton* statusButton(StepStatus status) const;
    QLabel* progressLabel() const { return m_progressLabel; }

public Q_SLOTS:
    // Called by the analysis when it has evaluated an auto-check on the loaded folder.
    void setAutoCheckResult(const QString& checkId, rankscope::AutoCheckOutcome outcome,
                            const QString& evidence);
    // Replaces every result: what AutoCheckEvaluator concluded on the loaded folder.
    void setAutoCheckResults(const std::vector<rankscope::AutoCheckResult>& results);
    void clearAutoCheckResults();
    void next();
    void previous();

Q_SIGNALS:
    void stateChanged();

protected:
    void showEvent(QShowEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override; // the auto-check's resizes

private:
    struct CheckResult {
        AutoCheckOutcome outcome = AutoCheckOutcome::Unknown;
        QString evidence;
    };
    const Walkthrough* walkthrough() const;
    // The status the auto-check of `step` suggests, if it decided.
    std::optional<StepStatus> prefill(int step) const;
    // Makes a pre-filled status the user's own before the step is first written.
    void adoptPrefill(int step);
    void loadState();
    void saveStep(int step);
    void refreshList();
    void fitStepList();
    void refreshStep();
    // The auto-check's box as tall as its text, up to kAutoCheckLines (then it scrolls).
    void fitAutoCheck();
    static constexpr int kAutoCheckLines = 7;
    void refreshProgress();
    void showAlternatives();
    bool open(const QString& patternId, const QString& symptomId);

    InvestigationStore* m_store = nullptr;
    qint64 m_investigationId = -1;
    QHash<int, StepState> m_state;
    QHash<QString, CheckResult> m_checks;
    int m_step = 0;
    int m_noteStep = -1; // the step whose note has unsaved edits
    bool m_updating = false;

    QComboBox* m_patternBox = nullptr;
    QComboBox* m_frameworkBox = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_alternativesLabel = nullptr;
    QStringList m_alternatives;
    QLabel* m_reasonLabel = nullptr;
    // Set by openForFinding() until another checklist is opened: the finding's fixes with a
    // checklist (best first) and why the first one.
    QStringList m_findingFixes;
    QString m_reason;
    QString
        m_symptomId; // the node openForSymptom() was called for, until another pattern is chosen
    QLabel* m_progressLabel = nullptr;
    QProgressBar* m_progress = nullptr;
    QListWidget* m_steps = nullptr;
    QTextBrowser* m_detail = nullptr;
    QLabel* m_autoCheck = nullptr;
    QScrollArea* m_autoCheckArea = nullptr; // holds m_autoCheck
    QButtonGroup* m_statusGroup = nullptr;
    QPlainTextEdit* m_note = nullptr;
    QPushButton* m_prev = nullptr;
    QPushButton* m_next = nullptr;
    QSplitter* m_split = nullptr;
    QByteArray m_pendingState;
    QTimer* m_noteTimer = nullptr;
};

} // namespace rankscope
