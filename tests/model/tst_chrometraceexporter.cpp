#include "model/export/chrometraceexporter.h"
#include "tests/support/syntheticsession.h"

#include <QBuffer>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace rankscope;

class TestChromeTraceExporter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTrips_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<qint64>("offsetPerRank");
        QTest::addRow("2-ranks-no-offsets") << 2 << qint64(0);
        QTest::addRow("5-ranks-offsets") << 5 << qint64(-1'234'567);
    }
    void roundTrips()
    {
        QFETCH(int, ranks);
        QFETCH(qint64, offsetPerRank);
        auto session = synthetic::makeSession({ranks, 2, 1, 60, 1'000'000, 10, 1000, 7});
        const EventStore& store = session->events;
        QHash<int, qint64> offsets;
        for (int r = 0; r < ranks; ++r)
            offsets.insert(r, r * offsetPerRank);
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        ChromeTraceExporter exporter(store, offsets);
        QVERIFY2(exporter.write(buffer), qPrintable(exporter.errorString()));

        const nlohmann::json doc = nlohmann::json::parse(buffer.data().toStdString());
        const auto& events = doc.at("traceEvents");
        std::map<int, std::string> processNames;
        std::map<std::pair<int, int>, std::string> threadNames;
        std::int64_t complete = 0, withSeq = 0;
        std::set<std::int64_t> seqs;
        for (const auto& e : events) {
            const std::string ph = e.at("ph");
            const int pid = e.at("pid");
            if (ph == "M" && e.at("name") == "process_name")
                processNames[pid] = e.at("args").at("name");
            if (ph == "M" && e.at("name") == "thread_name")
                threadNames[{pid, e.at("tid").get<int>()}] = e.at("args").at("name");
            if (ph != "X") continue;
            ++complete;
            const int lane = e.at("tid");
            QVERIFY(lane >= 0 && lane < int(store.lanes.size()));
            QCOMPARE(store.lanes[std::size_t(lane)].rank, pid);
            if (e.contains("args") && e.at("args").contains("seq")) {
                ++withSeq;
                seqs.insert(e.at("args").at("seq").get<std::int64_t>());
                QCOMPARE(e.at("args").at("process_group").get<std::string>(), std::string("0"));
                QCOMPARE(e.at("args").at("op").get<std::string>(), std::string("all_reduce"));
            }
        }
        QCOMPARE(complete, store.eventCount());
        QCOMPARE(withSeq, std::int64_t(store.collectives.size()));
        QCOMPARE(seqs.size(), std::size_t(6)); // 60 events, one collective every 10
        QCOMPARE(int(processNames.size()), ranks);
        for (int r = 0; r < ranks; ++r)
            QCOMPARE(processNames[r], "Rank " + std::to_string(r));
        QCOMPARE(threadNames.size(), store.lanes.size());
        QCOMPARE(threadNames[std::pair(0, 0)], store.lanes[0].name);

        // Timestamps: microseconds with the rank's offset added, to the nanosecond.
        const Lane& last = store.lanes.back();
        const std::int64_t wantNs = last.startNs[3] + offsets.value(last.rank);
        bool found = false;
        for (const auto& e : events) {
            if (e.at("ph") != "X" || e.at("tid").get<int>() != int(store.lanes.size() - 1))
                continue;
            if (std::llround(e.at("ts").get<double>() * 1000) == wantNs) {
                found = true;
                QCOMPARE(std::llround(e.at("dur").get<double>() * 1000),
                         static_cast<long long>(last.endNs[3] - last.startNs[3]));
                QCOMPARE(e.at("name").get<std::string>(),
                         std::string(store.strings.view(last.nameId[3])));
            }
        }
        QVERIFY(found);
    }

    void escapesNamesAndWritesFiles()
    {
        auto session = std::make_shared<TraceSession>();
        session->events.lanes.push_back(synthetic::makeLane(
            session->events.strings, 3, LaneKind::CpuThread, 1, 2,
            {{-1500, 2500, "say \"hi\"\n\\ \xc3\xa9", EventCategory::CpuOp}}, "main \"thread\""));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("merged.json"));
        ChromeTraceExporter exporter(session->events);
        QVERIFY(exporter.writeFile(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const nlohmann::json doc = nlohmann::json::parse(file.readAll().toStdString());
        const auto& x = doc.at("traceEvents").back();
        QCOMPARE(x.at("name").get<std::string>(), std::string("say \"hi\"\n\\ \xc3\xa9"));
        QCOMPARE(x.at("ts").get<double>(), -1.5);
        QCOMPARE(x.at("dur").get<double>(), 4.0);
        QCOMPARE(x.at("cat").get<std::string>(), std::string("cpu_op"));

        ChromeTraceExporter failing(session->events);
        QVERIFY(!failing.writeFile(dir.filePath(QStringLiteral("missing/dir/out.json"))));
        QVERIFY(!failing.errorString().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestChromeTraceExporter)
#include "tst_chrometraceexporter.moc"
