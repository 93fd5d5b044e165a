#include "tests/support/clirun.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

// Runs the real binary for `classify` and `issues`: exit codes and documents are the contract.
class TestCliClassify : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void classifyJson();
    void classifyStdinIsUnsure();
    void classifyJsonLines();
    void issuesSearchSuggestsLeaves();
    void issuesSearchOfNoWordsSuggestsNothing_data();
    void issuesSearchOfNoWordsSuggestsNothing();
    void issuesSearchQueryAfterDoubleDash();
    void issuesSearchJsonSaysWhenSomeWordsMatched();
    void classifyText();
    void classifyErrors_data();
    void classifyErrors();
    void classifyAndAnalyzeAgree_data();
    void classifyAndAnalyzeAgree();
    void issuesImportAndSearch();
    void issuesErrors_data();
    void issuesErrors();
};

void TestCliClassify::classifyJson()
{
    const CliRun r =
        runCli({QStringLiteral("classify"),
                QStringLiteral(RANKSCOPE_TEST_DATA "/classifier/ddp-checkpoint-module-prefix.md"),
                QStringLiteral("--json"), QStringLiteral("--top"), QStringLiteral("2")});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(doc[QLatin1String("schema")].toString(), QStringLiteral("rankscope.classification/1"));
    const QJsonArray candidates = doc[QLatin1String("candidates")].toArray();
    // --top 2 still shows three: the ranker never answers with fewer.
    QCOMPARE(candidates.size(), 3);
    QCOMPARE(doc[QLatin1String("unsure")].toBool(), false);
    const QJsonObject best = candidates.first().toObject();
    QCOMPARE(best[QLatin1String("symptom")].toString(),
             QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning"));
    const double score = best[QLatin1String("score")].toDouble();
    QVERIFY(score > 0.5 && score <= 1.0);
    const QJsonObject ev = best[QLatin1String("evidence")].toArray().first().toObject();
    QVERIFY(ev[QLatin1String("line")].toInt() >= 1);
    QVERIFY(!ev[QLatin1String("text")].toString().isEmpty());
    QVERIFY(!ev[QLatin1String("signature")].toString().isEmpty());
    // The words the term model read: the second line's among them (a log signature explains the
    // title and the error lines), sorted, each once.
    QStringList tokens;
    for (const QJsonValue& v : doc[QLatin1String("tokens")].toArray())
        tokens.append(v.toString());
    for (const char* word : {"saved", "wrapped", "plain", "inference", "distributeddataparallel"})
        QVERIFY2(tokens.contains(QLatin1String(word)), word);
    QStringList sorted = tokens;
    sorted.sort();
    sorted.removeDuplicates();
    QCOMPARE(tokens, sorted);
    QVERIFY(best[QLatin1String("terms")].isArray());
    // The term score is the sum of the signed weights of the words listed with it.
    for (const QJsonValue& v : candidates) {
        double termSum = 0.0;
        for (const QJsonValue& t : v[QLatin1String("terms")].toArray()) {
            QVERIFY(tokens.contains(t[QLatin1String("term")].toString()));
            termSum += t[QLatin1String("weight")].toDouble();
        }
        QVERIFY(qAbs(v[QLatin1String("term_score")].toDouble() - termSum) < 1e-9);
    }
    double previous = 1.0, sum = 0.0;
    for (const QJsonValue& v : candidates) {
        const double p = v[QLatin1String("probability")].toDouble();
        QVERIFY(p > 0.0 && p <= previous);
        QVERIFY(v[QLatin1String("base_rate")].toDouble() > 0.0);
        previous = p;
        sum += p;
    }
    QVERIFY(sum <= 1.0 + 1e-3);
    QVERIFY(best[QLatin1String("probability")].toDouble() >=
            doc[QLatin1String("unsure_below")].toDouble());
    // Every leaf: the probabilities are printed unrounded, so they sum to 1 and the tail (below
    // 0.001 here) is not cut to a multiple of 0.001.
    const CliRun all =
        runCli({QStringLiteral("classify"),
                QStringLiteral(RANKSCOPE_TEST_DATA "/classifier/ddp-checkpoint-module-prefix.md"),
                QStringLiteral("--json"), QStringLiteral("--top"), QStringLiteral("100")});
    const QJsonArray leaves =
        QJsonDocument::fromJson(all.out).object()[QLatin1String("candidates")].toArray();
    QVERIFY(leaves.size() >= 30);
    double total = 0.0;
    for (const QJsonValue& v : leaves)
        total += v[QLatin1String("probability")].toDouble();
    QVERIFY(qAbs(total - 1.0) < 1e-9);
    const double last = leaves.last()[QLatin1String("probability")].toDouble();
    QVERIFY(last > 0.0 && last < 0.001);
    QVERIFY(qAbs(last * 1000.0 - std::round(last * 1000.0)) > 1e-6);
}

// --jsonl ranks many reports in one process: one output line per input line, in order, each the
// document --json prints for that report alone; a line that is not a JSON string, a blank one
// too, gets an error object in its place, so output line N answers input line N.
void TestCliClassify::classifyJsonLines()
{
    const QList<QByteArray> reports = {
        "Segmentation fault (core dumped)\n", "epoch 1 done\nepoch 2 done\n",
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n\"quoted\" line\n"};
    QByteArray input;
    for (const QByteArray& r : reports)
        input += QJsonDocument(QJsonArray{QString::fromUtf8(r)})
                     .toJson(QJsonDocument::Compact)
                     .sliced(1)
                     .chopped(1) +
                 "\n";
    input += "\n{\"text\": 1}\n";
    const CliRun batch = runCli({QStringLiteral("classify"), QStringLiteral("--jsonl"),
                                 QStringLiteral("--top"), QStringLiteral("4")},
                                input);
    QCOMPARE(batch.exitCode, 0);
    const QList<QByteArray> lines = batch.out.trimmed().split('\n');
    QCOMPARE(lines.size(), reports.size() + 2);
    for (qsizetype i = 0; i < reports.size(); ++i) {
        const CliRun single =
            runCli({QStringLiteral("classify"), QStringLiteral("-"), QStringLiteral("--json"),
                    QStringLiteral("--top"), QStringLiteral("4")},
                   reports[i]);
        QCOMPARE(single.exitCode, 0);
        const QJsonObject one = QJsonDocument::fromJson(single.out).object();
        const QJsonObject many = QJsonDocument::fromJson(lines[i]).object();
        QVERIFY(!one.isEmpty());
        QCOMPARE(many, one);
        QCOMPARE(many[QLatin1String("candidates")].toArray().size(), 4);
    }
    const QJsonObject blank = QJsonDocument::fromJson(lines[reports.size()]).object();
    QCOMPARE(blank[QLatin1String("error")].toString(),
             QStringLiteral("line 4 is blank, not a JSON string"));
    const QJsonObject error = QJsonDocument::fromJson(lines.last()).object();
    QCOMPARE(error[QLatin1String("error")].toString(),
             QStringLiteral("line 5 is not a JSON string"));
}

// Nothing in the text is evidence: still a ranked guess, said to be one.
void TestCliClassify::classifyStdinIsUnsure()
{
    const CliRun r =
        runCli({QStringLiteral("classify"), QStringLiteral("-"), QStringLiteral("--json")},
               "epoch 1 done\nepoch 2 done\n");
    QCOMPARE(r.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(doc[QLatin1String("unsure")].toBool(), true);
    const QJsonArray candidates = doc[QLatin1String("candidates")].toArray();
    QVERIFY(candidates.size() >= 3);
    for (const QJsonValue& v : candidates)
        QVERIFY(v[QLatin1String("evidence")].toArray().isEmpty());
    const CliRun text = runCli({QStringLiteral("classify")}, "epoch 1 done\n");
    QVERIFY(text.out.startsWith("Unsure:"));
}

void TestCliClassify::classifyText()
{
    const CliRun r = runCli({QStringLiteral("classify")}, "Segmentation fault (core dumped)\n");
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("training-and-evaluation/program-failure/segmentation-fault"));
    QVERIFY(r.out.contains("line 1"));
}

void TestCliClassify::classifyErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addRow("two-files") << QStringList{QStringLiteral("a"), QStringLiteral("b")} << 2;
    QTest::addRow("bad-top") << QStringList{QStringLiteral("--top"), QStringLiteral("x")} << 2;
    QTest::addRow("unknown-option") << QStringList{QStringLiteral("--bogus")} << 2;
    QTest::addRow("json-and-jsonl")
        << QStringList{QStringLiteral("--json"), QStringLiteral("--jsonl")} << 2;
    QTest::addRow("missing-file") << QStringList{QStringLiteral("/nonexistent/report.md")} << 3;
}

void TestCliClassify::classifyErrors()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    const CliRun r = runCli(QStringList{QStringLiteral("classify")} + args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY(r.err.startsWith("rankscope: "));
}

static QProcessEnvironment dbEnv(const QTemporaryDir& dir)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("RANKSCOPE_DB"), dir.filePath(QStringLiteral("issues.sqlite")));
    return env;
}

void TestCliClassify::issuesImportAndSearch()
{
    QTemporaryDir dir;
    const CliRun imported =
        runCli({QStringLiteral("issues"), QStringLiteral("import"),
                QStringLiteral(RANKSCOPE_TEST_DATA "/classifier/import/rest.json")},
               {}, dbEnv(dir));
    QCOMPARE(imported.exitCode, 0);
    QVERIFY(imported.out.contains("Imported 2"));
    const CliRun found = runCli({QStringLiteral("issues"), QStringLiteral("search"),
                                 QStringLiteral("wheel"), QStringLiteral("--json")},
                                {}, dbEnv(dir));
    QCOMPARE(found.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(found.out).object();
    QCOMPARE(doc[QLatin1String("schema")].toString(), QStringLiteral("rankscope.issues/1"));
    const QJsonObject best = doc[QLatin1String("results")].toArray().first().toObject();
    QCOMPARE(best[QLatin1String("link")].toString(),
             QStringLiteral("https://github.com/example/trainer/issues/8"));
    QCOMPARE(best[QLatin1String("title")].toString(),
             QStringLiteral("pip install fails on CUDA 12"));
    QCOMPARE(best[QLatin1String("symptoms")].toArray().first().toString(),
             QStringLiteral("package-build-and-import/installation-and-build-failure"));
    QVERIFY(best[QLatin1String("fix_patterns")].isArray());
    // The study's rows are searchable by their labels and link words.
    const CliRun study =
        runCli({QStringLiteral("issues"), QStringLiteral("search"),
                QStringLiteral("horovod segmentation fault"), QStringLiteral("--json")},
               {}, dbEnv(dir));
    const QJsonArray results =
        QJsonDocument::fromJson(study.out).object()[QLatin1String("results")].toArray();
    QVERIFY(!results.isEmpty());
    QCOMPARE(results.first().toObject()[QLatin1String("source")].toString(),
             QStringLiteral("GitHub-horovod"));
}

void TestCliClassify::issuesErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QByteArray>("message");
    QTest::addRow("no-action") << QStringList{} << 2 << QByteArray("import FILE|DIR");
    QTest::addRow("bad-action") << QStringList{QStringLiteral("list")} << 2
                                << QByteArray("import FILE|DIR");
    QTest::addRow("no-query") << QStringList{QStringLiteral("search")} << 2
                              << QByteArray("needs an argument");
    QTest::addRow("missing-file") << QStringList{QStringLiteral("import"),
                                                 QStringLiteral("/nonexistent.json")}
                                  << 3 << QByteArray("cannot read");
    QTest::addRow("malformed") << QStringList{QStringLiteral("import"),
                                              QStringLiteral(RANKSCOPE_TEST_DATA
                                                             "/classifier/import/malformed.json")}
                               << 3 << QByteArray("not valid JSON");
}

void TestCliClassify::issuesErrors()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QByteArray, message);
    QTemporaryDir dir;
    const CliRun r = runCli(QStringList{QStringLiteral("issues")} + args, {}, dbEnv(dir));
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), r.err.constData());
}

void TestCliClassify::issuesSearchSuggestsLeaves()
{
    QTemporaryDir dir;
    const CliRun r = runCli(
        {QStringLiteral("issues"), QStringLiteral("search"), QStringLiteral("\"zzqx wwvy\"")}, {},
        dbEnv(dir));
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("No issue matched"));
    const QByteArray prefix = "Leaves these words are most likely about: ";
    QVERIFY(r.out.contains(prefix));
    const QList<QByteArray> shown =
        r.out.mid(r.out.indexOf(prefix) + prefix.size()).trimmed().split('\n').first().split(',');
    // The JSON carries the same suggestions.
    const CliRun json = runCli({QStringLiteral("issues"), QStringLiteral("search"),
                                QStringLiteral("\"zzqx wwvy\""), QStringLiteral("--json")},
                               {}, dbEnv(dir));
    QCOMPARE(json.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(json.out).object();
    QVERIFY(doc[QLatin1String("results")].toArray().isEmpty());
    QStringList likely;
    for (const QJsonValue& v : doc[QLatin1String("likely_leaves")].toArray())
        likely << v.toString();
    QStringList text;
    for (const QByteArray& leaf : shown)
        text << QString::fromUtf8(leaf.trimmed());
    QCOMPARE(likely.size(), 3);
    QCOMPARE(likely, text);
}

void TestCliClassify::issuesSearchOfNoWordsSuggestsNothing_data()
{
    QTest::addColumn<QString>("query");
    for (const char* q : {"\"", "*", "()", "-- ..."})
        QTest::addRow("%s", q) << QString::fromLatin1(q);
}

// A query of punctuation only is not searched, and the classifier's ranking of no words (the
// base rates) is no suggestion.
void TestCliClassify::issuesSearchOfNoWordsSuggestsNothing()
{
    QFETCH(QString, query);
    QTemporaryDir dir;
    const CliRun r =
        runCli({QStringLiteral("issues"), QStringLiteral("search"), QStringLiteral("--"), query},
               {}, dbEnv(dir));
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("has no words"), r.out.constData());
    QVERIFY2(!r.out.contains("most likely about"), r.out.constData());
    const CliRun json = runCli({QStringLiteral("issues"), QStringLiteral("search"),
                                QStringLiteral("--json"), QStringLiteral("--"), query},
                               {}, dbEnv(dir));
    QCOMPARE(json.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(json.out).object();
    QVERIFY(doc[QLatin1String("results")].toArray().isEmpty());
    QVERIFY(doc[QLatin1String("likely_leaves")].toArray().isEmpty());
}

// A query starting with '-' follows "--", the Qt command line's end of options, and the help
// says so.
void TestCliClassify::issuesSearchQueryAfterDoubleDash()
{
    QTemporaryDir dir;
    const CliRun help = runCli({QStringLiteral("issues"), QStringLiteral("--help")});
    QVERIFY2(help.out.contains("issues search -- -hang"), help.out.constData());
    const CliRun r =
        runCli({QStringLiteral("issues"), QStringLiteral("search"), QStringLiteral("--json"),
                QStringLiteral("--"), QStringLiteral("-hang")},
               {}, dbEnv(dir));
    QCOMPARE(r.exitCode, 0);
    QVERIFY(!QJsonDocument::fromJson(r.out).object()[QLatin1String("results")].toArray().isEmpty());
}

// The JSON says what the text says above the results: no issue had every word ("NCCL" is in no
// study title), so the results have some of them.
void TestCliClassify::issuesSearchJsonSaysWhenSomeWordsMatched()
{
    QTemporaryDir dir;
    const auto search = [&dir](const char* query) {
        const CliRun r = runCli({QStringLiteral("issues"), QStringLiteral("search"),
                                 QStringLiteral("--json"), QString::fromLatin1(query)},
                                {}, dbEnv(dir));
        return QJsonDocument::fromJson(r.out).object();
    };
    QVERIFY(search("NCCL")[QLatin1String("results")].toArray().isEmpty());
    const QJsonObject some = search("NCCL timeout");
    QVERIFY(!some[QLatin1String("results")].toArray().isEmpty());
    QVERIFY(some[QLatin1String("any_word")].isBool());
    QCOMPARE(some[QLatin1String("any_word")].toBool(), true);
    QCOMPARE(search("timeout")[QLatin1String("any_word")].toBool(true), false);
}

void TestCliClassify::classifyAndAnalyzeAgree_data()
{
    QTest::addColumn<QString>("folder"); // a job folder, or empty for the synthetic one
    QTest::addColumn<int>("rank");       // the rank whose log ends in the exception
    QTest::newRow("IndexError in a real run")
        << QStringLiteral(RANKSCOPE_TEST_DATA "/traces/rank_crash") << 2;
    QTest::newRow("KeyError no signature knows") << QString() << 0;
}

// The leaf `classify` ranks first for a rank's log and the leaf `analyze` gives that rank's crash
// are one decision: the exception the log ends with, which the test finds in the log itself.
void TestCliClassify::classifyAndAnalyzeAgree()
{
    QFETCH(QString, folder);
    QFETCH(int, rank);
    QTemporaryDir dir;
    if (folder.isEmpty()) {
        folder = dir.path();
        QFile r0(dir.filePath(QStringLiteral("rank0.log")));
        QVERIFY(r0.open(QIODevice::WriteOnly));
        r0.write("[rank0]: step 1 loss 2.3\nTraceback (most recent call last):\n"
                 "  File \"train.py\", line 8, in main\n    x = batch[\"features\"]\n"
                 "KeyError: 'features'\n");
        QFile r1(dir.filePath(QStringLiteral("rank1.log")));
        QVERIFY(r1.open(QIODevice::WriteOnly));
        r1.write("[rank1]: step 1 loss 2.3\n[rank1]: step 2 loss 2.2\n");
    }
    const QString log = QDir(folder).filePath(QStringLiteral("rank%1.log").arg(rank));
    QFile f(log);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QString exceptionLine;
    static const QRegularExpression exception(QStringLiteral("^[A-Za-z_.]+(Error|Exception): "));
    for (const QByteArray& line : f.readAll().split('\n'))
        if (exception.match(QString::fromUtf8(line)).hasMatch())
            exceptionLine = QString::fromUtf8(line).trimmed();
    QVERIFY(!exceptionLine.isEmpty());

    const CliRun classified = runCli({QStringLiteral("classify"), log, QStringLiteral("--json")});
    QCOMPARE(classified.exitCode, 0);
    const QJsonObject best = QJsonDocument::fromJson(classified.out)
                                 .object()[QLatin1String("candidates")]
                                 .toArray()
                                 .first()
                                 .toObject();
    QCOMPARE(best[QLatin1String("evidence")].toArray().first()[QLatin1String("text")].toString(),
             exceptionLine);

    const CliRun analyzed = runCli({QStringLiteral("analyze"), folder, QStringLiteral("--json")});
    QCOMPARE(analyzed.exitCode, 0);
    QString crashSymptom;
    for (const QJsonValue& v :
         QJsonDocument::fromJson(analyzed.out).object()[QLatin1String("findings")].toArray()) {
        const QJsonObject finding = v.toObject();
        if (finding[QLatin1String("kind")].toString() == QLatin1String("crash") &&
            finding[QLatin1String("ranks")].toArray() == QJsonArray{rank})
            crashSymptom = finding[QLatin1String("symptom")].toString();
    }
    QVERIFY(!crashSymptom.isEmpty());
    QCOMPARE(best[QLatin1String("symptom")].toString(), crashSymptom);
}

QTEST_GUILESS_MAIN(TestCliClassify)
#include "tst_cliclassify.moc"
