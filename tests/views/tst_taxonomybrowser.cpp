#include "model/kb/taxonomy.h"
#include "views/taxonomy/taxonomybrowser.h"
#include "views/taxonomy/taxonomyfilterproxy.h"
#include "views/taxonomy/taxonomymodel.h"

#include <QAbstractAxis>
#include <QAbstractBarSeries>
#include <QAbstractItemModelTester>
#include <QBarSet>
#include <QChart>
#include <QLineEdit>
#include <QTest>
#include <QTextBrowser>
#include <QToolTip>
#include <QTreeView>
#include <cstdlib>

using namespace rankscope;

namespace {

int countRows(const QAbstractItemModel* m, const QModelIndex& parent = {})
{
    int n = 0;
    for (int r = 0; r < m->rowCount(parent); ++r)
        n += 1 + countRows(m, m->index(r, 0, parent));
    return n;
}

int countLeaves(const QAbstractItemModel* m, const QModelIndex& parent = {})
{
    int n = 0;
    for (int r = 0; r < m->rowCount(parent); ++r) {
        const QModelIndex i = m->index(r, 0, parent);
        n += i.data(TaxonomyModel::KindRole).toInt() == int(TaxonomyNode::Kind::Leaf) ? 1 : 0;
        n += countLeaves(m, i);
    }
    return n;
}

} // namespace

class TestTaxonomyBrowser : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void modelMirrorsTheTaxonomy();
    void filterNarrowsTheTree_data();
    void filterNarrowsTheTree();
    void leafShowsDescriptionAndOneBarPerFixPattern_data();
    void leafShowsDescriptionAndOneBarPerFixPattern();
    void walkthroughLinkIsOffered();
    void chartFollowsThePalette();
    void chartLabelsAreNotClipped();
    void overviewPageSaysWhatTheChartShows();
    void screenshot();
};

void TestTaxonomyBrowser::modelMirrorsTheTaxonomy()
{
    TaxonomyModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const Taxonomy& t = Taxonomy::instance();
    QCOMPARE(model.rowCount(), int(t.stages().size()));
    QCOMPARE(countRows(&model), int(t.nodes().size()));
    QCOMPARE(countLeaves(&model), int(t.leaves().size()));
    int sum = 0;
    for (int r = 0; r < model.rowCount(); ++r)
        sum += model.index(r, TaxonomyModel::IssuesColumn).data().toInt();
    QCOMPARE(sum, t.rowCount());
    for (const TaxonomyNode& n : t.nodes()) {
        const QModelIndex i = model.indexOfNode(n.id);
        QVERIFY(i.isValid());
        QCOMPARE(i.data(TaxonomyModel::NodeIdRole).toString(), n.id);
        QCOMPARE(i.parent().data(TaxonomyModel::NodeIdRole).toString(), n.parentId);
    }

    TaxonomyFilterProxy proxy;
    QAbstractItemModelTester proxyTester(&proxy,
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    proxy.setFilterText(QStringLiteral("nccl"));
    proxy.setFilterText(QString());
    QCOMPARE(countRows(&proxy), int(t.nodes().size()));
}

void TestTaxonomyBrowser::filterNarrowsTheTree_data()
{
    QTest::addColumn<QString>("text");
    QTest::addRow("name word") << QStringLiteral("hang");
    QTest::addRow("message text") << QStringLiteral("timeout");
    QTest::addRow("two words") << QStringLiteral("out memory");
}

void TestTaxonomyBrowser::filterNarrowsTheTree()
{
    QFETCH(QString, text);
    TaxonomyBrowser browser;
    QAbstractItemModelTester tester(browser.proxy(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    const int all = countRows(browser.proxy());
    const int allLeaves = countLeaves(browser.proxy());
    browser.setFilterText(text);
    const int leaves = countLeaves(browser.proxy());
    QVERIFY(leaves > 0);
    QVERIFY(leaves < allLeaves);
    QVERIFY(countRows(browser.proxy()) < all);
    // Every leaf left matches every word, in its own text or through a matching ancestor.
    const QStringList words = text.split(QLatin1Char(' '));
    std::function<void(const QModelIndex&, QString)> walk = [&](const QModelIndex& parent,
                                                                QString inherited) {
        for (int r = 0; r < browser.proxy()->rowCount(parent); ++r) {
            const QModelIndex i = browser.proxy()->index(r, 0, parent);
            const QString own = i.data(TaxonomyModel::SearchTextRole).toString();
            bool all = true;
            for (const QString& w : words)
                all = all && own.contains(w, Qt::CaseInsensitive);
            const QString carried = all ? QStringLiteral("match") : inherited;
            if (i.data(TaxonomyModel::KindRole).toInt() == int(TaxonomyNode::Kind::Leaf))
                QVERIFY2(!carried.isEmpty(), qPrintable(i.data().toString()));
            walk(i, carried);
        }
    };
    walk({}, QString());
    browser.setFilterText(QStringLiteral("zzzz-no-such-symptom"));
    QCOMPARE(browser.proxy()->rowCount(), 0);
    browser.filterEdit()->clear();
    QCOMPARE(countRows(browser.proxy()), all);
}

void TestTaxonomyBrowser::leafShowsDescriptionAndOneBarPerFixPattern_data()
{
    QTest::addColumn<QString>("id");
    // A spread of leaves: the most and the least reported, and the one with the most patterns.
    const Taxonomy& t = Taxonomy::instance();
    const TaxonomyNode* most = nullptr;
    const TaxonomyNode* least = nullptr;
    const TaxonomyNode* widest = nullptr;
    for (const QString& id : t.leaves()) {
        const TaxonomyNode* n = t.node(id);
        if (!most || n->issueCount > most->issueCount) most = n;
        if (!least || n->issueCount < least->issueCount) least = n;
        if (!widest || n->fixPatterns.size() > widest->fixPatterns.size()) widest = n;
    }
    QTest::addRow("most-reported") << most->id;
    QTest::addRow("least-reported") << least->id;
    QTest::addRow("most-patterns") << widest->id;
    const QStringList stages = t.stages();
    QTest::addRow("stage") << stages.first();
}

void TestTaxonomyBrowser::leafShowsDescriptionAndOneBarPerFixPattern()
{
    QFETCH(QString, id);
    const TaxonomyNode* node = Taxonomy::instance().node(id);
    TaxonomyBrowser browser;
    browser.resize(1200, 800);
    QVERIFY(browser.selectNode(id));
    QCOMPARE(browser.currentNodeId(), id);
    const QString text = browser.detail()->toPlainText();
    QVERIFY(text.contains(node->name));
    if (!node->description.summary.isEmpty()) QVERIFY(text.contains(node->description.summary));
    for (const QString& m : node->description.messages)
        QVERIFY(text.contains(m));
    const int expected =
        std::min<int>(TaxonomyBrowser::kMaxChartBars, int(node->fixPatterns.size()));
    QCOMPARE(browser.chartBarCount(), expected);
    int bars = 0;
    for (QAbstractSeries* s : browser.chart()->series())
        if (auto* b = qobject_cast<QAbstractBarSeries*>(s))
            for (QBarSet* set : b->barSets())
                bars += set->count();
    QCOMPARE(bars, expected);
    if (expected > 0) {
        const QList<QAbstractSeries*> series = browser.chart()->series();
        QBarSet* set = qobject_cast<QAbstractBarSeries*>(series.first())->barSets().first();
        // Ranked: the last bar (drawn on top) is the most frequent pattern.
        QCOMPARE(int(set->at(set->count() - 1)), node->fixPatterns.front().count);
    }
    for (const QString& link : node->exampleLinks)
        QVERIFY(browser.detail()->toHtml().contains(link));
}

void TestTaxonomyBrowser::walkthroughLinkIsOffered()
{
    const Taxonomy& t = Taxonomy::instance();
    for (const QString& id : t.leaves()) {
        if (t.walkthroughsForNode(id).empty()) continue;
        TaxonomyBrowser browser;
        QVERIFY(browser.selectNode(id));
        QVERIFY(browser.detail()->toHtml().contains(QStringLiteral("walkthrough:") +
                                                    t.walkthroughsForNode(id).front()->patternId));
        return;
    }
    QFAIL("no leaf has a walkthrough");
}

void TestTaxonomyBrowser::chartFollowsThePalette()
{
    TaxonomyBrowser browser;
    QVERIFY(browser.selectNode(Taxonomy::instance().leaves().first()));
    QPalette dark = browser.palette();
    dark.setColor(QPalette::Base, QColor(30, 30, 30));
    dark.setColor(QPalette::Text, QColor(230, 230, 230));
    dark.setColor(QPalette::Highlight, QColor(60, 120, 200));
    browser.setPalette(dark);
    QCOMPARE(browser.chart()->backgroundBrush().color(), QColor(30, 30, 30));
    QCOMPARE(browser.chart()->titleBrush().color(), QColor(230, 230, 230));
    for (QAbstractAxis* axis : browser.chart()->axes())
        QCOMPARE(axis->labelsBrush().color(), QColor(230, 230, 230));
    // A node selected after the change is drawn in the same palette.
    QVERIFY(browser.selectNode(Taxonomy::instance().leaves().last()));
    for (QAbstractSeries* s : browser.chart()->series())
        for (QBarSet* set : qobject_cast<QAbstractBarSeries*>(s)->barSets())
            QCOMPARE(set->brush().color(), QColor(60, 120, 200));
}

// The fix-pattern names beside the bars stay inside the chart at the width the Taxonomy tab has
// beside the docks (they ran off its left edge: "tributed API usage (15.8 %)").
void TestTaxonomyBrowser::chartLabelsAreNotClipped()
{
    TaxonomyBrowser browser;
    browser.resize(760, 800);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    QVERIFY(browser.selectNode(QStringLiteral("data-and-model-preparation")));
    QVERIFY(browser.chartBarCount() >= 20);
    QTest::qWait(50);
    auto* view = browser.findChild<QWidget*>(QStringLiteral("fixPatternChart"));
    QVERIFY(view && view->width() < 500);
    const QImage img = view->grab().toImage();
    const QColor background = img.pixelColor(img.width() - 2, img.height() - 2);
    int touching = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < 3; ++x) {
            const QColor c = img.pixelColor(x, y);
            touching += std::abs(c.lightness() - background.lightness()) > 40;
        }
    img.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/taxonomy-chart-narrow.png"));
    QCOMPARE(touching, 0);

    // An elided name is whole in the bar's tooltip (the top bar is the last of the set).
    const QString top = Taxonomy::instance()
                            .fixPattern(Taxonomy::instance()
                                            .node(QStringLiteral("data-and-model-preparation"))
                                            ->fixPatterns.front()
                                            .key)
                            ->name;
    auto* bars = qobject_cast<QAbstractBarSeries*>(browser.chart()->series().value(0));
    QVERIFY(bars && bars->count() == 1);
    QBarSet* set = bars->barSets().front();
    Q_EMIT set->hovered(true, set->count() - 1);
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY2(QToolTip::text().startsWith(top + QLatin1Char(':')), qPrintable(QToolTip::text()));
    Q_EMIT set->hovered(false, set->count() - 1);
}

void TestTaxonomyBrowser::overviewPageSaysWhatTheChartShows()
{
    TaxonomyBrowser browser;
    QVERIFY(browser.currentNodeId().isEmpty());
    QCOMPARE(browser.chartBarCount(), 0);
    QVERIFY(browser.chart()->title().contains(QLatin1String("Select a symptom")));
    QVERIFY(browser.selectNode(Taxonomy::instance().leaves().first()));
    QVERIFY(!browser.chart()->title().contains(QLatin1String("Select a symptom")));
}

void TestTaxonomyBrowser::screenshot()
{
    const Taxonomy& t = Taxonomy::instance();
    QString widest;
    for (const QString& id : t.leaves())
        if (widest.isEmpty() || t.node(id)->fixPatterns.size() > t.node(widest)->fixPatterns.size())
            widest = id;
    TaxonomyBrowser browser;
    browser.resize(1400, 900);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    QVERIFY(browser.selectNode(widest));
    QTest::qWait(50);
    const QImage shot = browser.grab().toImage();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/taxonomybrowser.png")));

    // The same page under a dark palette, for a human to check that nothing stays light.
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(45, 45, 45));
    dark.setColor(QPalette::WindowText, QColor(220, 220, 220));
    dark.setColor(QPalette::Base, QColor(30, 30, 30));
    dark.setColor(QPalette::AlternateBase, QColor(40, 40, 40));
    dark.setColor(QPalette::Text, QColor(220, 220, 220));
    dark.setColor(QPalette::Button, QColor(50, 50, 50));
    dark.setColor(QPalette::ButtonText, QColor(220, 220, 220));
    dark.setColor(QPalette::Highlight, QColor(42, 110, 190));
    dark.setColor(QPalette::HighlightedText, Qt::white);
    dark.setColor(QPalette::Link, QColor(120, 170, 255));
    browser.setPalette(dark);
    QVERIFY(browser.selectNode(widest));
    QTest::qWait(50);
    const QImage darkShot = browser.grab().toImage();
    const QWidget* chartView = browser.findChild<QWidget*>(QStringLiteral("fixPatternChart"));
    const QPoint chartCorner = chartView->mapTo(&browser, QPoint(4, chartView->height() - 4));
    QVERIFY(darkShot.pixelColor(chartCorner).lightness() < 100);
    QVERIFY(darkShot.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/taxonomybrowser-dark.png")));
}

QTEST_MAIN(TestTaxonomyBrowser)
#include "tst_taxonomybrowser.moc"
