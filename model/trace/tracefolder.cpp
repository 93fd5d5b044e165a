#include "model/trace/tracefolder.h"

#include "model/trace/flightrecorderreader.h"
#include "model/trace/gzipinput.h"
#include "model/trace/jsonscanner.h"
#include "model/trace/logtext.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace rankscope {

namespace {

constexpr qint64 kSniffBytes = 64 * 1024;
constexpr qint64 kTailBytes = 64 * 1024;
// A compressed file is inflated only this far during discovery; distributedInfo further in is
// read by the Kineto reader, which inflates the whole file anyway (no second pass over it).
constexpr qsizetype kInflatedHeadBytes = 256 * 1024;

bool isInside(const QString& canonicalRoot, const QString& canonicalPath)
{
    return canonicalPath == canonicalRoot ||
           canonicalPath.startsWith(canonicalRoot + QLatin1Char('/'));
}

QString errnoText(int code)
{
    return QString::fromLocal8Bit(std::strerror(code));
}

QString fileTypeName(mode_t mode)
{
    if (S_ISFIFO(mode)) return QStringLiteral("a FIFO (named pipe)");
    if (S_ISSOCK(mode)) return QStringLiteral("a socket");
    if (S_ISCHR(mode)) return QStringLiteral("a character device");
    if (S_ISBLK(mode)) return QStringLiteral("a block device");
    if (S_ISDIR(mode)) return QStringLiteral("a folder");
    if (S_ISLNK(mode)) return QStringLiteral("a link");
    return QStringLiteral("not a regular file");
}

class Fd {
public:
    explicit Fd(int fd = -1) : m_fd(fd) {}
    ~Fd()
    {
        if (m_fd >= 0) ::close(m_fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }
    int release() { return std::exchange(m_fd, -1); }
    void reset(int fd)
    {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = fd;
    }

private:
    int m_fd;
};

struct OpenedFile {
    int fd = -1; // owned by the caller when >= 0
    QString resolvedPath;
    qint64 size = 0;
    QString error; // why the file is not opened
};

// Opens `path` (listed under `canonicalRoot`) as a regular file. A link is resolved first and
// must stay inside the folder; then the file is opened one component at a time from the folder's
// descriptor, none followed if it is a link, so a component swapped meanwhile cannot lead out.
// The type is checked before opening (a device is never opened) and again on the descriptor.
OpenedFile openInside(int rootFd, const QString& canonicalRoot, const QString& path)
{
    OpenedFile r;
    const QByteArray native = QFile::encodeName(path);
    struct stat st {};
    if (::lstat(native.constData(), &st) != 0) {
        r.error = QStringLiteral("cannot open: %1").arg(errnoText(errno));
        return r;
    }
    QString target = path;
    QString via;
    if (S_ISLNK(st.st_mode)) {
        via = QStringLiteral("link to ");
        char resolved[PATH_MAX];
        if (!::realpath(native.constData(), resolved)) {
            const int code = errno;
            r.error = code == ELOOP ? QStringLiteral("link loop; not followed")
                      : code == ENOENT
                          ? QStringLiteral("link to nothing; not followed")
                          : QStringLiteral("link not followed: %1").arg(errnoText(code));
            return r;
        }
        target = QFile::decodeName(resolved);
        if (target == canonicalRoot) {
            r.error = QStringLiteral("link to the folder itself; not followed");
            return r;
        }
        if (!isInside(canonicalRoot, target)) {
            struct stat to {};
            const bool folder = ::stat(resolved, &to) == 0 && S_ISDIR(to.st_mode);
            r.error = QStringLiteral("link to a %1 outside the folder; not followed")
                          .arg(folder ? QStringLiteral("folder") : QStringLiteral("file"));
            return r;
        }
    }
    const QStringList parts =
        target.mid(canonicalRoot.size() + 1).split(QLatin1Char('/'), Qt::SkipEmptyParts);
    Fd dir(::fcntl(rootFd, F_DUPFD_CLOEXEC, 0));
    for (qsizetype i = 0; i + 1 < parts.size() && dir.get() >= 0; ++i)
        dir.reset(::openat(dir.get(), QFile::encodeName(parts[i]).constData(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.get() < 0 || parts.isEmpty()) {
        r.error = QStringLiteral("moved while the folder was opened; not read");
        return r;
    }
    const QByteArray name = QFile::encodeName(parts.last());
    if (::fstatat(dir.get(), name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        r.error = QStringLiteral("cannot open: %1").arg(errnoText(errno));
        return r;
    }
    if (S_ISDIR(st.st_mode)) { // only a link reaches here: the folder's files are listed as such
        r.error = QStringLiteral("link to a folder inside the folder; not followed");
        return r;
    }
    if (!S_ISREG(st.st_mode)) {
        r.error = QStringLiteral("%1%2: not read").arg(via, fileTypeName(st.st_mode));
        return r;
    }
    Fd fd(::openat(dir.get(), name.constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat opened {};
    if (fd.get() < 0) {
        // O_NOFOLLOW refuses a link with ELOOP: a link put in the file's place since the lstat
        // above is refused as the link it now is, not as an unreadable file.
        const int code = errno;
        r.error = code == ELOOP ? QStringLiteral("%1%2: not read").arg(via, fileTypeName(S_IFLNK))
                                : QStringLiteral("cannot open: %1").arg(errnoText(code));
        return r;
    }
    if (::fstat(fd.get(), &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_dev != st.st_dev ||
        opened.st_ino != st.st_ino) {
        r.error = QStringLiteral("replaced while the folder was opened; not read");
        return r;
    }
    r.size = qint64(opened.st_size);
    r.resolvedPath = target;
    r.fd = fd.release();
    return r;
}

QByteArray readAt(int fd, qint64 offset, qint64 count)
{
    QByteArray bytes(count, Qt::Uninitialized);
    qint64 have = 0;
    while (have < count) {
        const ssize_t got =
            ::pread(fd, bytes.data() + have, std::size_t(count - have), off_t(offset + have));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        have += got;
    }
    bytes.truncate(have);
    return bytes;
}

// The first kInflatedHeadBytes a gzip file inflates to; `error` says why it cannot be inflated.
QByteArray inflateHead(int fd, QString* error)
{
    GzipInput in(fd, GzipInput::Descriptor::Borrowed);
    QByteArray out(kInflatedHeadBytes, Qt::Uninitialized);
    qsizetype have = 0;
    while (have < out.size()) {
        const std::int64_t got = in.read(out.data() + have, std::size_t(out.size() - have));
        if (got < 0) {
            *error = QStringLiteral("corrupt gzip: %1").arg(QString::fromStdString(in.error()));
            break;
        }
        if (got == 0) break;
        have += qsizetype(got);
    }
    out.truncate(have);
    return out;
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

// A file named as a log (.log, .txt, .out, .err) whose head is binary junk followed by lines of
// text (a node that crashed while its disk was being written, a log appended to a reused file):
// the text after the last junk byte is at least two lines and reads as text. Its junk is
// skipped by the log reader (logTextForAnalysis), its lines are read.
bool textAfterJunk(const QString& fileName, const QByteArray& head)
{
    static const QRegularExpression logName(QStringLiteral("\\.(log|txt|out|err)$"),
                                            QRegularExpression::CaseInsensitiveOption);
    if (!logName.match(fileName).hasMatch()) return false;
    qsizetype junkEnd = 0; // one past the last NUL or control byte (ANSI's ESC excepted)
    for (qsizetype i = 0; i < head.size(); ++i) {
        const auto u = static_cast<unsigned char>(head[i]);
        if (u < 0x20 && u != '\n' && u != '\r' && u != '\t' && u != 0x1b) junkEnd = i + 1;
    }
    const QByteArray rest = head.mid(junkEnd);
    const qsizetype firstBreak = rest.indexOf('\n');
    if (firstBreak < 0) return false;
    const QByteArray lines = rest.mid(firstBreak + 1); // from the first whole line on
    return lines.count('\n') >= 2 && isMostlyText(logTextForAnalysis(lines));
}

QByteArray firstNonSpace(const QByteArray& head, qsizetype count)
{
    qsizetype i = 0;
    if (head.startsWith("\xEF\xBB\xBF")) i = 3;
    while (i < head.size() && QChar::isSpace(static_cast<unsigned char>(head[i])))
        ++i;
    return head.mid(i, count);
}

// What `head` is, for a one-line reason: "binary data (starts 0x89 0x50 0x4e 0x47)", or
// "<textIs> (starts 'the first 24 characters')" when it reads as text.
QString contentStart(const QByteArray& head, const QString& textIs = QStringLiteral("text"))
{
    if (head.isEmpty()) return QStringLiteral("nothing");
    if (!looksLikeText(head)) {
        QStringList bytes;
        for (const char c : head.left(4))
            bytes << QStringLiteral("0x%1").arg(uint(static_cast<unsigned char>(c)), 2, 16,
                                                QLatin1Char('0'));
        return QStringLiteral("binary data (starts %1)").arg(bytes.join(QLatin1Char(' ')));
    }
    const QString text = QString::fromUtf8(firstNonSpace(head, 24)).simplified();
    return QStringLiteral("%1 (starts '%2')").arg(textIs, text);
}

// Why a source of no kind RankScope reads, under a name that claims none (formatProblem found
// nothing wrong), is skipped: what its content is. `head` is what a gzip file inflates to.
QString skippedReason(bool gzip, const QByteArray& head)
{
    // sniffKind leaves text starting with '{' or '[' Unknown only when it is a JSON document.
    const QByteArray first = firstNonSpace(head, 1);
    const QString what = contentStart(head, first == "{" || first == "[" ? QStringLiteral("JSON")
                                                                         : QStringLiteral("text"));
    return QStringLiteral("%1%2: not a trace, dump or log that RankScope reads")
        .arg(gzip ? QStringLiteral("gzip of ") : QString(), what);
}

} // namespace

SourceKind TraceFolder::sniffKind(const QString& fileName, const QByteArray& head)
{
    // Discovery passes what a gzip file inflates to: gzip in gzip is nothing we read.
    if (head.startsWith("\x1f\x8b")) return SourceKind::Unknown;
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
    // Logs are recognised through the text their parser will see: coloured, UTF-16, with a NUL
    // tail or binary junk at the start, they are still logs.
    const QByteArray text = logTextForAnalysis(head);
    if (!looksLikeText(head) && !isMostlyText(text) && !textAfterJunk(fileName, head))
        return SourceKind::Unknown;

    const int ncclLines = text.count("NCCL INFO") + text.count("NCCL WARN");
    const int allLines = std::max<qsizetype>(1, text.count('\n'));
    if (ncclLines * 2 >= allLines) return SourceKind::NcclLog;
    static const QRegularExpression launcherHint(
        QStringLiteral("WARNING:torch\\.distributed\\.run:|torch\\.distributed\\.elastic\\.|"
                       "\\[\\d+(?:,\\d+)?\\]<std(?:out|err)>:|^\\[(?:default|rank)\\d+\\]:"),
        QRegularExpression::MultilineOption);
    if (launcherHint.match(QString::fromUtf8(text)).hasMatch() &&
        !rankFromFileName(fileName).has_value())
        return SourceKind::LauncherLog;
    return SourceKind::Log;
}

QString TraceFolder::formatProblem(const QString& fileName, bool gzip, SourceKind kind,
                                   const QByteArray& head)
{
    const QString name = fileName.toLower();
    const bool log = isLogSource(kind);
    // A compressed file that is not gzip cannot be what its name says, whatever it looks like
    // (a log read from it would be one line of binary); a plain trace under a .gz name is read.
    if (name.endsWith(QLatin1String(".gz")) && !gzip && (kind == SourceKind::Unknown || log))
        return QStringLiteral("not gzip: %1").arg(contentStart(head));
    if (kind != SourceKind::Unknown && !log) return {};
    const QByteArray first = firstNonSpace(head, 1);
    const bool json = first == "{" || first == "[";
    if (json && head.contains("\"nodes\"") && head.contains("\"schema\""))
        return QStringLiteral("Chakra execution trace: not a timeline; skipped");
    const bool claimsJson =
        name.endsWith(QLatin1String(".json")) || name.endsWith(QLatin1String(".json.gz"));
    if (claimsJson && !json)
        return looksLikeText(head) ? QStringLiteral("%1, not JSON").arg(contentStart(head))
                                   : QStringLiteral("binary data, not JSON");
    if (claimsJson && name.contains(QLatin1String("trace.json")))
        return QStringLiteral("JSON without traceEvents: not a trace");
    if (name.endsWith(QLatin1String(".pkl")) || name.endsWith(QLatin1String(".pickle")) ||
        name.contains(QLatin1String("nccl_trace_rank_")))
        return QStringLiteral("not a Flight Recorder dump (pickle or JSON): %1")
            .arg(contentStart(head));
    if (!log && name.endsWith(QLatin1String(".log")) && !looksLikeText(head))
        return QStringLiteral("binary data, not a text log");
    return {};
}

namespace {

// Whether a file name claims a kind of file RankScope reads (a trace or dump's JSON or pickle, a
// log), so that an empty file of that name was meant as one.
bool nameClaimsAFormatRead(const QString& fileName)
{
    const QString name = fileName.toLower();
    for (const char* suffix :
         {".json", ".json.gz", ".log", ".txt", ".out", ".err", ".pkl", ".pickle"})
        if (name.endsWith(QLatin1String(suffix))) return true;
    return name.contains(QLatin1String("nccl_trace_rank_"));
}

struct StatedInfo {
    bool found = false;
    std::optional<qint64> rank; // as written, range unchecked
    StatedJob job;
};

// The distributedInfo object in `text` (a head or a tail of the file). A complete object is
// parsed; one cut by the end of `text` still gives its "rank" member if that was written.
StatedInfo distributedInfo(const QByteArray& text)
{
    StatedInfo r;
    const qsizetype key = text.lastIndexOf("\"distributedInfo\"");
    if (key < 0) return r;
    const char* end = text.constData() + text.size();
    const char* p = json::skipWs(text.constData() + key + 17, end);
    if (p >= end || *p != ':') return r;
    p = json::skipWs(p + 1, end);
    if (p >= end || *p != '{') return r;
    r.found = true;
    const char* valueEnd = p;
    if (json::skipValue(valueEnd, end) == json::Scan::Ok) {
        const auto info = nlohmann::json::parse(p, valueEnd, nullptr, false);
        if (!info.is_object()) return r;
        if (const auto it = info.find("rank"); it != info.end() && it->is_number_integer())
            r.rank = it->is_number_unsigned()
                         ? qint64(std::min<std::uint64_t>(it->get<std::uint64_t>(), INT64_MAX))
                         : it->get<std::int64_t>();
        if (const auto it = info.find("world_size"); it != info.end() && it->is_number_integer())
            r.job.worldSize =
                int(std::clamp<std::int64_t>(it->get<std::int64_t>(), 0, TraceFolder::kMaxRank));
        if (const auto it = info.find("backend"); it != info.end() && it->is_string())
            r.job.backend = QString::fromStdString(it->get<std::string>());
        if (const auto it = info.find("pg_config"); it != info.end() && it->is_array())
            for (const auto& pg : *it) {
                if (!pg.is_object()) continue;
                const auto name = pg.find("pg_name");
                const auto size = pg.find("pg_size");
                if (name != pg.end() && name->is_string() && size != pg.end() &&
                    size->is_number_integer())
                    r.job.processGroupSizes[QString::fromStdString(name->get<std::string>())] =
                        int(std::clamp<std::int64_t>(size->get<std::int64_t>(), 0,
                                                     TraceFolder::kMaxRank));
            }
        return r;
    }
    static const QRegularExpression rank(QStringLiteral("\"rank\"\\s*:\\s*(-?\\d{1,18})\\b"));
    const QRegularExpressionMatch m = rank.match(QString::fromUtf8(p, end - p));
    if (m.hasMatch()) r.rank = m.captured(1).toLongLong();
    return r;
}

std::optional<int> validRank(qint64 rank)
{
    return rank >= 0 && rank <= TraceFolder::kMaxRank ? std::optional<int>(int(rank))
                                                      : std::nullopt;
}

QString outOfRange(const QString& what)
{
    return QStringLiteral("no rank: %1 is out of range (0 to %2)")
        .arg(what)
        .arg(TraceFolder::kMaxRank);
}

// The rank a file name states, and the text naming it; `rawRank` is the number even when out of
// range (-1 when the name has none).
std::optional<int> nameRank(const QString& fileName, qint64* rawRank)
{
    // tensorboard_trace_handler's default name is {host}_{pid}.{time_ns}.pt.trace.json[.gz]: a
    // host called "job-worker-3" (a Kubernetes pod) names a machine, not a rank.
    static const QRegularExpression pattern(
        QStringLiteral("(?<![A-Za-z])(?:rank|worker)[-_ .]?(\\d+)(?!\\d)"
                       "(?!_\\d+\\.\\d{10,}\\.pt\\.trace\\.json)"),
        QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = pattern.match(fileName);
    *rawRank = -1;
    if (!m.hasMatch()) return std::nullopt;
    bool ok = false;
    const qint64 rank = m.captured(1).toLongLong(&ok);
    *rawRank = ok ? rank : INT64_MAX;
    return validRank(*rawRank);
}

// " (file name says 0)" when the name states another rank than the content.
QString nameDisagrees(const QString& fileName, int rank)
{
    qint64 raw = -1;
    nameRank(fileName, &raw);
    return raw >= 0 && raw != rank ? QStringLiteral(" (file name says %1)").arg(raw) : QString();
}

// Why a source whose content and name state no rank has none, for the user: what was looked for
// and not found ("states no rank: ..."). A rank stated but out of range says so instead (see
// outOfRange), and is told apart by that.
QString statesNoRank(SourceKind kind, bool distributedInfoSeen)
{
    QString content;
    switch (kind) {
    case SourceKind::Kineto:
        content = distributedInfoSeen ? QStringLiteral("distributedInfo has no rank")
                                      : QStringLiteral("no distributedInfo");
        break;
    case SourceKind::NcclLog:
        content = QStringLiteral("no single rank in its NCCL init lines ('rank N nranks M')");
        break;
    case SourceKind::FlightRecorder:
        content = QStringLiteral("a Flight Recorder dump states its rank only as a file-name "
                                 "suffix");
        break;
    case SourceKind::ElasticError:
        content = QStringLiteral("an error file states no rank");
        break;
    case SourceKind::Log:
        content = QStringLiteral("a plain log states no rank that is read");
        break;
    case SourceKind::LauncherLog:
        return QStringLiteral("no rank of its own: a launcher's combined output, split into "
                              "per-rank streams by its lines' rank tags");
    case SourceKind::HorovodTimeline: // always the coordinator's
    case SourceKind::Unknown:
        return QStringLiteral("no rank: not a trace, dump or log that RankScope reads");
    }
    return QStringLiteral("states no rank: %1, no rank in its name").arg(content);
}

// "; the file name's rank 3 is not taken over the content" when content states an unusable rank
// and the name one that could be.
QString nameNotTaken(const QString& fileName)
{
    qint64 raw = -1;
    return nameRank(fileName, &raw)
               ? QStringLiteral("; the file name's rank %1 is not taken over the content").arg(raw)
               : QString();
}

// The source states a rank (in its content or name) that cannot be one: see statesNoRank.
bool statesUnusableRank(const SourceFile& s)
{
    return !s.rank && s.rankEvidence.contains(QLatin1String("out of range"));
}

} // namespace

std::optional<int> TraceFolder::rankFromFileName(const QString& fileName)
{
    qint64 raw = -1;
    return nameRank(fileName, &raw);
}

std::optional<int> TraceFolder::attributeRank(const QString& fileName, SourceKind kind,
                                              const QByteArray& head, const QByteArray& tail,
                                              QString* evidence, StatedJob* stated)
{
    *stated = {};
    evidence->clear();
    const auto number = [](const QString& text) {
        bool ok = false;
        const qint64 v = text.toLongLong(&ok);
        return ok ? validRank(v) : std::nullopt;
    };
    StatedInfo info;
    if (kind == SourceKind::Kineto) {
        // The profiler writes distributedInfo before traceEvents, or (older Kineto) after them.
        info = distributedInfo(head);
        if (!info.found) info = distributedInfo(tail);
        *stated = info.job;
        if (info.rank) {
            if (const auto v = validRank(*info.rank)) {
                *evidence =
                    QStringLiteral("distributedInfo.rank %1").arg(*v) + nameDisagrees(fileName, *v);
                return v;
            }
            *evidence = outOfRange(QStringLiteral("distributedInfo.rank %1").arg(*info.rank)) +
                        nameNotTaken(fileName);
            return std::nullopt;
        }
    }
    const bool distributedInfoSeen = kind == SourceKind::Kineto && info.found;
    if (isLogSource(kind)) {
        static const QRegularExpression worldSize(
            QStringLiteral("\\b(?:world_size|WORLD_SIZE)\\s*[=:]\\s*(\\d+)|\\bnranks (\\d+)"));
        auto it = worldSize.globalMatch(QString::fromUtf8(head));
        while (it.hasNext()) {
            const auto m = it.next();
            const int n = number(m.captured(m.hasCaptured(1) ? 1 : 2)).value_or(0);
            stated->worldSize = std::max(stated->worldSize, n);
        }
    }
    if (kind == SourceKind::NcclLog) {
        // Every communicator this process joined has an init line; the rank in the largest one
        // (the world) is the process's rank. Disagreeing world-sized lines: not one rank's log.
        static const QRegularExpression init(QStringLiteral("\\brank (\\d+) nranks (\\d+)\\b"));
        auto it = init.globalMatch(QString::fromUtf8(head));
        qint64 bestRanks = 0;
        std::set<qint64> ranks;
        while (it.hasNext()) {
            const auto m = it.next();
            const qint64 r = m.captured(1).toLongLong(), n = m.captured(2).toLongLong();
            if (n > bestRanks) {
                bestRanks = n;
                ranks.clear();
            }
            if (n == bestRanks) ranks.insert(r);
        }
        if (ranks.size() == 1) {
            if (const auto v = validRank(*ranks.begin())) {
                *evidence =
                    QStringLiteral("NCCL init line 'rank %1 nranks %2'").arg(*v).arg(bestRanks) +
                    nameDisagrees(fileName, *v);
                return v;
            }
        }
    }
    if (kind == SourceKind::FlightRecorder) {
        if (const auto r = FlightRecorderReader::rankFromFileName(fileName)) {
            *evidence = QStringLiteral("Flight Recorder file-name suffix '%1'").arg(fileName);
            return r;
        }
    }
    if (kind == SourceKind::HorovodTimeline) {
        // Horovod writes its timeline on the coordinator only, whatever the file is called: the
        // negotiation spans are rank 0's; the other ranks appear in it only as readiness ticks,
        // which the reader attributes.
        *evidence = QStringLiteral("Horovod timeline, written by the coordinator (rank 0)") +
                    nameDisagrees(fileName, 0);
        return 0;
    }
    if (kind == SourceKind::LauncherLog) { // split into streams by the reader
        *evidence = statesNoRank(kind, false);
        return std::nullopt;
    }
    if (kind != SourceKind::Unknown) {
        qint64 raw = -1;
        if (const auto r = nameRank(fileName, &raw)) {
            *evidence = QStringLiteral("file name '%1'").arg(fileName);
            return r;
        }
        if (raw >= 0) {
            *evidence = outOfRange(QStringLiteral("rank %1 in the file name").arg(raw));
            return std::nullopt;
        }
    }
    *evidence = statesNoRank(kind, distributedInfoSeen);
    return std::nullopt;
}

void TraceFolder::setSourceStatus(int index, SourceStatus status, const QString& message,
                                  LoadLimit limit)
{
    if (index < 0 || index >= m_sources.size()) return;
    m_sources[index].status = status;
    m_sources[index].message = message;
    m_sources[index].limit = status == SourceStatus::Truncated ? limit : LoadLimit::None;
}

void TraceFolder::setSourceNcclVersion(int index, const QString& version)
{
    if (index < 0 || index >= m_sources.size()) return;
    m_sources[index].statedNcclVersion = version;
}

void TraceFolder::setSourceStatedJob(int index, const StatedJob& stated)
{
    if (index < 0 || index >= m_sources.size()) return;
    StatedJob& s = m_sources[index].stated;
    if (stated.worldSize > 0) s.worldSize = stated.worldSize;
    if (!stated.backend.isEmpty()) s.backend = stated.backend;
    if (!stated.processGroupSizes.empty()) s.processGroupSizes = stated.processGroupSizes;
    if (stated.firstNs >= 0) {
        s.firstNs = stated.firstNs;
        s.lastNs = stated.lastNs;
    }
    m_worldSize = std::max(m_worldSize, s.worldSize);
    m_statedWorldSize = std::max(m_statedWorldSize, s.worldSize);
}

void TraceFolder::setSourceGzipIndex(int index, std::shared_ptr<const GzipIndex> gzipIndex)
{
    if (index < 0 || index >= m_sources.size()) return;
    m_sources[index].gzipIndex = std::move(gzipIndex);
}

bool TraceFolder::attributeStatedRank(int index, qint64 statedRank)
{
    if (index < 0 || index >= m_sources.size()) return false;
    SourceFile& s = m_sources[index];
    const QString fileName = s.relativePath.section(QLatin1Char('/'), -1);
    const std::optional<int> rank = validRank(statedRank);
    if (!rank) {
        // Out of range: not a rank, but it does say the assumed one is unfounded.
        const bool assumed = s.rankEvidence.startsWith(QLatin1String("assumed"));
        if (!s.rank || assumed) {
            s.rank.reset();
            s.rankEvidence = outOfRange(QStringLiteral("distributedInfo.rank %1").arg(statedRank));
        }
        checkClaims();
        return assumed;
    }
    const bool changed = s.rank != rank;
    s.rank = rank;
    s.rankEvidence =
        QStringLiteral("distributedInfo.rank %1").arg(*rank) + nameDisagrees(fileName, *rank);
    m_worldSize = std::max(m_worldSize, *rank + 1);
    checkClaims();
    return changed;
}

void TraceFolder::noteNoStatedRank(int index, bool distributedInfoSeen)
{
    if (index < 0 || index >= m_sources.size()) return;
    SourceFile& s = m_sources[index];
    if (s.rank || s.kind != SourceKind::Kineto || statesUnusableRank(s)) return;
    s.rankEvidence = statesNoRank(s.kind, distributedInfoSeen);
}

void TraceFolder::checkClaims()
{
    m_warnings.clear();
    std::map<std::pair<int, SourceKind>, QStringList> claims;
    for (const SourceFile& s : m_sources)
        if (s.rank) claims[{*s.rank, s.kind}].append(s.relativePath);
    for (const auto& [key, paths] : claims)
        if (paths.size() > 1)
            m_warnings.append(
                QStringLiteral("rank %1 is claimed by %2 %3 files: %4")
                    .arg(key.first)
                    .arg(paths.size())
                    .arg(sourceKindName(key.second), paths.join(QStringLiteral(", "))));
}

// A folder with one trace and no rank anywhere (a single-process run, a renamed file): its events
// are shown as rank 0, saying it is assumed, rather than left out of the per-rank views.
void TraceFolder::assumeLoneTraceRank()
{
    int traces = 0;
    SourceFile* lone = nullptr;
    for (SourceFile& s : m_sources) {
        // A trace that states a rank that cannot be one is not the job's rank 0 either.
        if (s.rank || (s.kind == SourceKind::Kineto && statesUnusableRank(s))) return;
        if (s.kind == SourceKind::Kineto && s.status != SourceStatus::Error) {
            ++traces;
            lone = &s;
        }
    }
    if (traces != 1) return;
    lone->rank = 0;
    lone->rankEvidence = QStringLiteral(
        "assumed rank 0: the folder's only trace, and neither its content nor its name states a "
        "rank");
}

TraceFolder TraceFolder::restore(const QString& path, QList<SourceFile> sources,
                                 QStringList warnings, int worldSize, int statedWorldSize,
                                 const QString& error)
{
    TraceFolder folder;
    folder.m_path = path;
    folder.m_error = error;
    folder.m_sources = std::move(sources);
    folder.m_warnings = std::move(warnings);
    folder.m_worldSize = worldSize;
    folder.m_statedWorldSize = statedWorldSize;
    return folder;
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
    const QString canonicalRoot = rootInfo.canonicalFilePath();
    const Fd rootFd(
        ::open(QFile::encodeName(canonicalRoot).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!rootInfo.isReadable() || !rootInfo.isExecutable() || rootFd.get() < 0) {
        folder.m_error = QStringLiteral("folder is not readable: %1").arg(dir);
        return folder;
    }
    const QDir root(canonicalRoot);

    int statedWorldSize = 0;
    // System: FIFOs, sockets, devices and dangling links are listed too, each with its reason;
    // Dirs for the links to folders (not followed, listed): real folders are only descended into.
    QDirIterator it(canonicalRoot,
                    QDir::Files | QDir::Dirs | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        if (cancelled && cancelled()) break;
        const QString path = it.next();
        const QFileInfo info = it.fileInfo();
        if (info.isDir() && !info.isSymLink()) continue;
        SourceFile source;
        source.absolutePath = info.absoluteFilePath();
        source.relativePath = root.relativeFilePath(path);

        OpenedFile opened = openInside(rootFd.get(), canonicalRoot, path);
        if (!opened.error.isEmpty()) {
            source.status = SourceStatus::Error;
            source.message = opened.error;
            source.rankEvidence = QStringLiteral("no rank: not read");
            folder.m_sources.append(source);
            continue;
        }
        source.sizeBytes = opened.size;
        if (source.sizeBytes == 0) {
            source.status = SourceStatus::Error;
            source.message = QStringLiteral("empty file");
            source.rankEvidence = QStringLiteral("no rank: an empty file");
            // A name of a kind RankScope reads ("rank2.log", "rank2.pt.trace.json") still says
            // whose file it was: rank 2 left it empty, which is not leaving nothing.
            qint64 raw = -1;
            if (nameClaimsAFormatRead(info.fileName()))
                if (const auto r = nameRank(info.fileName(), &raw)) {
                    source.rank = r;
                    source.rankEvidence =
                        QStringLiteral("file name '%1' (the file is empty)").arg(info.fileName());
                }
        } else {
            QByteArray head = readAt(opened.fd, 0, kSniffBytes);
            const bool gzip = head.startsWith("\x1f\x8b");
            QByteArray tail;
            QString problem;
            if (gzip)
                head = inflateHead(opened.fd, &problem);
            else if (source.sizeBytes > kSniffBytes)
                tail = readAt(opened.fd, std::max(kSniffBytes, source.sizeBytes - kTailBytes),
                              kTailBytes);
            if (problem.isEmpty()) {
                source.kind = sniffKind(info.fileName(), head);
                problem = formatProblem(info.fileName(), gzip, source.kind, head);
            }
            if (!problem.isEmpty()) {
                source.kind = SourceKind::Unknown;
                source.status = SourceStatus::Error;
                source.message = problem;
            } else if (source.kind == SourceKind::Unknown) {
                source.status = SourceStatus::Skipped;
                source.message = skippedReason(gzip, head);
            }
            if (isLogSource(source.kind)) head = logTextForAnalysis(head);
            source.rank = attributeRank(info.fileName(), source.kind, head, tail,
                                        &source.rankEvidence, &source.stated);
            statedWorldSize = std::max(statedWorldSize, source.stated.worldSize);
        }
        source.descriptor =
            std::make_shared<const SourceDescriptor>(opened.fd, opened.resolvedPath);
        folder.m_sources.append(source);
    }
    folder.assumeLoneTraceRank();
    std::sort(folder.m_sources.begin(), folder.m_sources.end(),
              [](const SourceFile& a, const SourceFile& b) {
                  if (a.rank != b.rank) return a.rank.value_or(INT_MAX) < b.rank.value_or(INT_MAX);
                  return a.relativePath < b.relativePath;
              });
    const QList<int> ranks = folder.ranks();
    folder.m_worldSize = std::max(ranks.isEmpty() ? 0 : ranks.last() + 1, statedWorldSize);
    folder.m_statedWorldSize = statedWorldSize;
    folder.checkClaims();
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
