#pragma once

#include "model/analysis/timebreakdown.h"
#include "model/trace/traceread.h"

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <vector>

namespace rankscope {

// A digest (.rsdigest, one SQLite file) is what the analysis needs of a trace folder, small
// enough to copy off a cluster: the folder's source list, the small sources (logs, Flight
// Recorder dumps, error files) whole, every trace's collective records and a level-of-detail
// reduction of its lanes (see README.md, "Large jobs"), and the per-rank time breakdown of the
// full lanes. Opening it runs the same readers and diagnose() as opening the folder.
namespace Digest {

constexpr int kSchemaVersion = 1;
// Of a trace's bytes, what its reduced lanes may take (about 16 bytes per kept event).
constexpr double kLaneShare = 0.004;
constexpr std::int64_t kBytesPerKeptEvent = 16;
// The last events of every lane, kept at full detail (where a hung rank stopped).
constexpr std::size_t kTailEvents = 64;

// The trace sources of a folder in units that are digested whole: a rank's traces together (its
// time breakdown is a union over all of them), a trace of no rank alone. Sorted by first source.
std::vector<std::vector<int>> traceUnits(const TraceFolder& folder);
// The units split between `processes` balanced by bytes: largest unit first to the least loaded
// process (ties by unit order, then process number), so every process count splits the same
// folder the same way each time. Per process, the indices of its units.
std::vector<std::vector<int>> partition(const TraceFolder& folder,
                                        const std::vector<std::vector<int>>& units, int processes);

// Reads the trace sources of `units` (of traceUnits()), reduces their lanes and computes their
// ranks' time breakdown: the bytes one process contributes. `progress(source, path)` is called
// before each source is read.
QByteArray digestUnits(const TraceFolder& folder, const std::vector<std::vector<int>>& units,
                       const std::function<void(int, const QString&)>& progress = {});

// What a digest gives the analysis: the read (reduced lanes) and the breakdown of the full lanes.
struct Opened {
    TraceRead read;
    std::vector<RankTimeBreakdown> breakdown;
    QString error; // why the file is no digest (or not this version); empty when it opened
};

// The root's part: `discovered` as TraceFolder::discover listed it, `parts` the bytes of
// digestUnits from every process (any order: they are merged by source index). Reads the
// folder's other sources, diagnoses, and writes the digest to `path`. Returns an error or "".
QString write(const QString& path, const TraceFolder& discovered,
              const std::vector<QByteArray>& parts, Opened* assembled = nullptr);
// The whole digest in one process.
QString create(const QString& folder, const QString& path);
Opened open(const QString& path);
bool isDigestPath(const QString& path);

} // namespace Digest

} // namespace rankscope
