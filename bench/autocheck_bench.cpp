// Walkthrough auto-checks (AutoCheckEvaluator) on a large synthetic job: per-rank consoles of a
// DDP job with NCCL_DEBUG=INFO (environment, versions, NCCL init and network lines, step lines)
// and a Kineto trace of ProfilerStep spans per rank, as the auto-check tests write them
// (tests/support/rankconsole.h); one rank with a different MASTER_PORT and one whose console
// ends in a watchdog timeout, so checks pass, fail and cite evidence.
// The folder is written to a temporary directory, loaded like the GUI loads it, and every check
// is evaluated repeatedly; figures are CPU seconds (the machine is shared with other builds).
// Usage: autocheck_bench [ranks] [steps]
#include "model/analysis/autocheckevaluator.h"
#include "model/analysis/sessionanalysis.h"
#include "model/tracesession.h"
#include "tests/support/rankconsole.h"

#include <QCoreApplication>
#include <QFile>
#include <QStringList>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>

using namespace rankscope;

namespace {

double cpuSeconds()
{
    return double(std::clock()) / CLOCKS_PER_SEC;
}

// Rank `rank` of `ranks`, eight to a node; the middle rank was started with another
// MASTER_PORT and the last one's console ends in a watchdog timeout.
QByteArray console(int rank, int ranks, int steps)
{
    testing::RankLines r;
    r.rank = rank;
    r.world = ranks;
    r.host = QStringLiteral("node%1").arg(rank / 8);
    r.device = rank % 8;
    r.net = QStringLiteral("Socket : Using [0]eth0:10.0.%1.%2<0>")
                .arg(rank / 8 / 256)
                .arg(rank / 8 % 256);
    r.lastStep = steps - 1;
    if (rank == ranks / 2) r.masterPort = QStringLiteral("29501");
    if (rank == ranks - 1)
        r.extra << QStringLiteral("30.000 [E ProcessGroupNCCL.cpp:563] [Rank %1] Watchdog caught "
                                  "collective operation timeout: WorkNCCL(SeqNum=%2, "
                                  "OpType=ALLREDUCE) ran for 600012 milliseconds before timing "
                                  "out.")
                       .arg(rank)
                       .arg(steps);
    return r.text();
}

bool write(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv); // the loader's thread pool and the taxonomy's resources
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 1024;
    // The console's step lines carry one second each within a minute (tests/support).
    const int steps = std::clamp(argc > 2 ? std::atoi(argv[2]) : 40, 1, 49);
    QTemporaryDir dir;
    if (!dir.isValid()) return 1;
    qint64 bytes = 0;
    for (int r = 0; r < ranks; ++r) {
        const QByteArray log = console(r, ranks, steps),
                         kineto = testing::stepTrace(r, steps, 100'000, ranks);
        if (!write(dir.filePath(QStringLiteral("rank%1.log").arg(r)), log) ||
            !write(dir.filePath(QStringLiteral("rank%1.pt.trace.json").arg(r)), kineto))
            return 1;
        bytes += log.size() + kineto.size();
    }
    std::printf("synthetic folder: %d ranks, %d step lines and ProfilerStep spans each, %.1f MB\n",
                ranks, steps, double(bytes) / 1e6);

    double c0 = cpuSeconds();
    LoadOptions options;
    options.buildLaneLods = false; // no timeline is drawn
    const SessionPtr session = loadSession(dir.path(), {}, {}, options);
    if (!session) return 1;
    const double load = cpuSeconds() - c0;
    c0 = cpuSeconds();
    const AnalysedJob job(*session); // what diagnose() gives the checks
    const std::vector<Evidence> logs = classifyLogs(job.read());
    const double classify = cpuSeconds() - c0;
    std::printf("load + analysis %.2f s CPU (%zu logs, %zu findings); classifyLogs %.2f s CPU "
                "(%zu lines)\n",
                load, session->logs.size(), session->analysis.findings.size(), classify,
                logs.size());

    // Each check alone, repeated until it has used a second of CPU (at least 3 times).
    const QStringList ids = AutoCheckEvaluator::checkIds();
    std::map<AutoCheckOutcome, int> outcomes;
    double sum = 0;
    for (const QString& id : ids) {
        int n = 0;
        AutoCheckResult r;
        const double start = cpuSeconds();
        double spent = 0;
        while (n < 3 || spent < 1.0) {
            r = AutoCheckEvaluator::evaluate(job.read(), job.facts(), session->analysis, id, logs);
            ++n;
            spent = cpuSeconds() - start;
        }
        const double each = spent / n;
        sum += each;
        ++outcomes[r.outcome];
        std::printf("  %-34s %9.3f ms  %-7s %zu evidence\n", qPrintable(id), each * 1e3,
                    qPrintable(autoCheckOutcomeLabel(r.outcome)), r.evidence.size());
    }
    // Every check once, as a reload of the folder does (diagnose() builds the ranks' facts once).
    int passes = 0;
    const double start = cpuSeconds();
    double spent = 0;
    while (passes < 3 || spent < 2.0) {
        const auto all =
            AutoCheckEvaluator::evaluateAll(job.read(), job.facts(), session->analysis, logs);
        if (all.size() != std::size_t(ids.size())) return 1;
        ++passes;
        spent = cpuSeconds() - start;
    }
    std::printf("%lld checks: %d passed, %d failed, %d unknown; sum of single checks %.2f ms\n",
                static_cast<long long>(ids.size()), outcomes[AutoCheckOutcome::Passed],
                outcomes[AutoCheckOutcome::Failed], outcomes[AutoCheckOutcome::Unknown], sum * 1e3);
    std::printf("evaluateAll: %.2f ms CPU per pass, %.0f evaluations/s (%d passes)\n",
                spent / passes * 1e3, double(passes) * double(ids.size()) / spent, passes);
    return 0;
}
