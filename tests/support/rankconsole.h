#pragma once

// Per-rank files of a DDP job with NCCL_DEBUG=INFO, written as the job writes them, for the
// auto-check tests and the auto-check benchmark.

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <algorithm>

namespace rankscope::testing {

// One rank's console as a DDP job with NCCL_DEBUG=INFO writes it; every field can be changed or
// dropped (empty) so a row makes exactly one fact differ or go missing.
struct RankLines {
    int rank = 0;
    int world = 2;
    QString torch = QStringLiteral("2.1.0");
    QString cuda = QStringLiteral("12.1");
    QString nccl = QStringLiteral("2.18.1+cuda12.1");
    QString masterAddr = QStringLiteral("10.0.0.1");
    QString masterPort = QStringLiteral("29500");
    QString host = QStringLiteral("node1");
    int device = -1; // -1: the rank number
    QString net = QStringLiteral("Socket : Using [0]eth0:10.0.0.1<0>");
    bool initComplete = true;
    bool ncclOutput = true;
    int lastStep = 9;
    QStringList extra; // "HH:MM:SS.mmm text" lines appended after the steps

    QByteArray text() const
    {
        const int dev = device < 0 ? rank : device;
        const QString prefix =
            QStringLiteral("%1:%2:%2 [%3] NCCL INFO ").arg(host).arg(100 + rank).arg(dev);
        QStringList out;
        QString start =
            QStringLiteral("2026-01-01 10:00:00.000 [rank%1] INFO train: starting: rank=%1")
                .arg(rank);
        if (world > 0) start += QStringLiteral(" WORLD_SIZE=%1").arg(world);
        if (!masterAddr.isEmpty()) start += QStringLiteral(" MASTER_ADDR=%1").arg(masterAddr);
        if (!masterPort.isEmpty()) start += QStringLiteral(" MASTER_PORT=%1").arg(masterPort);
        if (!torch.isEmpty()) start += QStringLiteral(" torch=%1").arg(torch);
        out << start;
        if (!cuda.isEmpty())
            out << QStringLiteral("2026-01-01 10:00:00.010 [rank%1] INFO train: CUDA version: %2")
                       .arg(rank)
                       .arg(cuda);
        if (ncclOutput) {
            if (!nccl.isEmpty()) out << prefix + QStringLiteral("NCCL version %1").arg(nccl);
            if (!net.isEmpty()) out << prefix + QStringLiteral("NET/%1").arg(net);
            out << prefix +
                       QStringLiteral("comm 0x1 rank %1 nranks %2 cudaDev %3 busId 1000 - Init %4")
                           .arg(rank)
                           .arg(std::max(world, 1))
                           .arg(dev)
                           .arg(initComplete ? QStringLiteral("COMPLETE")
                                             : QStringLiteral("START"));
        }
        for (int s = 0; s <= lastStep; ++s)
            out << QStringLiteral("2026-01-01 10:00:%1.000 [rank%2] INFO train: step %3 loss 1.0")
                       .arg(10 + s, 2, 10, QLatin1Char('0'))
                       .arg(rank)
                       .arg(s);
        for (const QString& e : extra)
            out << QStringLiteral("2026-01-01 10:01:%1 [rank%2] %3")
                       .arg(e.section(QLatin1Char(' '), 0, 0))
                       .arg(rank)
                       .arg(e.section(QLatin1Char(' '), 1));
        return out.join(QLatin1Char('\n')).toUtf8() + '\n';
    }
};

// A Kineto trace of ProfilerStep#N spans of `stepUs` each, for the step-time checks.
inline QByteArray stepTrace(int rank, int steps, int stepUs, int world = 2)
{
    QStringList events;
    for (int s = 0; s < steps; ++s)
        events << QStringLiteral("{\"name\": \"ProfilerStep#%1\", \"ph\": \"X\", \"ts\": %2, "
                                 "\"dur\": %3, \"pid\": 1, \"tid\": 1, \"args\": {}}")
                      .arg(s)
                      .arg(1000 + s * (stepUs + 10))
                      .arg(stepUs);
    return QStringLiteral("{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %1, "
                          "\"world_size\": %2}, \"traceEvents\": [%3]}")
        .arg(rank)
        .arg(world)
        .arg(events.join(QStringLiteral(", ")))
        .toUtf8();
}

} // namespace rankscope::testing
