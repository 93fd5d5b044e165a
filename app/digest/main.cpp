// rankscope-digest FOLDER -o OUT.rsdigest: digests a trace folder where it lives, as an MPI
// program (srun / mpirun). Every process lists the folder, takes its share of the ranks' traces
// (balanced by bytes, a rank's files together), reads and reduces them; the root gathers the
// parts with MPI_Gatherv and diagnoses them, broadcasts the windows around the findings, gathers
// the parts again with those windows at full detail, reads the small sources itself, diagnoses
// and writes the digest.
// Standard MPI only (OpenMPI, MPICH and vendor MPIs).
#include "model/digest/digest.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFileInfo>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <mpi.h>
#include <numeric>
#include <time.h>
#include <vector>

using namespace rankscope;

namespace {

int g_process = 0;

// CPU seconds of this process (all its threads): on a shared machine, the honest throughput.
double cpuSeconds()
{
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

int g_processes = 1;

void say(const QString& text)
{
    std::fprintf(stderr, "rankscope-digest[%d/%d]: %s\n", g_process, g_processes,
                 text.toLocal8Bit().constData());
}

// An MPI call that failed ends the whole job: its processes cannot go on without each other.
void check(int rc, const char* what)
{
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    say(QStringLiteral("%1 failed: %2")
            .arg(QString::fromLatin1(what), QString::fromLocal8Bit(text, length)));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

// Whether every process listed the folder as process 0 did (a node without the filesystem, or a
// file added, removed or still growing between the listings, would split the work otherwise than
// the others and merge parts of different folders). Every process calls it; on a difference each
// says why and false is returned everywhere, so that the job ends without a digest.
bool sameFolderEverywhere(const TraceFolder& folder, const QString& path)
{
    constexpr int kBytes = 33; // read or not, then the SHA-256 of the listing
    QByteArray mine(kBytes, '\0');
    if (folder.isValid()) {
        QCryptographicHash hash(QCryptographicHash::Sha256);
        for (const SourceFile& s : folder.sources())
            hash.addData(QStringLiteral("%1\t%2\t%3\t%4\n")
                             .arg(s.relativePath)
                             .arg(s.sizeBytes)
                             .arg(int(s.kind))
                             .arg(s.rank.value_or(-1))
                             .toUtf8());
        mine = '\1' + hash.result();
    }
    QByteArray all(qsizetype(kBytes) * g_processes, '\0');
    check(MPI_Allgather(mine.constData(), kBytes, MPI_BYTE, all.data(), kBytes, MPI_BYTE,
                        MPI_COMM_WORLD),
          "MPI_Allgather of the folder listings");
    QStringList unread, different;
    for (int p = 0; p < g_processes; ++p) {
        const QByteArray theirs = all.mid(qsizetype(p) * kBytes, kBytes);
        if (theirs.front() == '\0')
            unread << QString::number(p);
        else if (all.front() != '\0' && theirs != all.left(kBytes))
            different << QString::number(p);
    }
    if (unread.isEmpty() && different.isEmpty()) return true;
    // Each process that could not read it says why (once, where none could).
    if (!folder.isValid() && (g_process == 0 || unread.size() < g_processes)) say(folder.error());
    if (g_process != 0) return false;
    if (!unread.isEmpty())
        say(QStringLiteral("%1 could not be read by process(es) %2 of %3; nothing written")
                .arg(path, unread.join(QStringLiteral(", ")))
                .arg(g_processes));
    if (!different.isEmpty())
        say(QStringLiteral(
                "process(es) %1 list %2 otherwise than process 0 (another filesystem, or "
                "a file added, removed or still being written): every process must see "
                "the same files; nothing written")
                .arg(different.join(QStringLiteral(", ")), path));
    return false;
}

// Gathers every process's bytes on process 0, in rounds that keep each MPI_Gatherv's counts and
// displacements within int.
std::vector<QByteArray> gather(const QByteArray& mine)
{
    long long size = mine.size();
    std::vector<long long> sizes(static_cast<std::size_t>(g_processes), 0);
    check(MPI_Allgather(&size, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD),
          "MPI_Allgather of the part sizes");
    const long long chunk =
        std::max<long long>(1, std::min<long long>(INT_MAX / g_processes, 256LL << 20));
    const long long largest = *std::max_element(sizes.begin(), sizes.end());
    std::vector<QByteArray> parts(static_cast<std::size_t>(g_processes));
    if (g_process == 0)
        for (int p = 0; p < g_processes; ++p)
            parts[std::size_t(p)].resize(qsizetype(sizes[std::size_t(p)]));
    std::vector<int> counts(static_cast<std::size_t>(g_processes)),
        displs(static_cast<std::size_t>(g_processes));
    QByteArray received;
    for (long long offset = 0; offset < largest; offset += chunk) {
        int total = 0;
        for (int p = 0; p < g_processes; ++p) {
            counts[std::size_t(p)] =
                int(std::clamp<long long>(sizes[std::size_t(p)] - offset, 0, chunk));
            displs[std::size_t(p)] = total;
            total += counts[std::size_t(p)];
        }
        if (g_process == 0) received.resize(total);
        const int send = counts[std::size_t(g_process)];
        check(MPI_Gatherv(mine.constData() + std::min<long long>(offset, size), send, MPI_BYTE,
                          received.data(), counts.data(), displs.data(), MPI_BYTE, 0,
                          MPI_COMM_WORLD),
              "MPI_Gatherv of the parts");
        if (g_process != 0) continue;
        for (int p = 0; p < g_processes; ++p)
            std::copy_n(received.constData() + displs[std::size_t(p)], counts[std::size_t(p)],
                        parts[std::size_t(p)].data() + offset);
    }
    return parts;
}

// Process 0's bytes to every process.
void broadcast(QByteArray& bytes)
{
    long long size = bytes.size();
    check(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast of the windows' size");
    bytes.resize(qsizetype(size));
    for (long long offset = 0; offset < size; offset += INT_MAX) {
        const int count = int(std::min<long long>(size - offset, INT_MAX));
        check(MPI_Bcast(bytes.data() + offset, count, MPI_BYTE, 0, MPI_COMM_WORLD),
              "MPI_Bcast of the windows");
    }
}

int run(int argc, char** argv)
{
    QString folderPath, outPath;
    bool understood = true;
    for (int i = 1; i < argc && understood; ++i) {
        const QString arg = QString::fromLocal8Bit(argv[i]);
        if ((arg == QLatin1String("-o") || arg == QLatin1String("--output")) && i + 1 < argc)
            outPath = QString::fromLocal8Bit(argv[++i]);
        else if (folderPath.isEmpty() && !arg.startsWith(QLatin1Char('-')))
            folderPath = arg;
        else
            understood = false;
    }
    if (!understood || folderPath.isEmpty() || !Digest::isDigestPath(outPath)) {
        if (g_process == 0)
            std::fprintf(stderr, "usage: rankscope-digest FOLDER -o OUT.rsdigest\n"
                                 "  run under srun or mpirun; see README.md, \"Large jobs\"\n");
        return 2;
    }
    QElapsedTimer clock;
    clock.start();
    const TraceFolder folder = TraceFolder::discover(folderPath);
    if (!sameFolderEverywhere(folder, folderPath)) return 1;
    const std::vector<std::vector<int>> units = Digest::traceUnits(folder);
    const std::vector<int> myUnits =
        Digest::partition(folder, units, g_processes)[std::size_t(g_process)];
    std::vector<std::vector<int>> mine;
    qint64 bytes = 0;
    int traces = 0;
    for (const int u : myUnits) {
        mine.push_back(units[std::size_t(u)]);
        for (const int i : units[std::size_t(u)]) {
            bytes += folder.sources()[i].sizeBytes;
            ++traces;
        }
    }
    say(QStringLiteral("%1 of the folder's %2 traces (%3 MB)")
            .arg(traces)
            .arg(std::accumulate(units.begin(), units.end(), std::size_t(0),
                                 [](std::size_t n, const auto& u) { return n + u.size(); }))
            .arg(double(bytes) / 1e6, 0, 'f', 1));
    int done = 0;
    bool again = false; // the second pass reads the ranks a finding names again
    const Digest::Share share(folder, mine, [&](int, const QString& path) {
        if (again)
            say(QStringLiteral("reading %1 again for a finding's window").arg(path));
        else
            say(QStringLiteral("reading %1 (%2 of %3)").arg(path).arg(++done).arg(traces));
    });
    again = true;
    const QByteArray summary = share.part();
    const double seconds = double(clock.nsecsElapsed()) / 1e9;
    const double cpu = cpuSeconds();
    say(QStringLiteral("read %1 MB in %2 s wall, %3 s CPU (%4 MB per CPU second); sending %5 KB")
            .arg(double(bytes) / 1e6, 0, 'f', 1)
            .arg(seconds, 0, 'f', 2)
            .arg(cpu, 0, 'f', 2)
            .arg(cpu > 0 ? double(bytes) / 1e6 / cpu : 0.0, 0, 'f', 1)
            .arg(double(summary.size()) / 1e3, 0, 'f', 1));
    // The root diagnoses the summaries; every process then keeps the events of the windows
    // around the findings at full detail (reading those ranks again) and sends its part again.
    const std::vector<QByteArray> summaries = gather(summary);
    QByteArray windows;
    if (g_process == 0) {
        say(QStringLiteral("diagnosing, for the windows around the findings"));
        windows = Digest::findingWindows(folder, summaries);
    }
    broadcast(windows);
    const std::vector<QByteArray> parts = gather(share.part(windows));
    if (g_process != 0) return 0;
    say(QStringLiteral("reading the logs and dumps, diagnosing, writing %1").arg(outPath));
    Digest::Opened assembled;
    if (const QString error = Digest::write(outPath, folder, parts, &assembled); !error.isEmpty()) {
        say(error);
        return 1;
    }
    say(QStringLiteral("wrote %1: %2 KB for %3 MB of sources (%4%) in %5 s")
            .arg(outPath)
            .arg(double(QFileInfo(outPath).size()) / 1e3, 0, 'f', 1)
            .arg(double(folder.totalBytes()) / 1e6, 0, 'f', 1)
            .arg(folder.totalBytes() > 0
                     ? 100.0 * double(QFileInfo(outPath).size()) / double(folder.totalBytes())
                     : 0.0,
                 0, 'f', 2)
            .arg(double(clock.nsecsElapsed()) / 1e9, 0, 'f', 2));
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        std::fprintf(stderr, "rankscope-digest: MPI_Init failed\n");
        return 3;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_process);
    MPI_Comm_size(MPI_COMM_WORLD, &g_processes);
    const int status = run(argc, argv);
    MPI_Finalize();
    return status;
}
