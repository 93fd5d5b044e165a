#include "model/analysis/analysiscontext.h"
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
        QTest::addRow("59 s wanted: 1 min") << 59e9 / 90 << qint64(60'000'000'000);
        QTest::addRow("61 s wanted: 2 min") << 61e9 / 90 << qint64(120'000'000'000);
        QTest::addRow("11 min wanted: 15 min") << 660e9 / 90 << qint64(900'000'000'000);
        QTest::addRow("4 h wanted: 6 h") << 4 * 3600e9 / 90 << qint64(6 * 3'600'000'000'000);
        QTest::addRow("13 h wanted: 1 d") << 13 * 3600e9 / 90 << qint64(86'400'000'000'000);
        QTest::addRow("3 d wanted: 5 d") << 3 * 86400e9 / 90 << qint64(5 * 86'400'000'000'000);
        QTest::addRow("300 d wanted: 500 d")
            << 300 * 86400e9 / 90 << qint64(500 * 86'400'000'000'000);
    }
    void ticksAreOneTwoFive()
    {
        QFETCH(double, nsPerPx);
        QFETCH(qint64, step);
        QCOMPARE(ZoomState::tickStepNs(nsPerPx, 90), step);
        QVERIFY(double(step) / nsPerPx >= 90 * (1 - 1e-9));
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
        // From a minute on: days, hours, minutes and seconds, never thousands of seconds.
        constexpr qint64 s = 1'000'000'000, min = 60 * s, h = 60 * min, d = 24 * h;
        QTest::addRow("59.9 s") << qint64(59'900'000'000) << qint64(100'000'000)
                                << QStringLiteral("59.9 s");
        QTest::addRow("1 min") << min << s << QStringLiteral("1 min");
        QTest::addRow("1 min at ms")
            << min + 500'000'000 << qint64(1'000'000) << QStringLiteral("1 min 500 ms");
        QTest::addRow("2 min 3.5 s")
            << 2 * min + 3'500'000'000 << qint64(100'000'000) << QStringLiteral("2 min 3.5 s");
        QTest::addRow("59 min 59 s") << h - s << s << QStringLiteral("59 min 59 s");
        QTest::addRow("1 h") << h << 10 * min << QStringLiteral("1 h");
        QTest::addRow("1 h 10 min") << h + 10 * min << 10 * min << QStringLiteral("1 h 10 min");
        QTest::addRow("23 h 59 min") << d - min << min << QStringLiteral("23 h 59 min");
        QTest::addRow("1 d") << d << h << QStringLiteral("1 d");
        QTest::addRow("1 d 2 h 3 min 4 s")
            << d + 2 * h + 3 * min + 4 * s << s << QStringLiteral("1 d 2 h 3 min 4 s");
        QTest::addRow("rounded to the hour")
            << 5 * d + 20 * h + 29 * min << h << QStringLiteral("5 d 20 h");
        QTest::addRow("zero-at-hour-step") << qint64(0) << 2 * h << QStringLiteral("0 h");
        QTest::addRow("negative") << -(h + 30 * min) << min << QStringLiteral("-1 h 30 min");
    }
    void formatsWithAdaptiveUnits()
    {
        QFETCH(qint64, ns);
        QFETCH(qint64, resolution);
        QFETCH(QString, text);
        QCOMPARE(ZoomState::formatNs(ns, resolution), text);
    }

    // A duration at its own resolution (a hundredth of it): 5,000,000 s is 57 d 20 h 53 min.
    void formatsLongDurations_data()
    {
        QTest::addColumn<qint64>("ns");
        QTest::addColumn<QString>("text");
        QTest::addRow("5e6 s") << qint64(5'000'000) * 1'000'000'000 << QStringLiteral("57 d 21 h");
        QTest::addRow("90 s") << qint64(90'000'000'000) << QStringLiteral("1 min 30.0 s");
        QTest::addRow("59 s") << qint64(59'000'000'000) << QStringLiteral("59.0 s");
        QTest::addRow("one year") << qint64(365) * 86'400 * 1'000'000'000
                                  << QStringLiteral("365 d");
    }
    void formatsLongDurations()
    {
        QFETCH(qint64, ns);
        QFETCH(QString, text);
        QCOMPARE(ZoomState::formatDuration(ns), text);
    }

    // A finding's duration by the same formatter, at a precision fixed per unit (hundredths of
    // a second, tenths of a millisecond, whole microseconds), so ranks 10 ms apart read apart.
    void formatsFindingDurations_data()
    {
        QTest::addColumn<qint64>("ns");
        QTest::addColumn<QString>("text");
        QTest::addRow("s") << qint64(10'020'000'000) << QStringLiteral("10.02 s");
        QTest::addRow("ms") << qint64(841'900'000) << QStringLiteral("841.9 ms");
        QTest::addRow("us") << qint64(900'000) << QStringLiteral("900 \u00b5s");
        QTest::addRow("below a microsecond") << qint64(400) << QStringLiteral("0 \u00b5s");
        QTest::addRow("negative") << qint64(-1'500'000) << QStringLiteral("-1.5 ms");
        QTest::addRow("minutes") << qint64(123'460'000'000) << QStringLiteral("2 min 3.46 s");
    }
    void formatsFindingDurations()
    {
        QFETCH(qint64, ns);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatDurationNs(ns)), text);
    }
};

QTEST_GUILESS_MAIN(TestZoomState)
#include "tst_zoomstate.moc"
