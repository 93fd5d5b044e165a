#include "model/kb/csvtable.h"
#include "model/kb/issuecorpus.h"
#include "model/kb/slug.h"
#include "model/kb/taxonomy.h"
#include "tests/support/issuesheets.h"
#include "tests/support/testfiles.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <sqlite3.h>

using namespace rankscope;
using namespace rankscope::testing;

Q_DECLARE_METATYPE(rankscope::IssueFilter)

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
    void filtersMatchTheSheets_data();
    void filtersMatchTheSheets();
    void facetsComeFromTheData();
    void recordHoldsTheDetails();
    void importReportsProgressAndCancels();
    void importsOneTextReport();
    void importsWhatPeopleHave();
    void numberOnlyIssueLinksTheFile();
    void emptyReportIsRefused_data();
    void emptyReportIsRefused();
    void arrayWithABadEntryNamesIt();
    void invalidJsonSaysWhere();
    void folderNamesLinksAndSubfolders();
    void studyRowsHaveReadableTitles();
    void howToRowsHaveReadableTitles();
    void howToOfAFaultIssueIsKept();
    void migratesSchemaFour();
    void migratesSchemaThree();
    void searchIsTheTablesQuery_data();
    void searchIsTheTablesQuery();
    void matchExpressionKeepsPhrases();
    void migratesSchemaOne();
    void newerSchemaIsRefused();
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
    // The report's job is stuck at the first collective right after init (SeqNum=1), before any
    // step ran: a hang before training, as the watchdog signature's early rule says.
    QTest::addRow("rest-api") << importData("rest.json") << 2 << QStringLiteral("allreduce nodes")
                              << QStringLiteral("data-and-model-preparation/hang-and-timeout");
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
    QCOMPARE(found.first().source, IssueCorpus::kImportedSource);
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
    QTest::addRow("json-object") << QStringLiteral("object")
                                 << QStringLiteral("not a GitHub issue");
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
        // A folder whose only report is unreadable holds no issue.
        path = dir.filePath(QStringLiteral("reports"));
        QDir().mkpath(path);
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

void TestIssueCorpus::filtersMatchTheSheets_data()
{
    QTest::addColumn<IssueFilter>("filter");
    const auto add = [](const char* name, auto change) {
        IssueFilter f;
        change(f);
        QTest::addRow("%s", name) << f;
    };
    add("everything", [](IssueFilter&) {});
    add("framework-horovod", [](IssueFilter& f) { f.framework = QStringLiteral("Horovod"); });
    add("framework-keras", [](IssueFilter& f) { f.framework = QStringLiteral("Keras"); });
    add("source-so-tensorflow", [](IssueFilter& f) { f.source = QStringLiteral("SO-tensorflow"); });
    add("stage-training",
        [](IssueFilter& f) { f.stage = QStringLiteral("training-and-evaluation"); });
    add("stage-how-to", [](IssueFilter& f) { f.stage = IssueCorpus::kHowToStage; });
    add("leaf-hang", [](IssueFilter& f) {
        f.leaf = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    });
    add("fix-pattern-of-the-most-rows",
        [](IssueFilter& f) { f.fixPattern = Taxonomy::instance().fixPatterns().front().id; });
    add("distributed-yes", [](IssueFilter& f) { f.distributed = IssueFilter::Distributed::Yes; });
    add("distributed-no", [](IssueFilter& f) { f.distributed = IssueFilter::Distributed::No; });
    add("text-hang", [](IssueFilter& f) { f.text = QStringLiteral("hang"); });
    add("text-two-words-prefix", [](IssueFilter& f) { f.text = QStringLiteral("horovod versi"); });
    add("text-and-filters", [](IssueFilter& f) {
        f.text = QStringLiteral("timeout");
        f.framework = QStringLiteral("PyTorch");
        f.distributed = IssueFilter::Distributed::Yes;
    });
    add("text-punctuation-only", [](IssueFilter& f) { f.text = QStringLiteral("?!"); });
}

void TestIssueCorpus::filtersMatchTheSheets()
{
    QFETCH(IssueFilter, filter);
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    const QStringList words =
        filter.text.split(QRegularExpression(QStringLiteral("[^A-Za-z0-9]+")), Qt::SkipEmptyParts);
    const int expected = expectedMatches(filter);
    const QList<qint64> ids = corpus.matchingIds(filter);
    QCOMPARE(ids.size(), expected);
    if (filter.text.isEmpty()) QVERIFY(std::is_sorted(ids.begin(), ids.end()));
    const QList<IssueRecord> rows = corpus.records(ids, filter.text);
    QCOMPARE(rows.size(), ids.size());
    for (qsizetype i = 0; i < rows.size(); ++i) {
        QCOMPARE(rows[i].id, ids[i]);
        if (!words.isEmpty())
            QVERIFY2(rows[i].snippet.contains(IssueCorpus::kSnippetOpen), qPrintable(rows[i].link));
    }
}

void TestIssueCorpus::facetsComeFromTheData()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QSet<QString> frameworks, sources, leaves, patterns;
    for (const SheetIssue& s : sheetIssues()) {
        for (const QString& f : s.frameworks)
            frameworks.insert(f);
        sources.insert(s.source);
        leaves.unite(s.symptoms);
        patterns.unite(s.fixPatterns);
    }
    const IssueFacets f = corpus.facets();
    QCOMPARE(QSet<QString>(f.frameworks.begin(), f.frameworks.end()), frameworks);
    QCOMPARE(QSet<QString>(f.sources.begin(), f.sources.end()), sources);
    QCOMPARE(QSet<QString>(f.leaves.begin(), f.leaves.end()), leaves);
    QCOMPARE(QSet<QString>(f.fixPatterns.begin(), f.fixPatterns.end()), patterns);
    QCOMPARE(f.stages, Taxonomy::instance().stages());
    QVERIFY(f.hasHowTo);
    QVERIFY(f.hasDistributedLabels);
    QVERIFY(!f.sources.contains(IssueCorpus::kImportedSource));
    QCOMPARE(corpus.importPath(importData("rest.json")), 2);
    QVERIFY(corpus.facets().sources.contains(IssueCorpus::kImportedSource));
}

void TestIssueCorpus::recordHoldsTheDetails()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QCOMPARE(corpus.importPath(importData("rest.json")), 2);
    IssueFilter filter;
    filter.source = IssueCorpus::kImportedSource;
    filter.text = QStringLiteral("allreduce");
    const QList<qint64> ids = corpus.matchingIds(filter);
    QCOMPARE(ids.size(), 1);
    const std::optional<IssueRecord> r = corpus.record(ids.first(), filter.text);
    QVERIFY(r);
    QCOMPARE(r->link, QStringLiteral("https://github.com/example/trainer/issues/7"));
    QCOMPARE(r->labels, (QStringList{QStringLiteral("bug"), QStringLiteral("distributed")}));
    QVERIFY(r->body.contains(QLatin1String("Watchdog caught collective operation timeout")));
    QVERIFY(!r->candidates.isEmpty());
    QCOMPARE(r->candidates.first().symptom, r->symptoms.first());
    // example/trainer is no framework's own repository; its text is PyTorch's (ProcessGroupNCCL).
    QCOMPARE(r->frameworks, QStringList{QStringLiteral("PyTorch")});
    QVERIFY(!r->distributedSpecific);
    QVERIFY(r->snippet.contains(IssueCorpus::kSnippetOpen + QStringLiteral("allreduce"),
                                Qt::CaseInsensitive));
    // A study issue carries its label rows.
    filter = {};
    filter.text = QStringLiteral("horovod issues 100");
    const QList<IssueRecord> study = corpus.records(corpus.matchingIds(filter));
    const auto hundred = std::find_if(study.begin(), study.end(), [](const IssueRecord& r) {
        return r.link == QLatin1String("https://github.com/horovod/horovod/issues/100");
    });
    QVERIFY(hundred != study.end());
    const std::optional<IssueRecord> s = corpus.record(hundred->id);
    QVERIFY(s);
    QVERIFY(!s->studyLabels.isEmpty());
    QCOMPARE(s->studyLabels.first().symptom, s->symptoms.first());
    QCOMPARE(s->frameworks, QStringList{QStringLiteral("Horovod")});
    QVERIFY(!corpus.record(-5));
}

void TestIssueCorpus::importReportsProgressAndCancels()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    const QString folder = QStringLiteral(RANKSCOPE_TEST_DATA "/classifier");
    const qsizetype files =
        QDir(folder)
            .entryList({QStringLiteral("*.md"), QStringLiteral("*.txt")}, QDir::Files)
            .size();
    QList<qsizetype> done;
    const auto stopAfter = [&](qsizetype limit) {
        return [&done, limit](qsizetype d, qsizetype total) {
            if (total > 0 && d > 0) done << d;
            return d < limit;
        };
    };
    QCOMPARE(corpus.importPath(folder, stopAfter(3)), -1);
    QVERIFY2(corpus.error().contains(QLatin1String("cancelled")), qPrintable(corpus.error()));
    QCOMPARE(corpus.count(QStringLiteral("import")), 0);
    done.clear();
    QCOMPARE(corpus.importPath(folder, stopAfter(files + 1)), int(files));
    QCOMPARE(done.last(), files);
    QVERIFY(std::is_sorted(done.begin(), done.end()));
    QCOMPARE(corpus.count(QStringLiteral("import")), int(files));
}

void TestIssueCorpus::importsOneTextReport()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QCOMPARE(
        corpus.importPath(QStringLiteral(RANKSCOPE_TEST_DATA "/classifier/horovod-segfault.md")),
        1);
    const QList<IssueResult> found = corpus.search(QStringLiteral("segfault"));
    QVERIFY(!found.isEmpty());
    QVERIFY(found.first().link.endsWith(QLatin1String("horovod-segfault.md")));
}

// One issue object as /repos/O/R/issues/N returns it (its "url" the API's, its "html_url" the
// page), an array, Markdown and text, one file that is no issue; the framework from the
// repository, else from the text.
void TestIssueCorpus::importsWhatPeopleHave()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    const QString one = dir.filePath(QStringLiteral("one.json"));
    writeFile(one, R"({"url": "https://api.github.com/repos/pytorch/pytorch/issues/4242",
        "html_url": "https://github.com/pytorch/pytorch/issues/4242", "number": 4242,
        "title": "DDP hangs at the first allreduce", "body": null,
        "labels": [{"name": "oncall: distributed"}]})");
    QCOMPARE(corpus.importPath(one), 1);
    QVERIFY(corpus.skipped().isEmpty());
    IssueFilter byText;
    byText.text = QStringLiteral("first allreduce");
    std::optional<IssueRecord> r = corpus.record(corpus.matchingIds(byText).value(0));
    QVERIFY(r);
    QCOMPARE(r->link, QStringLiteral("https://github.com/pytorch/pytorch/issues/4242"));
    QCOMPARE(r->frameworks, QStringList{QStringLiteral("PyTorch")});
    QCOMPARE(r->labels, QStringList{QStringLiteral("oncall: distributed")});

    const QString folder = dir.filePath(QStringLiteral("reports"));
    QDir().mkpath(folder);
    // Only the API's url: the page link is derived from it.
    writeFile(folder + QStringLiteral("/api.json"),
              R"({"url": "https://api.github.com/repos/horovod/horovod/issues/77",
                  "number": 77, "title": "hvd.init() fails", "body": "mpirun exits"})");
    writeFile(folder + QStringLiteral("/list.json"),
              R"([{"html_url": "https://github.com/acme/trainer/issues/1", "title": "a",
                   "body": "horovodrun -np 2 python train.py\nhvd.init() fails"},
                  {"html_url": "https://github.com/acme/trainer/issues/2", "title": "b",
                   "body": "deepspeed --num_gpus 8 train.py"},
                  {"html_url": "https://github.com/microsoft/DeepSpeed/issues/3", "title": "c",
                   "body": "ZeRO stage 3 loses the optimizer state"},
                  {"html_url": "https://github.com/huggingface/accelerate/issues/4", "title": "d",
                   "body": "the second node never joins"},
                  {"html_url": "https://github.com/acme/trainer/issues/5", "title": "e",
                   "body": "hvd.local_rank() is 0 everywhere, then a division by zero"}])");
    writeFile(folder + QStringLiteral("/report.md"), "# Loss is NaN\nWith tf.distribute.\n");
    writeFile(folder + QStringLiteral("/notes.txt"), "plain words, no framework\n");
    writeFile(folder + QStringLiteral("/config.json"), R"({"lr": 0.1})");
    QCOMPARE(corpus.importPath(folder), 8);
    QCOMPARE(corpus.skipped().size(), 1);
    QVERIFY2(corpus.skipped().first().contains(QLatin1String("config.json")) &&
                 corpus.skipped().first().contains(QLatin1String("not a GitHub issue")),
             qPrintable(corpus.skipped().first()));
    QHash<QString, QStringList> frameworks;
    IssueFilter imported;
    imported.source = IssueCorpus::kImportedSource;
    for (const IssueRecord& rec : corpus.records(corpus.matchingIds(imported)))
        frameworks.insert(rec.link.section(QLatin1Char('/'), -1), rec.frameworks);
    QCOMPARE(frameworks.value(QStringLiteral("77")), QStringList{QStringLiteral("Horovod")});
    QCOMPARE(frameworks.value(QStringLiteral("1")), QStringList{QStringLiteral("Horovod")});
    // A PyTorch-based stack by its own name and as PyTorch, from the text or the repository.
    QCOMPARE(frameworks.value(QStringLiteral("2")),
             (QStringList{QStringLiteral("DeepSpeed"), QStringLiteral("PyTorch")}));
    QCOMPARE(frameworks.value(QStringLiteral("3")),
             (QStringList{QStringLiteral("DeepSpeed"), QStringLiteral("PyTorch")}));
    QCOMPARE(frameworks.value(QStringLiteral("4")),
             (QStringList{QStringLiteral("Accelerate"), QStringLiteral("PyTorch")}));
    // Horovod's local_rank() is not torchrun's LOCAL_RANK, nor a "zero" DeepSpeed's ZeRO.
    QCOMPARE(frameworks.value(QStringLiteral("5")), QStringList{QStringLiteral("Horovod")});
    QCOMPARE(frameworks.value(QStringLiteral("report.md")),
             QStringList{QStringLiteral("TensorFlow")});
    QVERIFY(frameworks.value(QStringLiteral("notes.txt")).isEmpty());
    QVERIFY(frameworks.contains(QStringLiteral("77")));
}

// An issue with a number but no html_url/url links to its file by the file's absolute path, so
// importing that file again from another folder, by another relative path, replaces it.
void TestIssueCorpus::numberOnlyIssueLinksTheFile()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("imp/sub")));
    writeFile(dir.filePath(QStringLiteral("imp/numbered.json")),
              R"({"title": "quuxnumbered", "body": "NCCL error", "number": 6})");
    const QString previous = QDir::currentPath();
    const auto importFrom = [&](const QString& folder, const QString& path) {
        QDir::setCurrent(dir.filePath(folder));
        const int n = corpus.importPath(path);
        QDir::setCurrent(previous);
        return n;
    };
    QCOMPARE(importFrom(QStringLiteral("imp"), QStringLiteral("numbered.json")), 1);
    QCOMPARE(importFrom(QStringLiteral("imp"), QStringLiteral("./numbered.json")), 1);
    QCOMPARE(importFrom(QStringLiteral("imp/sub"), QStringLiteral("../numbered.json")), 1);
    QCOMPARE(importFrom(QStringLiteral("."), QStringLiteral("imp/sub/../numbered.json")), 1);
    QCOMPARE(corpus.count(QStringLiteral("import")), 1);
    const QList<IssueResult> found = corpus.search(QStringLiteral("quuxnumbered"));
    QCOMPARE(found.size(), 1);
    QCOMPARE(found.first().link, QStringLiteral("file://") + QDir(dir.path()).canonicalPath() +
                                     QStringLiteral("/imp/numbered.json#6"));
}

void TestIssueCorpus::emptyReportIsRefused_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("bytes");
    QTest::addRow("empty-md") << QStringLiteral("empty.md") << QByteArray();
    QTest::addRow("blank-txt") << QStringLiteral("blank.txt") << QByteArray(" \n\r\n\t\n");
    QTest::addRow("empty-json") << QStringLiteral("empty.json") << QByteArray();
}

// An empty or blank file holds no report: refused with one message, nothing imported; in a
// folder it is skipped with the same reason.
void TestIssueCorpus::emptyReportIsRefused()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, bytes);
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("reports")));
    const QString file = dir.filePath(QStringLiteral("reports/") + name);
    writeFile(file, bytes);
    QCOMPARE(corpus.importPath(file), -1);
    QCOMPARE(corpus.error(), file + QStringLiteral(": empty file"));
    QCOMPARE(corpus.count(QStringLiteral("import")), 0);
    writeFile(dir.filePath(QStringLiteral("reports/real.md")), "# NCCL error\nat step 3\n");
    QCOMPARE(corpus.importPath(dir.filePath(QStringLiteral("reports"))), 1);
    QCOMPARE(corpus.skipped(), QStringList{file + QStringLiteral(": empty file")});
}

// An array is imported whole or not at all; the message names each bad entry by its place.
void TestIssueCorpus::arrayWithABadEntryNamesIt()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    const QString file = dir.filePath(QStringLiteral("mixed.json"));
    writeFile(file, R"([{"html_url": "https://github.com/acme/t/issues/1", "title": "quuxmixed",
                         "body": "NCCL error"}, {"name": "x"}, 42])");
    QCOMPARE(corpus.importPath(file), -1);
    QVERIFY2(corpus.error().startsWith(file + QStringLiteral(": entry 2 of 3: not a GitHub issue")),
             qPrintable(corpus.error()));
    QVERIFY2(corpus.error().contains(QStringLiteral("; entry 3 of 3: not a JSON object")),
             qPrintable(corpus.error()));
    QVERIFY2(corpus.error().contains(QStringLiteral("none of its 3 entries was imported")),
             qPrintable(corpus.error()));
    QVERIFY(!corpus.error().contains(QStringLiteral("entry 1 ")));
    QCOMPARE(corpus.count(QStringLiteral("import")), 0);
    // Of many bad entries the first three are named and the rest counted.
    const QString many = dir.filePath(QStringLiteral("many.json"));
    writeFile(many, "[1, 2, 3, 4, 5]");
    QCOMPARE(corpus.importPath(many), -1);
    QVERIFY2(corpus.error().contains(QStringLiteral("entry 3 of 5: not a JSON object; 2 more bad "
                                                    "entries (none of its 5 entries")),
             qPrintable(corpus.error()));
}

// Invalid JSON is named with the byte where it breaks (counted from 1), not with the parser's
// exception text.
void TestIssueCorpus::invalidJsonSaysWhere()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    const QByteArray bytes = R"({"title": "x",, "body": "y"})";
    const QString file = dir.filePath(QStringLiteral("invalid.json"));
    writeFile(file, bytes);
    QCOMPARE(corpus.importPath(file), -1);
    QCOMPARE(corpus.error(), QStringLiteral("%1: not valid JSON (error at byte %2)")
                                 .arg(file)
                                 .arg(bytes.indexOf(",,") + 2));
}

// A folder's links are not followed nor its subfolders searched, and each is named with why.
void TestIssueCorpus::folderNamesLinksAndSubfolders()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    const QString folder = dir.filePath(QStringLiteral("reports"));
    QVERIFY(QDir(folder).mkpath(QStringLiteral("sub")));
    writeFile(folder + QStringLiteral("/a.md"), "# NCCL error\nat step 3\n");
    writeFile(folder + QStringLiteral("/sub/f.txt"), "Segmentation fault\n");
    writeFile(folder + QStringLiteral("/notes.log"), "not a report type\n");
    QVERIFY(QFile::link(folder + QStringLiteral("/a.md"), folder + QStringLiteral("/link.json")));
    QCOMPARE(corpus.importPath(folder), 1);
    QCOMPARE(corpus.skipped(),
             (QStringList{folder + QStringLiteral("/link.json: a link, not followed"),
                          folder + QStringLiteral("/sub: a folder, not searched")}));
    // A folder holding only a link holds no issue, and says why.
    const QString links = dir.filePath(QStringLiteral("links"));
    QVERIFY(QDir().mkpath(links));
    QVERIFY(QFile::link(folder + QStringLiteral("/a.md"), links + QStringLiteral("/l.json")));
    QCOMPARE(corpus.importPath(links), -1);
    QCOMPARE(corpus.error(), links + QStringLiteral(" holds no issue: ") + links +
                                 QStringLiteral("/l.json: a link, not followed"));
}

// "horovod #100 · hang · fix batch size/data partition", built here from the sheet.
void TestIssueCorpus::studyRowsHaveReadableTitles()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QFile csv(QStringLiteral(":/taxonomy/tosem23_faults.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const CsvTable sheet = CsvTable::parse(csv.readAll());
    QHash<QString, QPair<QStringList, QStringList>> labels; // link -> leaves, fixes
    for (qsizetype i = 0; i < sheet.rowCount(); ++i) {
        const QStringList& f = sheet.row(i);
        auto& [leaves, fixes] = labels[f[1]];
        if (!leaves.contains(f[5])) leaves << f[5];
        if (!fixes.contains(f[6])) fixes << f[6];
    }
    IssueFilter study;
    study.stage = QStringLiteral("training-and-evaluation");
    int checked = 0;
    for (const IssueRecord& r : corpus.records(corpus.matchingIds(study))) {
        if (r.origin != QLatin1String("study")) continue;
        const auto& [leaves, fixes] = labels.value(r.link);
        const QStringList path = QUrl(r.link).path().split(QLatin1Char('/'), Qt::SkipEmptyParts);
        QVERIFY2(r.title.contains(QLatin1Char('#') + path.value(3)), qPrintable(r.title));
        for (const QString& leaf : leaves)
            QVERIFY2(r.title.contains(leaf), qPrintable(r.title));
        // A label of two fixes ("a & b") lists each once among the issue's other fixes.
        QStringList fixNames;
        for (const QString& fix : fixes)
            for (const QString& part : fix.split(QLatin1Char('&')))
                if (!fixNames.contains(part.trimmed())) fixNames << part.trimmed();
        QCOMPARE(r.title.split(QStringLiteral(" \u00b7 ")).value(2).split(QStringLiteral(", ")),
                 fixNames);
        ++checked;
    }
    QVERIFY(checked > 300);
    const QList<IssueResult> found =
        corpus.search(QStringLiteral("horovod \"fix batch size\" hang"), 1000);
    QStringList links;
    for (const IssueResult& r : found)
        links << r.link;
    QVERIFY(links.contains(QStringLiteral("https://github.com/horovod/horovod/issues/100")));
    QCOMPARE(found.first().title.section(QStringLiteral(" \u00b7 "), 0, 0),
             IssueCorpus::shortReference(found.first().link));
    // A whole word outranks the words it starts: issue 6 before 60, 61 and 666.
    const QString six = QStringLiteral("https://github.com/horovod/horovod/issues/6");
    QVERIFY(labels.contains(six));
    QCOMPARE(corpus.search(QStringLiteral("horovod #6"), 1).value(0).link, six);
    // Its leaf's words find it too.
    QStringList byLeaf;
    for (const IssueResult& r : corpus.search(labels.value(six).first.first(), 1000))
        byLeaf << r.link;
    QVERIFY(byLeaf.contains(six));
}

// "horovod #1006 · how-to · communication › synchronization", built here from the sheet, and
// found by its topic's words.
void TestIssueCorpus::howToRowsHaveReadableTitles()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QFile csv(QStringLiteral(":/taxonomy/tosem23_howto.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const CsvTable sheet = CsvTable::parse(csv.readAll());
    QHash<QString, QStringList> topics; // link -> topic, subtopic
    for (qsizetype i = 0; i < sheet.rowCount(); ++i)
        topics.insert(sheet.row(i)[1], {sheet.row(i)[2], sheet.row(i)[3]});
    IssueFilter howTo;
    howTo.stage = IssueCorpus::kHowToStage;
    int checked = 0;
    for (const IssueRecord& r : corpus.records(corpus.matchingIds(howTo))) {
        QVERIFY2(topics.contains(r.link), qPrintable(r.link));
        if (r.origin == QLatin1String("study")) continue; // howToOfAFaultIssueIsKept
        const QStringList& t = topics.value(r.link);
        const QStringList parts = r.title.split(QStringLiteral(" \u00b7 "));
        QCOMPARE(parts.value(0), IssueCorpus::shortReference(r.link));
        QCOMPARE(parts.value(1), QStringLiteral("how-to"));
        QVERIFY2(parts.value(2).contains(t[0].trimmed()) && parts.value(2).contains(t[1].trimmed()),
                 qPrintable(r.title));
        ++checked;
    }
    QVERIFY(checked > 100);
    const QString link = sheet.row(0)[1];
    QStringList found;
    for (const IssueResult& r :
         corpus.search(QStringLiteral("how-to %1").arg(topics.value(link).value(1)), 100000))
        found << r.link;
    QVERIFY2(found.contains(link), qPrintable(link));
}

// The how-to questions whose link is also a labelled fault issue (found here from the two sheets)
// keep both: the fault labels and every how-to topic, in the record, the title, the how-to filter
// and a search by the topic's words.
void TestIssueCorpus::howToOfAFaultIssueIsKept()
{
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QFile faultsCsv(QStringLiteral(":/taxonomy/tosem23_faults.csv"));
    QFile howToCsv(QStringLiteral(":/taxonomy/tosem23_howto.csv"));
    QVERIFY(faultsCsv.open(QIODevice::ReadOnly) && howToCsv.open(QIODevice::ReadOnly));
    const CsvTable faults = CsvTable::parse(faultsCsv.readAll());
    const CsvTable howTo = CsvTable::parse(howToCsv.readAll());
    QSet<QString> faultLinks, howToLinks;
    for (qsizetype i = 0; i < faults.rowCount(); ++i)
        faultLinks.insert(faults.row(i)[1]);
    QHash<QString, QStringList> bothTopics; // link -> "topic / subtopic" of each how-to row
    for (qsizetype i = 0; i < howTo.rowCount(); ++i) {
        const QStringList& h = howTo.row(i);
        howToLinks.insert(h[1]);
        if (faultLinks.contains(h[1])) bothTopics[h[1]] << h[2] + QStringLiteral(" / ") + h[3];
    }
    QCOMPARE(bothTopics.size(), 5);
    QCOMPARE(corpus.howToQuestionCount(), int(howToLinks.size()));
    IssueFilter howToFilter;
    howToFilter.stage = IssueCorpus::kHowToStage;
    QSet<QString> filtered;
    for (const IssueRecord& r : corpus.records(corpus.matchingIds(howToFilter)))
        filtered.insert(r.link);
    for (auto it = bothTopics.cbegin(); it != bothTopics.cend(); ++it) {
        QVERIFY2(filtered.contains(it.key()), qPrintable(it.key()));
        IssueFilter byLink;
        byLink.text = QStringLiteral("\"%1\"").arg(it.key());
        const QList<IssueRecord> rows = corpus.records(corpus.matchingIds(byLink));
        const auto found = std::find_if(rows.begin(), rows.end(),
                                        [&](const IssueRecord& r) { return r.link == it.key(); });
        QVERIFY2(found != rows.end(), qPrintable(it.key()));
        const std::optional<IssueRecord> r = corpus.record(found->id);
        QVERIFY(r);
        QCOMPARE(r->origin, QStringLiteral("study"));
        QVERIFY(!r->studyLabels.isEmpty());
        QStringList expected = it.value();
        expected.removeDuplicates();
        QCOMPARE(r->howTo, expected);
        for (const QString& topic : expected) {
            const QString name = topic.section(QStringLiteral(" / "), 0, 0);
            const QString sub = topic.section(QStringLiteral(" / "), 1);
            const QString part = sub.isEmpty()
                                     ? QStringLiteral("how-to \u00b7 %1").arg(name)
                                     : QStringLiteral("how-to \u00b7 %1 \u203a %2").arg(name, sub);
            QCOMPARE(r->title.count(part), 1);
            QStringList links;
            for (const IssueResult& hit :
                 corpus.search(QStringLiteral("how-to %1 %2").arg(name, sub), 100000))
                links << hit.link;
            QVERIFY2(links.contains(it.key()), qPrintable(topic));
        }
    }
}

// A database of schema 4, whose fault issues lacked their how-to topics, gains them on open.
void TestIssueCorpus::migratesSchemaFour()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v4.sqlite"));
    int topics = 0;
    {
        IssueCorpus current;
        QVERIFY(current.open(path));
        topics = current.howToQuestionCount();
    }
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    // What schema 4 seeded: no how-to row of a fault issue, nor its part of the title.
    QCOMPARE(
        sqlite3_exec(db,
                     "DELETE FROM howto WHERE issue_id IN "
                     "(SELECT id FROM issue WHERE origin = 'study');"
                     "UPDATE issue SET title = substr(title, 1, instr(title, ' \u00b7 how-to') "
                     "- 1) WHERE origin = 'study' AND instr(title, ' \u00b7 how-to') > 0;"
                     "UPDATE issue_fts SET title = (SELECT title FROM issue "
                     "WHERE id = issue_fts.rowid);"
                     "PRAGMA user_version=4;",
                     nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(db);
    {
        IssueCorpus old;
        QVERIFY2(old.open(path), qPrintable(old.error()));
        QCOMPARE(old.howToQuestionCount(), topics);
        const QList<IssueResult> found = old.search(QStringLiteral("horovod #1555"), 1);
        QCOMPARE(found.value(0).link,
                 QStringLiteral("https://github.com/horovod/horovod/issues/1555"));
        QCOMPARE(found.value(0).title.count(QStringLiteral("how-to")), 1);
    }
}

// A database of schema 3 (how-to rows without titles) gets them on open.
void TestIssueCorpus::migratesSchemaThree()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v3.sqlite"));
    {
        IssueCorpus current;
        QVERIFY(current.open(path));
    }
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db,
                          "UPDATE issue SET title = NULL WHERE origin = 'howto';"
                          "UPDATE issue_fts SET title = NULL WHERE rowid IN "
                          "(SELECT id FROM issue WHERE origin = 'howto');"
                          "PRAGMA user_version=3;",
                          nullptr, nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(db);
    IssueCorpus corpus;
    QVERIFY2(corpus.open(path), qPrintable(corpus.error()));
    IssueFilter howTo;
    howTo.stage = IssueCorpus::kHowToStage;
    const QList<IssueRecord> rows = corpus.records(corpus.matchingIds(howTo));
    QVERIFY(!rows.isEmpty());
    for (const IssueRecord& r : rows)
        QVERIFY2(r.title.contains(QStringLiteral(" \u00b7 how-to \u00b7 ")), qPrintable(r.link));
    QVERIFY(!corpus.search(QStringLiteral("how-to synchronization"), 10).isEmpty());
}

void TestIssueCorpus::searchIsTheTablesQuery_data()
{
    QTest::addColumn<QString>("query");
    for (const char* q : {"NCCL timeout", "nccl", "watchdog", "hang", "\"hang and timeout\"",
                          "horovod #6", "setup fail", "zzzz qqqq"})
        QTest::addRow("%s", q) << QString::fromLatin1(q);
}

// The CLI's search and the Issues tab's table run one query: the same issues, the same order.
void TestIssueCorpus::searchIsTheTablesQuery()
{
    QFETCH(QString, query);
    QTemporaryDir dir;
    IssueCorpus corpus;
    QVERIFY(corpus.open(dir.filePath(QStringLiteral("db.sqlite"))));
    QStringList cli, table;
    for (const IssueResult& r : corpus.search(query, 100000))
        cli << r.link;
    IssueFilter filter;
    filter.text = query;
    for (const IssueRecord& r : corpus.records(corpus.matchingIds(filter)))
        table << r.link;
    QCOMPARE(cli, table);
    if (query == QLatin1String("NCCL timeout")) QVERIFY(!cli.isEmpty()); // "timeout" matches
    if (cli.isEmpty()) QCOMPARE(IssueCorpus::relatedLeaves(query).size(), 3);
}

void TestIssueCorpus::matchExpressionKeepsPhrases()
{
    QCOMPARE(IssueCorpus::matchExpression(QStringLiteral("\"hang and timeout\" nccl")),
             QStringLiteral("\"hang and timeout\" AND (\"nccl\" OR \"nccl\"*)"));
    QCOMPARE(IssueCorpus::matchExpression(QStringLiteral("nccl watch"), true),
             QStringLiteral("(\"nccl\" OR \"nccl\"*) OR (\"watch\" OR \"watch\"*)"));
    QVERIFY(IssueCorpus::matchExpression(QStringLiteral("\"\" ...")).isEmpty());
}

void TestIssueCorpus::migratesSchemaOne()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("v1.sqlite"));
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    const char* v1 =
        "CREATE TABLE issue(id INTEGER PRIMARY KEY, link TEXT UNIQUE NOT NULL, title TEXT, "
        "body TEXT, source TEXT, framework TEXT, origin TEXT NOT NULL, "
        "distributed_specific INTEGER, symptoms TEXT, fix_patterns TEXT);"
        "CREATE TABLE label(issue_id INTEGER, stage TEXT, inner_category TEXT, leaf TEXT, "
        "symptom TEXT, fix_pattern TEXT);"
        "CREATE TABLE howto(issue_id INTEGER, topic TEXT, subtopic TEXT);"
        "CREATE TABLE candidate(issue_id INTEGER, rank INTEGER, symptom TEXT, score REAL);"
        "CREATE VIRTUAL TABLE issue_fts USING fts5(title, body, labels, link);"
        "INSERT INTO issue(link, source, framework, origin) VALUES"
        " ('https://github.com/horovod/horovod/issues/1', 'GitHub-horovod', 'horovod', 'study'),"
        " ('https://github.com/pytorch/pytorch/issues/2', 'import', '', 'import');"
        "PRAGMA user_version=1;";
    QCOMPARE(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    IssueCorpus corpus;
    QVERIFY2(corpus.open(path), qPrintable(corpus.error()));
    const QList<IssueRecord> rows = corpus.records(corpus.matchingIds({}));
    QCOMPARE(rows.size(), 2);
    QCOMPARE(rows[0].frameworks, QStringList{QStringLiteral("Horovod")});
    QCOMPARE(rows[1].source, IssueCorpus::kImportedSource);
    QCOMPARE(rows[1].frameworks, QStringList{QStringLiteral("PyTorch")});
    IssueCorpus again;
    QVERIFY(again.open(path));
    QCOMPARE(again.count(QStringLiteral("import")), 1);
}

void TestIssueCorpus::newerSchemaIsRefused()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("future.sqlite"));
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    IssueCorpus corpus;
    QVERIFY(!corpus.open(path));
    QVERIFY(!corpus.isOpen());
    QVERIFY2(corpus.error().contains(QLatin1String("newer")), qPrintable(corpus.error()));
    QVERIFY(corpus.matchingIds({}).isEmpty());
    QCOMPARE(corpus.count(QStringLiteral("study")), 0);
    QVERIFY(corpus.search(QStringLiteral("hang")).isEmpty());
    QVERIFY(corpus.facets().sources.isEmpty());
    QCOMPARE(corpus.importPath(importData("rest.json")), -1);
}

QTEST_GUILESS_MAIN(TestIssueCorpus)
#include "tst_issuecorpus.moc"
