#include "bench/digest_bench_job.h"
#include "bench/kinetogen.h"
#include "model/analysisreport.h"
#include "model/digest/digest.h"
#include "model/digest/digeststream.h"
#include "model/traceloader.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <set>
#include <sqlite3.h>
#include <string>
#include <tuple>

using namespace rankscope;

class TestDigest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void findingsOfDigestEqualFolder_data();
    void findingsOfDigestEqualFolder();
    void largeFolderDigestIsSmallAndEqual();
    void sameContentWhateverTheSplit();
    void findingWindowsHoldEveryRawEvent();
    void olderSchemaIsRefused();
    void rawWindowReadOnDemand();
    void partitionKeepsRanksTogetherAndBalances();
    void unreadableTraceIsRecordedNotFatal();
    void skippedSourcesStaySkipped();
    void notADigestFails();
    void collectiveRecordRoundTrips();
    void laneRoundTrips();
    void flowRoundTrips();
    void folderWarningsSurviveTheDigest();
};

namespace {

SessionPtr load(const QString& path)
{
    LoadOptions options;
    options.buildLaneLods = false;
    return loadSession(path, {}, {}, options);
}

// What the analysis concluded, as `rankscope analyze --json` prints it.
nlohmann::ordered_json conclusions(const SessionPtr& s)
{
    return AnalysisReport::toJson(*s, s->analysis);
}

// Field by field, so a failure names the finding and the field that differ.
void compareConclusions(const nlohmann::ordered_json& folder, const nlohmann::ordered_json& digest)
{
    for (auto it = folder.begin(); it != folder.end(); ++it) {
        QVERIFY2(digest.contains(it.key()), it.key().c_str());
        const nlohmann::ordered_json& a = it.value();
        const nlohmann::ordered_json& b = digest[it.key()];
        if (!a.is_array()) {
            QVERIFY2(a == b,
                     (it.key() + ": digest " + b.dump() + " vs folder " + a.dump()).c_str());
            continue;
        }
        QCOMPARE(b.size(), a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_object()) {
                QCOMPARE(QString::fromStdString(b[i].dump()), QString::fromStdString(a[i].dump()));
                continue;
            }
            for (auto f = a[i].begin(); f != a[i].end(); ++f) {
                // A rank's event count is what was kept: the one field a digest cannot equal.
                if (it.key() == "ranks" && f.key() == "events") continue;
                const std::string where = it.key() + "[" + std::to_string(i) + "]." + f.key();
                QVERIFY2(b[i].contains(f.key()), where.c_str());
                QVERIFY2(b[i][f.key()] == f.value(), (where + ": digest " + b[i][f.key()].dump() +
                                                      " vs folder " + f.value().dump())
                                                         .c_str());
            }
        }
    }
}

qint64 traceBytes(const QString& dir)
{
    qint64 n = 0;
    for (const QFileInfo& f : QDir(dir).entryInfoList(QDir::Files))
        n += f.size();
    return n;
}

// Every row of every table of a digest, as text: its content, whatever the file's page layout.
QStringList contentOf(const QString& path)
{
    sqlite3* db = nullptr;
    QStringList rows;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) != 0)
        return {QStringLiteral("cannot open")};
    for (const char* sql :
         {"SELECT * FROM meta WHERE key != 'folder' ORDER BY key", "SELECT * FROM sources",
          "SELECT * FROM traces", "SELECT * FROM breakdown ORDER BY rank, source",
          "SELECT * FROM findings", "SELECT * FROM windows"}) {
        sqlite3_stmt* q = nullptr;
        sqlite3_prepare_v2(db, sql, -1, &q, nullptr);
        while (q && sqlite3_step(q) == SQLITE_ROW) {
            QStringList row;
            for (int c = 0; c < sqlite3_column_count(q); ++c)
                row.append(QString::fromLatin1(
                    QByteArray(static_cast<const char*>(sqlite3_column_blob(q, c)),
                               sqlite3_column_bytes(q, c))
                        .toBase64()));
            rows.append(row.join(QLatin1Char(',')));
        }
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return rows;
}

} // namespace

void TestDigest::findingsOfDigestEqualFolder_data()
{
    QTest::addColumn<QString>("folder");
    const QDir traces(QStringLiteral(RANKSCOPE_TEST_DATA "/traces"));
    for (const QString& name : traces.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        QTest::newRow(qPrintable(name)) << traces.filePath(name);
}

void TestDigest::findingsOfDigestEqualFolder()
{
    QFETCH(QString, folder);
    QTemporaryDir out;
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(folder, digest), QString());
    const SessionPtr fromFolder = load(folder);
    const SessionPtr fromDigest = load(digest);
    QVERIFY(fromDigest->folder.isValid());
    QVERIFY(!fromFolder->folder.sources().isEmpty());
    compareConclusions(conclusions(fromFolder), conclusions(fromDigest));
    // Every collective record and every rank's span are carried whole.
    QCOMPARE(fromDigest->events.collectives.size(), fromFolder->events.collectives.size());
    QCOMPARE(fromDigest->events.lanes.size(), fromFolder->events.lanes.size());
    QVERIFY(fromDigest->events.eventCount() <= fromFolder->events.eventCount());
}

void TestDigest::largeFolderDigestIsSmallAndEqual()
{
    // Four ranks of 12 MB traces, rank 2 stopped early (its trace is shorter): large enough that
    // the digest's fixed costs (SQLite pages, string tables) do not hide its share.
    QTemporaryDir dir;
    for (int rank = 0; rank < 4; ++rank)
        bench::writeSyntheticKineto(
            dir.filePath(QStringLiteral("rank%1.json").arg(rank)).toStdString(),
            rank == 2 ? 6'000'000 : 12'000'000, rank);
    QTemporaryDir out;
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(dir.path(), digest), QString());
    const qint64 bytes = traceBytes(dir.path());
    const qint64 size = QFileInfo(digest).size();
    QVERIFY2(size * 100 <= bytes,
             qPrintable(QStringLiteral("digest %1 of %2 trace bytes").arg(size).arg(bytes)));
    const SessionPtr fromFolder = load(dir.path());
    const SessionPtr fromDigest = load(digest);
    // Reduced (the windows around the findings keep a few thousand events at full detail).
    QVERIFY2(fromDigest->events.eventCount() * 10 < fromFolder->events.eventCount(),
             qPrintable(QStringLiteral("%1 of %2 events kept")
                            .arg(fromDigest->events.eventCount())
                            .arg(fromFolder->events.eventCount())));
    compareConclusions(conclusions(fromFolder), conclusions(fromDigest));
    // The last events of every lane are there at full detail.
    for (std::size_t l = 0; l < fromFolder->events.lanes.size(); ++l) {
        const Lane& full = fromFolder->events.lanes[l];
        const Lane& kept = fromDigest->events.lanes[l];
        QCOMPARE(kept.size() > 0, full.size() > 0);
        const std::size_t tail = std::min(full.size(), Digest::kTailEvents);
        for (std::size_t k = 1; k <= tail; ++k) {
            QCOMPARE(kept.startNs[kept.size() - k], full.startNs[full.size() - k]);
            QCOMPARE(kept.endNs[kept.size() - k], full.endNs[full.size() - k]);
        }
    }
}

void TestDigest::sameContentWhateverTheSplit()
{
    const QString folder = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/straggler_w4");
    const TraceFolder discovered = TraceFolder::discover(folder);
    const std::vector<std::vector<int>> units = Digest::traceUnits(discovered);
    QVERIFY(units.size() >= 4);
    QTemporaryDir out;
    QStringList reference;
    for (const int processes : {1, 2, 4}) {
        // Parts in reverse, as a root may receive them in any order; the windows the root
        // asks for from the first parts, then every process's part with them.
        const std::vector<std::vector<int>> split = Digest::partition(discovered, units, processes);
        std::vector<std::unique_ptr<Digest::Share>> shares;
        std::vector<QByteArray> summaries, parts;
        for (auto p = split.rbegin(); p != split.rend(); ++p) {
            std::vector<std::vector<int>> mine;
            for (const int u : *p)
                mine.push_back(units[std::size_t(u)]);
            shares.push_back(std::make_unique<Digest::Share>(discovered, mine));
            summaries.push_back(shares.back()->part());
        }
        const QByteArray windows = Digest::findingWindows(discovered, summaries);
        for (const auto& share : shares)
            parts.push_back(share->part(windows));
        const QString path = out.filePath(QStringLiteral("%1.rsdigest").arg(processes));
        QCOMPARE(Digest::write(path, discovered, parts), QString());
        const QStringList content = contentOf(path);
        QVERIFY(content.size() > 10);
        if (reference.isEmpty())
            reference = content;
        else
            QCOMPARE(content, reference);
    }
}

void TestDigest::findingWindowsHoldEveryRawEvent()
{
    // Eight ranks of 3 MB, rank 2 a straggler, rank 5 hung: the reduction drops most events (the
    // operators at depth 2 all), the windows around the findings keep theirs.
    QTemporaryDir dir;
    const int steps = bench::writeDigestJob(dir.path().toStdString(), 8, 3.0, 2, 5);
    QVERIFY(steps > 3);
    QTemporaryDir out;
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(dir.path(), digest), QString());
    const SessionPtr fromFolder = load(dir.path());
    const SessionPtr fromDigest = load(digest);
    const Digest::Opened opened = Digest::open(digest);
    QCOMPARE(opened.error, QString());
    compareConclusions(conclusions(fromFolder), conclusions(fromDigest));
    QVERIFY(fromDigest->events.eventCount() * 5 < fromFolder->events.eventCount());
    QCOMPARE(fromDigest->events.lanes.size(), fromFolder->events.lanes.size());

    // The digest's events per lane, to look the raw ones up in.
    using Key = std::tuple<std::int64_t, std::int64_t, int, std::string>;
    std::vector<std::multiset<Key>> kept(fromDigest->events.lanes.size());
    for (std::size_t l = 0; l < kept.size(); ++l) {
        const Lane& lane = fromDigest->events.lanes[l];
        for (std::size_t i = 0; i < lane.size(); ++i)
            kept[l].insert({lane.startNs[i], lane.endNs[i], lane.depth[i],
                            std::string(fromDigest->events.strings.view(lane.nameId[i]))});
    }
    // Each finding's interval on each rank it names, on that rank's clock, widened by the margin.
    const AnalysisResult& analysis = fromFolder->analysis;
    std::size_t expected = 0, wide = 0;
    std::int64_t deep = 0;
    std::set<int> windowed;
    for (std::size_t f = 0; f < analysis.findings.size(); ++f) {
        const Finding& finding = analysis.findings[f];
        if (finding.startNs < 0) continue;
        for (const int rank : std::set<int>(finding.ranks.begin(), finding.ranks.end())) {
            const std::int64_t offset = analysis.clock.offsetOf(rank);
            const std::int64_t lo = finding.startNs + offset - Digest::kWindowMarginNs;
            const std::int64_t hi =
                std::max(finding.endNs, finding.startNs) + offset + Digest::kWindowMarginNs;
            ++expected;
            const auto w = std::find_if(
                opened.windows.begin(), opened.windows.end(),
                [&](const Digest::Window& w) { return w.finding == int(f) && w.rank == rank; });
            QVERIFY2(w != opened.windows.end(),
                     qPrintable(QStringLiteral("no window for finding %1 on rank %2")
                                    .arg(QString::fromStdString(finding.id))
                                    .arg(rank)));
            // Whole, or narrowed around the finding's start within the cap.
            std::int64_t a = lo, b = hi;
            if (w->narrowed) {
                QVERIFY(w->startNs >= lo && w->endNs <= hi);
                QVERIFY(w->startNs <= finding.startNs + offset &&
                        finding.startNs + offset <= w->endNs);
                a = w->startNs;
                b = w->endNs;
            } else {
                QCOMPARE(w->startNs, lo);
                QCOMPARE(w->endNs, hi);
                ++wide;
            }
            windowed.insert(rank);
            std::int64_t inside = 0;
            for (std::size_t l = 0; l < fromFolder->events.lanes.size(); ++l) {
                const Lane& lane = fromFolder->events.lanes[l];
                if (lane.rank != rank) continue;
                for (std::size_t i = 0; i < lane.size(); ++i) {
                    if (lane.startNs[i] > b || lane.endNs[i] < a) continue;
                    ++inside;
                    deep += lane.depth[i] >= 2 ? 1 : 0;
                    const Key key{lane.startNs[i], lane.endNs[i], lane.depth[i],
                                  std::string(fromFolder->events.strings.view(lane.nameId[i]))};
                    QVERIFY2(kept[l].count(key) > 0,
                             qPrintable(QStringLiteral("rank %1 lane %2: %3 at %4 missing")
                                            .arg(rank)
                                            .arg(l)
                                            .arg(QString::fromStdString(std::get<3>(key)))
                                            .arg(lane.startNs[i])));
                }
            }
            QCOMPARE(w->events, inside);
        }
    }
    QCOMPARE(std::size_t(std::count_if(opened.windows.begin(), opened.windows.end(),
                                       [](const Digest::Window& w) { return w.finding >= 0; })),
             expected);
    QVERIFY(wide > 0);

    // The last events of every rank, across its lanes: from kTailWindowNs before its last event
    // starts to when its last event ends, narrowed around that start past kTailWindowEvents.
    std::set<int> ranks;
    for (const Lane& lane : fromFolder->events.lanes)
        if (lane.size() > 0) ranks.insert(lane.rank);
    QCOMPARE(ranks.size(), std::size_t(8));
    for (const int rank : ranks) {
        std::int64_t lastStart = INT64_MIN, last = INT64_MIN;
        for (const Lane& lane : fromFolder->events.lanes)
            if (lane.rank == rank)
                for (std::size_t i = 0; i < lane.size(); ++i) {
                    lastStart = std::max(lastStart, lane.startNs[i]);
                    last = std::max(last, lane.endNs[i]);
                }
        const auto w = std::find_if(
            opened.windows.begin(), opened.windows.end(),
            [&](const Digest::Window& w) { return w.finding == -1 && w.rank == rank; });
        QVERIFY2(w != opened.windows.end(), qPrintable(QStringLiteral("rank %1").arg(rank)));
        if (w->narrowed) {
            QVERIFY(w->startNs > lastStart - Digest::kTailWindowNs && w->endNs <= last);
            QVERIFY(w->startNs <= lastStart && lastStart <= w->endNs);
        } else {
            QCOMPARE(w->startNs, lastStart - Digest::kTailWindowNs);
            QCOMPARE(w->endNs, last);
        }
        std::int64_t inside = 0;
        for (std::size_t l = 0; l < fromFolder->events.lanes.size(); ++l) {
            const Lane& lane = fromFolder->events.lanes[l];
            if (lane.rank != rank) continue;
            for (std::size_t i = 0; i < lane.size(); ++i) {
                if (lane.startNs[i] > w->endNs || lane.endNs[i] < w->startNs) continue;
                ++inside;
                const Key key{lane.startNs[i], lane.endNs[i], lane.depth[i],
                              std::string(fromFolder->events.strings.view(lane.nameId[i]))};
                QVERIFY2(kept[l].count(key) > 0,
                         qPrintable(QStringLiteral("rank %1: last event %2 at %3 missing")
                                        .arg(rank)
                                        .arg(QString::fromStdString(std::get<3>(key)))
                                        .arg(lane.startNs[i])));
            }
        }
        QCOMPARE(w->events, inside);
        QVERIFY(inside > 0 && inside <= Digest::kTailWindowEvents);
        // Narrowed only when the whole window held more.
        if (w->narrowed) {
            std::int64_t whole = 0;
            for (const Lane& lane : fromFolder->events.lanes)
                if (lane.rank == rank)
                    for (std::size_t i = 0; i < lane.size(); ++i)
                        whole += lane.startNs[i] <= last &&
                                 lane.endNs[i] >= lastStart - Digest::kTailWindowNs;
            QVERIFY(whole > inside);
        }
    }
    // The hung rank and the straggler are named, and events the reduction drops were kept.
    QVERIFY(windowed.count(5) && windowed.count(2));
    QVERIFY(deep > 0);
}

void TestDigest::olderSchemaIsRefused()
{
    QTemporaryDir out;
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/straggler_w4"), digest),
             QString());
    QCOMPARE(Digest::open(digest).error, QString());
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(digest.toUtf8().constData(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "UPDATE meta SET value = '1' WHERE key = 'schema_version'", nullptr,
                          nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(db);
    const Digest::Opened opened = Digest::open(digest);
    QVERIFY2(opened.error.contains(QStringLiteral("schema 1")), qPrintable(opened.error));
    QVERIFY(!load(digest)->folder.isValid());
}

void TestDigest::rawWindowReadOnDemand()
{
    QTemporaryDir dir;
    QVERIFY(bench::writeDigestJob(dir.path().toStdString(), 4, 2.0, 1, 3) > 2);
    QTemporaryDir out;
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(dir.path(), digest), QString());
    const SessionPtr fromFolder = load(dir.path());
    const SessionPtr fromDigest = load(digest);
    // 10 ms early in rank 2's trace (before the hang's long wait), read independently from the
    // folder's full lanes.
    const int rank = 2;
    std::int64_t first = INT64_MAX, last = INT64_MIN;
    for (const Lane& lane : fromFolder->events.lanes)
        if (lane.rank == rank && lane.size() > 0) {
            first = std::min(first, lane.startNs.front());
            last = std::max(last, lane.endNs.back());
        }
    QVERIFY(first < last);
    const std::int64_t a = first + 8'000'000, b = a + 10'000'000;
    using Key =
        std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, std::string>;
    const auto eventsOf = [&](const EventStore& store, bool window) {
        std::multiset<Key> keys;
        for (const Lane& lane : store.lanes) {
            if (lane.rank != rank) continue;
            for (std::size_t i = 0; i < lane.size(); ++i)
                if (!window || (lane.startNs[i] <= b && lane.endNs[i] >= a))
                    keys.insert({lane.pid, lane.tid, lane.startNs[i], lane.endNs[i], lane.depth[i],
                                 std::string(store.strings.view(lane.nameId[i]))});
        }
        return keys;
    };
    const std::multiset<Key> expected = eventsOf(fromFolder->events, true);
    QVERIFY2(expected.size() > 100,
             qPrintable(QStringLiteral("%1 events in [%2, %3], trace [%4, %5]")
                            .arg(expected.size())
                            .arg(a)
                            .arg(b)
                            .arg(first)
                            .arg(last)));
    // The digest alone lacks most of them: the window adds detail.
    const std::multiset<Key> inDigest = eventsOf(fromDigest->events, true);
    QVERIFY(inDigest.size() * 2 < expected.size());

    const Digest::RawWindow raw = Digest::readRawWindow(fromDigest->folder, rank, a, b);
    QCOMPARE(raw.error, QString());
    QCOMPARE(eventsOf(raw.events, false), expected);

    // The folder moved away: an error naming the file, no events.
    const QString moved = dir.path() + QStringLiteral("_moved");
    QVERIFY(QDir().rename(dir.path(), moved));
    const Digest::RawWindow gone = Digest::readRawWindow(fromDigest->folder, rank, a, b);
    QVERIFY(QDir().rename(moved, dir.path()));
    QVERIFY2(gone.error.contains(QStringLiteral("rank2.pt.trace.json")), qPrintable(gone.error));
    QCOMPARE(gone.events.eventCount(), std::int64_t(0));
    QVERIFY(!Digest::readRawWindow(fromDigest->folder, 99, a, b).error.isEmpty());
}

void TestDigest::partitionKeepsRanksTogetherAndBalances()
{
    QTemporaryDir dir;
    // Rank 0 has two traces; sizes 5, 3 (rank 0 together: 8), 4, 4 MB-ish in bytes.
    const auto write = [&](const QString& name, int rank, std::int64_t bytes) {
        bench::writeSyntheticKineto(dir.filePath(name).toStdString(), bytes, rank,
                                    bench::ArgsProfile::Lean);
    };
    write(QStringLiteral("rank0.json"), 0, 500'000);
    write(QStringLiteral("rank0_gpu.json"), 0, 300'000);
    write(QStringLiteral("rank1.json"), 1, 400'000);
    write(QStringLiteral("rank2.json"), 2, 400'000);
    const TraceFolder folder = TraceFolder::discover(dir.path());
    const std::vector<std::vector<int>> units = Digest::traceUnits(folder);
    QCOMPARE(units.size(), std::size_t(3));
    for (const std::vector<int>& unit : units) {
        std::set<int> ranks;
        for (const int i : unit)
            ranks.insert(folder.sources()[i].rank.value_or(-1));
        QCOMPARE(ranks.size(), std::size_t(1));
    }
    const std::vector<std::vector<int>> two = Digest::partition(folder, units, 2);
    QCOMPARE(two.size(), std::size_t(2));
    // Rank 0 (two files, the most bytes) alone; ranks 1 and 2 on the other process.
    const auto bytesOf = [&](const std::vector<int>& share) {
        qint64 n = 0;
        for (const int u : share)
            for (const int i : units[std::size_t(u)])
                n += folder.sources()[i].sizeBytes;
        return n;
    };
    QCOMPARE(two[0].size() + two[1].size(), units.size());
    const qint64 a = bytesOf(two[0]), b = bytesOf(two[1]);
    QVERIFY(std::max(a, b) <= folder.totalBytes() * 2 / 3);
    QCOMPARE(Digest::partition(folder, units, 2), two);
    // More processes than units: the extra ones get nothing.
    const std::vector<std::vector<int>> eight = Digest::partition(folder, units, 8);
    int busy = 0;
    for (const auto& share : eight)
        busy += share.empty() ? 0 : 1;
    QCOMPARE(busy, 3);
}

void TestDigest::unreadableTraceIsRecordedNotFatal()
{
    // The healthy job with rank 1's trace cut in the middle of an event.
    QTemporaryDir dir;
    const QDir healthy(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy"));
    for (const QString& name : healthy.entryList(QDir::Files)) {
        QFile in(healthy.filePath(name));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray bytes = in.readAll();
        if (name == QLatin1String("rank1.pt.trace.json")) bytes.truncate(bytes.size() / 2);
        QFile out(dir.filePath(name));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(bytes);
    }
    QTemporaryDir out;
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(dir.path(), digest), QString());
    const SessionPtr fromFolder = load(dir.path());
    const SessionPtr fromDigest = load(digest);
    const auto statusOf = [](const SessionPtr& s) {
        for (const SourceFile& f : s->folder.sources())
            if (f.relativePath == QLatin1String("rank1.pt.trace.json")) return f.status;
        return SourceStatus::Ok;
    };
    QVERIFY(statusOf(fromFolder) != SourceStatus::Ok);
    QCOMPARE(statusOf(fromDigest), statusOf(fromFolder));
    compareConclusions(conclusions(fromFolder), conclusions(fromDigest));
}

// A file of no format RankScope reads beside the healthy job is "skipped" in the folder and in
// its digest; a digest written before that status (which listed it "ok") reads it as skipped.
void TestDigest::skippedSourcesStaySkipped()
{
    QTemporaryDir dir;
    const QDir healthy(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy"));
    for (const QString& name : healthy.entryList(QDir::Files))
        QVERIFY(QFile::copy(healthy.filePath(name), dir.filePath(name)));
    const QString png = QStringLiteral("loss_curve.png");
    QFile image(dir.filePath(png));
    QVERIFY(image.open(QIODevice::WriteOnly));
    image.write(QByteArray("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", 16));
    image.close();
    QTemporaryDir out;
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(dir.path(), digest), QString());
    const auto statusOf = [&](const SessionPtr& s) {
        for (const SourceFile& f : s->folder.sources())
            if (f.relativePath == png) return sourceStatusName(f.status);
        return QString();
    };
    const SessionPtr fromFolder = load(dir.path());
    QCOMPARE(statusOf(fromFolder), QStringLiteral("skipped"));
    QCOMPARE(statusOf(load(digest)), QStringLiteral("skipped"));
    compareConclusions(conclusions(fromFolder), conclusions(load(digest)));

    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(digest.toUtf8().constData(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "UPDATE sources SET status = 'ok' WHERE status = 'skipped'", nullptr,
                          nullptr, nullptr),
             SQLITE_OK);
    QCOMPARE(sqlite3_changes(db), 2); // the PNG and the job's ground_truth.json
    sqlite3_close(db);
    QCOMPARE(statusOf(load(digest)), QStringLiteral("skipped"));
}

void TestDigest::notADigestFails()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("broken.rsdigest"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not sqlite at all");
    file.close();
    const SessionPtr s = load(path);
    QVERIFY(!s->folder.isValid());
    QVERIFY(s->folder.error().contains(QStringLiteral("broken.rsdigest")));
    QVERIFY(!load(dir.filePath(QStringLiteral("missing.rsdigest")))->folder.isValid());
}

// Every field of a collective record comes back from the digest as it was: a record with each
// field set to a value of its own (the bools can only be true), none the default, is written and
// read back and compared field by field.
void TestDigest::collectiveRecordRoundTrips()
{
    CollectiveRecord c;
    c.rank = 3;
    c.op = 4;
    c.processGroupName = 5;
    c.processGroupDesc = 6;
    c.groupRanks = 7;
    c.groupSize = 8;
    c.seq = 9'000'000'009;
    c.inNelems = 10'000'000'010;
    c.outNelems = 11'000'000'011;
    c.dtype = 12;
    c.reduceOp = 13;
    c.root = 14;
    c.state = CollectiveRecord::State::Completed;
    c.seqFromSource = true;
    c.coalesced = true;
    c.stateUnknown = true;
    c.issueStartNs = 15'000'000'015;
    c.issueEndNs = 16'000'000'016;
    c.execStartNs = 17'000'000'017;
    c.execEndNs = 18'000'000'018;
    c.step = 19;
    c.laneIndex = 20;
    c.eventIndex = 21'000'000'021;
    c.sourceIndex = 22;
    c.sourceLine = 23;
    using Fields = std::vector<std::pair<std::string, std::int64_t>>;
    const auto fields = [](const CollectiveRecord& r) {
        Fields out;
        CollectiveRecord::forEachField(r, [&out](const char* name, const auto& field) {
            out.emplace_back(name, std::int64_t(field));
        });
        return out;
    };
    const Fields written = fields(c);
    const Fields defaults = fields(CollectiveRecord());
    std::set<std::int64_t> values;
    for (std::size_t i = 0; i < written.size(); ++i) {
        QVERIFY2(written[i].second != defaults[i].second, written[i].first.c_str());
        QVERIFY2(values.insert(written[i].second).second || written[i].second == 1,
                 written[i].first.c_str());
    }

    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    Digest::putCollective(out, c);
    QCOMPARE(bytes.size(), qsizetype(written.size() * sizeof(qint64)));
    QDataStream in(bytes);
    CollectiveRecord back;
    Digest::getCollective(in, back);
    QCOMPARE(in.status(), QDataStream::Ok);
    QVERIFY(in.atEnd());
    const Fields read = fields(back);
    QCOMPARE(read.size(), written.size());
    for (std::size_t i = 0; i < written.size(); ++i)
        QVERIFY2(read[i] == written[i], written[i].first.c_str());
}

// Every field of a lane comes back from the digest as it was, each set to a value of its own.
// The bindings name all of Lane's fields: one added to Lane fails to compile here until it is
// set below, and fails the comparison until the digest carries it.
void TestDigest::laneRoundTrips()
{
    Lane lane;
    auto& [rank, kind, pid, tid, name, processLabel, threadName, startNs, endNs, nameId, category,
           depth, sourceOffset, sourceIndex, maxDepth, unfinished] = lane;
    rank = 3;
    kind = LaneKind::GpuStream;
    pid = 4'000'000'004;
    tid = 5'000'000'005;
    name = "stream 7";
    processLabel = "GPU 0";
    threadName = "stream 7 ";
    startNs = {100, 150, 400};
    endNs = {300, 200, 900};
    nameId = {6, 7, 8};
    category = {EventCategory::Kernel, EventCategory::CommKernel, EventCategory::Memcpy};
    depth = {0, 1, 0};
    sourceOffset = {9, 10, 11};
    sourceIndex = 12;
    maxDepth = 1;
    unfinished = {2};

    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    Digest::putLane(out, lane);
    QDataStream in(bytes);
    Lane back;
    Digest::getLane(in, back);
    QCOMPARE(in.status(), QDataStream::Ok);
    QVERIFY(in.atEnd());
    const auto& [rank2, kind2, pid2, tid2, name2, processLabel2, threadName2, startNs2, endNs2,
                 nameId2, category2, depth2, sourceOffset2, sourceIndex2, maxDepth2, unfinished2] =
        back;
    QCOMPARE(rank2, rank);
    QCOMPARE(kind2, kind);
    QCOMPARE(pid2, pid);
    QCOMPARE(tid2, tid);
    QCOMPARE(name2, name);
    QCOMPARE(processLabel2, processLabel);
    QCOMPARE(threadName2, threadName);
    QCOMPARE(startNs2, startNs);
    QCOMPARE(endNs2, endNs);
    QCOMPARE(nameId2, nameId);
    QVERIFY(category2 == category);
    QCOMPARE(depth2, depth);
    QCOMPARE(sourceOffset2, sourceOffset);
    QCOMPARE(sourceIndex2, sourceIndex);
    QCOMPARE(maxDepth2, maxDepth);
    QCOMPARE(unfinished2, unfinished);
}

// Every field of a flow comes back from the digest as it was, one qint64 each.
void TestDigest::flowRoundTrips()
{
    const FlowLink flow{3, 4, 5, 6, 7};
    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    Digest::putFlow(out, flow);
    QCOMPARE(bytes.size(), qsizetype(5 * sizeof(qint64)));
    QDataStream in(bytes);
    FlowLink back;
    Digest::getFlow(in, back);
    QCOMPARE(in.status(), QDataStream::Ok);
    QVERIFY(in.atEnd());
    const auto [fromLane, toLane, fromEvent, toEvent, category] = back;
    QCOMPARE(fromLane, 3);
    QCOMPARE(toLane, 4);
    QCOMPARE(fromEvent, 5u);
    QCOMPARE(toEvent, 6u);
    QCOMPARE(category, StringId(7));
}

// The folder's warnings come back from the digest as discovery wrote them, quotes and non-ASCII
// file names included: two traces of rank 0 are one warning naming both.
void TestDigest::folderWarningsSurviveTheDigest()
{
    QTemporaryDir dir;
    const QString trace =
        QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout_w2/rank0.pt.trace.json");
    QVERIFY(QFile::copy(trace, dir.filePath(QStringLiteral("rank0.pt.trace.json"))));
    QVERIFY(
        QFile::copy(trace, dir.filePath(QStringLiteral("copy \"\u00fc\" rank0.pt.trace.json"))));
    const QStringList discovered = TraceFolder::discover(dir.path()).warnings();
    QCOMPARE(discovered.size(), 1);
    QVERIFY2(discovered.front().contains(QStringLiteral("\u00fc")), qPrintable(discovered.front()));
    QTemporaryDir out;
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(dir.path(), digest), QString());
    const Digest::Opened opened = Digest::open(digest);
    QCOMPARE(opened.error, QString());
    QCOMPARE(opened.read.folder.warnings(), discovered);
}

QTEST_GUILESS_MAIN(TestDigest)
#include "tst_digest.moc"
