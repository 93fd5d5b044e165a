// Classifies a synthetic 10 MB multi-rank log (NCCL INFO chatter, training progress, Python
// warnings, with a few real error lines buried inside) and prints the seconds it takes.
#include "model/kb/symptomclassifier.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <cstdio>

using namespace rankscope;

static QByteArray syntheticLog(qsizetype bytes)
{
    const char* filler[] = {
        "node1:2211:2290 [%d] NCCL INFO Channel 03/0 : 3[3] -> 4[4] via P2P/IPC/read\n",
        "[rank%d]: epoch 3 step 1200 loss: 0.4312 lr: 0.0001 throughput 812.4 samples/sec\n",
        "node2:3312:3390 [%d] NCCL INFO comm 0x55d5 rank 5 nranks 16 cudaDev 1 busId 1b000 - "
        "Init COMPLETE\n",
        "[rank%d]:[W reducer.cpp:1346] Warning: find_unused_parameters=True was specified in DDP "
        "constructor, but did not find any unused parameters in the forward pass.\n",
        "INFO:root:rank %d loaded batch of 256 images from /data/imagenet/train in 0.021 s\n",
        "  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line %d, in "
        "_call_impl\n",
    };
    const char* errors[] = {
        "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=4521, OpType=ALLREDUCE, NumelIn=2049000, NumelOut=2049000, "
        "Timeout(ms)=1800000) ran for 1800095 milliseconds before timing out.\n",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB.\n",
        "Sending process 8812 closing signal SIGTERM\n",
    };
    QByteArray log;
    log.reserve(bytes + 256);
    char line[512];
    for (int i = 0; log.size() < bytes; ++i) {
        const char* f = (i % 5000 == 4999) ? errors[(i / 5000) % 3] : filler[i % 6];
        std::snprintf(line, sizeof line, f, i % 8);
        log += line;
    }
    return log;
}

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const QByteArray log = syntheticLog(10 * 1024 * 1024);
    (void)SymptomClassifier::instance(); // loading the data is not part of the figure
    for (const bool cues : {false, true}) {
        SymptomClassifier::Options options;
        options.useCues = cues;
        double best = 1e9;
        qsizetype candidates = 0;
        for (int run = 0; run < 3; ++run) {
            QElapsedTimer t;
            t.start();
            candidates = SymptomClassifier::instance().classify(log, options).size();
            best = std::min(best, t.nsecsElapsed() / 1e9);
        }
        std::printf("classify %.1f MB log (%s): %.3f s (best of 3), %lld candidates\n",
                    log.size() / 1048576.0, cues ? "signatures + prose cues" : "signatures only",
                    best, static_cast<long long>(candidates));
    }
    return 0;
}
