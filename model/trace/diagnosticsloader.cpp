#include "model/trace/diagnosticsloader.h"

#include "model/trace/loadshare.h"
#include "model/trace/logreader.h"
#include "model/trace/traceread.h"

#include <QFile>
#include <new>

namespace rankscope {

namespace {

// Dumps and error files are small; a larger one is not what it claims to be.
constexpr qint64 kMaxDumpBytes = 2LL * 1024 * 1024 * 1024;

QByteArray readAll(const SourceFile& s, QString* error)
{
    QFile file;
    if (!s.openForReading(file, error)) return {};
    if (file.size() > kMaxDumpBytes) {
        *error = QStringLiteral("%1 MB is too large for this kind of file")
                     .arg(file.size() / 1e6, 0, 'f', 0);
        return {};
    }
    return file.readAll();
}

// A Flight Recorder dump as decoded, before it joins the read.
struct DumpRead {
    std::optional<FlightRecorderDump> dump; // null: `error` says why
    QString error;
    int skipped = 0;
    FlightRecorderReader::Cut cut;
    // Entries decoded (those skipped included): what the dump took of the load's budget.
    std::int64_t entries() const { return dump ? std::int64_t(dump->entries.size()) + skipped : 0; }
};

DumpRead readDump(const SourceFile& s, const FlightRecorderReader::Budget& budget)
{
    DumpRead d;
    try {
        const QByteArray bytes = readAll(s, &d.error);
        if (d.error.isEmpty())
            d.dump = FlightRecorderReader::read(bytes, s.relativePath.section(QLatin1Char('/'), -1),
                                                &d.error, &d.skipped, &d.cut, budget);
    } catch (const std::bad_alloc&) {
        d = {};
        d.error = QStringLiteral("out of memory while reading %1; nothing of it is kept")
                      .arg(s.relativePath);
    }
    return d;
}

// Decodes the Flight Recorder dumps among `sources` (all but those discovery refused), sharing
// the load's entry budget among them (LoadShare): indexed like `sources`, empty for the others.
// False when cancelled.
bool readDumps(const QList<SourceFile>& sources, const std::function<bool()>& cancelled,
               const FlightRecorderReader::Budget& budget, std::vector<DumpRead>& out)
{
    out.assign(std::size_t(sources.size()), {});
    std::vector<std::size_t> round;
    for (qsizetype i = 0; i < sources.size(); ++i)
        if (sources[i].kind == SourceKind::FlightRecorder &&
            sources[i].status != SourceStatus::Error)
            round.push_back(std::size_t(i));
    LoadShare share =
        LoadShare::even({budget.maxEntriesPerLoad}, {budget.maxEntries}, round.size());
    const auto stoppedByLoad = [&](const DumpRead& d) {
        return d.cut.limit == LoadLimit::DumpEntries && share.isLoadLimit(0);
    };
    do {
        FlightRecorderReader::Budget capped = budget;
        capped.maxEntries = share.caps()[0];
        std::vector<std::size_t> stopped;
        for (const std::size_t i : round) {
            if (cancelled && cancelled()) return false;
            out[i] = {}; // before the read again, so both are never held
            out[i] = readDump(sources[qsizetype(i)], capped);
            if (stoppedByLoad(out[i]))
                stopped.push_back(i);
            else
                share.ended({out[i].entries()});
        }
        round = std::move(stopped);
    } while (share.grow());
    for (const std::size_t i : round)
        out[i].cut = {LoadLimit::DumpEntriesPerLoad,
                      QStringLiteral("stopped at its share of the load's budget of %1 Flight "
                                     "Recorder entries: %2 for each of the %3 dumps that need "
                                     "more than the others left (the rest of the file is not "
                                     "read)")
                          .arg(share.perLoad(0))
                          .arg(share.caps()[0])
                          .arg(share.stopped())};
    return true;
}

// Adds dump `i` of read.folder, as decoded, to `read` and sets its status.
void addDump(TraceRead& read, int i, const SourceFile& s, DumpRead d)
{
    TraceFolder& folder = read.folder;
    std::optional<FlightRecorderDump>& dump = d.dump;
    if (!dump) {
        folder.setSourceStatus(i, SourceStatus::Error, d.error);
        return;
    }
    dump->sourceIndex = i;
    if (!dump->rank) dump->rank = s.rank;
    QString message = QStringLiteral("%1 entries, version %2")
                          .arg(dump->entries.size())
                          .arg(QString::fromStdString(dump->version));
    if (d.skipped)
        message += QStringLiteral("; %1 entries without profiling_name skipped").arg(d.skipped);
    if (!dump->rank) {
        message += QStringLiteral("; rank unknown, entries not matched");
        read.warnings.append(
            QStringLiteral("%1: Flight Recorder dump whose rank cannot be told from its name")
                .arg(s.relativePath));
    }
    const FlightRecorderReader::Cut& cut = d.cut;
    if (cut.limit != LoadLimit::None) message += QStringLiteral("; ") + cut.reason;
    folder.setSourceStatus(
        i, cut.limit == LoadLimit::None ? SourceStatus::Ok : SourceStatus::Truncated, message,
        cut.limit);
    FlightRecorderReader::appendCollectives(*dump, read.events);
    read.dumps.push_back(std::move(*dump));
}

// Reads error file `i` of read.folder into `read`, or adds dump `i` as decoded, and sets its
// status.
void readDiagnosticSource(TraceRead& read, int i, const SourceFile& s, DumpRead& decoded)
{
    TraceFolder& folder = read.folder;
    switch (s.kind) {
    case SourceKind::FlightRecorder:
        addDump(read, i, s, std::move(decoded));
        return;
    case SourceKind::ElasticError: {
        QString error;
        const QByteArray bytes = readAll(s, &error);
        std::optional<ElasticError> e;
        if (error.isEmpty()) e = ElasticErrorReader::readErrorFile(bytes, &error);
        if (!e) {
            folder.setSourceStatus(i, SourceStatus::Error, error);
            return;
        }
        e->sourceIndex = i;
        e->rank = s.rank;
        folder.setSourceStatus(i, SourceStatus::Ok,
                               QString::fromStdString(e->exceptionType.empty()
                                                          ? e->message
                                                          : e->exceptionType + ": " + e->message)
                                   .section(QLatin1Char('\n'), 0, 0)
                                   .left(200));
        read.errors.push_back(std::move(*e));
        return;
    }
    default:
        return;
    }
}

} // namespace

void readDiagnosticSources(TraceRead& read, const std::function<bool()>& cancelled,
                           const FlightRecorderReader::Budget& budget)
{
    TraceFolder& folder = read.folder;
    const QList<SourceFile> sources = folder.sources();
    std::vector<DumpRead> decoded;
    if (!readDumps(sources, cancelled, budget, decoded)) return;
    for (int i = 0; i < sources.size(); ++i) {
        if (cancelled && cancelled()) return;
        const SourceFile& s = sources[i];
        if (s.status == SourceStatus::Error) continue; // discovery already said why
        const std::size_t collectives = read.events.collectives.size();
        const std::size_t dumps = read.dumps.size(), errors = read.errors.size();
        const qsizetype warnings = read.warnings.size();
        try {
            readDiagnosticSource(read, i, s, decoded[std::size_t(i)]);
        } catch (const std::bad_alloc&) {
            // Out of memory in one file costs that file only: what it added is dropped.
            read.events.collectives.resize(collectives);
            read.dumps.resize(dumps);
            read.errors.resize(errors);
            read.warnings.resize(warnings);
            folder.setSourceStatus(
                i, SourceStatus::Error,
                QStringLiteral("out of memory while reading %1; nothing of it is kept")
                    .arg(s.relativePath));
        }
    }
}

void addLogStreams(TraceRead& read, LogReader::Result result, SourceKind kind)
{
    const bool combined = kind == SourceKind::LauncherLog;
    for (RankLog& log : result.streams) {
        if (combined && !log.rank) {
            std::vector<ElasticError> box = ElasticErrorReader::readLauncherLog(log);
            read.errors.insert(read.errors.end(), box.begin(), box.end());
        }
        read.logs.push_back(std::move(log));
    }
}

} // namespace rankscope
