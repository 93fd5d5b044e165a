#include "views/startpage/startpage.h"

#include <QDir>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTest>
#include <algorithm>

using namespace rankscope;

class TestStartPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void textStaysPackedAtTheTop();
    void recentListTakesTheRest();
};

namespace {

// The labels of the page from top to bottom, shown ones only.
QList<QWidget*> shownFromTop(StartPage& page)
{
    QList<QWidget*> out;
    for (QWidget* w : page.findChildren<QWidget*>())
        if (w->isVisible() && (qobject_cast<QLabel*>(w) || qobject_cast<QPushButton*>(w))) out << w;
    std::sort(out.begin(), out.end(), [&](QWidget* a, QWidget* b) {
        return a->mapTo(&page, QPoint()).y() < b->mapTo(&page, QPoint()).y();
    });
    return out;
}

} // namespace

// Without recent investigations the page is a title, a paragraph, a button and a note; on a tall
// window they stay together at the top, not spread down the page.
void TestStartPage::textStaysPackedAtTheTop()
{
    StartPage page;
    page.resize(1000, 1000);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const QList<QWidget*> shown = shownFromTop(page);
    QCOMPARE(shown.size(), 5); // title, intro, Open Folder…, "Recent investigations", none yet
    const int line = page.fontMetrics().height();
    for (int i = 1; i < shown.size(); ++i) {
        const int gap = shown[i]->mapTo(&page, QPoint()).y() -
                        shown[i - 1]->mapTo(&page, QPoint(0, shown[i - 1]->height())).y();
        QVERIFY2(gap < 2 * line,
                 qPrintable(QStringLiteral("gap of %1 px above item %2").arg(gap).arg(i)));
    }
    QVERIFY(shown.last()->mapTo(&page, QPoint()).y() < page.height() / 2);
}

void TestStartPage::recentListTakesTheRest()
{
    StartPage page;
    InvestigationSummary inv;
    inv.id = 1;
    inv.folder = QDir::tempPath();
    inv.updatedAt = QDateTime::currentDateTime();
    page.setInvestigations({inv});
    page.resize(1000, 1000);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QVERIFY(page.list()->isVisible());
    QVERIFY(page.list()->height() > page.height() / 2);
}

QTEST_MAIN(TestStartPage)
#include "tst_startpage.moc"
