#include "model/kb/issuecorpus.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace rankscope;

class TestIssueCorpus : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void seedsFromTheStudy();
    void searchesLabelsAndLinks();
    void importsGitHubJson_data();
    void importsGitHubJson();
    void importsAFolder();
    void failedImportChangesNothing_data();
    void failedImportChangesNothing();
    void unwritablePathIsReported_data();
    void unwritablePathIsReported();
};

static QString importData(const char* name)
{
    return QStringLiteral(RANKSCOPE_TEST_DATA "/classifier/import/") + QLatin1String(name);
}

void TestIssueCorpus::seedsFromTheStudy()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY2(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))), qPrintable(corpus.error()));
    QCOMPARE(corpus.count(QStringLiteral("study")), 597); // distinct links of the 637 fault rows
    QVERIFY(corpus.count(QStringLiteral("howto")) > 400);
    QCOMPARE(corpus.count(QStringLiteral("import")), 0);
    // Reopening finds the schema and does not seed twice.
    IssueCorpus again;
    QVERIFY(again.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QCOMPARE(again.count(QStringLiteral("study")), 597);
}

void TestIssueCorpus::searchesLabelsAndLinks()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    const QList<IssueResult> hang = corpus.search(QStringLiteral("horovod hang"));
    QVERIFY(!hang.isEmpty());
    for (const IssueResult& r : hang)
        QVERIFY(r.link.contains(QLatin1String("horovod")));
    QVERIFY(hang.first().symptoms.join(QLatin1Char(' ')).contains(QLatin1String("hang")));
    QVERIFY(!hang.first().fixPatterns.isEmpty());
    const QList<IssueResult> byNumber = corpus.search(QStringLiteral("horovod issues 100"));
    QVERIFY(!byNumber.isEmpty());
    QCOMPARE(byNumber.first().link,
             QStringLiteral("https://github.com/horovod/horovod/issues/100"));
    QVERIFY(corpus.search(QStringLiteral("   ")).isEmpty());
}

void TestIssueCorpus::importsGitHubJson_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("count");
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("symptom");
    QTest::addRow("rest-api") << importData("rest.json") << 2 << QStringLiteral("allreduce nodes")
                              << QStringLiteral(
                                     "training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("gh-cli") << importData("gh.json") << 1 << QStringLiteral("zerocopy")
                            << QStringLiteral(
                                   "training-and-evaluation/program-failure/segmentation-fault");
}

void TestIssueCorpus::importsGitHubJson()
{
    QFETCH(QString, file);
    QFETCH(int, count);
    QFETCH(QString, query);
    QFETCH(QString, symptom);
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QCOMPARE(corpus.importPath(file), count);
    QCOMPARE(corpus.count(QStringLiteral("import")), count);
    const QList<IssueResult> found = corpus.search(query);
    QVERIFY(!found.isEmpty());
    QCOMPARE(found.first().source, QStringLiteral("import"));
    QVERIFY(!found.first().title.isEmpty());
    QCOMPARE(found.first().symptoms.value(0), symptom);
    // Importing again replaces rather than duplicates.
    QCOMPARE(corpus.importPath(file), count);
    QCOMPARE(corpus.count(QStringLiteral("import")), count);
}

void TestIssueCorpus::importsAFolder()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    const int n = corpus.importPath(QStringLiteral(RANKSCOPE_TEST_DATA "/classifier"));
    QVERIFY(n >= 40);
    const QList<IssueResult> found = corpus.search(QStringLiteral("multi_gpu_model idle"));
    QVERIFY(!found.isEmpty());
    QVERIFY(found.first().link.startsWith(QLatin1String("file://")));
    QVERIFY(found.first().link.endsWith(QLatin1String("keras-one-gpu.md")));
}

void TestIssueCorpus::failedImportChangesNothing_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("message");
    QTest::addRow("malformed-json")
        << QStringLiteral("malformed") << QStringLiteral("not valid JSON");
    QTest::addRow("not-utf8-in-folder") << QStringLiteral("latin1") << QStringLiteral("not UTF-8");
    QTest::addRow("json-object") << QStringLiteral("object") << QStringLiteral("JSON array");
}

void TestIssueCorpus::failedImportChangesNothing()
{
    QFETCH(QString, kind);
    QFETCH(QString, message);
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QString path = importData("malformed.json");
    if (kind == QLatin1String("latin1")) {
        path = dir.filePath(QStringLiteral("reports"));
        QDir().mkpath(path);
        QFile good(path + QStringLiteral("/a.md"));
        QVERIFY(good.open(QIODevice::WriteOnly));
        good.write("Training hangs\nSegmentation fault\n");
        good.close();
        QFile bad(path + QStringLiteral("/b.txt"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("Caf\xe9 training crashes\n");
    } else if (kind == QLatin1String("object")) {
        path = dir.filePath(QStringLiteral("object.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"title": "not an array"})");
    }
    QCOMPARE(corpus.importPath(path), -1);
    QVERIFY2(corpus.error().contains(message), qPrintable(corpus.error()));
    QCOMPARE(corpus.count(QStringLiteral("import")), 0);
}

void TestIssueCorpus::unwritablePathIsReported_data()
{
    QTest::addColumn<bool>("parentIsFile");
    QTest::addRow("parent-is-a-file") << true;
    QTest::addRow("read-only-folder") << false;
}

void TestIssueCorpus::unwritablePathIsReported()
{
    QFETCH(bool, parentIsFile);
    QTemporaryDir dir;
    const QString parent = dir.filePath(QStringLiteral("parent"));
    if (parentIsFile) {
        QFile f(parent);
        QVERIFY(f.open(QIODevice::WriteOnly));
    } else {
        QDir().mkpath(parent);
        QFile::setPermissions(parent, QFileDevice::ReadOwner | QFileDevice::ExeOwner);
    }
    IssueCorpus corpus;
    const bool opened = corpus.open(parent + QStringLiteral("/db.sqlite"));
    QFile::setPermissions(parent,
                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    if (opened && !parentIsFile) QSKIP("running as root: a read-only folder is writable anyway");
    QVERIFY(!opened);
    QVERIFY2(corpus.error().contains(QLatin1String("issue database")), qPrintable(corpus.error()));
}

QTEST_GUILESS_MAIN(TestIssueCorpus)
#include "tst_issuecorpus.moc"
