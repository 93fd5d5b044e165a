#include "model/trace/tracefolder.h"

#include "model/trace/flightrecorderreader.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <algorithm>
#include <map>
#include <set>

namespace rankscope {

namespace {

constexpr qint64 kSniffBytes = 64 * 1024;

bool isInside(const QString& canonicalRoot, const QString& canonicalPath)
{
    return canonicalPath == canonicalRoot ||
           canonicalPath.startsWith(canonicalRoot + QLatin1Char('/'));
}

// True when the head looks like text (no NUL bytes, mostly printable).
bool looksLikeText(const QByteArray& head)
{
    if (head.isEmpty()) return false;
    qsizetype control = 0;
    for (char c : head) {
        const auto u = static_cast<unsigned char>(c);
        if (u == 0) return false;
        if (u < 0x20 && u != '\n' && u != '\r' && u != '\t') ++control;
    }
    return control * 100 < head.size();
}

QByteArray firstNonSpace(const QByteArray& head, qsizetype count)
{
    qsizetype i = 0;
    if (head.startsWith("\xEF\xBB\xBF")) i = 3;
    while (i < head.size() && QChar::isSpace(static_cast<unsigned char>(head[i])))
        ++i;
    return head.mid(i, count);
}

} // namespace

SourceKind TraceFolder::sniffKind(const QString& fileName, const QByteArray& head)
{
    if (head.startsWith("\x1f\x8b")) {
        // Compressed: the profiler is the only producer of .json.gz in these folders.
        return fileName.contains(QLatin1String(".json"), Qt::CaseInsensitive) ||
                       fileName.contains(QLatin1String("trace"), Qt::CaseInsensitive)
                   ? SourceKind::Kineto
                   : SourceKind::Unknown;
    }
    if (head.startsWith("\x80")) // pickle protocol 2+: Flight Recorder's default dump format
        return SourceKind::FlightRecorder;

    const QByteArray start = firstNonSpace(head, 1);
    if (start == "{" || start == "[") {
        if (head.contains("\"traceEvents\"")) return SourceKind::Kineto;
        if (head.contains("\"pg_config\"") || head.contains("\"entries\"") ||
            head.contains("\"pg_status\""))
            return SourceKind::FlightRecorder;
        // A cut error file may have lost "extraInfo"; torchelastic names them error.json.
        if (head.contains("\"message\"") &&
            (head.contains("\"extraInfo\"") ||
             fileName.contains(QLatin1String("error"), Qt::CaseInsensitive)))
            return SourceKind::ElasticError;
        if (head.contains("NEGOTIATE_") || head.contains("start_time_since_epoch_in_micros"))
            return SourceKind::HorovodTimeline;
        if (start == "[" && head.contains("\"ph\"")) return SourceKind::Kineto;
        // A JSON document that is not one of the above is not ours. Text that merely starts
        // with '[' (a rank tag "[rank3]:", a timestamp "[2024-05-01 12:00:00,123]", glog's
        // "[W socket.cpp:…]") is a log: a JSON array holds objects, arrays or strings.
        const QByteArray second = firstNonSpace(firstNonSpace(head, head.size()).mid(1), 1);
        const bool jsonArray = start == "[" && (second.isEmpty() || second == "{" ||
                                                second == "[" || second == "\"" || second == "]");
        if (start == "{" || jsonArray) return SourceKind::Unknown;
    }
    if (!looksLikeText(head)) return SourceKind::Unknown;

    const int ncclLines = head.count("NCCL INFO") + head.count("NCCL WARN");
    const int allLines = std::max<qsizetype>(1, head.count('\n'));
    if (ncclLines * 2 >= allLines) return SourceKind::NcclLog;
    static const QRegularExpression launcherHint(
        QStringLiteral("WARNING:torch\\.distributed\\.run:|torch\\.distributed\\.elastic\\.|"
                       "\\[\\d+(?:,\\d+)?\\]<std(?:out|err)>:|^\\[(?:default|rank)\\d+\\]:"),
        QRegularExpression::MultilineOption);
    if (launcherHint.match(QString::fromUtf8(head)).hasMatch() &&
        !rankFromFileName(fileName).has_value())
        return SourceKind::LauncherLog;
    return SourceKind::Log;
}

std::optional<int> TraceFolder::rankFromFileName(const QString& fileName)
{
    // "rank" or "worker" followed by an optional separator and digits, not preceded by a letter
    // (so "frank2" is not a rank). Flight Recorder dumps end in the rank: nccl_trace_rank_3.
    static const QRegularExpression pattern(
        QStringLiteral("(?<![A-Za-z])(?:rank|worker)[-_ .]?(\\d+)(?!\\d)"),
        QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = pattern.match(fileName);
    if (!m.hasMatch()) return std::nullopt;
    bool ok = false;
    const int rank = m.captured(1).toInt(&ok);
    if (!ok || rank < 0 || rank > 1'000'000) return std::nullopt;
    return rank;
}

std::optional<int> TraceFolder::attributeRank(const QString& fileName, SourceKind kind,
                                              const QByteArray& head, QString* evidence,
                                              int* statedWorldSize)
{
    *statedWorldSize = 0;
    const auto number = [](const QString& text) {
        bool ok = false;
        const int v = text.toInt(&ok);
        return ok && v >= 0 && v <= 1'000'000 ? std::optional<int>(v) : std::nullopt;
    };
    if (kind == SourceKind::Kineto && !head.startsWith("\x1f\x8b")) {
        // The profiler writes distributedInfo near the top, before traceEvents.
        static const QRegularExpression info(
            QStringLiteral("\"distributedInfo\"\\s*:\\s*\\{([^}]*)\\}"));
        const QRegularExpressionMatch m = info.match(QString::fromUtf8(head));
        if (m.hasMatch()) {
            static const QRegularExpression rank(QStringLiteral("\"rank\"\\s*:\\s*(\\d+)"));
            static const QRegularExpression world(QStringLiteral("\"world_size\"\\s*:\\s*(\\d+)"));
            if (const auto w = world.match(m.captured(1)); w.hasMatch())
                *statedWorldSize = number(w.captured(1)).value_or(0);
            if (const auto r = rank.match(m.captured(1)); r.hasMatch()) {
                if (const auto v = number(r.captured(1))) {
                    *evidence = QStringLiteral("distributedInfo.rank in the trace");
                    return v;
                }
            }
        }
    }
    if (kind == SourceKind::FlightRecorder) {
        if (const auto r = FlightRecorderReader::rankFromFileName(fileName)) {
            *evidence = QStringLiteral("Flight Recorder file-name suffix '%1'").arg(fileName);
            return r;
        }
    }
    const bool text =
        kind == SourceKind::NcclLog || kind == SourceKind::Log || kind == SourceKind::LauncherLog;
    if (text) {
        static const QRegularExpression worldSize(
            QStringLiteral("\\b(?:world_size|WORLD_SIZE)\\s*[=:]\\s*(\\d+)|\\bnranks (\\d+)"));
        auto it = worldSize.globalMatch(QString::fromUtf8(head));
        while (it.hasNext()) {
            const auto m = it.next();
            const int n = number(m.captured(m.hasCaptured(1) ? 1 : 2)).value_or(0);
            *statedWorldSize = std::max(*statedWorldSize, n);
        }
    }
    if (kind == SourceKind::LauncherLog) return std::nullopt; // split into streams by the reader
    if (kind != SourceKind::Unknown) {
        if (const auto r = rankFromFileName(fileName)) {
            *evidence = QStringLiteral("file name '%1'").arg(fileName);
            return r;
        }
    }
    if (kind == SourceKind::HorovodTimeline) {
        // Horovod writes its timeline on the coordinator only: the file's spans are rank 0's;
        // the other ranks appear in it only as readiness ticks, which the reader attributes.
        *evidence = QStringLiteral("Horovod timeline, written by the coordinator (rank 0)");
        return 0;
    }
    if (kind == SourceKind::NcclLog) {
        // Every communicator this process joined has an init line; the rank in the largest one
        // (the world) is the process's rank. Disagreeing world-sized lines: not one rank's log.
        static const QRegularExpression init(QStringLiteral("\\brank (\\d+) nranks (\\d+)\\b"));
        auto it = init.globalMatch(QString::fromUtf8(head));
        int bestRanks = 0;
        std::set<int> ranks;
        while (it.hasNext()) {
            const auto m = it.next();
            const int r = m.captured(1).toInt(), n = m.captured(2).toInt();
            if (n > bestRanks) {
                bestRanks = n;
                ranks.clear();
            }
            if (n == bestRanks) ranks.insert(r);
        }
        if (ranks.size() == 1) {
            *evidence = QStringLiteral("NCCL init line 'rank %1 nranks %2'")
                            .arg(*ranks.begin())
                            .arg(bestRanks);
            return *ranks.begin();
        }
    }
    return std::nullopt;
}

void TraceFolder::setSourceStatus(int index, SourceStatus status, const QString& message)
{
    if (index < 0 || index >= m_sources.size()) return;
    m_sources[index].status = status;
    m_sources[index].message = message;
}

TraceFolder TraceFolder::discover(const QString& dir, const std::function<bool()>& cancelled)
{
    TraceFolder folder;
    const QFileInfo rootInfo(dir);
    folder.m_path = rootInfo.absoluteFilePath();
    if (!rootInfo.exists()) {
        folder.m_error = QStringLiteral("no such folder: %1").arg(dir);
        return folder;
    }
    if (!rootInfo.isDir()) {
        folder.m_error = QStringLiteral("not a folder: %1").arg(dir);
        return folder;
    }
    if (!rootInfo.isReadable() || !rootInfo.isExecutable()) {
        folder.m_error = QStringLiteral("folder is not readable: %1").arg(dir);
        return folder;
    }
    const QString canonicalRoot = rootInfo.canonicalFilePath();
    const QDir root(canonicalRoot);

    int statedWorldSize = 0;
    QDirIterator it(canonicalRoot, QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        if (cancelled && cancelled()) break;
        const QString path = it.next();
        const QFileInfo info = it.fileInfo();
        // A link may point anywhere; only read what stays inside the folder.
        if (info.isSymLink() && !isInside(canonicalRoot, info.canonicalFilePath())) continue;
        if (!isInside(canonicalRoot, info.canonicalPath())) continue;

        SourceFile source;
        source.absolutePath = info.absoluteFilePath();
        source.relativePath = root.relativeFilePath(path);
        source.sizeBytes = info.size();

        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            source.status = SourceStatus::Error;
            source.message = QStringLiteral("cannot open: %1").arg(file.errorString());
        } else if (source.sizeBytes == 0) {
            source.status = SourceStatus::Error;
            source.message = QStringLiteral("empty file");
        } else {
            const QByteArray head = file.read(kSniffBytes);
            source.kind = sniffKind(info.fileName(), head);
            if (source.kind == SourceKind::Unknown)
                source.message = QStringLiteral("not a trace, dump or log that RankScope reads");
            int stated = 0;
            source.rank =
                attributeRank(info.fileName(), source.kind, head, &source.rankEvidence, &stated);
            statedWorldSize = std::max(statedWorldSize, stated);
        }
        folder.m_sources.append(source);
    }
    std::sort(folder.m_sources.begin(), folder.m_sources.end(),
              [](const SourceFile& a, const SourceFile& b) {
                  if (a.rank != b.rank) return a.rank.value_or(INT_MAX) < b.rank.value_or(INT_MAX);
                  return a.relativePath < b.relativePath;
              });
    const QList<int> ranks = folder.ranks();
    folder.m_worldSize = std::max(ranks.isEmpty() ? 0 : ranks.last() + 1, statedWorldSize);
    std::map<std::pair<int, SourceKind>, QStringList> claims;
    for (const SourceFile& s : folder.m_sources)
        if (s.rank) claims[{*s.rank, s.kind}].append(s.relativePath);
    for (const auto& [key, paths] : claims)
        if (paths.size() > 1)
            folder.m_warnings.append(
                QStringLiteral("rank %1 is claimed by %2 %3 files: %4")
                    .arg(key.first)
                    .arg(paths.size())
                    .arg(sourceKindName(key.second), paths.join(QStringLiteral(", "))));
    return folder;
}

QList<SourceFile> TraceFolder::sourcesOfRank(int rank) const
{
    QList<SourceFile> result;
    for (const SourceFile& s : m_sources)
        if (s.rank == rank) result.append(s);
    return result;
}

QList<SourceFile> TraceFolder::unattributedSources() const
{
    QList<SourceFile> result;
    for (const SourceFile& s : m_sources)
        if (!s.rank) result.append(s);
    return result;
}

QList<int> TraceFolder::ranks() const
{
    std::set<int> distinct;
    for (const SourceFile& s : m_sources)
        if (s.rank) distinct.insert(*s.rank);
    return QList<int>(distinct.begin(), distinct.end());
}

qint64 TraceFolder::totalBytes() const
{
    qint64 total = 0;
    for (const SourceFile& s : m_sources)
        total += s.sizeBytes;
    return total;
}

} // namespace rankscope
