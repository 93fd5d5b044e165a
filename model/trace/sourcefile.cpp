#include "model/trace/sourcefile.h"

#include <QFile>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

namespace rankscope {

namespace {

std::atomic<int> s_keptDescriptors{0};

QString errnoText(int code)
{
    return QString::fromLocal8Bit(std::strerror(code));
}

} // namespace

namespace {

// What each LoadLimit is, and its flag, in the enum's order (None first).
struct LoadLimitText {
    const char* name;
    const char* flag;
};
constexpr LoadLimitText kLoadLimits[] = {
    {"", ""},
    {"events per trace file", "--max-trace-events"},
    {"decompressed bytes per trace file", "--max-decompressed"},
    {"inflation ratio of a gzip trace", "--max-inflation"},
    {"bytes per log file", "--max-log-bytes"},
    {"log lines", "--max-log-lines"},
    {"distinct rank tags of launcher logs", "--max-rank-tags"},
    {"entries per Flight Recorder dump", "--max-dump-entries"},
    {"decoded bytes per Flight Recorder dump", "--max-dump-bytes"},
    {"trace events per load", "--max-trace-events"},
    {"decompressed trace bytes per load", "--max-decompressed"},
    {"Flight Recorder entries per load", "--max-dump-entries"},
};
static_assert(std::size(kLoadLimits) == std::size_t(LoadLimit::DumpEntriesPerLoad) + 1);

} // namespace

QString loadLimitName(LoadLimit limit)
{
    return QString::fromLatin1(kLoadLimits[std::size_t(limit)].name);
}

QString loadLimitFlag(LoadLimit limit)
{
    return QString::fromLatin1(kLoadLimits[std::size_t(limit)].flag);
}

SourceDescriptor::SourceDescriptor(int fd, QString resolvedPath)
    : m_resolvedPath(std::move(resolvedPath))
{
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
        m_device = quint64(st.st_dev);
        m_inode = quint64(st.st_ino);
    }
    if (s_keptDescriptors.fetch_add(1) < kKeptDescriptors) {
        m_fd = fd;
        return;
    }
    s_keptDescriptors.fetch_sub(1);
    ::close(fd);
}

SourceDescriptor::~SourceDescriptor()
{
    if (m_fd < 0) return;
    ::close(m_fd);
    s_keptDescriptors.fetch_sub(1);
}

int SourceDescriptor::open(QString* error) const
{
    if (m_fd >= 0) {
        const int fd = ::fcntl(m_fd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0 || ::lseek(fd, 0, SEEK_SET) != 0) {
            *error = QStringLiteral("cannot read: %1").arg(errnoText(errno));
            if (fd >= 0) ::close(fd);
            return -1;
        }
        return fd;
    }
    const int fd = ::open(QFile::encodeName(m_resolvedPath).constData(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *error = QStringLiteral("cannot open again: %1").arg(errnoText(errno));
        return -1;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || quint64(st.st_dev) != m_device ||
        quint64(st.st_ino) != m_inode) {
        ::close(fd);
        *error = QStringLiteral("replaced since the folder was opened; not read");
        return -1;
    }
    return fd;
}

int SourceFile::openForReading(QString* error) const
{
    if (!descriptor) {
        *error = message.isEmpty() ? QStringLiteral("not opened") : message;
        return -1;
    }
    return descriptor->open(error);
}

bool SourceFile::openForReading(QFile& file, QString* error) const
{
    const int fd = openForReading(error);
    if (fd < 0) return false;
    if (file.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) return true;
    ::close(fd);
    *error = QStringLiteral("cannot open: %1").arg(file.errorString());
    return false;
}

bool isLogSource(SourceKind kind)
{
    return kind == SourceKind::NcclLog || kind == SourceKind::LauncherLog ||
           kind == SourceKind::Log;
}

QString sourceKindName(SourceKind kind)
{
    switch (kind) {
    case SourceKind::Kineto:
        return QStringLiteral("kineto");
    case SourceKind::FlightRecorder:
        return QStringLiteral("flight_recorder");
    case SourceKind::HorovodTimeline:
        return QStringLiteral("horovod_timeline");
    case SourceKind::ElasticError:
        return QStringLiteral("elastic_error");
    case SourceKind::NcclLog:
        return QStringLiteral("nccl_log");
    case SourceKind::LauncherLog:
        return QStringLiteral("launcher_log");
    case SourceKind::Log:
        return QStringLiteral("log");
    case SourceKind::Unknown:
        return QStringLiteral("unknown");
    }
    return QStringLiteral("unknown");
}

QString sourceStatusName(SourceStatus status)
{
    switch (status) {
    case SourceStatus::Ok:
        return QStringLiteral("ok");
    case SourceStatus::Truncated:
        return QStringLiteral("truncated");
    case SourceStatus::Error:
        return QStringLiteral("error");
    case SourceStatus::Skipped:
        return QStringLiteral("skipped");
    }
    return QStringLiteral("error");
}

} // namespace rankscope
