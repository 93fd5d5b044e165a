#include "app/cli.h"
#include "app/mainwindow.h"
#include "model/kb/issueimporter.h"
#include "model/kb/symptomclassifier.h"
#include "tests/support/issuesheets.h"
#include "views/issues/classificationmodel.h"
#include "views/issues/issuebrowser.h"
#include "views/issues/issuetablemodel.h"
#include "views/taxonomy/taxonomybrowser.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScopeGuard>
#include <QSet>
#include <QSignalSpy>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTextStream>
#include <QTreeView>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

using namespace rankscope;
using namespace rankscope::testing;

class TestIssueBrowser : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tableModelPassesTheTester();
    void filtersAndSearchCountWhatTheSheetsSay_data();
    void filtersAndSearchCountWhatTheSheetsSay();
    void combosComeFromTheData();
    void shortReference_data();
    void shortReference();
    void headersFitTheirColumns();
    void filtersWrapAndShowTheirWholeText_data();
    void filtersWrapAndShowTheirWholeText();
    void naturalCompare_data();
    void naturalCompare();
    void defaultOrderCountsIssueNumbersUp();
    void headerClickSortsEveryMatch_data();
    void headerClickSortsEveryMatch();
    void issueColumnSortsNumbersAndIsRestored();
    void filterChangeKeepsTheOrder_data();
    void filterChangeKeepsTheOrder();
    void reimportedReportIsOrderedByItsNewTitle();
    void noMatchSaysWhy();
    void searchFindsWhatTheCliFinds_data();
    void searchFindsWhatTheCliFinds();
    void someWordsOnlySaySoAsTheCliDoes_data();
    void someWordsOnlySaySoAsTheCliDoes();
    void detailShowsTheIssueAndLinksItsLeaf();
    void classifyBoxRanksTheKnownSymptom_data();
    void classifyBoxRanksTheKnownSymptom();
    void importShowsProgressAndTheImportedRows();
    void importCanBeCancelled_data();
    void importCanBeCancelled();
    void mainWindowWiresTheTab();
    void detailIsReadableOnANarrowPage_data();
    void detailIsReadableOnANarrowPage();
    void screenshot();

private:
    QTemporaryDir m_dir;
};

namespace {

// Many GitHub issues in one REST-style array: enough classification work that progress is seen
// and a cancel lands mid-import.
QString writeIssues(const QString& dir, int count)
{
    nlohmann::json list = nlohmann::json::array();
    for (int i = 0; i < count; ++i)
        list.push_back(
            {{"html_url", "https://github.com/example/bulk/issues/" + std::to_string(i)},
             {"number", i},
             {"title", "Training hangs at allreduce on node " + std::to_string(i)},
             {"body", "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective "
                      "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600012 "
                      "milliseconds before timing out.\nSegmentation fault (core dumped)\n"},
             {"labels", {{{"name", "bug"}}}}});
    const QString path = dir + QStringLiteral("/bulk.json");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(QByteArray::fromStdString(list.dump()));
    return path;
}

void fetchAll(IssueTableModel* model)
{
    while (model->canFetchMore({}))
        model->fetchMore({});
}

QList<qint64> idsOf(IssueTableModel* model)
{
    fetchAll(model);
    QList<qint64> ids;
    for (int r = 0; r < model->rowCount(); ++r)
        ids << model->idAt(r);
    return ids;
}

// The first pair of neighbours whose `column` texts are out of order ("" when none) once every
// match is fetched; `sign` 1 for ascending, -1 for descending. `differ` says whether any two
// differ, i.e. whether the order was really put to the test.
QString misorderedRows(IssueTableModel* model, int column, int sign, bool* differ = nullptr)
{
    fetchAll(model);
    const auto shown = [&](int row) { return model->index(row, column).data().toString(); };
    if (differ) *differ = false;
    for (int r = 1; r < model->rowCount(); ++r) {
        const int c = IssueTableModel::naturalCompare(shown(r - 1), shown(r));
        if (c * sign > 0) return shown(r - 1) + QLatin1String(" | ") + shown(r);
        if (differ && c != 0) *differ = true;
    }
    return {};
}

// Clicks a column's header as the user does (the table must be shown).
void clickHeader(QTableView* table, int column)
{
    QHeaderView* header = table->horizontalHeader();
    const QPoint at(header->sectionViewportPosition(column) + header->sectionSize(column) / 2,
                    header->height() / 2);
    QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, at);
}

} // namespace

void TestIssueBrowser::tableModelPassesTheTester()
{
    IssueCorpus corpus;
    QVERIFY(corpus.open(m_dir.filePath(QStringLiteral("tester.sqlite"))));
    IssueTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setCorpus(&corpus);
    QVERIFY(model.matchCount() > IssueTableModel::kBatchRows); // lazy: not all rows at once
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(model.canFetchMore({}));
    model.fetchMore({});
    QCOMPARE(model.rowCount(), IssueTableModel::kBatchRows);
    IssueFilter f;
    f.text = QStringLiteral("hang");
    model.setFilter(f);
    fetchAll(&model);
    QCOMPARE(model.rowCount(), model.matchCount());
    QVERIFY(!model.index(0, IssueTableModel::MatchColumn)
                 .data(IssueTableModel::SnippetHtmlRole)
                 .toString()
                 .isEmpty());
    QVERIFY(model.index(0, IssueTableModel::MatchColumn)
                .data(IssueTableModel::SnippetHtmlRole)
                .toString()
                .contains(QLatin1String("<b>")));
    const int last = model.matchCount() - 1;
    QCOMPARE(model.rowOfId(model.idAt(last)), last);

    ClassificationModel classification;
    QAbstractItemModelTester tester2(&classification,
                                     QAbstractItemModelTester::FailureReportingMode::QtTest);
    classification.setCandidates(SymptomClassifier::instance().classify(
        "NCCL error: unhandled system error\nWatchdog caught collective operation timeout\n"));
    QVERIFY(classification.rowCount() > 0);
    QVERIFY(classification.rowCount(classification.index(0, 0)) > 0);
    // A candidate ranked by its words alone: they are its evidence, in one child row.
    Candidate byTerms;
    byTerms.symptom =
        QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    byTerms.termScore = 0.7;
    byTerms.terms = {{QStringLiteral("slow"), 1.0},
                     {QStringLiteral("throughput"), 0.5},
                     {QStringLiteral("nccl"), -0.8}};
    classification.setCandidates({byTerms});
    const QModelIndex candidate = classification.index(0, 0);
    QCOMPARE(classification.rowCount(candidate), 1);
    QCOMPARE(classification.index(0, ClassificationModel::EvidenceColumn).data().toString(),
             QStringLiteral("terms +1.50: slow, throughput; -0.80: nccl"));
    QCOMPARE(
        classification.index(0, ClassificationModel::SymptomColumn, candidate).data().toString(),
        QStringLiteral("terms"));
    QCOMPARE(classification.index(0, ClassificationModel::ScoreColumn, candidate).data().toString(),
             QStringLiteral("0.70"));
    QCOMPARE(
        classification.index(0, ClassificationModel::EvidenceColumn, candidate).data().toString(),
        QStringLiteral("+1.50: slow, throughput; -0.80: nccl"));
    classification.setCandidates({});
    QCOMPARE(classification.rowCount(), 0);
}

void TestIssueBrowser::filtersAndSearchCountWhatTheSheetsSay_data()
{
    QTest::addColumn<int>("filter");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("text");
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("nothing") << -1 << QString() << QString();
    QTest::addRow("framework") << int(IssueBrowser::FrameworkFilter) << QStringLiteral("PyTorch")
                               << QString();
    QTest::addRow("source") << int(IssueBrowser::SourceFilter) << QStringLiteral("GitHub-keras")
                            << QString();
    QTest::addRow("stage") << int(IssueBrowser::StageFilter)
                           << QStringLiteral("package-build-and-import") << QString();
    QTest::addRow("how-to") << int(IssueBrowser::StageFilter) << IssueCorpus::kHowToStage
                            << QString();
    QTest::addRow("leaf") << int(IssueBrowser::LeafFilter) << hang << QString();
    QTest::addRow("fix-pattern") << int(IssueBrowser::FixPatternFilter)
                                 << Taxonomy::instance().fixPatterns().front().id << QString();
    QTest::addRow("distributed") << int(IssueBrowser::DistributedFilter) << QStringLiteral("yes")
                                 << QString();
    QTest::addRow("search") << -1 << QString() << QStringLiteral("versio");
    QTest::addRow("search-and-leaf")
        << int(IssueBrowser::LeafFilter) << hang << QStringLiteral("horovod");
}

void TestIssueBrowser::filtersAndSearchCountWhatTheSheetsSay()
{
    QFETCH(int, filter);
    QFETCH(QString, value);
    QFETCH(QString, text);
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("filters.sqlite"))));
    const int all = browser.model()->matchCount();
    if (filter >= 0) QVERIFY(browser.setFilterValue(IssueBrowser::Filter(filter), value));
    browser.setSearchText(text);
    const int expected = expectedMatches(browser.currentFilter());
    QCOMPARE(browser.model()->matchCount(), expected);
    QCOMPARE(
        browser.countLabel()->text(),
        (expected == 1 ? QStringLiteral("%1 issue") : QStringLiteral("%1 issues")).arg(expected));
    if (filter >= 0 || !text.isEmpty()) QVERIFY(expected < all);
    QVERIFY(expected > 0);
    fetchAll(browser.model());
    QCOMPARE(browser.model()->rowCount(), expected);
    // The first match is selected and shown.
    QVERIFY(browser.model()->rowOfId(browser.currentIssueId()) >= 0);
}

void TestIssueBrowser::combosComeFromTheData()
{
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("combos.sqlite"))));
    QSet<QString> frameworks, leaves;
    for (const SheetIssue& s : sheetIssues()) {
        for (const QString& f : s.frameworks)
            frameworks.insert(f);
        leaves.unite(s.symptoms);
    }
    const auto values = [](QComboBox* c) {
        QSet<QString> out;
        for (int i = 1; i < c->count(); ++i)
            out.insert(c->itemData(i).toString());
        return out;
    };
    QCOMPARE(values(browser.filterCombo(IssueBrowser::FrameworkFilter)), frameworks);
    QCOMPARE(values(browser.filterCombo(IssueBrowser::LeafFilter)), leaves);
    QVERIFY(browser.filterCombo(IssueBrowser::LeafFilter)->itemData(0).toString().isEmpty());
    QVERIFY(!values(browser.filterCombo(IssueBrowser::SourceFilter))
                 .contains(IssueCorpus::kImportedSource));
}

void TestIssueBrowser::shortReference_data()
{
    QTest::addColumn<QString>("link");
    QTest::addColumn<QString>("shown");
    QTest::newRow("same owner and repo")
        << QStringLiteral("https://github.com/horovod/horovod/issues/100")
        << QStringLiteral("horovod #100");
    QTest::newRow("case") << QStringLiteral("https://github.com/PyTorch/pytorch/issues/7")
                          << QStringLiteral("pytorch #7");
    QTest::newRow("owner and repo")
        << QStringLiteral("https://github.com/keras-team/keras/issues/12")
        << QStringLiteral("keras-team/keras #12");
    QTest::newRow("stack overflow")
        << QStringLiteral("https://stackoverflow.com/questions/5512/how-to")
        << QStringLiteral("Stack Overflow #5512");
    QTest::newRow("local") << QStringLiteral("file:///tmp/r/report.md")
                           << QStringLiteral("report.md");
    QTest::newRow("local by number")
        << QStringLiteral("file:///tmp/r/issues.json#6") << QStringLiteral("issues.json #6");
}

void TestIssueBrowser::shortReference()
{
    QFETCH(QString, link);
    QFETCH(QString, shown);
    QCOMPARE(IssueCorpus::shortReference(link), shown);
}

// Every column is wide enough for its title and the sort arrow; the Issue column for the
// study's longest references, so the issue number is never elided away.
void TestIssueBrowser::headersFitTheirColumns()
{
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("widths.sqlite"))));
    const QHeaderView* header = browser.table()->horizontalHeader();
    const QFontMetrics fm = header->fontMetrics();
    for (int c = 0; c < IssueTableModel::ColumnCount - 1; ++c) {
        const QString title = browser.model()->headerData(c, Qt::Horizontal).toString();
        QVERIFY2(header->sectionSize(c) >= fm.horizontalAdvance(title) + 3 * fm.averageCharWidth(),
                 qPrintable(title));
    }
    // The classifier's ranking beside it: "Probability" whole, not "Probab".
    const auto* ranking = browser.findChild<QTreeView*>(QStringLiteral("classificationView"));
    QVERIFY(ranking);
    const QFontMetrics rankingFont = ranking->header()->fontMetrics();
    for (int c = 0; c < ClassificationModel::ColumnCount - 1; ++c) {
        const QString title = ranking->model()->headerData(c, Qt::Horizontal).toString();
        QVERIFY2(ranking->header()->sectionSize(c) >=
                     rankingFont.horizontalAdvance(title) + 3 * rankingFont.averageCharWidth(),
                 qPrintable(title));
    }
    const QFontMetrics cells = browser.table()->fontMetrics();
    for (const char* ref : {"tensorflow #12345", "keras-team/keras #1234"})
        QVERIFY2(browser.table()->columnWidth(IssueTableModel::IssueColumn) >=
                     cells.horizontalAdvance(QString::fromLatin1(ref)) +
                         2 * cells.averageCharWidth(),
                 ref);
}

void TestIssueBrowser::filtersWrapAndShowTheirWholeText_data()
{
    QTest::addColumn<QSize>("window");
    QTest::addRow("1280") << QSize(1280, 800);
    QTest::addRow("1024") << QSize(1024, 768);
}

// In the main window, with the docks beside the tab, every filter lies inside the tab's table
// side, none overlaps another or the table, and each shows its whole text: the filters wrap
// onto more lines rather than cut "Distributed or not" or a long chosen value.
void TestIssueBrowser::filtersWrapAndShowTheirWholeText()
{
    QFETCH(QSize, window);
    qputenv("RANKSCOPE_DB", m_dir.filePath(QStringLiteral("wrap.sqlite")).toUtf8());
    const auto unset = qScopeGuard([] { qunsetenv("RANKSCOPE_DB"); });
    MainWindow main;
    main.resize(window);
    main.show();
    QVERIFY(QTest::qWaitForWindowExposed(&main));
    IssueBrowser* issues = main.issueBrowser();
    main.pages()->setCurrentWidget(issues);
    QVERIFY2(issues->corpus().isOpen(), qPrintable(issues->error()));
    const auto check = [&]() -> QString {
        QStringList wrong;
        QRect filters;
        for (int f = 0; f < IssueBrowser::FilterCount; ++f) {
            QComboBox* combo = issues->filterCombo(IssueBrowser::Filter(f));
            const QString name = combo->currentText();
            if (!combo->parentWidget()->rect().contains(combo->geometry()))
                wrong << name + QLatin1String(": outside its parent");
            QStyleOptionComboBox option;
            option.initFrom(combo);
            option.editable = false;
            option.currentText = name;
            option.rect = combo->rect();
            const QRect field = combo->style()->subControlRect(QStyle::CC_ComboBox, &option,
                                                               QStyle::SC_ComboBoxEditField, combo);
            if (combo->fontMetrics().horizontalAdvance(name) > field.width() - 2)
                wrong << name + QLatin1String(": text cut off");
            for (int g = 0; g < f; ++g)
                if (combo->geometry().intersects(
                        issues->filterCombo(IssueBrowser::Filter(g))->geometry()))
                    wrong << name + QLatin1String(": overlaps another filter");
            filters |= combo->geometry();
        }
        if (filters.bottom() >= issues->table()->geometry().top())
            wrong << QStringLiteral("the filters overlap the table");
        return wrong.join(QLatin1String("; "));
    };
    QTRY_COMPARE(check(), QString());
    // A long chosen value widens its filter and the others move along.
    QComboBox* leaf = issues->filterCombo(IssueBrowser::LeafFilter);
    int longest = 0;
    for (int i = 1; i < leaf->count(); ++i)
        if (leaf->itemText(i).size() > leaf->itemText(longest).size()) longest = i;
    leaf->setCurrentIndex(longest);
    QTRY_COMPARE(check(), QString());
}

void TestIssueBrowser::naturalCompare_data()
{
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::addColumn<int>("order");
    QTest::newRow("numbers") << QStringLiteral("horovod/horovod #20")
                             << QStringLiteral("horovod/horovod #100") << -1;
    QTest::newRow("years") << QStringLiteral("2019") << QStringLiteral("2023") << -1;
    QTest::newRow("leading zeros") << QStringLiteral("#007") << QStringLiteral("#7") << 0;
    QTest::newRow("words first") << QStringLiteral("pytorch/pytorch #5")
                                 << QStringLiteral("horovod/horovod #900") << 1;
    QTest::newRow("case") << QStringLiteral("Keras") << QStringLiteral("keras") << 0;
    QTest::newRow("prefix") << QStringLiteral("no") << QStringLiteral("no, yes") << -1;
    QTest::newRow("empty first") << QString() << QStringLiteral("a") << -1;
}

void TestIssueBrowser::naturalCompare()
{
    QFETCH(QString, a);
    QFETCH(QString, b);
    QFETCH(int, order);
    QCOMPARE(IssueTableModel::naturalCompare(a, b), order);
    QCOMPARE(IssueTableModel::naturalCompare(b, a), -order);
}

// Before any header is clicked the table is in issue order, numbers counted up ("horovod #20"
// before "horovod #100"), not in the study CSV's order (its links sorted as text, #1009 before
// #101); a search lists the best match first.
void TestIssueBrowser::defaultOrderCountsIssueNumbersUp()
{
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("default.sqlite"))));
    QCOMPARE(browser.table()->horizontalHeader()->sortIndicatorSection(), -1);
    QCOMPARE(browser.model()->sortColumn(), -1);
    bool differ = false;
    const QString wrong = misorderedRows(browser.model(), IssueTableModel::IssueColumn, 1, &differ);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    QVERIFY(differ);
    QCOMPARE(browser.model()->rowCount(), browser.corpus().count(QStringLiteral("study")) +
                                              browser.corpus().count(QStringLiteral("howto")));
    // The first row is selected and shown.
    QCOMPARE(browser.currentIssueId(), browser.model()->idAt(0));

    browser.setSearchText(QStringLiteral("hang"));
    QVERIFY(browser.model()->matchCount() > 1);
    QCOMPARE(idsOf(browser.model()), browser.corpus().matchingIds(browser.currentFilter()));
}

void TestIssueBrowser::headerClickSortsEveryMatch_data()
{
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("filter");
    QTest::addColumn<QString>("value");
    for (int c = 0; c < IssueTableModel::MatchColumn; ++c)
        QTest::addRow("column %d", c) << c << QString() << -1 << QString();
    QTest::addRow("issue, searching, one framework")
        << int(IssueTableModel::IssueColumn) << QStringLiteral("hang")
        << int(IssueBrowser::FrameworkFilter) << QStringLiteral("PyTorch");
    QTest::addRow("leaf, distributed-specific")
        << int(IssueTableModel::LeafColumn) << QString() << int(IssueBrowser::DistributedFilter)
        << QStringLiteral("yes");
    QTest::addRow("relevance") << int(IssueTableModel::MatchColumn) << QStringLiteral("version")
                               << -1 << QString();
}

// A click on a header sorts all matches (not only the fetched batches) by what the column shows,
// with numbers in order; a second click reverses; a third goes back to the default order (by
// issue, or by relevance while searching). Search and filters keep the sort and still count what
// the sheets say.
void TestIssueBrowser::headerClickSortsEveryMatch()
{
    QFETCH(int, column);
    QFETCH(QString, text);
    QFETCH(int, filter);
    QFETCH(QString, value);
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("sort.sqlite"))));
    QAbstractItemModelTester tester(browser.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    browser.resize(1400, 800);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    if (filter >= 0) QVERIFY(browser.setFilterValue(IssueBrowser::Filter(filter), value));
    browser.setSearchText(text);
    const QList<qint64> unsorted = idsOf(browser.model());
    QCOMPARE(unsorted.size(), expectedMatches(browser.currentFilter()));
    QVERIFY(unsorted.size() > IssueTableModel::kBatchRows || filter >= 0 || !text.isEmpty());

    const auto misordered = [&](int sign, bool* differ = nullptr) -> QString {
        const QString wrong = misorderedRows(browser.model(), column, sign, differ);
        return browser.model()->rowCount() != unsorted.size() ? QStringLiteral("rows lost") : wrong;
    };

    const qint64 reading = browser.currentIssueId();
    QVERIFY(reading > 0);
    clickHeader(browser.table(), column);
    QCOMPARE(browser.model()->sortColumn(), column);
    QCOMPARE(browser.model()->sortOrder(), Qt::AscendingOrder);
    if (column == IssueTableModel::MatchColumn) {
        // Best match first: the order the search ranked them in.
        QCOMPARE(idsOf(browser.model()), unsorted);
    } else {
        bool differ = false;
        const QString wrong = misordered(1, &differ);
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
        QVERIFY(differ);
        if (column != IssueTableModel::IssueColumn) QVERIFY(idsOf(browser.model()) != unsorted);
    }
    // The issue being read stays selected.
    QCOMPARE(browser.currentIssueId(), reading);
    QCOMPARE(browser.model()->idAt(browser.table()->currentIndex().row()), reading);

    clickHeader(browser.table(), column);
    QCOMPARE(browser.model()->sortOrder(), Qt::DescendingOrder);
    if (column == IssueTableModel::MatchColumn) {
        QList<qint64> reversed(unsorted.rbegin(), unsorted.rend());
        QCOMPARE(idsOf(browser.model()), reversed);
    } else {
        const QString wrong = misordered(-1);
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }
    // The sort holds while the search or the filters change.
    browser.setSearchText(text + QStringLiteral(" "));
    QCOMPARE(browser.model()->sortColumn(), column);
    if (column != IssueTableModel::MatchColumn) QCOMPARE(misordered(-1), QString());

    clickHeader(browser.table(), column);
    QCOMPARE(browser.model()->sortColumn(), -1);
    QCOMPARE(idsOf(browser.model()), unsorted);
}

// The study's issues are named "owner/repo #N": sorted by the Issue column, N counts up within
// a repository (a text sort would put #1009 before #101).
void TestIssueBrowser::issueColumnSortsNumbersAndIsRestored()
{
    QByteArray state;
    QList<qint64> order;
    {
        IssueBrowser browser;
        QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("sortstate.sqlite"))));
        browser.table()->sortByColumn(IssueTableModel::IssueColumn, Qt::DescendingOrder);
        order = idsOf(browser.model());
        int previous = std::numeric_limits<int>::max();
        QString repo;
        int checked = 0;
        for (int r = 0; r < browser.model()->rowCount(); ++r) {
            const QString ref =
                browser.model()->index(r, IssueTableModel::IssueColumn).data().toString();
            const QString thisRepo = ref.section(QLatin1String(" #"), 0, 0);
            bool ok = false;
            // "horovod #6 · hang · fix batch size/data partition": the number ends at a space.
            const int n =
                ref.section(QLatin1String(" #"), 1).section(QLatin1Char(' '), 0, 0).toInt(&ok);
            if (!ok) continue;
            if (thisRepo == repo) {
                QVERIFY2(n <= previous, qPrintable(ref));
                ++checked;
            }
            repo = thisRepo;
            previous = n;
        }
        QVERIFY(checked > 500);
        state = browser.saveState();
    }
    IssueBrowser browser;
    browser.restoreState(state);
    QCOMPARE(browser.table()->horizontalHeader()->sortIndicatorSection(),
             int(IssueTableModel::IssueColumn));
    QCOMPARE(browser.table()->horizontalHeader()->sortIndicatorOrder(), Qt::DescendingOrder);
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("sortstate.sqlite"))));
    QCOMPARE(idsOf(browser.model()), order);
}

void TestIssueBrowser::filterChangeKeepsTheOrder_data()
{
    QTest::addColumn<int>("column");
    QTest::addColumn<int>("order");
    QTest::addRow("default") << -1 << int(Qt::AscendingOrder);
    QTest::addRow("issue, descending")
        << int(IssueTableModel::IssueColumn) << int(Qt::DescendingOrder);
    QTest::addRow("leaf") << int(IssueTableModel::LeafColumn) << int(Qt::AscendingOrder);
    QTest::addRow("fix pattern, descending")
        << int(IssueTableModel::FixPatternColumn) << int(Qt::DescendingOrder);
}

// A filter narrows the rows and never reorders them: its matches come in the order they have
// without it, in the default order and under a header's sort alike, and clearing it brings back
// the same rows in the same order.
void TestIssueBrowser::filterChangeKeepsTheOrder()
{
    QFETCH(int, column);
    QFETCH(int, order);
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("filterorder.sqlite"))));
    if (column >= 0) browser.table()->sortByColumn(column, Qt::SortOrder(order));
    QCOMPARE(browser.model()->sortColumn(), column);
    const QList<qint64> unfiltered = idsOf(browser.model());
    QCOMPARE(unfiltered.size(), browser.corpus().count(QStringLiteral("study")) +
                                    browser.corpus().count(QStringLiteral("howto")));
    // The filter's matches, in the unfiltered order, are what the table shows; `what` names the
    // filter in the failure message.
    const auto keepsTheOrder = [&](const char* what) {
        const QList<qint64> matching = browser.corpus().matchingIds(browser.currentFilter());
        const QSet<qint64> pass(matching.cbegin(), matching.cend());
        QList<qint64> expected;
        for (qint64 id : unfiltered)
            if (pass.contains(id)) expected << id;
        const QList<qint64> shown = idsOf(browser.model());
        if (shown != expected) qWarning("%s: not the unfiltered order", what);
        return shown == expected && expected.size() > 1 && expected.size() < unfiltered.size();
    };
    QVERIFY(browser.setFilterValue(IssueBrowser::FrameworkFilter, QStringLiteral("PyTorch")));
    QVERIFY(keepsTheOrder("PyTorch"));
    QVERIFY(browser.setFilterValue(IssueBrowser::DistributedFilter, QStringLiteral("yes")));
    QVERIFY(keepsTheOrder("PyTorch, distributed-specific"));
    browser.filterCombo(IssueBrowser::FrameworkFilter)->setCurrentIndex(0);
    QVERIFY(keepsTheOrder("distributed-specific"));
    browser.filterCombo(IssueBrowser::DistributedFilter)->setCurrentIndex(0);
    QCOMPARE(idsOf(browser.model()), unfiltered);
}

// Importing a report again replaces the earlier copy, and the newest copy takes back the id of
// the one it replaced: the table orders it by the title it has now, not the one it had.
void TestIssueBrowser::reimportedReportIsOrderedByItsNewTitle()
{
    QTemporaryDir dir;
    const QString report = dir.filePath(QStringLiteral("report.json"));
    const auto importTitled = [&](IssueBrowser& browser, const char* title) {
        QFile f(report);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
        f.write(QByteArray::fromStdString(
            nlohmann::json::array({{{"html_url", "https://github.com/example/one/issues/1"},
                                    {"title", title},
                                    {"body", "NCCL watchdog timeout on rank 1"}}})
                .dump()));
        f.close();
        QSignalSpy finished(browser.importer(), &IssueImporter::finished);
        return browser.importPath(report) && finished.wait(60000);
    };
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(dir.filePath(QStringLiteral("reimport.sqlite"))));
    QVERIFY(importTitled(browser, "zzz sorts after every study issue"));
    const qint64 first = browser.model()->idAt(0);
    browser.filterCombo(IssueBrowser::SourceFilter)->setCurrentIndex(0);
    QCOMPARE(idsOf(browser.model()).last(), first);
    QVERIFY(importTitled(browser, "aaa sorts before every study issue"));
    const qint64 second = browser.model()->idAt(0);
    QCOMPARE(second, first); // the same id, under another title
    browser.filterCombo(IssueBrowser::SourceFilter)->setCurrentIndex(0);
    QCOMPARE(browser.model()->idAt(0), second);
    const QString wrong = misorderedRows(browser.model(), IssueTableModel::IssueColumn, 1);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
}

void TestIssueBrowser::noMatchSaysWhy()
{
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("nomatch.sqlite"))));
    browser.setSearchText(QStringLiteral("qqzzxxunlikely"));
    QCOMPARE(browser.model()->matchCount(), 0);
    QCOMPARE(browser.currentIssueId(), qint64(0));
    QVERIFY(browser.detail()->toPlainText().contains(QLatin1String("No issue matches")));
    QVERIFY(browser.detail()->toPlainText().contains(QLatin1String("qqzzxxunlikely")));
    // It suggests the leaves the words are most likely about, each a link to its page.
    const QStringList related = IssueCorpus::relatedLeaves(QStringLiteral("qqzzxxunlikely"));
    QCOMPARE(related.size(), 3);
    const QString html = browser.detail()->toHtml();
    for (const QString& leaf : related)
        QVERIFY2(html.contains(QStringLiteral("node:") + leaf), qPrintable(leaf));
}

// The words that found nothing in the tab while the CLI found 20: now one query for both.
void TestIssueBrowser::searchFindsWhatTheCliFinds_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("inStudyTitles"); // a word of the study's titles (leaf, fix, link)
    for (const char* q :
         {"NCCL timeout", "horovod hang", "horovod #6", "\"hang and timeout\"", "setup fail"})
        QTest::addRow("%s", q) << QString::fromLatin1(q) << true;
    for (const char* q : {"nccl", "watchdog", "qqzzxxunlikely"})
        QTest::addRow("%s", q) << QString::fromLatin1(q) << false;
}

void TestIssueBrowser::searchFindsWhatTheCliFinds()
{
    QFETCH(QString, text);
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("same.sqlite"))));
    browser.setSearchText(text);
    fetchAll(browser.model());
    QStringList shown;
    for (int row = 0; row < browser.model()->rowCount(); ++row)
        shown << browser.model()->recordAt(row)->link;
    QStringList cli;
    for (const IssueResult& r : browser.corpus().search(text, 100000))
        cli << r.link;
    QCOMPARE(shown, cli);
    // The study's titles are built from its labels and links: their words find issues, others
    // (the study keeps no issue text) find none and the page suggests leaves instead.
    QFETCH(bool, inStudyTitles);
    QCOMPARE(!shown.isEmpty(), inStudyTitles);
    if (!inStudyTitles)
        QVERIFY(browser.detail()->toPlainText().contains(QLatin1String("most likely about")));
    if (text == QLatin1String("horovod #6"))
        QCOMPARE(shown.first(), QStringLiteral("https://github.com/horovod/horovod/issues/6"));
}

// "NCCL timeout" listed the issues that mention only "timeout" (the study's titles never say
// "NCCL") as if they matched both words, and said nothing. The tab says so above the rows, in
// the words `rankscope issues search` prints; a query whose every word matches says nothing.
void TestIssueBrowser::someWordsOnlySaySoAsTheCliDoes_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("alone"); // the one word of `text` that issues have
    QTest::addRow("NCCL timeout") << QStringLiteral("NCCL timeout") << QStringLiteral("timeout");
    QTest::addRow("timeout") << QStringLiteral("timeout") << QString();
}

void TestIssueBrowser::someWordsOnlySaySoAsTheCliDoes()
{
    QFETCH(QString, text);
    QFETCH(QString, alone);
    const QString path = m_dir.filePath(QStringLiteral("anyword.sqlite"));
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(path));
    browser.setSearchText(text);
    fetchAll(browser.model());
    QStringList shown;
    for (int row = 0; row < browser.model()->rowCount(); ++row)
        shown << browser.model()->recordAt(row)->link;
    QVERIFY(!shown.isEmpty());
    const bool someWords = !alone.isEmpty();
    if (someWords) {
        // No issue has the other word at all: the rows are the ones word's issues.
        const QString other = QString(text).remove(alone).trimmed();
        QVERIFY(browser.corpus().search(other, 100000).isEmpty());
        QStringList withAlone;
        for (const IssueResult& r : browser.corpus().search(alone, 100000))
            withAlone << r.link;
        QCOMPARE(QSet<QString>(shown.cbegin(), shown.cend()),
                 QSet<QString>(withAlone.cbegin(), withAlone.cend()));
    }
    QCOMPARE(!browser.anyWordNote()->isHidden(), someWords);

    qputenv("RANKSCOPE_DB", path.toUtf8());
    const auto unset = qScopeGuard([] { qunsetenv("RANKSCOPE_DB"); });
    QString out, err;
    QTextStream outStream(&out), errStream(&err);
    QCOMPARE(runIssuesCommand({QStringLiteral("issues"), QStringLiteral("search"), text}, outStream,
                              errStream),
             0);
    outStream.flush();
    QCOMPARE(out.split(QLatin1Char('\n')).contains(browser.anyWordNote()->text()), someWords);
}

void TestIssueBrowser::detailShowsTheIssueAndLinksItsLeaf()
{
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("detail.sqlite"))));
    browser.setSearchText(QStringLiteral("horovod issues 100"));
    fetchAll(browser.model());
    int row = -1;
    for (int r = 0; r < browser.model()->rowCount(); ++r)
        if (browser.model()->recordAt(r)->link ==
            QLatin1String("https://github.com/horovod/horovod/issues/100"))
            row = r;
    QVERIFY(row >= 0);
    QVERIFY(browser.selectIssue(browser.model()->idAt(row)));
    const QString html = browser.detail()->toHtml();
    QVERIFY(html.contains(QLatin1String("https://github.com/horovod/horovod/issues/100")));
    const IssueRecord* r = browser.model()->recordAt(row);
    QVERIFY(html.contains(QStringLiteral("node:") + r->symptoms.first()));
    QSignalSpy node(&browser, &IssueBrowser::nodeRequested);
    Q_EMIT browser.detail()->anchorClicked(QUrl(QStringLiteral("node:") + r->symptoms.first()));
    QCOMPARE(node.size(), 1);
    QCOMPARE(node.first().first().toString(), r->symptoms.first());
    // Activating the leaf cell asks for the same node.
    Q_EMIT browser.table()->activated(browser.model()->index(row, IssueTableModel::LeafColumn));
    QCOMPARE(node.size(), 2);
    QCOMPARE(node.last().first().toString(), r->symptoms.first());
}

void TestIssueBrowser::classifyBoxRanksTheKnownSymptom_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("symptom");
    QTest::addRow("nccl-watchdog-timeout")
        << QStringLiteral("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught "
                          "collective operation timeout: WorkNCCL(SeqNum=4117, OpType=ALLREDUCE, "
                          "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
                          "milliseconds before timing out.")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // The same timeout on the group's first collective: the group never came up.
    QTest::addRow("nccl-watchdog-timeout-first-collective")
        << QStringLiteral("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught "
                          "collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, "
                          "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
                          "milliseconds before timing out.")
        << QStringLiteral("data-and-model-preparation/hang-and-timeout");
    QTest::addRow("segfault")
        << QStringLiteral("Segfault in zerocopy collective\nSegmentation fault (core dumped) when "
                          "calling all_gather")
        << QStringLiteral("training-and-evaluation/program-failure/segmentation-fault");
    QTest::addRow("no-evidence") << QStringLiteral("the nightly job printed its usual summary")
                                 << QString();
}

void TestIssueBrowser::classifyBoxRanksTheKnownSymptom()
{
    QFETCH(QString, text);
    QFETCH(QString, symptom);
    IssueBrowser browser;
    QSignalSpy done(&browser, &IssueBrowser::classified);
    browser.classifyEdit()->setPlainText(text);
    QTest::mouseClick(browser.classifyButton(), Qt::LeftButton);
    QVERIFY(!browser.classifyButton()->isEnabled() || done.size() == 1);
    QVERIFY(done.size() == 1 || done.wait(10000));
    ClassificationModel* m = browser.classificationModel();
    QVERIFY(m->rowCount() >= 3); // always a ranking
    QVERIFY(m->index(0, 0).data(ClassificationModel::ScoreRole).toDouble() > 0);
    QVERIFY(browser.classifyButton()->isEnabled());
    // Probabilities in whole percent, worked out here from the model's raw figure.
    const auto percent = [](double p) { return QString::number(std::lround(100.0 * p)); };
    const double best = m->index(0, 0).data(ClassificationModel::ScoreRole).toDouble();
    QCOMPARE(m->index(0, ClassificationModel::ScoreColumn).data().toString(),
             percent(best) + QStringLiteral(" %"));
    if (symptom.isEmpty()) {
        QVERIFY2(browser.classificationVerdict()->text().startsWith(
                     QStringLiteral("Unsure: no candidate reaches %1 %.")
                         .arg(percent(SymptomClassifier::instance().ranking().unsureBelow))),
                 qPrintable(browser.classificationVerdict()->text()));
        // No line is evidence: the only children a candidate may have are the row of the words
        // its term model weighed and the row of the labelled reports most like this one, in
        // that order.
        const QModelIndex top = m->index(0, 0);
        QStringList children;
        for (int row = 0; row < m->rowCount(top); ++row)
            children.append(
                m->index(row, ClassificationModel::SymptomColumn, top).data().toString());
        QVERIFY2(QStringList({QStringLiteral("terms"), QStringLiteral("similar reports")})
                     .join(QLatin1Char(','))
                     .contains(children.join(QLatin1Char(','))),
                 qPrintable(children.join(QLatin1Char(','))));
        return;
    }
    QCOMPARE(m->index(0, 0).data(ClassificationModel::SymptomIdRole).toString(), symptom);
    QVERIFY(m->rowCount(m->index(0, 0)) > 0); // the evidence lines
    QCOMPARE(browser.classificationVerdict()->text(),
             QStringLiteral("Most likely %1 (%2 %).")
                 .arg(IssueTableModel::leafLabel(symptom), percent(best)));
    QSignalSpy node(&browser, &IssueBrowser::nodeRequested);
    Q_EMIT browser.classificationView()->activated(m->index(0, 0));
    QCOMPARE(node.size(), 1);
    QCOMPARE(node.first().first().toString(), symptom);
}

void TestIssueBrowser::importShowsProgressAndTheImportedRows()
{
    QTemporaryDir dir;
    const QString file = writeIssues(dir.path(), 120);
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(dir.filePath(QStringLiteral("import.sqlite"))));
    QSignalSpy progress(browser.importer(), &IssueImporter::progressChanged);
    QSignalSpy finished(browser.importer(), &IssueImporter::finished);
    QVERIFY(browser.importPath(file));
    QVERIFY(!browser.importProgress()->isHidden());
    QVERIFY(!browser.cancelImportButton()->isHidden());
    QVERIFY(!browser.importPath(file)); // one at a time
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.first().first().toInt(), 120);
    QVERIFY(progress.size() > 1);
    QCOMPARE(progress.last().at(1).toInt(), 120);
    QVERIFY(browser.importProgress()->isHidden());
    QCOMPARE(browser.filterCombo(IssueBrowser::SourceFilter)->currentData().toString(),
             IssueCorpus::kImportedSource);
    QCOMPARE(browser.model()->matchCount(), 120);
    QCOMPARE(browser.model()->index(0, IssueTableModel::SourceColumn).data().toString(),
             IssueCorpus::kImportedSource);
    QVERIFY(!browser.model()->index(0, IssueTableModel::LeafColumn).data().toString().isEmpty());
    QVERIFY(browser.statusLabel()->text().contains(QLatin1String("120")));
}

void TestIssueBrowser::importCanBeCancelled_data()
{
    QTest::addColumn<bool>("waitForProgress");
    QTest::addRow("at-once") << false;
    QTest::addRow("mid-import") << true;
}

void TestIssueBrowser::importCanBeCancelled()
{
    QFETCH(bool, waitForProgress);
    QTemporaryDir dir;
    const QString file = writeIssues(dir.path(), 5000);
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(dir.filePath(QStringLiteral("cancel.sqlite"))));
    QSignalSpy progress(browser.importer(), &IssueImporter::progressChanged);
    QSignalSpy canceled(browser.importer(), &IssueImporter::canceled);
    QSignalSpy finished(browser.importer(), &IssueImporter::finished);
    QVERIFY(browser.importPath(file));
    // The worker reports every report it classifies; the first one arrives long before the
    // last of 5,000 is done.
    if (waitForProgress) QVERIFY(progress.wait(30000));
    QTest::mouseClick(browser.cancelImportButton(), Qt::LeftButton);
    QVERIFY(canceled.wait(30000));
    QCOMPARE(finished.size(), 0);
    QCOMPARE(browser.corpus().count(QStringLiteral("import")), 0);
    QVERIFY(browser.statusLabel()->text().contains(QLatin1String("cancelled")));
    QVERIFY(browser.importProgress()->isHidden());
    QVERIFY(browser.importPath(file)); // a cancelled import does not block the next
    QTest::mouseClick(browser.cancelImportButton(), Qt::LeftButton);
    QVERIFY(canceled.wait(30000));
}

void TestIssueBrowser::mainWindowWiresTheTab()
{
    qputenv("RANKSCOPE_DB", m_dir.filePath(QStringLiteral("window.sqlite")).toUtf8());
    MainWindow window;
    IssueBrowser* issues = window.issueBrowser();
    QVERIFY(issues);
    QVERIFY(!issues->corpus().isOpen()); // not before the tab is shown
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QAction* tab = nullptr;
    for (QAction* a : window.findChildren<QAction*>())
        if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_5)) tab = a;
    QVERIFY(tab);
    tab->trigger();
    QCOMPARE(window.pages()->currentWidget(), issues);
    QVERIFY2(issues->corpus().isOpen(), qPrintable(issues->error()));
    QVERIFY(issues->model()->matchCount() > 0);
    const QString leaf = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    Q_EMIT issues->nodeRequested(leaf);
    QCOMPARE(window.pages()->currentWidget(), window.taxonomyBrowser());
    QCOMPARE(window.taxonomyBrowser()->currentNodeId(), leaf);
    qunsetenv("RANKSCOPE_DB");
}

void TestIssueBrowser::detailIsReadableOnANarrowPage_data()
{
    QTest::addColumn<int>("width");
    QTest::addRow("1152 px window, both docks") << 480;
    QTest::addRow("1280 px window, both docks") << 610;
    QTest::addRow("wide") << 1400;
}

// The first layout gives the detail pane a readable line, as long as the table keeps its Issue
// column whole; on a wide page the panes take 45 % of it.
void TestIssueBrowser::detailIsReadableOnANarrowPage()
{
    QFETCH(int, width);
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("narrow.sqlite"))));
    browser.resize(width, 700);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    const int detail = browser.detail()->viewport()->width();
    const int table = browser.table()->viewport()->width();
    const int issueColumn = browser.table()->columnWidth(IssueTableModel::IssueColumn);
    const int readable =
        IssueBrowser::kReadableDetailChars * browser.detail()->fontMetrics().averageCharWidth();
    const QString sizes = QStringLiteral("table %1, detail %2 px").arg(table).arg(detail);
    QVERIFY2(table >= issueColumn, qPrintable(sizes));
    // Narrower than a readable line only where the table is down to its Issue column.
    QVERIFY2(detail >= readable || table < issueColumn + 20, qPrintable(sizes));
    QVERIFY2(detail >= width * 2 / 5, qPrintable(sizes));
}

void TestIssueBrowser::screenshot()
{
    IssueBrowser browser;
    QVERIFY(browser.openCorpus(m_dir.filePath(QStringLiteral("shot.sqlite"))));
    browser.resize(1400, 800);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    browser.setSearchText(QStringLiteral("timeout"));
    browser.classifyText(QStringLiteral("Watchdog caught collective operation timeout"));
    QSignalSpy done(&browser, &IssueBrowser::classified);
    QVERIFY(done.wait(10000));
    const QImage img = browser.grab().toImage();
    QVERIFY(img.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/issuebrowser.png")));
    // The table is not blank: the selected first row is drawn in the highlight colour.
    const QRect row = browser.table()->visualRect(browser.model()->index(0, 0));
    const QPoint at =
        browser.table()->viewport()->mapTo(&browser, QPoint(row.left() + 1, row.center().y()));
    const QColor pixel = img.pixelColor(at * img.devicePixelRatio());
    const QPalette pal = browser.table()->palette();
    QVERIFY2(pixel == pal.color(QPalette::Active, QPalette::Highlight) ||
                 pixel == pal.color(QPalette::Inactive, QPalette::Highlight),
             qPrintable(pixel.name()));
}

QTEST_MAIN(TestIssueBrowser)
#include "tst_issuebrowser.moc"
