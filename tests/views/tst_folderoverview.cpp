#include "model/analysis/jobsplit.h"
#include "model/tracesession.h"
#include "tests/support/testfiles.h"
#include "views/folderoverview.h"

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <set>

using namespace rankscope;

class TestFolderOverview : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aRunSetAsideIsNoRankOfTheJob_data();
    void aRunSetAsideIsNoRankOfTheJob();
    void oneRunIsOneTable();
    void factsReadAsWhatTheyAre();
};

namespace {

// The rank a copied file's name gives ("b_rank2.pt.trace.json": 2), -1 for none (a launcher log).
int rankOfName(const QString& name)
{
    static const QRegularExpression rank(QStringLiteral("rank(\\d+)"));
    const QRegularExpressionMatch m = rank.match(name);
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}

} // namespace

// Two real runs' files side by side in one flat folder, as tst_analyzer's
// runsSideBySideAreToldApartByTheirLaunch puts them: "prefixed" the healthy 2-rank run as a_*
// beside the 3-rank straggler run as b_* (both have ranks 0 and 1), "far apart" the healthy run's
// ranks 0, 1 beside rank 2 of a 3-rank run of the next day. The run with fewer ranks is set aside.
// Truth from the files: which run each was copied from, its rank from its name, each run's
// MASTER_PORT from its logs' lines.
void TestFolderOverview::aRunSetAsideIsNoRankOfTheJob_data()
{
    QTest::addColumn<QStringList>("files"); // "run/name", copied as "prefix+name"
    QTest::addColumn<QString>("prefixOfSetAside");
    QTest::addColumn<QString>("setAsideRun");
    const auto list = [](const char* names) { return QString::fromLatin1(names).split(u' '); };
    const QStringList healthy = list("healthy/rank0.log healthy/rank0.pt.trace.json "
                                     "healthy/rank1.log healthy/rank1.pt.trace.json "
                                     "healthy/launcher.log");
    QTest::newRow("prefixed") << healthy + list("straggler/rank0.log straggler/rank0.pt.trace.json "
                                                "straggler/rank1.log straggler/rank1.pt.trace.json "
                                                "straggler/rank2.log straggler/rank2.pt.trace.json "
                                                "straggler/launcher.log")
                              << QStringLiteral("a_") << QStringLiteral("healthy");
    QTest::newRow("far apart")
        << healthy +
               list("hang_timeout_w3_step0/rank2.log hang_timeout_w3_step0/rank2.pt.trace.json")
        << QString() << QStringLiteral("hang_timeout_w3_step0");
}

void TestFolderOverview::aRunSetAsideIsNoRankOfTheJob()
{
    QFETCH(QStringList, files);
    QFETCH(QString, prefixOfSetAside);
    QFETCH(QString, setAsideRun);
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    QTemporaryDir dir;
    std::map<QString, bool> asideByName; // copied name -> it came from setAsideRun
    std::map<bool, std::set<int>> ranksByAside;
    std::map<bool, std::set<QString>> portsByAside;
    for (const QString& file : files) {
        const QString run = file.section(u'/', 0, 0);
        const bool aside = run == setAsideRun;
        // The prefixed row names the analysed run's files b_*, the other row leaves names alone.
        const QString prefix = prefixOfSetAside.isEmpty() ? QString()
                               : aside                    ? prefixOfSetAside
                                                          : QStringLiteral("b_");
        const QString name = prefix + file.section(u'/', 1);
        QFile raw(data + file);
        QVERIFY2(raw.open(QIODevice::ReadOnly), qPrintable(file));
        portsByAside[aside].merge(masterPortsIn(QString::fromUtf8(raw.readAll())));
        QVERIFY(QFile::copy(data + file, dir.filePath(name)));
        asideByName[name] = aside;
        if (rankOfName(name) >= 0) ranksByAside[aside].insert(rankOfName(name));
    }
    // Each run's logs name one port, and the two differ.
    QCOMPARE(portsByAside[false].size(), std::size_t(1));
    QCOMPARE(portsByAside[true].size(), std::size_t(1));
    QVERIFY(*portsByAside[false].begin() != *portsByAside[true].begin());

    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    // The split the load worked out, which the Overview shows.
    const JobSplit& split = session->jobs;
    const std::vector<OverviewRankRow> rows = FolderOverview::rankRows(session->folder, split);
    QVERIFY(!rows.empty());
    // The analysed job's rows come first: they hold its run's files only, one row per rank it
    // has, and no set-aside file counts as one of its ranks.
    const int analysedJob = rows.front().job;
    QVERIFY(analysedJob >= 0);
    std::set<int> analysedRanks;
    std::map<QString, int> rowsOfFile;
    bool analysedRowsDone = false;
    for (const OverviewRankRow& row : rows) {
        const bool aside = row.job != analysedJob;
        QVERIFY2(row.job >= 0, qPrintable(row.files.join(u' ')));
        analysedRowsDone = analysedRowsDone || aside;
        QVERIFY2(aside == analysedRowsDone, "the analysed job's rows come first");
        if (!aside) QVERIFY(analysedRanks.insert(row.rank).second);
        for (const QString& file : row.files) {
            QVERIFY2(asideByName.count(file), qPrintable(file));
            QVERIFY2(asideByName.at(file) == aside, qPrintable(file));
            QCOMPARE(row.rank, rankOfName(file));
            ++rowsOfFile[file];
        }
    }
    QCOMPARE(analysedRanks, ranksByAside[false]);
    // Every file is in one row, but for the analysed job's files of no rank: those are listed
    // with why they have none.
    for (const auto& [name, aside] : asideByName)
        QCOMPARE(rowsOfFile[name], aside || rankOfName(name) >= 0 ? 1 : 0);

    // The page says which job is analysed, how many ranks it has, which files are set aside and
    // the launch line that tells each run apart.
    FolderOverview overview;
    overview.resize(1000, 1300);
    overview.setSession(session);
    const QString page = overview.toPlainText();
    QVERIFY2(
        page.contains(
            QStringLiteral("%1 ranks found in the analysed job").arg(ranksByAside[false].size())),
        qPrintable(page));
    const qsizetype asideCount = std::count_if(asideByName.begin(), asideByName.end(),
                                               [](const auto& f) { return f.second; });
    QVERIFY2(page.contains(QStringLiteral("%1 set aside as another job's").arg(asideCount)),
             qPrintable(page));
    const qsizetype analysedHeading = page.indexOf(QLatin1String(", analysed"));
    const qsizetype asideHeading = page.indexOf(QLatin1String(", set aside as another run"));
    QVERIFY2(analysedHeading >= 0 && asideHeading > analysedHeading, qPrintable(page));
    for (const bool aside : {false, true}) {
        const qsizetype from = aside ? asideHeading : analysedHeading;
        const qsizetype to = aside ? page.size() : asideHeading;
        const QString section = page.mid(from, to - from);
        QVERIFY2(section.contains(QLatin1String("Launched with 127.0.0.1:") +
                                  *portsByAside[aside].begin()),
                 qPrintable(section));
        for (const auto& [name, fileAside] : asideByName)
            if (fileAside == aside && (aside || rankOfName(name) >= 0))
                QVERIFY2(section.contains(name), qPrintable(name + u'\n' + section));
    }
    QVERIFY(overview.grab().toImage().save(
        QStringLiteral(RANKSCOPE_TEST_OUTPUT "/folderoverview-%1.png")
            .arg(QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'-'))));
}

// A folder of one run keeps one table: a row per rank its files' names give, no job headings.
void TestFolderOverview::oneRunIsOneTable()
{
    const QString run = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/straggler");
    const SessionPtr session = loadSession(run);
    QVERIFY(session);
    std::map<int, QStringList> truth;
    for (const QString& name : QDir(run).entryList(QDir::Files))
        if (rankOfName(name) >= 0) truth[rankOfName(name)] << name;
    QCOMPARE(truth.size(), std::size_t(3));
    const std::vector<OverviewRankRow> rows =
        FolderOverview::rankRows(session->folder, session->jobs);
    QCOMPARE(rows.size(), truth.size());
    for (const OverviewRankRow& row : rows) {
        QCOMPARE(row.job, -1);
        QStringList files = row.files;
        files.sort();
        QCOMPARE(files, truth.at(row.rank));
    }
    FolderOverview overview;
    overview.setSession(session);
    const QString page = overview.toPlainText();
    QVERIFY2(page.contains(QLatin1String("3 ranks found, world size 3")), qPrintable(page));
    QVERIFY2(!page.contains(QLatin1String("analysed")), qPrintable(page));
}

// The real HTA cpu_only trace states world size 300 and is rank 34's: the diagnosis lists the
// missing-ranks warning by what it is, not as a symptom "none (a fact …)"; and a folder of one
// file RankScope does not read says the file "holds" nothing it reads.
void TestFolderOverview::factsReadAsWhatTheyAre()
{
    const SessionPtr session =
        loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-real-hta/cpu_only"));
    QVERIFY(session);
    const QString html = FolderOverview::diagnosisHtml(*session);
    QVERIFY2(html.contains(QStringLiteral("missing ranks")), qPrintable(html));
    QVERIFY2(!html.contains(QStringLiteral("a fact about")), qPrintable(html));

    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("plot.png")),
              QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
    const SessionPtr one = loadSession(dir.path());
    QVERIFY(one);
    const QString none = FolderOverview::diagnosisHtml(*one);
    QVERIFY2(none.contains(QStringLiteral("its 1 file holds no trace events")), qPrintable(none));
}

QTEST_MAIN(TestFolderOverview)
#include "tst_folderoverview.moc"
