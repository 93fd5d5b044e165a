#include "model/export/chrometraceexporter.h"
#include "model/export/exportpath.h"
#include "tests/support/syntheticsession.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
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
            const int lane = e.at("tid").get<int>() - 1;
            QVERIFY(lane >= 0 && lane < int(store.lanes.size()));
            QCOMPARE(store.lanes[std::size_t(lane)].rank + 1, pid);
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
            QCOMPARE(processNames[r + 1], "Rank " + std::to_string(r));
        QCOMPARE(threadNames.size(), store.lanes.size());
        QCOMPARE(threadNames[std::pair(1, 1)], store.lanes[0].name);

        // Timestamps: microseconds with the rank's offset added, to the nanosecond, all shifted
        // by the same amount when some would be negative.
        std::int64_t minNs = 0;
        for (const Lane& l : store.lanes)
            minNs = std::min<std::int64_t>(minNs, l.startNs.front() + offsets.value(l.rank));
        QCOMPARE(exporter.shiftNs(), -minNs);
        QCOMPARE(doc.at("otherData").at("rankscope_shift_ns").get<std::int64_t>(), -minNs);
        const Lane& last = store.lanes.back();
        const std::int64_t wantNs = last.startNs[3] + offsets.value(last.rank) - minNs;
        bool found = false;
        for (const auto& e : events) {
            if (e.at("ph") != "X" || e.at("tid").get<int>() != int(store.lanes.size())) continue;
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

    // What Perfetto's JSON importer relies on (Perfetto itself cannot be run here): every event
    // has ph/pid/tid with numeric values, timed events a numeric ts, one process per rank named
    // by metadata, clock-aligned timestamps, and flows as s/f pairs bound to real slices.
    void isWhatAChromeTraceReaderNeeds()
    {
        const int ranks = 3;
        auto session = synthetic::makeSession({ranks, 1, 1, 40, 1'000'000, 10, 1000, 3});
        EventStore& store = session->events;
        // A launch -> kernel flow per rank: CPU lane event 2 (runtime) to GPU lane event 5.
        const StringId ac2g = store.strings.intern("ac2g");
        for (int r = 0; r < ranks; ++r)
            store.flows.push_back({std::int32_t(2 * r + 1), std::int32_t(2 * r), 2, 5, ac2g});
        store.flows.push_back({0, 999, 0, 0, ac2g}); // points outside the store: left out
        // Rank 2's offset puts its first events before zero: the export shifts everything.
        QHash<int, qint64> offsets{{1, 5'000'123}, {2, -40'000'000}};
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        ChromeTraceExporter exporter(store, offsets);
        QVERIFY(exporter.write(buffer));
        QVERIFY(exporter.shiftNs() > 0);
        const nlohmann::json doc = nlohmann::json::parse(buffer.data().toStdString());
        QVERIFY(doc.at("traceEvents").is_array());

        std::map<int, int> processNameCount;
        std::map<std::int64_t, std::vector<nlohmann::json>> flows;
        // (pid, tid) -> X slices as (ts, dur) in ns
        std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> slices;
        const auto ns = [](const nlohmann::json& v) {
            return std::llround(v.get<double>() * 1000);
        };
        for (const auto& e : doc.at("traceEvents")) {
            QVERIFY(e.is_object());
            QVERIFY(e.contains("ph") && e.at("ph").is_string());
            // Perfetto treats pid/tid 0 as the kernel's idle task.
            QVERIFY(e.contains("pid") && e.at("pid").is_number_integer() && e.at("pid") >= 1);
            QVERIFY(e.contains("tid") && e.at("tid").is_number_integer());
            QVERIFY(e.at("ph") == "M" || e.at("tid") >= 1);
            QVERIFY(e.contains("name") && e.at("name").is_string());
            const std::string ph = e.at("ph");
            QVERIFY2(ph == "M" || ph == "X" || ph == "s" || ph == "f", ph.c_str());
            const int pid = e.at("pid");
            if (ph == "M") {
                QVERIFY(e.at("args").is_object());
                if (e.at("name") == "process_name") {
                    ++processNameCount[pid];
                    QVERIFY(e.at("args").at("name").is_string());
                }
                continue;
            }
            QVERIFY(e.contains("ts") && e.at("ts").is_number());
            QVERIFY(e.at("ts").get<double>() >= 0); // the trace processor rejects negative ts
            QVERIFY(processNameCount.count(pid));   // metadata comes first
            if (ph == "X") {
                QVERIFY(e.contains("dur") && e.at("dur").is_number());
                QVERIFY(e.at("dur").get<double>() >= 0);
                slices[{pid, e.at("tid").get<int>()}].push_back({ns(e.at("ts")), ns(e.at("dur"))});
            } else {
                QVERIFY(e.at("id").is_number_integer());
                QVERIFY(e.at("cat").is_string());
                flows[e.at("id").get<std::int64_t>()].push_back(e);
            }
        }
        QCOMPARE(int(processNameCount.size()), ranks);
        for (const auto& [pid, count] : processNameCount)
            QCOMPARE(count, 1);
        // Clock-aligned: every slice of a lane is the store's event plus its rank's offset.
        for (std::size_t li = 0; li < store.lanes.size(); ++li) {
            const Lane& lane = store.lanes[li];
            const auto& got = slices[{lane.rank + 1, int(li) + 1}];
            QCOMPARE(got.size(), lane.size());
            for (std::size_t i = 0; i < lane.size(); ++i) {
                QCOMPARE(got[i].first,
                         lane.startNs[i] + offsets.value(lane.rank, 0) + exporter.shiftNs());
                QCOMPARE(got[i].second, lane.endNs[i] - lane.startNs[i]);
            }
        }
        // Flows: one s and one f per id, each inside a slice of its own lane.
        QCOMPARE(int(flows.size()), ranks);
        for (const auto& [id, pair] : flows) {
            QCOMPARE(pair.size(), std::size_t(2));
            QCOMPARE(pair[0].at("ph").get<std::string>(), std::string("s"));
            QCOMPARE(pair[1].at("ph").get<std::string>(), std::string("f"));
            QCOMPARE(pair[1].at("bp").get<std::string>(), std::string("e"));
            QCOMPARE(pair[0].at("cat"), pair[1].at("cat"));
            QCOMPARE(pair[0].at("pid"), pair[1].at("pid"));
            for (const auto& end : pair) {
                const std::int64_t t = ns(end.at("ts"));
                const auto& lane = slices[{end.at("pid").get<int>(), end.at("tid").get<int>()}];
                const bool inside = std::any_of(lane.begin(), lane.end(), [&](const auto& sl) {
                    return sl.first <= t && t <= sl.first + sl.second;
                });
                QVERIFY2(inside, end.dump().c_str());
            }
        }
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
        QCOMPARE(x.at("ts").get<double>(), 0.0); // -1.5 µs, shifted so that none is negative
        QCOMPARE(exporter.shiftNs(), qint64(1500));
        QCOMPARE(x.at("dur").get<double>(), 4.0);
        QCOMPARE(x.at("cat").get<std::string>(), std::string("cpu_op"));

        ChromeTraceExporter failing(session->events);
        QVERIFY(!failing.writeFile(dir.filePath(QStringLiteral("missing/dir/out.json"))));
        QVERIFY(!failing.errorString().isEmpty());
    }

    // Exports go to the documents directory by default and never into the opened folder, by any
    // spelling of a path into it.
    void exportPathsStayOutOfTheFolder()
    {
        const QString documents =
            QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        const QString expected =
            !documents.isEmpty() && QFileInfo(documents).isDir() ? documents : QDir::homePath();
        QCOMPARE(ExportPath::defaultDirectory(), expected);
        QCOMPARE(ExportPath::defaultPath(QStringLiteral("t.json")),
                 QDir(expected).filePath(QStringLiteral("t.json")));

        QTemporaryDir root;
        const QDir dir(root.path());
        QVERIFY(dir.mkpath(QStringLiteral("job/sub")));
        QVERIFY(dir.mkpath(QStringLiteral("job2")));
        QVERIFY(QFile::link(dir.filePath(QStringLiteral("job/sub")),
                            dir.filePath(QStringLiteral("into-job"))));
        QVERIFY(QFile::link(dir.filePath(QStringLiteral("job/sub/missing.json")),
                            dir.filePath(QStringLiteral("dangling.json"))));
        const QString job = dir.filePath(QStringLiteral("job"));
        for (const char* inside : {"job", "job/r.json", "job/sub/r.json", "job/new/deeper/r.json",
                                   "job2/../job/r.json", "into-job/r.json", "dangling.json"}) {
            const QString refusal = ExportPath::refusal(dir.filePath(QLatin1String(inside)), job);
            QVERIFY2(refusal.contains(QLatin1String("inside the opened folder")), inside);
        }
        // The folder opened through a link is the same folder.
        QVERIFY(!ExportPath::refusal(dir.filePath(QStringLiteral("job/sub/x")),
                                     dir.filePath(QStringLiteral("into-job")))
                     .isEmpty());
        for (const char* outside : {"r.json", "job2/r.json", "job.json", "new/r.json"})
            QVERIFY2(ExportPath::refusal(dir.filePath(QLatin1String(outside)), job).isEmpty(),
                     outside);
        QVERIFY(
            ExportPath::refusal(dir.filePath(QStringLiteral("job/r.json")), QString()).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestChromeTraceExporter)
#include "tst_chrometraceexporter.moc"
