#include "views/logviewer/loglinesmodel.h"
#include "views/logviewer/logviewer.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QListView>
#include <QPalette>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace rankscope;

namespace {

// WCAG contrast ratio of two colours (1 to 21).
double contrast(const QColor& a, const QColor& b)
{
    const auto luminance = [](const QColor& c) {
        const auto lin = [](double v) {
            return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
        };
        return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
    };
    const double x = luminance(a), y = luminance(b);
    return (std::max(x, y) + 0.05) / (std::min(x, y) + 0.05);
}

SessionPtr example(const QString& name)
{
    return loadSession(QStringLiteral(RANKSCOPE_EXAMPLES "/") + name);
}

} // namespace

class TestLogViewer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void linesModelPassesTheTester();
    void opensACitedLineAndSteps_data();
    void opensACitedLineAndSteps();
    void unknownPathOrLineIsRefused();
    void aLineCitedWhileHiddenIsCentredWhenShown();
    void citedLinesAreReadableAndApartFromTheSelection_data();
    void citedLinesAreReadableAndApartFromTheSelection();
    void everyLineIsWholeWhereverTheLongestIs_data();
    void everyLineIsWholeWhereverTheLongestIs();
};

void TestLogViewer::linesModelPassesTheTester()
{
    const SessionPtr s = example(QStringLiteral("hang_timeout"));
    QVERIFY(s && !s->logs.empty());
    LogLinesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const RankLog& log = s->logs.front();
    model.setLog(&log, {log.lineNumber(0)});
    QCOMPARE(model.rowCount(), log.lineCount());
    QVERIFY(model.index(0).data().toString().endsWith(log.lineText(0)));
    QVERIFY(model.index(0).data(LogLinesModel::CitedRole).toBool());
    model.setCited({log.lineNumber(1)});
    QVERIFY(!model.index(0).data(LogLinesModel::CitedRole).toBool());
    QVERIFY(model.index(1).data(LogLinesModel::CitedRole).toBool());
    model.setLog(nullptr, {});
    QCOMPARE(model.rowCount(), 0);
}

void TestLogViewer::opensACitedLineAndSteps_data()
{
    QTest::addColumn<QString>("folder");
    QTest::newRow("hang_timeout") << QStringLiteral("hang_timeout");
}

// Cites the first, middle and last line of every log and walks them with next/previous.
void TestLogViewer::opensACitedLineAndSteps()
{
    QFETCH(QString, folder);
    const SessionPtr s = example(folder);
    QVERIFY(s && !s->logs.empty());
    LogViewer viewer;
    viewer.resize(800, 400);
    viewer.show();
    viewer.setSession(s);
    QCOMPARE(viewer.logBox()->count(), int(s->logs.size()));
    for (const RankLog& log : s->logs) {
        if (log.lineCount() < 3) continue;
        std::vector<Evidence> cites;
        for (int i : {0, log.lineCount() / 2, log.lineCount() - 1}) {
            Evidence cite;
            cite.path = log.sourcePath.toStdString();
            cite.line = log.lineNumber(i);
            cite.rank = log.rank.value_or(-1);
            cites.push_back(cite);
        }
        viewer.setCitations(cites);
        const int mid = log.lineNumber(log.lineCount() / 2);
        QVERIFY(viewer.openAt(log.sourcePath, mid, log.rank.value_or(-1)));
        QCOMPARE(viewer.currentLog(), &log);
        QCOMPARE(viewer.currentLineNumber(), mid);
        QVERIFY(viewer.isHighlighted(mid));
        QCOMPARE(viewer.citedLineNumbers().size(), qsizetype(3));
        const QModelIndex current = viewer.lineView()->currentIndex();
        QVERIFY(viewer.lineView()->visualRect(current).intersects(
            viewer.lineView()->viewport()->rect()));
        viewer.nextCited();
        QCOMPARE(viewer.currentLineNumber(), log.lineNumber(log.lineCount() - 1));
        viewer.nextCited(); // no further cited line: stays
        QCOMPARE(viewer.currentLineNumber(), log.lineNumber(log.lineCount() - 1));
        viewer.previousCited();
        viewer.previousCited();
        QCOMPARE(viewer.currentLineNumber(), log.lineNumber(0));
        if (log.lineCount() > 3) QVERIFY(!viewer.isHighlighted(log.lineNumber(1)));
    }
}

void TestLogViewer::unknownPathOrLineIsRefused()
{
    const SessionPtr s = example(QStringLiteral("hang_timeout"));
    LogViewer viewer;
    QVERIFY(!viewer.openAt(QStringLiteral("rank0.log"), 1));
    viewer.setSession(s);
    QVERIFY(!viewer.openAt(QStringLiteral("no-such.log"), 1));
    const RankLog& log = s->logs.front();
    QVERIFY(!viewer.openAt(log.sourcePath, log.lineNumber(log.lineCount() - 1) + 1000));
}

// A finding selected while the Logs tab is hidden: its line is in the middle of the view once
// the tab is shown, not at an edge of the size the view had while hidden.
void TestLogViewer::aLineCitedWhileHiddenIsCentredWhenShown()
{
    const SessionPtr s =
        loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/rank_killed_w3_step0"));
    QVERIFY(s);
    const auto longest =
        std::max_element(s->logs.begin(), s->logs.end(), [](const RankLog& a, const RankLog& b) {
            return a.lineCount() < b.lineCount();
        });
    QVERIFY(longest->lineCount() >= 60);
    LogViewer viewer;
    viewer.resize(800, 300);
    viewer.setSession(s);
    Evidence cite;
    cite.path = longest->sourcePath.toStdString();
    cite.line = longest->lineNumber(longest->lineCount() / 2);
    cite.rank = longest->rank.value_or(-1);
    viewer.setCitations({cite});
    QCOMPARE(viewer.currentLog(), &*longest);
    QCOMPARE(viewer.currentLineNumber(), cite.line);
    viewer.show();
    QVERIFY(QTest::qWaitForWindowExposed(&viewer));
    const QListView* view = viewer.lineView();
    const QRect viewport = view->viewport()->rect();
    QTRY_VERIFY2(std::abs(view->visualRect(view->currentIndex()).center().y() -
                          viewport.center().y()) <= view->visualRect(view->currentIndex()).height(),
                 qPrintable(QStringLiteral("line at y %1 of %2")
                                .arg(view->visualRect(view->currentIndex()).center().y())
                                .arg(viewport.height())));
}

void TestLogViewer::citedLinesAreReadableAndApartFromTheSelection_data()
{
    QTest::addColumn<QColor>("base");
    QTest::addColumn<QColor>("text");
    QTest::addColumn<QColor>("highlight");
    QTest::newRow("light") << QColor(Qt::white) << QColor(Qt::black) << QColor(0x30, 0x8c, 0xc6);
    QTest::newRow("dark") << QColor(0x1e, 0x1e, 0x1e) << QColor(0xe6, 0xe6, 0xe6)
                          << QColor(0x2a, 0x6f, 0xb8);
}

// A cited line keeps the palette's text colour on a tint that is neither the base (it must
// stand out) nor the selection colour (the selected line must stand out from it).
void TestLogViewer::citedLinesAreReadableAndApartFromTheSelection()
{
    QFETCH(QColor, base);
    QFETCH(QColor, text);
    QFETCH(QColor, highlight);
    QPalette palette;
    palette.setColor(QPalette::Base, base);
    palette.setColor(QPalette::Text, text);
    palette.setColor(QPalette::Highlight, highlight);
    const QPalette before = QApplication::palette();
    QApplication::setPalette(palette);
    const SessionPtr s = example(QStringLiteral("hang_timeout"));
    QVERIFY(s && !s->logs.empty());
    LogLinesModel model;
    model.setLog(&s->logs.front(), {s->logs.front().lineNumber(0)});
    const QColor cited = model.index(0).data(Qt::BackgroundRole).value<QColor>();
    QVERIFY(!model.index(0).data(Qt::ForegroundRole).isValid()); // the palette's Text
    QVERIFY(!model.index(1).data(Qt::BackgroundRole).isValid());
    QApplication::setPalette(before);
    QVERIFY2(contrast(cited, text) >= 4.5, qPrintable(cited.name()));
    QVERIFY2(contrast(cited, base) >= 1.15, qPrintable(cited.name()));
    QVERIFY2(contrast(cited, highlight) >= 1.3, qPrintable(cited.name()));
}

void TestLogViewer::everyLineIsWholeWhereverTheLongestIs_data()
{
    QTest::addColumn<QString>("folder");
    // Logs whose first line is far shorter than their longest (a launcher's banner, a job's
    // greeting before its traceback's paths).
    QTest::addRow("rank_crash_w4") << QStringLiteral(RANKSCOPE_TEST_DATA "/traces/rank_crash_w4");
    QTest::addRow("hang_timeout") << QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout");
}

void TestLogViewer::everyLineIsWholeWhereverTheLongestIs()
{
    QFETCH(QString, folder);
    const SessionPtr s = loadSession(folder);
    QVERIFY(s && !s->logs.empty());
    LogViewer viewer;
    viewer.resize(400, 300);
    viewer.setSession(s);
    viewer.show();
    QVERIFY(QTest::qWaitForWindowExposed(&viewer));
    auto* view = viewer.findChild<QListView*>(QStringLiteral("logLines"));
    QVERIFY(view);
    for (const RankLog& log : s->logs) {
        QVERIFY(viewer.openAt(log.sourcePath, log.lineNumber(0), log.rank.value_or(-1)));
        QCoreApplication::processEvents();
        const int digits = int(QString::number(log.lineNumber(log.lineCount() - 1)).size());
        for (int row = 0; row < log.lineCount(); ++row) {
            const QModelIndex index = view->model()->index(row, 0);
            const QVariant font = index.data(Qt::FontRole);
            const QFontMetrics fm(font.isValid() ? font.value<QFont>() : view->font());
            // The line number, two spaces, then the text as the file holds it.
            const QString shown = QStringLiteral("%1  %2")
                                      .arg(log.lineNumber(row), digits)
                                      .arg(QString::fromUtf8(log.lineBytes(row)));
            QVERIFY2(view->visualRect(index).width() >= fm.horizontalAdvance(shown),
                     qPrintable(log.sourcePath + QLatin1Char(':') +
                                QString::number(log.lineNumber(row))));
        }
    }
}

QTEST_MAIN(TestLogViewer)
#include "tst_logviewer.moc"
