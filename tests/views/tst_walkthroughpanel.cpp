#include "model/investigation/investigationstore.h"
#include "model/kb/taxonomy.h"
#include "model/tracesession.h"
#include "views/walkthrough/walkthroughpanel.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

using namespace rankscope;

namespace {

// The walkthrough with the most steps, so next/previous and progress have room.
const Walkthrough& longest()
{
    const Walkthrough* best = nullptr;
    for (const Walkthrough& w : Taxonomy::instance().walkthroughs())
        if (!best || w.steps.size() > best->steps.size()) best = &w;
    return *best;
}

} // namespace

class TestWalkthroughPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void statePersistsAcrossPanelAndStore();
    void progressAndNavigation();
    void frameworkSelectsTheCodeShown_data();
    void frameworkSelectsTheCodeShown();
    void autoCheckShowsIdDescriptionAndEvidence();
    void fixItOpensTheMostUsedWalkthroughOfASymptom();
    void fixItOpensTheStepTheEvidencePointsAt();
    void autoChecksPrefillSteps();
    void narrowPanelShowsEveryStep();
    void stepKeepsItsRoomBesideALongCheck();
    void screenshot();
};

void TestWalkthroughPanel::statePersistsAcrossPanelAndStore()
{
    QTemporaryDir db, folder;
    const Walkthrough& w = longest();
    qint64 id = -1;
    {
        InvestigationStore store(db.path());
        id = store.openInvestigation(folder.path());
        WalkthroughPanel panel;
        panel.show();
        panel.setInvestigation(&store, id);
        QVERIFY(panel.openWalkthrough(w.patternId));
        QTest::mouseClick(panel.statusButton(StepStatus::Done), Qt::LeftButton);
        QCOMPARE(panel.stepStatus(0), StepStatus::Done);
        panel.next();
        panel.noteEdit()->setFocus();
        QTest::keyClicks(panel.noteEdit(), QStringLiteral("NCCL_IB_DISABLE=1 made no difference"));
        QTest::mouseClick(panel.statusButton(StepStatus::Failed), Qt::LeftButton);
        panel.next();
        QTest::keyClicks(panel.noteEdit(), QStringLiteral("typing"));
        // No flush: the destructor must write the note being typed.
    }
    InvestigationStore store(db.path());
    QCOMPARE(store.openInvestigation(folder.path()), id);
    WalkthroughPanel panel;
    panel.setInvestigation(&store, id);
    QCOMPARE(panel.patternId(), w.patternId);
    QCOMPARE(panel.currentStep(), 2);
    QCOMPARE(panel.stepStatus(0), StepStatus::Done);
    QCOMPARE(panel.stepStatus(1), StepStatus::Failed);
    QCOMPARE(panel.stepNote(1), QStringLiteral("NCCL_IB_DISABLE=1 made no difference"));
    QCOMPARE(panel.stepNote(2), QStringLiteral("typing"));
    QCOMPARE(panel.noteEdit()->toPlainText(), QStringLiteral("typing"));
    QVERIFY(panel.statusButton(StepStatus::ToDo)->isChecked());
    panel.previous();
    QCOMPARE(panel.noteEdit()->toPlainText(),
             QStringLiteral("NCCL_IB_DISABLE=1 made no difference"));
    QVERIFY(panel.statusButton(StepStatus::Failed)->isChecked());
}

void TestWalkthroughPanel::progressAndNavigation()
{
    const Walkthrough& w = longest();
    const int n = int(w.steps.size());
    WalkthroughPanel panel; // no investigation: state lives in the panel only
    QVERIFY(panel.openWalkthrough(w.patternId));
    QCOMPARE(panel.stepCount(), n);
    QCOMPARE(panel.stepList()->count(), n);
    QCOMPARE(panel.progressLabel()->text(), QStringLiteral("0 of %1 done").arg(n));
    panel.setStepStatus(0, StepStatus::Done);
    panel.setStepStatus(1, StepStatus::Skipped);
    panel.setStepStatus(n - 1, StepStatus::Done);
    QCOMPARE(panel.progressLabel()->text(), QStringLiteral("2 of %1 done").arg(n));
    panel.previous();
    QCOMPARE(panel.currentStep(), 0);
    for (int i = 0; i < n + 2; ++i)
        panel.next();
    QCOMPARE(panel.currentStep(), n - 1);
    QCOMPARE(panel.stepList()->currentRow(), n - 1);
    QVERIFY(panel.detail()->toPlainText().contains(w.steps.back().title));
    panel.stepList()->setCurrentRow(1);
    QCOMPARE(panel.currentStep(), 1);
    QVERIFY(panel.statusButton(StepStatus::Skipped)->isChecked());
    QVERIFY(!panel.openWalkthrough(QStringLiteral("no-such-pattern")));
    QCOMPARE(panel.patternId(), w.patternId);
}

void TestWalkthroughPanel::frameworkSelectsTheCodeShown_data()
{
    QTest::addColumn<QString>("framework");
    QTest::addRow("pytorch") << QStringLiteral("pytorch");
    QTest::addRow("horovod") << QStringLiteral("horovod");
    QTest::addRow("tensorflow") << QStringLiteral("tensorflow");
}

void TestWalkthroughPanel::frameworkSelectsTheCodeShown()
{
    QFETCH(QString, framework);
    // A step that has instructions for this framework and for another one.
    for (const Walkthrough& w : Taxonomy::instance().walkthroughs())
        for (int s = 0; s < int(w.steps.size()); ++s) {
            const auto& by = w.steps[size_t(s)].byFramework;
            auto mine = std::find_if(by.begin(), by.end(), [&](const FrameworkHow& f) {
                return f.framework == framework;
            });
            auto other = std::find_if(by.begin(), by.end(), [&](const FrameworkHow& f) {
                return f.framework != framework;
            });
            if (mine == by.end() || other == by.end()) continue;
            WalkthroughPanel panel;
            QVERIFY(panel.openWalkthrough(w.patternId));
            panel.setCurrentStep(s);
            panel.setFramework(other->framework);
            QVERIFY(!panel.detail()->toPlainText().contains(mine->how.left(40)));
            panel.setFramework(framework);
            QCOMPARE(panel.framework(), framework);
            QVERIFY(panel.detail()->toPlainText().contains(mine->how.left(40)));
            return;
        }
    QSKIP("no step has instructions for this framework and another");
}

void TestWalkthroughPanel::autoCheckShowsIdDescriptionAndEvidence()
{
    const Taxonomy& t = Taxonomy::instance();
    for (const Walkthrough& w : t.walkthroughs())
        for (int s = 0; s < int(w.steps.size()); ++s) {
            const QString check = w.steps[size_t(s)].autoCheck;
            if (check.isEmpty()) continue;
            WalkthroughPanel panel;
            panel.show();
            QVERIFY(panel.openWalkthrough(w.patternId));
            panel.setCurrentStep(s);
            QVERIFY(panel.autoCheckLabel()->isVisible());
            QVERIFY(panel.autoCheckLabel()->text().contains(check));
            QVERIFY(panel.autoCheckLabel()->text().contains(
                t.autoCheck(check)->description.toHtmlEscaped()));
            QVERIFY(panel.autoCheckLabel()->text().contains(QLatin1String("Not evaluated")));
            panel.setAutoCheckResult(check, AutoCheckOutcome::Failed,
                                     QStringLiteral("rank 3: torch 2.1.0, others 2.2.1"));
            QVERIFY(panel.autoCheckLabel()->text().contains(QLatin1String("Failed")));
            QVERIFY(panel.autoCheckLabel()->text().contains(
                QLatin1String("rank 3: torch 2.1.0, others 2.2.1")));
            QVERIFY(panel.stepList()->item(s)->text().contains(QLatin1String("check failed")));
            panel.setAutoCheckResult(check, AutoCheckOutcome::Passed, QString());
            QVERIFY(panel.autoCheckLabel()->text().contains(QLatin1String("Passed")));
            // A step without an auto-check hides the box.
            for (int o = 0; o < int(w.steps.size()); ++o)
                if (w.steps[size_t(o)].autoCheck.isEmpty()) {
                    panel.setCurrentStep(o);
                    QVERIFY(!panel.autoCheckLabel()->isVisible());
                }
            return;
        }
    QFAIL("no walkthrough step has an auto-check");
}

void TestWalkthroughPanel::fixItOpensTheMostUsedWalkthroughOfASymptom()
{
    const Taxonomy& t = Taxonomy::instance();
    QString leaf;
    for (const QString& id : t.leaves())
        if (t.walkthroughsForNode(id).size() >= 2) leaf = id;
    QVERIFY(!leaf.isEmpty());
    const auto ws = t.walkthroughsForNode(leaf);
    WalkthroughPanel panel;
    panel.show();
    QVERIFY(panel.openForSymptom(leaf));
    QCOMPARE(panel.patternId(), ws.front()->patternId);
    QCOMPARE(panel.alternativePatterns().size(), int(ws.size()) - 1);
    QCOMPARE(panel.alternativePatterns().first(), ws.at(1)->patternId);
    QVERIFY(panel.alternativesLabel()->isVisible());
    Q_EMIT panel.alternativesLabel()->linkActivated(ws.at(1)->patternId);
    QCOMPARE(panel.patternId(), ws.at(1)->patternId);
    QVERIFY(panel.alternativesLabel()->isVisible());
    panel.patternBox()->setCurrentIndex(panel.patternBox()->findData(ws.front()->patternId));
    QVERIFY(panel.openWalkthrough(ws.at(1)->patternId));
    QVERIFY(!panel.alternativesLabel()->isVisible());
    QVERIFY(!panel.openForSymptom(QStringLiteral("no/such/node")));
}

// "Fix it" on unused_parameters' finding opened its checklist at step 1, "Check initialisation
// order", though the finding's why (use the parameters in forward or pass
// find_unused_parameters=True) is the subject of a later step: it opens at that step. A step
// whose auto-check found its problem comes before it.
void TestWalkthroughPanel::fixItOpensTheStepTheEvidencePointsAt()
{
    const SessionPtr session =
        loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/unused_parameters"));
    QVERIFY(session && !session->analysis.findings.empty());
    const Finding& finding = session->analysis.findings.front();
    QVERIFY2(QString::fromStdString(finding.fixReason).contains(QLatin1String("find_unused_")),
             finding.fixReason.c_str());
    const Walkthrough* w =
        Taxonomy::instance().walkthrough(QString::fromStdString(finding.fixPatterns.front()));
    QVERIFY(w);
    int unusedStep = -1;
    for (int s = 0; s < int(w->steps.size()); ++s)
        if (w->steps[size_t(s)].title.contains(QLatin1String("unused parameters"),
                                               Qt::CaseInsensitive))
            unusedStep = s;
    QVERIFY2(unusedStep > 0, qPrintable(w->patternId));

    WalkthroughPanel panel;
    panel.show();
    panel.setAutoCheckResults(session->autoChecks);
    QVERIFY(panel.openForFinding(finding));
    QCOMPARE(panel.patternId(), w->patternId);
    QCOMPARE(panel.currentStep(), unusedStep);
    QCOMPARE(panel.stepList()->currentRow(), unusedStep);

    // Another checklist, then this one again with another step's check failed on the folder.
    QVERIFY(panel.openWalkthrough(QStringLiteral("fix-communication-configuration")));
    int checkedStep = -1;
    for (int s = 0; s < int(w->steps.size()) && checkedStep < 0; ++s)
        if (s != unusedStep && !w->steps[size_t(s)].autoCheck.isEmpty()) checkedStep = s;
    QVERIFY(checkedStep >= 0);
    AutoCheckResult failed;
    failed.checkId = w->steps[size_t(checkedStep)].autoCheck;
    failed.outcome = AutoCheckOutcome::Failed;
    panel.setAutoCheckResults({failed});
    QVERIFY(panel.openForFinding(finding));
    QCOMPARE(panel.currentStep(), checkedStep);
}

// Steps whose auto-check decided are pre-filled from a real evaluation of a fixture folder; a
// status or a note from the user takes over, and a re-evaluation moves only untouched steps.
void TestWalkthroughPanel::autoChecksPrefillSteps()
{
    const SessionPtr session = loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy"));
    QVERIFY(session);
    const QString pattern = QStringLiteral("fix-communication-configuration");
    const Walkthrough* w = Taxonomy::instance().walkthrough(pattern);
    QVERIFY(w);
    int envStep = -1;
    for (int s = 0; s < int(w->steps.size()); ++s)
        if (w->steps[size_t(s)].autoCheck == QLatin1String("rendezvous_env_consistent"))
            envStep = s;
    QVERIFY(envStep >= 0);

    QTemporaryDir db, folder;
    InvestigationStore store(db.path());
    const qint64 id = store.openInvestigation(folder.path());
    WalkthroughPanel panel;
    panel.show();
    panel.setInvestigation(&store, id);
    QVERIFY(panel.openWalkthrough(pattern));
    panel.setAutoCheckResults(session->autoChecks);
    panel.setCurrentStep(envStep);
    QCOMPARE(panel.stepStatus(envStep), StepStatus::Done);
    QVERIFY(panel.isStepPrefilled(envStep));
    QVERIFY(panel.statusButton(StepStatus::Done)->isChecked());
    QVERIFY(panel.autoCheckLabel()->text().contains(QLatin1String("Passed")));
    QVERIFY(panel.autoCheckLabel()->text().contains(QLatin1String("pre-filled")));
    QVERIFY(panel.autoCheckLabel()->text().contains(QLatin1String("rank0.log:")));
    QVERIFY(panel.stepList()->item(envStep)->text().contains(QLatin1String("check passed")));
    QVERIFY(panel.doneCount() >= 1);
    // Nothing was written: the store holds only what the user did.
    QVERIFY(!store.checklist(id, pattern).contains(envStep));

    // A failed re-evaluation (the folder was reloaded) moves the untouched step back to "To
    // do": the check found the problem the step addresses, which the user has not fixed yet
    // (a "Failed" step would read as a remedy tried in vain).
    AutoCheckResult failed;
    failed.checkId = QStringLiteral("rendezvous_env_consistent");
    failed.outcome = AutoCheckOutcome::Failed;
    failed.summary = QStringLiteral("MASTER_PORT differs");
    panel.setAutoCheckResults({failed});
    QCOMPARE(panel.stepStatus(envStep), StepStatus::ToDo);
    QVERIFY(!panel.isStepPrefilled(envStep));
    QVERIFY(panel.statusButton(StepStatus::ToDo)->isChecked());
    QVERIFY(panel.autoCheckLabel()->text().contains(QLatin1String("still to do")));
    QVERIFY(panel.stepList()->item(envStep)->text().contains(QLatin1String("check failed")));

    // The user overrides; the override is stored and survives another evaluation.
    QTest::mouseClick(panel.statusButton(StepStatus::Skipped), Qt::LeftButton);
    QCOMPARE(panel.stepStatus(envStep), StepStatus::Skipped);
    QVERIFY(!panel.isStepPrefilled(envStep));
    panel.setAutoCheckResults(session->autoChecks);
    QCOMPARE(panel.stepStatus(envStep), StepStatus::Skipped);
    QCOMPARE(store.checklist(id, pattern).value(envStep).status, StepStatus::Skipped);

    // A note on a pre-filled step keeps the pre-filled status as the user's.
    int other = -1;
    for (int s = 0; s < int(w->steps.size()); ++s)
        if (s != envStep && panel.isStepPrefilled(s)) other = s;
    QVERIFY(other >= 0); // all_ranks_present passes on the healthy run too
    const StepStatus before = panel.stepStatus(other);
    panel.setStepNote(other, QStringLiteral("seen"));
    QVERIFY(!panel.isStepPrefilled(other));
    QCOMPARE(store.checklist(id, pattern).value(other).status, before);
    panel.clearAutoCheckResults();
    QCOMPARE(panel.stepStatus(envStep), StepStatus::Skipped);
}

// In a dock as narrow as the main window gives it on first run, the step titles wrap; every
// step is still in view when the checklist opens.
// The dock of a 1280x800 window (about 430 x 720), "Fix it" on rank_crash_w4's crash: the first
// step's auto-check passed with several lines of evidence. The step's instructions keep the
// larger part of the pane (they were squeezed to four lines under the check) and the check's
// text is all there, scrolling in its box.
void TestWalkthroughPanel::stepKeepsItsRoomBesideALongCheck()
{
    const SessionPtr session =
        loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/rank_crash_w4"));
    QVERIFY(session && !session->analysis.findings.empty());
    WalkthroughPanel panel;
    panel.resize(430, 720);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setAutoCheckResults(session->autoChecks);
    QVERIFY(panel.openForFinding(session->analysis.findings.front()));
    QCoreApplication::processEvents();
    QLabel* check = panel.autoCheckLabel();
    QVERIFY(check->isVisible());
    QVERIFY(check->text().contains(QLatin1String("Passed")));
    auto* step = panel.findChild<QTextBrowser*>(QStringLiteral("walkthroughStep"));
    QVERIFY(step);
    const int lines = step->fontMetrics().lineSpacing();
    QVERIFY2(
        step->height() >= 8 * lines && step->height() > check->parentWidget()->height(),
        qPrintable(QStringLiteral("%1 px, check %2 px").arg(step->height()).arg(check->height())));
    // The check's box holds every line of it: shown whole, or scrolled within the box.
    QCOMPARE(check->height(),
             std::max(check->heightForWidth(check->width()), check->parentWidget()->height()));
}

void TestWalkthroughPanel::narrowPanelShowsEveryStep()
{
    WalkthroughPanel panel;
    panel.resize(352, 900);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    // Opened from a symptom with many fix patterns, as "Fix it" on a hang does: the list of the
    // other patterns takes room above the steps.
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const auto patterns = Taxonomy::instance().walkthroughsForNode(hang);
    QVERIFY(patterns.size() > 5);
    const Walkthrough& w = *patterns.front();
    // Each auto-check shows its evidence under the step, as after loading a folder.
    for (const WalkthroughStep& step : w.steps)
        if (!step.autoCheck.isEmpty())
            panel.setAutoCheckResult(step.autoCheck, AutoCheckOutcome::Passed,
                                     QStringLiteral("MASTER_ADDR 127.0.0.1, MASTER_PORT 41349, "
                                                    "WORLD_SIZE 3 on all 3 ranks.\nrank0.log:1: "
                                                    "INFO train: starting: rank=0 world_size=3"));
    QVERIFY(panel.openWalkthrough(w.patternId, hang));
    QListWidget* list = panel.stepList();
    QCOMPARE(list->count(), int(w.steps.size()));
    QTest::qWait(20);
    for (int i = 0; i < list->count(); ++i) {
        const QRect r = list->visualItemRect(list->item(i));
        QVERIFY2(r.top() >= 0 && r.bottom() <= list->viewport()->height(),
                 qPrintable(QStringLiteral("step %1 at %2-%3, list %4 high")
                                .arg(i + 1)
                                .arg(r.top())
                                .arg(r.bottom())
                                .arg(list->viewport()->height())));
    }
}

void TestWalkthroughPanel::screenshot()
{
    WalkthroughPanel panel;
    panel.resize(560, 860);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const Walkthrough& w = longest();
    QVERIFY(panel.openWalkthrough(w.patternId));
    panel.setStepStatus(0, StepStatus::Done);
    panel.setStepNote(0, QStringLiteral("all ranks on torch 2.2.1"));
    for (int s = 0; s < int(w.steps.size()); ++s)
        if (!w.steps[size_t(s)].autoCheck.isEmpty()) {
            panel.setAutoCheckResult(
                w.steps[size_t(s)].autoCheck, AutoCheckOutcome::Failed,
                QStringLiteral("rank 1 reports a different value than ranks 0, 2"));
            panel.setCurrentStep(s);
            break;
        }
    QTest::qWait(50);
    const QImage shot = panel.grab().toImage();
    QVERIFY(shot.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/walkthroughpanel.png")));
}

QTEST_MAIN(TestWalkthroughPanel)
#include "tst_walkthroughpanel.moc"
