#include "model/trace/kinetoreader.h"
#include "model/tracesession.h"
#include "tests/support/gzip.h"
#include "views/timeline/timelinelayout.h"

#include <QSet>
#include <QTemporaryDir>
#include <QtTest>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace rankscope;

namespace {

const QString kData = QStringLiteral(RANKSCOPE_TEST_DATA);

// What a trace's own JSON says about its lanes, read without the reader.
struct RawLanes {
    std::map<std::int64_t, std::string> processLabels;                        // pid -> "GPU 0"
    std::map<std::pair<std::int64_t, std::int64_t>, std::string> threadNames; // (pid, tid)
    std::set<std::pair<std::int64_t, std::int64_t>> gpuStreams; // (pid, tid) with device work
};

RawLanes rawLanesOf(const QString& path)
{
    RawLanes raw;
    const auto doc = nlohmann::json::parse(inflate(path));
    for (const auto& e : doc.at("traceEvents")) {
        const std::string ph = e.value("ph", "");
        const bool numeric =
            e.contains("pid") && e["pid"].is_number() && e.contains("tid") && e["tid"].is_number();
        if (!numeric) continue;
        const std::int64_t pid = e["pid"].get<std::int64_t>(), tid = e["tid"].get<std::int64_t>();
        if (ph == "M" && e.contains("args")) {
            const std::string name = e.value("name", "");
            if (name == "process_labels")
                raw.processLabels[pid] = e["args"].value("labels", "");
            else if (name == "thread_name")
                raw.threadNames[{pid, tid}] = e["args"].value("name", "");
        } else if (ph == "X") {
            const std::string cat = e.value("cat", "");
            if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
                cat == "gpu_user_annotation")
                raw.gpuStreams.insert({pid, tid});
        }
    }
    return raw;
}

// A trace's world size and first event on the epoch clock (ns), from its raw JSON.
std::pair<int, double> rawJobOf(const QString& path)
{
    const auto doc = nlohmann::json::parse(inflate(path));
    double first = std::numeric_limits<double>::max();
    for (const auto& e : doc.at("traceEvents"))
        if (e.value("ph", "") == "X" && e.contains("ts") && e["ts"].is_number())
            first = std::min(first, e["ts"].get<double>() * 1000);
    const double base =
        doc.contains("baseTimeNanoseconds") ? doc["baseTimeNanoseconds"].get<double>() : 0.0;
    return {doc.at("distributedInfo").at("world_size").get<int>(), base + first};
}

QString trimmed(const std::string& s)
{
    return QString::fromStdString(s).trimmed();
}

} // namespace

class TestTimelineLayout : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realTraces_data();
    void realTraces();
    void foldingAndToggling();
    void mixedJobsAreToldApart();
};

void TestTimelineLayout::realTraces_data()
{
    QTest::addColumn<QStringList>("files"); // rank i is files[i]
    QTest::newRow("fsdp") << QStringList{
        kData + QStringLiteral("/kineto-gpu-samples/fsdp_16rank_rank0.json.gz")};
    QTest::newRow("hta-trace_filter") << QStringList{
        kData + QStringLiteral("/kineto-real-hta/trace_filter/sampled_rank-0.json.gz"),
        kData + QStringLiteral("/kineto-real-hta/trace_filter/sampled_rank-1.json.gz")};
}

// Per rank, the GPU streams the JSON names come first, each showing its top levels (at most
// kDefaultLevels), the CPU threads one row each; names are the metadata's, unique per rank.
void TestTimelineLayout::realTraces()
{
    QFETCH(QStringList, files);
    EventStore store;
    std::vector<RawLanes> raw;
    for (int rank = 0; rank < files.size(); ++rank) {
        EventStore one;
        KinetoReader::Options opt;
        opt.rank = rank;
        QCOMPARE(KinetoReader::readFile(files[rank].toStdString(), one, opt).status,
                 SourceStatus::Ok);
        store.merge(std::move(one));
        raw.push_back(rawLanesOf(files[rank]));
    }
    TimelineLayout layout;
    layout.build(&store, {});
    QCOMPARE(int(layout.ranks().size()), files.size());
    int expectedHeight = 0;
    for (int rank = 0; rank < files.size(); ++rank) {
        const RawLanes& truth = raw[std::size_t(rank)];
        QVERIFY(!truth.gpuStreams.empty());
        const std::vector<int>& lanes = layout.lanesOfRankIndex(std::size_t(rank));
        // The lanes in row order: every row of a lane is contiguous, lanes as listed.
        std::vector<int> rowLanes;
        for (const TimelineLayout::Row& row : layout.rows())
            if (row.rank == rank && row.kind == TimelineLayout::RowKind::Lane &&
                (rowLanes.empty() || rowLanes.back() != row.lane))
                rowLanes.push_back(row.lane);
        QCOMPARE(rowLanes, lanes);
        std::set<std::pair<std::int64_t, std::int64_t>> firstStreams;
        for (std::size_t k = 0; k < truth.gpuStreams.size() && k < lanes.size(); ++k) {
            const Lane& lane = store.lanes[std::size_t(lanes[k])];
            firstStreams.insert({lane.pid, lane.tid});
        }
        QCOMPARE(firstStreams, truth.gpuStreams);
        QSet<QString> names;
        expectedHeight += TimelineLayout::kRankHeaderHeight;
        for (int id : lanes) {
            const Lane& lane = store.lanes[std::size_t(id)];
            const bool gpu = truth.gpuStreams.count({lane.pid, lane.tid}) > 0;
            QCOMPARE(lane.kind == LaneKind::GpuStream, gpu);
            const int levels = *std::max_element(lane.depth.begin(), lane.depth.end()) + 1;
            const int rows = gpu ? std::min(levels, TimelineLayout::kDefaultLevels) : 1;
            QCOMPARE(layout.shownLevels(id), rows);
            QVERIFY(layout.rowTop(id, rows - 1) >= 0);
            QCOMPARE(layout.rowTop(id, rows), -1);
            expectedHeight += rows * TimelineLayout::kRowHeight + TimelineLayout::kLaneGap;
            const auto thread = truth.threadNames.find({lane.pid, lane.tid});
            names.insert(layout.laneName(id));
            if (thread == truth.threadNames.end()) {
                // No metadata for it (a string id such as "PyTorch Profiler"): the reader's name.
                QVERIFY(!gpu);
                QCOMPARE(layout.laneName(id), QString::fromStdString(lane.name).trimmed());
                continue;
            }
            const QString expected = gpu ? trimmed(truth.processLabels.at(lane.pid)) +
                                               QStringLiteral(" · ") + trimmed(thread->second)
                                         : trimmed(thread->second);
            QCOMPARE(layout.laneName(id), expected);
            QVERIFY(layout.laneDescription(id).contains(expected));
        }
        QCOMPARE(names.size(), qsizetype(lanes.size()));
    }
    QCOMPARE(layout.contentHeight(), expectedHeight);
}

// A CPU thread of a GPU rank unfolds to every level; a folded rank keeps one summary row of its
// GPU streams; a lane whose name repeats in its rank gets its ids.
void TestTimelineLayout::foldingAndToggling()
{
    const QString path = kData + QStringLiteral("/kineto-gpu-samples/fsdp_16rank_rank0.json.gz");
    EventStore store;
    KinetoReader::Options opt;
    opt.rank = 0;
    QCOMPARE(KinetoReader::readFile(path.toStdString(), store, opt).status, SourceStatus::Ok);
    int cpu = -1;
    for (int i = 0; i < int(store.lanes.size()); ++i)
        if (store.lanes[std::size_t(i)].kind == LaneKind::CpuThread &&
            store.lanes[std::size_t(i)].maxDepth > 0)
            cpu = i;
    QVERIFY(cpu >= 0);
    TimelineLayout layout;
    layout.build(&store, {}, {cpu});
    QCOMPARE(layout.shownLevels(cpu), store.lanes[std::size_t(cpu)].maxDepth + 1);
    const int unfolded = layout.contentHeight();

    layout.build(&store, {0});
    QCOMPARE(layout.rows().size(), std::size_t(2));
    QCOMPARE(layout.rows()[1].kind, TimelineLayout::RowKind::RankSummary);
    QCOMPARE(layout.contentHeight(), TimelineLayout::kRankHeaderHeight +
                                         TimelineLayout::kRowHeight + TimelineLayout::kLaneGap);
    QVERIFY(layout.contentHeight() < unfolded);
    const std::vector<int> summary = layout.summaryLanes(0);
    QVERIFY(!summary.empty());
    for (int lane : summary)
        QCOMPARE(store.lanes[std::size_t(lane)].kind, LaneKind::GpuStream);
    QCOMPARE(layout.firstRowOfLane(summary.front()), -1);

    // Two threads the metadata names alike.
    for (Lane& lane : store.lanes)
        if (lane.kind == LaneKind::CpuThread) lane.threadName = "worker";
    layout.build(&store, {});
    QSet<QString> names;
    for (int id : layout.lanesOfRankIndex(0)) {
        names.insert(layout.laneName(id));
        const Lane& lane = store.lanes[std::size_t(id)];
        if (lane.kind == LaneKind::CpuThread)
            QCOMPARE(layout.laneName(id),
                     QStringLiteral("worker (pid %1, tid %2)").arg(lane.pid).arg(lane.tid));
    }
    QCOMPARE(names.size(), qsizetype(layout.lanesOfRankIndex(0).size()));
}

// A folder with rank 0 of a 16-rank and of a 2-rank job (HTA's samples): both files' lanes are
// in rank 0's group, but grouped by file, each lane named after its job (job 1 the one that ran
// first, as the raw files' clocks say) and the rank's title naming both jobs. With one of the
// files alone, nothing mentions jobs.
void TestTimelineLayout::mixedJobsAreToldApart()
{
    const QStringList files{QStringLiteral("fsdp_16rank_rank0.json.gz"),
                            QStringLiteral("nccl_2rank_rank0.json.gz")};
    std::map<QString, int> jobOfFile; // 1 for the earlier
    const auto a = rawJobOf(kData + QStringLiteral("/kineto-gpu-samples/") + files[0]);
    const auto b = rawJobOf(kData + QStringLiteral("/kineto-gpu-samples/") + files[1]);
    QVERIFY(a.first != b.first); // different world sizes: two jobs
    jobOfFile[files[0]] = a.second < b.second ? 1 : 2;
    jobOfFile[files[1]] = a.second < b.second ? 2 : 1;

    for (const bool both : {true, false}) {
        QTemporaryDir dir;
        for (int f = 0; f < (both ? 2 : 1); ++f)
            QVERIFY(QFile::copy(kData + QStringLiteral("/kineto-gpu-samples/") + files[f],
                                dir.filePath(files[f])));
        const auto session = readSession(dir.path());
        QVERIFY(session);
        TimelineLayout layout;
        layout.setLaneJobs(LaneJobs::of(*session, session->jobs));
        layout.build(&session->events, {});
        QCOMPARE(layout.ranks(), std::vector<int>{0});
        const std::vector<int>& lanes = layout.lanesOfRankIndex(0);
        QCOMPARE(lanes.size(), session->events.lanes.size());
        if (!both) {
            QCOMPARE(layout.rankTitle(0), QStringLiteral("Rank 0"));
            for (int id : lanes)
                QVERIFY2(!layout.laneName(id).startsWith(QStringLiteral("job ")),
                         qPrintable(layout.laneName(id)));
            continue;
        }
        QCOMPARE(layout.rankTitle(0), QStringLiteral("Rank 0 · jobs 1, 2"));
        std::vector<int> jobsInOrder; // the job of each lane in display order
        QSet<QString> names;
        for (int id : lanes) {
            const Lane& lane = session->events.lanes[std::size_t(id)];
            const QString file = session->folder.sources()[lane.sourceIndex].relativePath.section(
                QLatin1Char('/'), -1);
            QVERIFY2(jobOfFile.count(file), qPrintable(file));
            const int job = jobOfFile[file];
            jobsInOrder.push_back(job);
            const QString name = layout.laneName(id);
            QVERIFY2(name.startsWith(QStringLiteral("job %1 · ").arg(job)), qPrintable(name));
            QVERIFY(layout.laneDescription(id).contains(
                QStringLiteral("Job %1 of the folder's 2").arg(job)));
            names.insert(name);
        }
        QCOMPARE(names.size(), qsizetype(lanes.size()));
        QVERIFY(std::is_sorted(jobsInOrder.begin(), jobsInOrder.end()));
        QCOMPARE(jobsInOrder.front(), 1);
        QCOMPARE(jobsInOrder.back(), 2);
    }
}

QTEST_GUILESS_MAIN(TestTimelineLayout)
#include "tst_timelinelayout.moc"
