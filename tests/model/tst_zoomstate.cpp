#include "model/zoomstate.h"

#include <QtTest>

using namespace rankscope;

class TestZoomState : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void mapsTimeAndPixels_data()
    {
        QTest::addColumn<qint64>("start");
        QTest::addColumn<qint64>("end");
        QTest::addColumn<int>("width");
        QTest::addRow("1s-over-1000px") << qint64(0) << qint64(1'000'000'000) << 1000;
        QTest::addRow("offset-start") << qint64(5'000'000) << qint64(5'001'000) << 500;
        QTest::addRow("odd-width") << qint64(-300) << qint64(700) << 333;
    }
    void mapsTimeAndPixels()
    {
        QFETCH(qint64, start);
        QFETCH(qint64, end);
        QFETCH(int, width);
        ZoomState z;
        z.setTraceRange(start, end);
        z.setWidthPx(width);
        QCOMPARE(z.timeToX(start), 0.0);
        QCOMPARE(z.timeToX(end), double(width));
        QCOMPARE(z.xToTime(0), start);
        QCOMPARE(z.xToTime(width), end);
        const qint64 mid = start + (end - start) / 2;
        QVERIFY(std::abs(z.xToTime(z.timeToX(mid)) - mid) <= 1);
        QCOMPARE(z.nsPerPx(), double(end - start) / width);
    }

    void zoomKeepsTheAnchorUnderTheCursor()
    {
        ZoomState z;
        z.setTraceRange(0, 1'000'000);
        z.setWidthPx(1000);
        const qint64 anchor = z.xToTime(250);
        z.zoomAt(250, 0.5);
        QCOMPARE(z.visibleSpanNs(), qint64(500'000));
        QVERIFY(std::abs(z.xToTime(250) - anchor) <= 1);
        z.zoomAt(250, 2.0);
        QCOMPARE(z.visibleSpanNs(), qint64(1'000'000));
        QCOMPARE(z.visibleStartNs(), qint64(0));
    }

    void clampsToTheTrace()
    {
        ZoomState z;
        z.setTraceRange(1000, 2000);
        z.setWidthPx(100);
        z.setVisibleRange(0, 5000);
        QCOMPARE(z.visibleStartNs(), qint64(1000));
        QCOMPARE(z.visibleEndNs(), qint64(2000));
        z.setVisibleRange(1500, 1600);
        z.panByPx(1000); // 1 ns/px * 1000 px: would leave the trace
        QCOMPARE(z.visibleEndNs(), qint64(2000));
        QCOMPARE(z.visibleSpanNs(), qint64(100));
        z.panByPx(-5000);
        QCOMPARE(z.visibleStartNs(), qint64(1000));
        z.setVisibleRange(1500, 1501);
        QCOMPARE(z.visibleSpanNs(), ZoomState::kMinSpanNs);
        z.zoomAt(50, 1e-9);
        QCOMPARE(z.visibleSpanNs(), ZoomState::kMinSpanNs);
    }

    void selectionIsOrdered()
    {
        ZoomState z;
        QVERIFY(!z.hasSelection());
        z.setSelection(900, 100);
        QVERIFY(z.hasSelection());
        QCOMPARE(z.selectionStartNs(), qint64(100));
        QCOMPARE(z.selectionEndNs(), qint64(900));
        z.clearSelection();
        QVERIFY(!z.hasSelection());
    }

    void ticksAreOneTwoFive_data()
    {
        QTest::addColumn<double>("nsPerPx");
        QTest::addColumn<qint64>("step");
        QTest::addRow("ns") << 0.1 << qint64(10);
        QTest::addRow("us") << 11.0 << qint64(1000);
        QTest::addRow("2ms") << 15000.0 << qint64(2'000'000);
        QTest::addRow("5s") << 4e7 << qint64(5'000'000'000);
    }
    void ticksAreOneTwoFive()
    {
        QFETCH(double, nsPerPx);
        QFETCH(qint64, step);
        QCOMPARE(ZoomState::tickStepNs(nsPerPx, 90), step);
        QVERIFY(double(step) / nsPerPx >= 90);
    }

    void formatsWithAdaptiveUnits_data()
    {
        QTest::addColumn<qint64>("ns");
        QTest::addColumn<qint64>("resolution");
        QTest::addColumn<QString>("text");
        QTest::addRow("ns") << qint64(300) << qint64(10) << QStringLiteral("300 ns");
        QTest::addRow("us") << qint64(12'500) << qint64(100) << QStringLiteral("12.5 \u00b5s");
        QTest::addRow("ms") << qint64(12'500'000) << qint64(100'000) << QStringLiteral("12.5 ms");
        QTest::addRow("s") << qint64(1'250'000'000) << qint64(10'000'000)
                           << QStringLiteral("1.25 s");
        QTest::addRow("zero-at-ms-step")
            << qint64(0) << qint64(2'000'000) << QStringLiteral("0 ms");
    }
    void formatsWithAdaptiveUnits()
    {
        QFETCH(qint64, ns);
        QFETCH(qint64, resolution);
        QFETCH(QString, text);
        QCOMPARE(ZoomState::formatNs(ns, resolution), text);
    }
};

QTEST_GUILESS_MAIN(TestZoomState)
#include "tst_zoomstate.moc"
