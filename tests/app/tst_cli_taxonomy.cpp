#include "tests/support/clirun.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTest>

// Runs the real binary: `rankscope taxonomy` is a public contract (ids, counts, exit codes).
class TestCliTaxonomy : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void json();
    void text();
    void walkthroughJson();
    void walkthroughText();
    void node();
    void nodeOfOneRowSaysRow();
    void howToTopicsAreNotNodes();
    void badUsageExitsTwo_data();
    void badUsageExitsTwo();
    void help();
};

static void collect(const QJsonArray& nodes, QHash<QString, QJsonObject>& byId)
{
    for (const QJsonValue& v : nodes) {
        const QJsonObject o = v.toObject();
        byId.insert(o.value(QLatin1String("id")).toString(), o);
        collect(o.value(QLatin1String("children")).toArray(), byId);
    }
}

void TestCliTaxonomy::json()
{
    const CliRun r = runCli({QStringLiteral("taxonomy"), QStringLiteral("--json")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.err.isEmpty());
    QJsonParseError error;
    const QJsonObject doc = QJsonDocument::fromJson(r.out, &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(doc.value(QLatin1String("schema")).toString(), QStringLiteral("rankscope.taxonomy/1"));
    QVERIFY(doc.value(QLatin1String("problems")).toArray().isEmpty());
    const QJsonObject totals = doc.value(QLatin1String("totals")).toObject();
    QCOMPARE(totals.value(QLatin1String("rows")).toInt(), 637);
    QCOMPARE(totals.value(QLatin1String("links")).toInt(), 597);
    QCOMPARE(totals.value(QLatin1String("leaves")).toInt(), 38);

    const QJsonArray stages = doc.value(QLatin1String("nodes")).toArray();
    QCOMPARE(stages.size(), 4);
    QHash<QString, QJsonObject> byId;
    collect(stages, byId);
    int leaves = 0, stageSum = 0;
    for (const QJsonValue& s : stages)
        stageSum += s.toObject().value(QLatin1String("count")).toInt();
    QCOMPARE(stageSum, 637);
    for (const QJsonObject& n : std::as_const(byId)) {
        for (const char* key : {"id", "name", "count", "children", "fix_patterns", "description"})
            QVERIFY2(n.contains(QLatin1String(key)), key);
        const QJsonArray children = n.value(QLatin1String("children")).toArray();
        if (children.isEmpty()) {
            ++leaves;
            QCOMPARE(n.value(QLatin1String("kind")).toString(), QStringLiteral("leaf"));
        } else {
            int sum = 0;
            for (const QJsonValue& c : children)
                sum += c.toObject().value(QLatin1String("count")).toInt();
            QCOMPARE(sum, n.value(QLatin1String("count")).toInt());
        }
        QVERIFY(!n.value(QLatin1String("description"))
                     .toObject()
                     .value(QLatin1String("summary"))
                     .toString()
                     .isEmpty());
    }
    QCOMPARE(leaves, 38);
    QCOMPARE(
        byId.value(QStringLiteral("communication-setup")).value(QLatin1String("count")).toInt(),
        133);
    QCOMPARE(byId.value(QStringLiteral("training-and-evaluation/unexpected-performance/hang"))
                 .value(QLatin1String("count"))
                 .toInt(),
             44);

    const QJsonArray patterns = doc.value(QLatin1String("fix_patterns")).toArray();
    QVERIFY(patterns.size() > 30);
    QSet<QString> patternIds;
    for (const QJsonValue& v : patterns) {
        const QJsonObject p = v.toObject();
        patternIds.insert(p.value(QLatin1String("id")).toString());
        QCOMPARE(p.value(QLatin1String("walkthrough")).toBool(),
                 p.value(QLatin1String("count")).toInt() >= 2);
    }
    QVERIFY(patternIds.contains(QStringLiteral("fix-communication-configuration")));
    // Node-level pattern references resolve to the pattern list.
    for (const QJsonObject& n : std::as_const(byId))
        for (const QJsonValue& v : n.value(QLatin1String("fix_patterns")).toArray())
            QVERIFY(patternIds.contains(v.toObject().value(QLatin1String("id")).toString()));
    QVERIFY(!doc.value(QLatin1String("howto")).toArray().isEmpty());
    QVERIFY(!doc.value(QLatin1String("auto_checks")).toArray().isEmpty());
}

void TestCliTaxonomy::text()
{
    const CliRun r = runCli({QStringLiteral("taxonomy")});
    QCOMPARE(r.exitCode, 0);
    // 133 of the study's 637 rows, all of them distributed-specific.
    QVERIFY(r.out.contains("  communication setup  [communication-setup]  133 (20.9 %, 100.0 %"));
    QVERIFY(
        r.out.contains("      hang  [training-and-evaluation/unexpected-performance/hang]  44"));
    QVERIFY(r.out.contains("fix-communication-configuration *"));
    QVERIFY(r.out.contains("How-to topics (494 questions; not fault nodes"));
}

void TestCliTaxonomy::walkthroughJson()
{
    const CliRun r = runCli({QStringLiteral("taxonomy"), QStringLiteral("--walkthrough"),
                             QStringLiteral("fix-network-setting"), QStringLiteral("--json")});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(doc.value(QLatin1String("schema")).toString(),
             QStringLiteral("rankscope.walkthrough/1"));
    QCOMPARE(doc.value(QLatin1String("pattern")).toString(), QStringLiteral("fix-network-setting"));
    const QJsonArray steps = doc.value(QLatin1String("steps")).toArray();
    QVERIFY(!steps.isEmpty());
    bool hasCheck = false;
    for (const QJsonValue& v : steps) {
        const QJsonObject s = v.toObject();
        for (const char* key : {"title", "why", "how", "by_framework", "good", "bad", "auto_check"})
            QVERIFY2(s.contains(QLatin1String(key)), key);
        hasCheck |= s.value(QLatin1String("auto_check")).isObject();
    }
    QVERIFY(hasCheck);
}

void TestCliTaxonomy::walkthroughText()
{
    const CliRun r = runCli({QStringLiteral("taxonomy"), QStringLiteral("--walkthrough"),
                             QStringLiteral("fix-communication-configuration")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("1. "));
    QVERIFY(r.out.contains("Why: "));
    QVERIFY(r.out.contains("Auto-check: rendezvous_env_consistent"));
}

void TestCliTaxonomy::node()
{
    const QString id = QStringLiteral("training-and-evaluation/program-failure/out-of-memory");
    const CliRun text = runCli({QStringLiteral("taxonomy"), QStringLiteral("--node"), id});
    QCOMPARE(text.exitCode, 0);
    const QByteArray head = QByteArray("out of memory  [") + id.toUtf8() + QByteArray("]");
    QVERIFY(text.out.startsWith(head));
    QVERIFY(text.out.contains("21 fault rows"));
    QVERIFY(text.out.contains("Typical messages:"));
    QVERIFY(text.out.contains("CUDA out of memory"));
    // The frameworks whose messages the leaf's log signatures recognise.
    QVERIFY(text.out.contains("Messages recognised from: "));
    QVERIFY(text.out.contains("NCCL"));
    const CliRun json = runCli({QStringLiteral("taxonomy"), QStringLiteral("--node"),
                                QStringLiteral("communication-setup"), QStringLiteral("--json")});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(doc.value(QLatin1String("schema")).toString(),
             QStringLiteral("rankscope.taxonomy-node/1"));
    QCOMPARE(doc.value(QLatin1String("count")).toInt(), 133);
    QCOMPARE(doc.value(QLatin1String("children")).toArray().size(), 3);
    QStringList setupFrameworks;
    for (const QJsonValue& child : doc.value(QLatin1String("children")).toArray())
        if (child[QLatin1String("id")].toString() ==
            QLatin1String("communication-setup/setup-failure"))
            for (const QJsonValue& f : child[QLatin1String("message_frameworks")].toArray())
                setupFrameworks << f.toString();
    for (const char* f :
         {"Horovod", "Megatron-LM", "NCCL", "PyTorch", "TensorFlow", "torchrun/elastic"})
        QVERIFY2(setupFrameworks.contains(QLatin1String(f)), f);
}

// A leaf of one fault row on one issue: singulars, and the frameworks listed without a trailing
// separator. The leaf is found in the JSON: the first with a count of 1.
void TestCliTaxonomy::nodeOfOneRowSaysRow()
{
    const CliRun all = runCli({QStringLiteral("taxonomy"), QStringLiteral("--json")});
    QHash<QString, QJsonObject> byId;
    collect(QJsonDocument::fromJson(all.out).object().value(QLatin1String("nodes")).toArray(),
            byId);
    QString single;
    for (const QJsonObject& n : std::as_const(byId))
        if (n.value(QLatin1String("count")).toInt() == 1 &&
            n.value(QLatin1String("links")).toInt() == 1)
            single = n.value(QLatin1String("id")).toString();
    QVERIFY(!single.isEmpty());
    const CliRun r = runCli({QStringLiteral("taxonomy"), QStringLiteral("--node"), single});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("\n1 fault row ("), r.out.constData());
    QVERIFY2(r.out.contains(" of the study), 1 issue, "), r.out.constData());
    const QByteArray reported = r.out.mid(r.out.indexOf("Reported on: ")).split('\n').first();
    QVERIFY2(reported.size() > int(qstrlen("Reported on: ")) && !reported.endsWith(';'),
             reported.constData());
    // Several frameworks are separated by "; ".
    const CliRun many = runCli({QStringLiteral("taxonomy"), QStringLiteral("--node"),
                                QStringLiteral("communication-setup")});
    const QByteArray line = many.out.mid(many.out.indexOf("Reported on: ")).split('\n').first();
    QVERIFY2(line.contains("; ") && !line.endsWith(';'), line.constData());
}

// How-to topics are listed by name, not with a bracketed id that reads as a node's, and --node
// says what such an id is.
void TestCliTaxonomy::howToTopicsAreNotNodes()
{
    const CliRun all = runCli({QStringLiteral("taxonomy"), QStringLiteral("--json")});
    QHash<QString, QJsonObject> howTo;
    collect(QJsonDocument::fromJson(all.out).object().value(QLatin1String("howto")).toArray(),
            howTo);
    QVERIFY(howTo.size() > 20);
    const CliRun text = runCli({QStringLiteral("taxonomy")});
    QCOMPARE(text.exitCode, 0);
    for (auto it = howTo.cbegin(); it != howTo.cend(); ++it) {
        QVERIFY2(!text.out.contains(QByteArray("[" + it.key().toUtf8() + "]")),
                 qPrintable(it.key()));
        QVERIFY2(text.out.contains(it.value().value(QLatin1String("name")).toString().toUtf8()),
                 qPrintable(it.key()));
        const CliRun node =
            runCli({QStringLiteral("taxonomy"), QStringLiteral("--node"), it.key()});
        QCOMPARE(node.exitCode, 2);
        QVERIFY2(node.err.contains("is a how-to topic, not a fault node"), node.err.constData());
    }
}

void TestCliTaxonomy::badUsageExitsTwo_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addRow("unknown option")
        << QStringList{QStringLiteral("taxonomy"), QStringLiteral("--bogus")};
    QTest::addRow("positional") << QStringList{QStringLiteral("taxonomy"), QStringLiteral("x")};
    QTest::addRow("missing id") << QStringList{QStringLiteral("taxonomy"),
                                               QStringLiteral("--walkthrough")};
    QTest::addRow("unknown pattern") << QStringList{
        QStringLiteral("taxonomy"), QStringLiteral("--walkthrough"), QStringLiteral("nope")};
    QTest::addRow("unknown node") << QStringList{QStringLiteral("taxonomy"),
                                                 QStringLiteral("--node"), QStringLiteral("hang")};
    QTest::addRow("node and walkthrough") << QStringList{
        QStringLiteral("taxonomy"), QStringLiteral("--node"), QStringLiteral("communication-setup"),
        QStringLiteral("--walkthrough"), QStringLiteral("fix-network-setting")};
    QTest::addRow("pattern without walkthrough") << QStringList{
        QStringLiteral("taxonomy"), QStringLiteral("--walkthrough"), QStringLiteral("use-tmux")};
}

void TestCliTaxonomy::badUsageExitsTwo()
{
    QFETCH(QStringList, args);
    const CliRun r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.startsWith("rankscope: "));
    QVERIFY(r.out.isEmpty());
}

void TestCliTaxonomy::help()
{
    const CliRun top = runCli({QStringLiteral("--help")});
    QVERIFY(top.out.contains("taxonomy"));
    const CliRun r = runCli({QStringLiteral("taxonomy"), QStringLiteral("--help")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("--walkthrough"));
    QVERIFY(r.out.contains("rankscope taxonomy"));
}

QTEST_GUILESS_MAIN(TestCliTaxonomy)
#include "tst_cli_taxonomy.moc"
