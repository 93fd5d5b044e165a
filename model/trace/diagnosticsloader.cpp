#include "model/trace/diagnosticsloader.h"

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

// Reads dump or error file `i` of read.folder into `read` and sets its status.
void readDiagnosticSource(TraceRead& read, int i, const SourceFile& s,
                          const FlightRecorderReader::Budget& budget)
{
    TraceFolder& folder = read.folder;
    switch (s.kind) {
    case SourceKind::FlightRecorder: {
        QString error;
        const QByteArray bytes = readAll(s, &error);
        int skipped = 0;
        FlightRecorderReader::Cut cut;
        std::optional<FlightRecorderDump> dump;
        if (error.isEmpty())
            dump = FlightRecorderReader::read(bytes, s.relativePath.section(QLatin1Char('/'), -1),
                                              &error, &skipped, &cut, budget);
        if (!dump) {
            folder.setSourceStatus(i, SourceStatus::Error, error);
            return;
        }
        dump->sourceIndex = i;
        if (!dump->rank) dump->rank = s.rank;
        QString message = QStringLiteral("%1 entries, version %2")
                              .arg(dump->entries.size())
                              .arg(QString::fromStdString(dump->version));
        if (skipped)
            message += QStringLiteral("; %1 entries without profiling_name skipped").arg(skipped);
        if (!dump->rank) {
            message += QStringLiteral("; rank unknown, entries not matched");
            read.warnings.append(
                QStringLiteral("%1: Flight Recorder dump whose rank cannot be told from its name")
                    .arg(s.relativePath));
        }
        if (cut.limit != LoadLimit::None) message += QStringLiteral("; ") + cut.reason;
        folder.setSourceStatus(
            i, cut.limit == LoadLimit::None ? SourceStatus::Ok : SourceStatus::Truncated, message,
            cut.limit);
        FlightRecorderReader::appendCollectives(*dump, read.events);
        read.dumps.push_back(std::move(*dump));
        return;
    }
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
    for (int i = 0; i < sources.size(); ++i) {
        if (cancelled && cancelled()) return;
        const SourceFile& s = sources[i];
        if (s.status == SourceStatus::Error) continue; // discovery already said why
        const std::size_t collectives = read.events.collectives.size();
        const std::size_t dumps = read.dumps.size(), errors = read.errors.size();
        const qsizetype warnings = read.warnings.size();
        try {
            readDiagnosticSource(read, i, s, budget);
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
