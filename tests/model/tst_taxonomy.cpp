#include "model/kb/csvtable.h"
#include "model/kb/fixpatterns.h"
#include "model/kb/slug.h"
#include "model/kb/taxonomy.h"

#include <QFile>
#include <QSet>
#include <QTest>

using namespace rankscope;

// The taxonomy is derived from the study's sheets at load; these tests reconcile what it derives
// with the sheets' own totals and with the study's published counts.
class TestTaxonomy : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void slug_data();
    void slug();
    void csvQuotedFields();
    void csvMalformed_data();
    void csvMalformed();
    void split_data();
    void split();
    void mergesSpellingVariants();
    void studyTotals();
    void stageCounts_data();
    void stageCounts();
    void probabilityIsWholePercent();
    void nodeIdsAndTree();
    void countsRollUp();
    void fixPatternTotals();
    void frameworks_data();
    void frameworks();
    void howTo();
    void descriptionsComplete();
};

static QByteArray resource(const char* name)
{
    QFile f(QStringLiteral(":/taxonomy/") + QLatin1String(name));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void TestTaxonomy::slug_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("slug");
    QTest::addRow("ampersand") << QStringLiteral("package build & import")
                               << QStringLiteral("package-build-and-import");
    QTest::addRow("two ampersands") << QStringLiteral("installation & build failure")
                                    << QStringLiteral("installation-and-build-failure");
    QTest::addRow("slash") << QStringLiteral("scope / context issue")
                           << QStringLiteral("scope-context-issue");
    QTest::addRow("hyphen kept once")
        << QStringLiteral("non-convergence") << QStringLiteral("non-convergence");
    QTest::addRow("case and trim") << QStringLiteral("  Fix distributed API usage!! ")
                                   << QStringLiteral("fix-distributed-api-usage");
    QTest::addRow("runs collapse") << QStringLiteral("a__--  b") << QStringLiteral("a-b");
    QTest::addRow("leading ampersand") << QStringLiteral("& x") << QStringLiteral("and-x");
    QTest::addRow("digits") << QStringLiteral("fix num_worker 2")
                            << QStringLiteral("fix-num-worker-2");
    QTest::addRow("empty") << QString() << QString();
}

void TestTaxonomy::slug()
{
    QFETCH(QString, text);
    QFETCH(QString, slug);
    QCOMPARE(slugify(text), slug);
}

void TestTaxonomy::csvQuotedFields()
{
    const CsvTable t = CsvTable::parse("a,b,c\r\n\"x, y\",\"he said \"\"hi\"\"\",\"two\nlines\"\n"
                                       "1,,3\n\n");
    QVERIFY2(t.isValid(), qPrintable(t.error()));
    QCOMPARE(t.rowCount(), 2);
    QCOMPARE(t.row(0), (QStringList{QStringLiteral("x, y"), QStringLiteral("he said \"hi\""),
                                    QStringLiteral("two\nlines")}));
    QCOMPARE(t.row(1), (QStringList{QStringLiteral("1"), QString(), QStringLiteral("3")}));
    QCOMPARE(t.column(QStringLiteral("c")), 2);
    QCOMPARE(t.column(QStringLiteral("z")), -1);
}

void TestTaxonomy::csvMalformed_data()
{
    QTest::addColumn<QByteArray>("csv");
    QTest::addRow("unterminated quote") << QByteArray("a,b\n\"x,y\n");
    QTest::addRow("quote inside field") << QByteArray("a,b\nx\"y,z\n");
    QTest::addRow("text after quote") << QByteArray("a,b\n\"x\"y,z\n");
    QTest::addRow("ragged row") << QByteArray("a,b\n1,2,3\n");
    QTest::addRow("empty") << QByteArray();
}

void TestTaxonomy::csvMalformed()
{
    QFETCH(QByteArray, csv);
    QVERIFY(!CsvTable::parse(csv).isValid());
}

void TestTaxonomy::split_data()
{
    QTest::addColumn<QString>("label");
    QTest::addColumn<QStringList>("ids");
    QTest::addRow("plain") << QStringLiteral("fix network setting")
                           << QStringList{QStringLiteral("fix-network-setting")};
    QTest::addRow("ampersand") << QStringLiteral("fix dependency version & fix network setting")
                               << QStringList{QStringLiteral("fix-dependency-version"),
                                              QStringLiteral("fix-network-setting")};
    QTest::addRow("spaced slash") << QStringLiteral("fix tensor dtype / fix distributed API usage")
                                  << QStringList{QStringLiteral("fix-tensor-dtype"),
                                                 QStringLiteral("fix-distributed-api-usage")};
    QTest::addRow("three parts")
        << QStringLiteral("fix framework version / fix model structure / fix distributed API usage")
        << QStringList{QStringLiteral("fix-framework-version"),
                       QStringLiteral("fix-model-structure"),
                       QStringLiteral("fix-distributed-api-usage")};
    QTest::addRow("verb inherited") << QStringLiteral("fix dependency version & framework version")
                                    << QStringList{QStringLiteral("fix-dependency-version"),
                                                   QStringLiteral("fix-framework-version")};
    QTest::addRow("other verb") << QStringLiteral(
                                       "install missing dependency & change packaging tool")
                                << QStringList{QStringLiteral("install-missing-dependency"),
                                               QStringLiteral("change-packaging-tool")};
    QTest::addRow("unknown verb kept")
        << QStringLiteral("install missing dependency & run docker in privileged mode")
        << QStringList{QStringLiteral("install-missing-dependency"),
                       QStringLiteral("run-docker-in-privileged-mode")};
    QTest::addRow("unspaced slash is one pattern")
        << QStringLiteral("fix build/install configuration")
        << QStringList{QStringLiteral("fix-build-install-configuration")};
    QTest::addRow("plural variant")
        << QStringLiteral("fix dependency versions & fix framework installation")
        << QStringList{QStringLiteral("fix-dependency-version"),
                       QStringLiteral("fix-framework-installation")};
}

void TestTaxonomy::split()
{
    QFETCH(QString, label);
    QFETCH(QStringList, ids);
    QCOMPARE(Taxonomy::instance().fixPatternIdsOfLabel(label), ids);
}

void TestTaxonomy::mergesSpellingVariants()
{
    // Built from a synthetic list so the rule, not the sheet, is under test.
    const FixPatternCatalog c = FixPatternCatalog::build(
        {QStringLiteral("fix batch size/data partition"),
         QStringLiteral("fix batch size/data partition"),
         QStringLiteral("fix data partition/batch size"), QStringLiteral("fix seeds"),
         QStringLiteral("fix seed"), QStringLiteral("fix seed"),
         QStringLiteral("fix seed and use docker"), QStringLiteral("use docker"),
         QStringLiteral("fix loss and accuracy")});
    QCOMPARE(c.patternIds(QStringLiteral("fix data partition/batch size")),
             QStringList{QStringLiteral("fix-batch-size-data-partition")});
    QCOMPARE(c.patternIds(QStringLiteral("fix seeds")), QStringList{QStringLiteral("fix-seed")});
    QCOMPARE(c.names().value(QStringLiteral("fix-seed")), QStringLiteral("fix seed"));
    // " and " splits only before a verb.
    QCOMPARE(c.patternIds(QStringLiteral("fix seed and use docker")),
             (QStringList{QStringLiteral("fix-seed"), QStringLiteral("use-docker")}));
    QCOMPARE(c.patternIds(QStringLiteral("fix loss and accuracy")),
             QStringList{QStringLiteral("fix-loss-and-accuracy")});
    QCOMPARE(c.labelsOf(QStringLiteral("fix-seed")),
             (QStringList{QStringLiteral("fix seed"), QStringLiteral("fix seed and use docker"),
                          QStringLiteral("fix seeds")}));
}

void TestTaxonomy::studyTotals()
{
    const Taxonomy& t = Taxonomy::instance();
    QCOMPARE(t.rowCount(), 637);
    QCOMPARE(t.linkCount(), 597);
    QCOMPARE(t.stages().size(), 4);
    QCOMPARE(t.leaves().size(), 38);
    QCOMPARE(t.howToRowCount(), 494);

    // And independently of the loader: the leaf counts add up to the rows of the sheet.
    const CsvTable sheet = CsvTable::parse(resource("tosem23_faults.csv"));
    QVERIFY(sheet.isValid());
    QCOMPARE(int(sheet.rowCount()), t.rowCount());
    int sum = 0, dist = 0;
    for (const QString& id : t.leaves()) {
        sum += t.node(id)->issueCount;
        dist += qRound(t.node(id)->distributedShare * t.node(id)->issueCount);
    }
    QCOMPARE(sum, t.rowCount());
    int sheetDist = 0;
    const int cDist = sheet.column(QStringLiteral("distributed_specific"));
    for (qsizetype r = 0; r < sheet.rowCount(); ++r)
        sheetDist += sheet.row(r)[cDist] == QLatin1String("1");
    QCOMPARE(dist, sheetDist);
    QCOMPARE(t.distributedRowCount(), sheetDist);
}

void TestTaxonomy::stageCounts_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("leaves");
    QTest::addColumn<QString>("share"); // rows / 637, worked out by hand
    QTest::addRow("communication setup")
        << QStringLiteral("communication-setup") << 133 << 3 << QStringLiteral("20.9 %");
    QTest::addRow("data & model preparation")
        << QStringLiteral("data-and-model-preparation") << 57 << 14 << QStringLiteral("8.9 %");
    QTest::addRow("package build & import")
        << QStringLiteral("package-build-and-import") << 82 << 2 << QStringLiteral("12.9 %");
    QTest::addRow("training & evaluation")
        << QStringLiteral("training-and-evaluation") << 365 << 19 << QStringLiteral("57.3 %");
}

void TestTaxonomy::stageCounts()
{
    QFETCH(QString, id);
    QFETCH(int, rows);
    QFETCH(int, leaves);
    QFETCH(QString, share);
    const Taxonomy& t = Taxonomy::instance();
    const TaxonomyNode* n = t.node(id);
    QVERIFY(n);
    QCOMPARE(n->kind, TaxonomyNode::Kind::Stage);
    QCOMPARE(n->issueCount, rows);
    int leafCount = 0;
    for (const QString& leaf : t.leaves())
        leafCount += leaf.startsWith(id + QLatin1Char('/'));
    QCOMPARE(leafCount, leaves);
    QCOMPARE(n->studyShare, double(rows) / 637);
    QCOMPARE(shareText(n->studyShare), share);
}

// A probability prints to the whole percent where a share keeps its tenth.
void TestTaxonomy::probabilityIsWholePercent()
{
    QCOMPARE(probabilityText(0.2), QStringLiteral("20 %"));
    QCOMPARE(probabilityText(0.426), QStringLiteral("43 %"));
    QCOMPARE(probabilityText(0.004), QStringLiteral("0 %"));
    QCOMPARE(probabilityText(1.0), QStringLiteral("100 %"));
    QCOMPARE(shareText(0.426), QStringLiteral("42.6 %"));
}

void TestTaxonomy::nodeIdsAndTree()
{
    const Taxonomy& t = Taxonomy::instance();
    for (const char* id : {"communication-setup/setup-failure",
                           "package-build-and-import/installation-and-build-failure",
                           "training-and-evaluation/program-failure/out-of-memory",
                           "training-and-evaluation/unexpected-performance/hang",
                           "data-and-model-preparation/scope-context-issue"})
        QVERIFY2(t.isLeafId(QLatin1String(id)), id);
    QVERIFY(!t.isLeafId(QStringLiteral("training-and-evaluation")));
    QVERIFY(!t.isLeafId(QStringLiteral("no/such/node")));
    QVERIFY(!t.node(QStringLiteral("no/such/node")));
    // "communication error" is two nodes under two stages.
    QVERIFY(t.isLeafId(QStringLiteral("data-and-model-preparation/communication-error")));
    QVERIFY(
        t.isLeafId(QStringLiteral("training-and-evaluation/program-failure/communication-error")));
    QCOMPARE(t.children(QStringLiteral("training-and-evaluation")),
             (QStringList{QStringLiteral("training-and-evaluation/program-failure"),
                          QStringLiteral("training-and-evaluation/unexpected-performance")}));
    // "others" sorts last among its siblings.
    QCOMPARE(t.children(QStringLiteral("training-and-evaluation/program-failure")).last(),
             QStringLiteral("training-and-evaluation/program-failure/others"));
    // The sheet is sorted by source; examples still show more than one framework.
    QSet<QString> hosts;
    for (const QString& link : t.node(QStringLiteral("training-and-evaluation"))->exampleLinks)
        hosts.insert(link.section(QLatin1Char('/'), 0, 4));
    QVERIFY(hosts.size() >= 3);
    for (const TaxonomyNode& n : t.nodes()) {
        QCOMPARE(n.id.isEmpty(), false);
        QCOMPARE(n.kind == TaxonomyNode::Kind::Leaf, n.childIds.isEmpty());
        if (!n.parentId.isEmpty()) QVERIFY(t.children(n.parentId).contains(n.id));
        QVERIFY(n.id.startsWith(n.parentId));
        QVERIFY(!n.exampleLinks.isEmpty());
        QVERIFY(n.exampleLinks.size() <= 5);
    }
}

void TestTaxonomy::countsRollUp()
{
    const Taxonomy& t = Taxonomy::instance();
    for (const TaxonomyNode& n : t.nodes()) {
        if (n.childIds.isEmpty()) continue;
        int rows = 0, maxLinks = 0, sumLinks = 0;
        for (const QString& c : n.childIds) {
            rows += t.node(c)->issueCount;
            sumLinks += t.node(c)->linkCount;
            maxLinks = std::max(maxLinks, t.node(c)->linkCount);
        }
        QCOMPARE(rows, n.issueCount);
        QVERIFY(n.linkCount >= maxLinks && n.linkCount <= sumLinks);
    }
    const TaxonomyNode* hang =
        t.node(QStringLiteral("training-and-evaluation/unexpected-performance/hang"));
    QCOMPARE(hang->issueCount, 44);
    QCOMPARE(t.node(QStringLiteral("communication-setup/setup-failure"))->issueCount, 85);
}

void TestTaxonomy::fixPatternTotals()
{
    const Taxonomy& t = Taxonomy::instance();
    const CsvTable sheet = CsvTable::parse(resource("tosem23_faults.csv"));
    const int cFix = sheet.column(QStringLiteral("fix_pattern"));
    // Every row contributes once to each distinct pattern its label splits into.
    qsizetype expected = 0;
    for (qsizetype r = 0; r < sheet.rowCount(); ++r)
        expected += t.fixPatternIdsOfLabel(sheet.row(r)[cFix]).size();
    qsizetype total = 0;
    QSet<QString> ids;
    for (const FixPattern& p : t.fixPatterns()) {
        total += p.count;
        QCOMPARE(slugify(p.name), p.id);
        QVERIFY(!ids.contains(p.id));
        ids.insert(p.id);
        int perLeaf = 0;
        for (const KeyCount& l : p.leaves) {
            QVERIFY(t.isLeafId(l.key));
            perLeaf += l.count;
        }
        QCOMPARE(perLeaf, p.count);
        QVERIFY(p.linkCount <= p.count);
    }
    QCOMPARE(total, expected);
    QVERIFY(expected > t.rowCount()); // the sheet does have compound labels
    // Per-leaf pattern counts agree with the pattern side.
    int leafSide = 0;
    for (const QString& id : t.leaves())
        for (const KeyCount& k : t.node(id)->fixPatterns)
            leafSide += k.count;
    QCOMPARE(leafSide, int(total));

    // The study's headline patterns, now including their share of compound labels.
    const FixPattern* comm = t.fixPattern(QStringLiteral("fix-communication-configuration"));
    QVERIFY(comm);
    QCOMPARE(comm->count, 74 + 1 + 2 + 1);
    QCOMPARE(t.fixPatterns().front().id, QStringLiteral("fix-dependency-version"));
    QVERIFY(!t.fixPattern(QStringLiteral("fix-dependency-versions")));
    QVERIFY(t.fixPattern(QStringLiteral("fix-batch-size-data-partition")));
    QCOMPARE(t.fixPattern(QStringLiteral("fix-batch-size-data-partition"))->count, 21);
}

void TestTaxonomy::frameworks_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<QStringList>("frameworks");
    QTest::addRow("github") << QStringLiteral("GitHub-pytorch")
                            << QStringList{QStringLiteral("PyTorch")};
    QTest::addRow("so") << QStringLiteral("SO-horovod") << QStringList{QStringLiteral("Horovod")};
    QTest::addRow("two") << QStringLiteral("SO-tensorflow & SO-keras")
                         << QStringList{QStringLiteral("TensorFlow"), QStringLiteral("Keras")};
    QTest::addRow("unknown") << QStringLiteral("GitHub-deepspeed")
                             << QStringList{QStringLiteral("Deepspeed")};
}

void TestTaxonomy::frameworks()
{
    QFETCH(QString, source);
    QFETCH(QStringList, frameworks);
    QCOMPARE(Taxonomy::frameworksOfSource(source), frameworks);
    // Every row names at least one framework, so a stage's framework counts cover its rows.
    const Taxonomy& t = Taxonomy::instance();
    for (const QString& stage : t.stages()) {
        int sum = 0;
        for (const KeyCount& k : t.node(stage)->frameworks)
            sum += k.count;
        QVERIFY(sum >= t.node(stage)->issueCount);
    }
}

void TestTaxonomy::howTo()
{
    const Taxonomy& t = Taxonomy::instance();
    int sum = 0;
    for (const QString& topic : t.howToTopics()) {
        const HowToNode* n = t.howToNode(topic);
        QVERIFY(n);
        sum += n->count;
        int childSum = 0;
        for (const QString& c : n->childIds) {
            QVERIFY(t.howToNode(c));
            QCOMPARE(t.howToNode(c)->parentId, topic);
            childSum += t.howToNode(c)->count;
        }
        QVERIFY(childSum <= n->count);
    }
    QCOMPARE(sum, t.howToRowCount());
    QVERIFY(t.howToNode(QStringLiteral("communication/backend")));
}

void TestTaxonomy::descriptionsComplete()
{
    const Taxonomy& t = Taxonomy::instance();
    QVERIFY2(t.problems().isEmpty(), qPrintable(t.problems().join(QLatin1Char('\n'))));
    for (const TaxonomyNode& n : t.nodes()) {
        QVERIFY2(!n.description.summary.isEmpty(), qPrintable(n.id));
        QVERIFY2(!n.description.symptoms.isEmpty(), qPrintable(n.id));
    }
    const QStringList hangNeighbours =
        t.node(QStringLiteral("training-and-evaluation/unexpected-performance/hang"))
            ->description.seeAlso;
    QVERIFY(hangNeighbours.contains(QStringLiteral("communication-setup/hang-and-timeout")));
    QVERIFY(hangNeighbours.contains(QStringLiteral("data-and-model-preparation/hang-and-timeout")));
    int linked = 0;
    for (const QString& leaf : t.leaves())
        linked += !t.node(leaf)->description.seeAlso.isEmpty();
    QVERIFY(linked >= 30); // most leaves name the neighbours they are confused with
    // Input the loader cannot use is reported, never silently empty.
    const Taxonomy broken = Taxonomy::fromData("source,link\n\"x", "", "{", "[");
    QVERIFY(broken.problems().size() >= 3);
    QCOMPARE(broken.rowCount(), 0);
    const Taxonomy badRef = Taxonomy::fromData(
        resource("tosem23_faults.csv"), resource("tosem23_howto.csv"),
        R"({"nodes": {"communication-setup": {"see_also": ["communication-setup/nope"]}}})",
        resource("walkthroughs.json"));
    QVERIFY(
        badRef.problems().contains(QStringLiteral("descriptions: node 'communication-setup' refers "
                                                  "to unknown node 'communication-setup/nope'")));
}

QTEST_GUILESS_MAIN(TestTaxonomy)
#include "tst_taxonomy.moc"
