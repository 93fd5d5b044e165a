#pragma once

#include "model/analysis/timebreakdown.h"
#include "model/digest/digestdetail.h"
#include "model/trace/traceread.h"

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace rankscope {

// A digest (.rsdigest, one SQLite file) is what the analysis needs of a trace folder, small
// enough to copy off a cluster: the folder's source list, the small sources (logs, Flight
// Recorder dumps, error files) whole, every trace's collective records and a level-of-detail
// reduction of its lanes (see README.md, "Large jobs"), and the per-rank time breakdown of the
// full lanes. Opening it runs the same readers and diagnose() as opening the folder.
namespace Digest {

// 2: the finding windows (table `windows`); 3: the last events of each rank as a time window
// (a row of `windows` with finding -1).
constexpr int kSchemaVersion = 3;
// Of a trace's bytes, what its reduced lanes may take (about 16 bytes per kept event).
constexpr double kLaneShare = 0.004;
constexpr std::int64_t kBytesPerKeptEvent = 16;
// Of all traces together, what the reduced lanes may take: past 64 GB of traces (1,024 ranks of
// 64 MB) each rank's share is its part of this, so the digest stays a few hundred MB.
constexpr std::int64_t kMaxLaneBytes = std::int64_t(256) << 20;
// The last events of every lane, kept at full detail (where each lane stopped).
constexpr std::size_t kTailEvents = 16;
// Where a hung rank stopped, across its lanes: every event of the rank from kTailWindowNs before
// its last event starts to when its last event ends, at full detail; past kTailWindowEvents
// events (and past a quarter of the rank's kept-event budget, so that the digest stays within its
// share on small traces) the window narrows around that last start until they fit. A Window with
// finding -1.
constexpr std::int64_t kTailWindowNs = 20'000'000;
constexpr std::int64_t kTailWindowEvents = 2048;
// Around every finding with a trace interval, on each rank it names, every event of the
// interval widened by kWindowMarginNs on both sides is kept at full detail; at most
// kWindowEvents events per finding (shared by its ranks, at least kWindowEventsPerRank each):
// past that, the window narrows around the finding's start until its events fit.
constexpr std::int64_t kWindowMarginNs = 10'000'000;
constexpr std::int64_t kWindowEvents = 16384;
constexpr std::int64_t kWindowEventsPerRank = 1024;

// The trace sources of a folder in units that are digested whole: a rank's traces together (its
// time breakdown is a union over all of them), a trace of no rank alone. Sorted by first source.
std::vector<std::vector<int>> traceUnits(const TraceFolder& folder);
// The units split between `processes` balanced by bytes: largest unit first to the least loaded
// process (ties by unit order, then process number), so every process count splits the same
// folder the same way each time. Per process, the indices of its units.
std::vector<std::vector<int>> partition(const TraceFolder& folder,
                                        const std::vector<std::vector<int>>& units, int processes);

// One process's share of a folder: the trace sources of `units` (of traceUnits()) read one unit
// at a time, kept reduced with their ranks' time breakdown; a unit whose ranks a finding names
// is read again for its window (part()), so a process holds at most one unit's events.
// `progress(source, path)` is called before each source is read (again).
class Share {
public:
    Share(const TraceFolder& folder, const std::vector<std::vector<int>>& units,
          const std::function<void(int, const QString&)>& progress = {});
    ~Share();
    Share(const Share&) = delete;
    Share& operator=(const Share&) = delete;
    // The bytes this process contributes: its reduced lanes, collectives and breakdown, with the
    // events of `windows` (of findingWindows(); none when empty) kept at full detail.
    QByteArray part(const QByteArray& windows = {}) const;

private:
    struct Unit;
    std::unique_ptr<TraceFolder> m_folder; // with the ranks the traces state
    std::function<void(int, const QString&)> m_progress;
    std::vector<Unit> m_units;
    std::vector<RankTimeBreakdown> m_breakdown;
    std::int64_t m_traceBytes = 0; // of all the folder's traces
};

// The root's first step: diagnoses the parts (Share::part() without windows) and returns the
// windows around its findings, for every process's second part.
QByteArray findingWindows(const TraceFolder& discovered, const std::vector<QByteArray>& parts);

// What a digest gives the analysis: the read (reduced lanes) and the breakdown of the full lanes.
struct Opened {
    TraceRead read;
    std::vector<RankTimeBreakdown> breakdown;
    std::vector<Window> windows;         // the full-detail windows around the findings
    std::map<int, Reduction> reductions; // by rank, of its trace sources together
    QString error; // why the file is no digest (or not this version); empty when it opened
};

// The root's last step: `discovered` as TraceFolder::discover listed it, `parts` the bytes of
// Share::part(findingWindows(...)) from every process (any order: they are merged by source index).
// Reads the folder's other sources, diagnoses, and writes the digest to `path`. Returns an error or
// "".
QString write(const QString& path, const TraceFolder& discovered,
              const std::vector<QByteArray>& parts, Opened* assembled = nullptr);
// The whole digest in one process.
QString create(const QString& folder, const QString& path);
Opened open(const QString& path);
bool isDigestPath(const QString& path);

// Below a digest's resolution: the events of `rank`'s trace sources in `folder` (a digest's,
// as open() restored it) that overlap [startNs, endNs] on the rank's clock, read again from the
// original files when they are still at the folder's recorded path with their recorded size.
// Every lane of the rank in the order the folder reads them, empty ones too; no collectives or
// flows. On error (a file moved or changed, unreadable, no trace of the rank) `error` says why
// and `events` is empty.
struct RawWindow {
    EventStore events;
    QString error;
};
RawWindow readRawWindow(const TraceFolder& folder, int rank, std::int64_t startNs,
                        std::int64_t endNs);

} // namespace Digest

} // namespace rankscope
