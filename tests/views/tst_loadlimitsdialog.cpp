// File > Load Limits…: every budget of ReadOptions has a field, the fields edit the budgets the
// next load reads up to, and save() / saved() keep them in QSettings for the next session.
#include "views/preferences/loadlimitsdialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QScopeGuard>
#include <QSettings>
#include <QSpinBox>
#include <QTest>

using namespace rankscope;

class TestLoadLimitsDialog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void fieldsShowTheBudgets();
    void editedBudgetsAreKept();
    void restoreDefaults();
};

namespace {

QSpinBox* spin(const LoadLimitsDialog& d, const char* name)
{
    return d.findChild<QSpinBox*>(QLatin1String(name));
}
QDoubleSpinBox* unit(const LoadLimitsDialog& d, const char* name)
{
    return d.findChild<QDoubleSpinBox*>(QLatin1String(name));
}

} // namespace

void TestLoadLimitsDialog::initTestCase()
{
    QCoreApplication::setOrganizationName(QStringLiteral("rankscope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_loadlimitsdialog"));
    QSettings().clear();
}

// The defaults as the fields show them: 4,096 / 16,384 rank tags, 100,000 dump entries, 1 GiB.
void TestLoadLimitsDialog::fieldsShowTheBudgets()
{
    const LoadLimitsDialog dialog{ReadOptions{}};
    QVERIFY(spin(dialog, "rankTagsFile"));
    QVERIFY(spin(dialog, "rankTagsLoad"));
    QVERIFY(spin(dialog, "dumpEntries"));
    QVERIFY(unit(dialog, "dumpBytes"));
    QCOMPARE(spin(dialog, "rankTagsFile")->value(), 4096);
    QCOMPARE(spin(dialog, "rankTagsLoad")->value(), 16'384);
    QCOMPARE(spin(dialog, "dumpEntries")->value(), 100'000);
    QCOMPARE(unit(dialog, "dumpBytes")->value(), 1.0);
    QCOMPARE(unit(dialog, "traceEventsLoad")->value(), 150.0);
    QCOMPARE(unit(dialog, "decompressedLoad")->value(), 64.0);
    QCOMPARE(spin(dialog, "dumpEntriesLoad")->value(), 1'000'000);
    QCOMPARE(unit(dialog, "logBytesLoad")->value(), 8.0);
    // Unedited, the budgets come back as they went in.
    const ReadOptions same = dialog.limits();
    QCOMPARE(same.logBudget.rankTagsPerFile, LogReader::Budget().rankTagsPerFile);
    QCOMPARE(same.logBudget.rankTagsPerLoad, LogReader::Budget().rankTagsPerLoad);
    QCOMPARE(same.dumpBudget.maxEntries, FlightRecorderReader::Budget().maxEntries);
    QCOMPARE(same.dumpBudget.maxDecodedBytes, FlightRecorderReader::Budget().maxDecodedBytes);
    QCOMPARE(same.traceBudget.maxEvents, KinetoReader::Budget().maxEvents);
    QCOMPARE(same.traceBudget.maxEventsPerLoad, KinetoReader::Budget().maxEventsPerLoad);
    QCOMPARE(same.traceBudget.maxInflatedBytesPerLoad,
             KinetoReader::Budget().maxInflatedBytesPerLoad);
    QCOMPARE(same.dumpBudget.maxEntriesPerLoad, FlightRecorderReader::Budget().maxEntriesPerLoad);
    QCOMPARE(same.logBudget.bytesPerLoad, LogReader::Budget().bytesPerLoad);
}

// Edited as a user would, the budgets reach limits(); saved, a new session reads them back, and
// the other budgets stay as they were.
void TestLoadLimitsDialog::editedBudgetsAreKept()
{
    const auto restore = qScopeGuard([] { QSettings().clear(); });
    LoadLimitsDialog dialog{ReadOptions{}};
    spin(dialog, "rankTagsFile")->setValue(12);
    spin(dialog, "rankTagsLoad")->setValue(30);
    spin(dialog, "dumpEntries")->setValue(2500);
    unit(dialog, "dumpBytes")->setValue(0.25);
    unit(dialog, "traceEventsLoad")->setValue(0.5);
    unit(dialog, "decompressedLoad")->setValue(2);
    spin(dialog, "dumpEntriesLoad")->setValue(9000);
    unit(dialog, "logBytesLoad")->setValue(3);
    const ReadOptions edited = dialog.limits();
    QCOMPARE(edited.traceBudget.maxEventsPerLoad, std::int64_t(500'000));
    QCOMPARE(edited.traceBudget.maxInflatedBytesPerLoad, std::int64_t(2) << 30);
    QCOMPARE(edited.dumpBudget.maxEntriesPerLoad, std::int64_t(9000));
    QCOMPARE(edited.logBudget.bytesPerLoad, qint64(3) << 30);
    QCOMPARE(edited.logBudget.rankTagsPerFile, 12);
    QCOMPARE(edited.logBudget.rankTagsPerLoad, 30);
    QCOMPARE(edited.dumpBudget.maxEntries, std::int64_t(2500));
    QCOMPARE(edited.dumpBudget.maxDecodedBytes, std::int64_t(1) << 28);
    QCOMPARE(edited.logBudget.linesPerFile, LogReader::Budget().linesPerFile);

    QCOMPARE(LoadLimitsDialog::saved().dumpBudget.maxEntries,
             FlightRecorderReader::Budget().maxEntries); // nothing saved yet
    LoadLimitsDialog::save(edited);
    const ReadOptions saved = LoadLimitsDialog::saved();
    QCOMPARE(saved.logBudget.rankTagsPerFile, 12);
    QCOMPARE(saved.logBudget.rankTagsPerLoad, 30);
    QCOMPARE(saved.dumpBudget.maxEntries, std::int64_t(2500));
    QCOMPARE(saved.dumpBudget.maxDecodedBytes, std::int64_t(1) << 28);
    QCOMPARE(saved.traceBudget.maxEvents, KinetoReader::Budget().maxEvents);
    QCOMPARE(saved.traceBudget.maxEventsPerLoad, std::int64_t(500'000));
    QCOMPARE(saved.traceBudget.maxInflatedBytesPerLoad, std::int64_t(2) << 30);
    QCOMPARE(saved.dumpBudget.maxEntriesPerLoad, std::int64_t(9000));
    QCOMPARE(saved.logBudget.bytesPerLoad, qint64(3) << 30);
    // A dialog opened on them shows them.
    const LoadLimitsDialog again{saved};
    QCOMPARE(spin(again, "rankTagsFile")->value(), 12);
    QCOMPARE(spin(again, "dumpEntries")->value(), 2500);
    QCOMPARE(spin(again, "dumpEntriesLoad")->value(), 9000);
    QCOMPARE(unit(again, "traceEventsLoad")->value(), 0.5);
    QCOMPARE(unit(again, "dumpBytes")->value(), 0.25);
    // A value that is no budget (hand-edited settings) falls back to the default.
    QSettings().setValue(QStringLiteral("loadLimits/dumpEntries"), QStringLiteral("many"));
    QSettings().setValue(QStringLiteral("loadLimits/rankTagsPerFile"), -3);
    QCOMPARE(LoadLimitsDialog::saved().dumpBudget.maxEntries,
             FlightRecorderReader::Budget().maxEntries);
    QCOMPARE(LoadLimitsDialog::saved().logBudget.rankTagsPerFile,
             LogReader::Budget().rankTagsPerFile);
}

void TestLoadLimitsDialog::restoreDefaults()
{
    ReadOptions options;
    options.logBudget.rankTagsPerLoad = 5;
    options.dumpBudget.maxEntries = 7;
    LoadLimitsDialog dialog{options};
    QCOMPARE(spin(dialog, "dumpEntries")->value(), 7);
    auto* buttons = dialog.findChild<QDialogButtonBox*>();
    QVERIFY(buttons);
    buttons->button(QDialogButtonBox::RestoreDefaults)->click();
    QCOMPARE(spin(dialog, "dumpEntries")->value(), 100'000);
    QCOMPARE(dialog.limits().logBudget.rankTagsPerLoad, LogReader::Budget().rankTagsPerLoad);
}

QTEST_MAIN(TestLoadLimitsDialog)
#include "tst_loadlimitsdialog.moc"
