#include "model/analysis/collectivematcher.h"
#include "model/trace/horovodtimelinereader.h"
#include "model/tracesession.h"
#include "tests/support/findings.h"
#include "tests/support/fuzzinputs.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace rankscope;

// The Horovod timeline (written by the coordinator only): per tensor a process with
// NEGOTIATE_<OP> / <OP> spans and one zero-length tick per rank that reported it ready.
class TestHorovodTimeline : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void opNames();
    void readsSpansAndTicks();
    void missingTickIsTheStalledRank();
    void cutFileKeepsWhatCameBefore();
    void notATimelineIsAnError();
    void folderBlamesTheRankThatNeverReported();
    void fuzzRegressions();
};

namespace {

// A timeline of `cycles` allreduces of two tensors on `world` ranks. In the last cycle rank
// `late` never reports tensor 1 ready, so its negotiation stays open (a B without an E) — the
// way a stalled Horovod job's timeline ends.
QByteArray timeline(int world, int cycles, int late = -1)
{
    QByteArray out = "[\n";
    const auto ev = [&out](const QByteArray& json) { out += json + ",\n"; };
    ev(R"({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "grad/w0", )"
       R"("start_time_since_epoch_in_micros": 1700000000000000}})");
    ev(R"({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "grad/w1"}})");
    qint64 t = 100;
    for (int c = 0; c < cycles; ++c) {
        for (int pid = 0; pid < 2; ++pid) {
            const QByteArray p = QByteArray::number(pid);
            const bool stall = c == cycles - 1 && pid == 1 && late >= 0;
            ev(R"({"name": "NEGOTIATE_ALLREDUCE", "ph": "B", "ts": )" + QByteArray::number(t) +
               R"(, "pid": )" + p + "}");
            for (int r = 0; r < world; ++r) {
                if (stall && r == late) continue;
                ev(R"({"name": ")" + QByteArray::number(r) + R"(", "ph": "X", "ts": )" +
                   QByteArray::number(t + 10 * r) + R"(, "dur": 0, "pid": )" + p + "}");
            }
            if (stall) continue;
            t += 10 * world;
            ev(R"({"ph": "E", "ts": )" + QByteArray::number(t) + R"(, "pid": )" + p + "}");
            ev(R"({"name": "ALLREDUCE", "ph": "B", "ts": )" + QByteArray::number(t) +
               R"(, "pid": )" + p + "}");
            ev(R"({"name": "NCCL_ALLREDUCE", "ph": "B", "ts": )" + QByteArray::number(t + 5) +
               R"(, "pid": )" + p + "}");
            ev(R"({"ph": "E", "ts": )" + QByteArray::number(t + 50) + R"(, "pid": )" + p + "}");
            ev(R"({"ph": "E", "ts": )" + QByteArray::number(t + 60) + R"(, "pid": )" + p +
               R"(, "args": {"dtype": "float32", "shape": "[256, 4]"}})");
            t += 100;
        }
    }
    out.chop(2);
    out += "\n]\n";
    return out;
}

} // namespace

void TestHorovodTimeline::opNames()
{
    const std::pair<const char*, const char*> names[] = {{"NEGOTIATE_ALLREDUCE", "all_reduce"},
                                                         {"ALLGATHER", "all_gather"},
                                                         {"BROADCAST", "broadcast"}};
    for (const auto& [horovod, ours] : names)
        QCOMPARE(HorovodTimelineReader::normalizeOp(horovod), std::string(ours));
}

void TestHorovodTimeline::readsSpansAndTicks()
{
    EventStore store;
    const HorovodReadResult r =
        HorovodTimelineReader::readBytes(timeline(4, 3).toStdString(), store, {});
    QCOMPARE(r.status, SourceStatus::Ok);
    QCOMPARE(r.worldSize, 4);
    QCOMPARE(r.tensors, 2);
    // Every rank's tick of every negotiation is a record of that rank: 3 cycles x 2 tensors x 4.
    QCOMPARE(r.collectives, std::int64_t(24));
    QCOMPARE(store.collectives.size(), std::size_t(24));
    int coordinatorExec = 0;
    for (const CollectiveRecord& c : store.collectives) {
        QVERIFY(c.rank >= 0 && c.rank < 4);
        QCOMPARE(store.strings.view(c.op), std::string_view("all_reduce"));
        QVERIFY(c.seq >= 0);
        QCOMPARE(c.state, CollectiveRecord::State::Completed);
        if (c.execStartNs >= 0) {
            ++coordinatorExec;
            QCOMPARE(c.rank, 0);
            QCOMPARE(c.outNelems, std::int64_t(1024));
        }
    }
    QCOMPARE(coordinatorExec, 6);
    // The coordinator's spans are on lanes of rank 0, in ns.
    QVERIFY(!store.lanes.empty());
    for (const Lane& lane : store.lanes)
        QCOMPARE(lane.rank, 0);
}

void TestHorovodTimeline::missingTickIsTheStalledRank()
{
    EventStore store;
    const HorovodReadResult r =
        HorovodTimelineReader::readBytes(timeline(4, 3, /*late=*/2).toStdString(), store, {});
    QCOMPARE(r.status, SourceStatus::Ok);
    QCOMPARE(store.collectives.size(), std::size_t(23));
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    const auto g = std::find_if(groups.begin(), groups.end(),
                                [](const CollectiveGroup& x) { return x.mismatchCount > 0; });
    QVERIFY(g != groups.end());
    QCOMPARE(g->name, std::string("grad/w1"));
    const MatchedCollective& row = g->collectives[std::size_t(g->firstMismatch)];
    QCOMPARE(row.mismatch, MismatchKind::Participation);
    QCOMPARE(row.culprits, std::vector<int>{2});
}

void TestHorovodTimeline::cutFileKeepsWhatCameBefore()
{
    const QByteArray whole = timeline(3, 4);
    EventStore full;
    HorovodTimelineReader::readBytes(whole.toStdString(), full, {});
    // The job died while Horovod was writing an event: cut in the middle of the last third.
    const QByteArray cut = whole.left(whole.size() * 2 / 3 + 7);
    EventStore store;
    const HorovodReadResult r = HorovodTimelineReader::readBytes(cut.toStdString(), store, {});
    QCOMPARE(r.status, SourceStatus::Truncated);
    QVERIFY(!r.message.empty());
    QVERIFY(r.collectives > 0);
    QVERIFY(store.collectives.size() < full.collectives.size());
}

void TestHorovodTimeline::notATimelineIsAnError()
{
    for (const char* bad : {"", "{\"a\": 1}", "\x01\x02\x03", "[1, 2, 3]"}) {
        EventStore store;
        const HorovodReadResult r = HorovodTimelineReader::readBytes(bad, store, {});
        QVERIFY2(r.status == SourceStatus::Error, bad);
        QVERIFY(!r.message.empty());
        QVERIFY(r.message.find('\n') == std::string::npos);
    }
}

void TestHorovodTimeline::folderBlamesTheRankThatNeverReported()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile f(dir.filePath(QStringLiteral("horovod_timeline.json")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(timeline(4, 5, /*late=*/3));
    f.close();
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    QCOMPARE(session->folder.worldSize(), 4);
    const Finding* top = test::topError(session->analysis);
    QVERIFY(top);
    QCOMPARE(top->ranks, std::vector<int>{3});
    QCOMPARE(top->processGroup, std::string("grad/w1"));
}

// Inputs fuzz/run keeps (crashers it found, and the hand-made edge cases it starts from).
void TestHorovodTimeline::fuzzRegressions()
{
    const auto inputs = test::fuzzInputs("horovod");
    QVERIFY(!inputs.empty());
    for (const auto& [name, bytes] : inputs) {
        EventStore store;
        const HorovodReadResult r =
            HorovodTimelineReader::readBytes(bytes.toStdString(), store, {});
        QVERIFY2(!r.message.empty(), qPrintable(name));
        QCOMPARE(r.collectives, std::int64_t(store.collectives.size()));
        for (const Lane& lane : store.lanes)
            for (std::size_t i = 0; i < lane.size(); ++i)
                QVERIFY2(lane.endNs[i] >= lane.startNs[i], qPrintable(name));
        for (const CollectiveRecord& c : store.collectives)
            QVERIFY2(c.rank >= 0 && c.rank < r.worldSize, qPrintable(name));
    }
}

QTEST_GUILESS_MAIN(TestHorovodTimeline)
#include "tst_horovodtimeline.moc"
