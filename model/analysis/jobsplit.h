#pragma once

#include "model/analysis/finding.h"
#include "model/store/eventstore.h"
#include "model/trace/ranklog.h"
#include "model/trace/sourcefile.h"

#include <QList>
#include <QString>
#include <cstdint>
#include <vector>

namespace rankscope {

// The traces of one job, as their files state it.
struct TraceJob {
    std::vector<int> sources; // indexes into the folder's sources (bySubfolder: all its files)
    std::vector<int> ranks;   // the ranks its traces (byLaunch: and logs) claim, sorted, distinct
    int worldSize = 0;        // the world size its traces (byLaunch: else logs) state, 0 if none
    QString backend;          // the backend they state, empty when none does
    // The range of its events on a wall clock (epoch ns), -1 when no trace of it has one;
    // byLaunch: the range of its logs' dated lines.
    std::int64_t firstNs = -1;
    std::int64_t lastNs = -1;
    qint64 bytes = 0;
    // byLaunch: the rendezvous its ranks' logs name ("127.0.0.1:57775") and the first line that
    // names it; byStart: its first start and world size ("2026-12-02 13:41:15 UTC, world size 2")
    // and that start's line.
    std::string launch;
    Evidence launchLine;
};

// Which traces (Kineto, Horovod timelines) of a folder belong to one job, decided from what each
// states (StatedJob): traces of one job agree on the world size, backend and process-group sizes
// they state, claim no rank beyond that world size, and ran at the same time, so their
// wall-clock ranges overlap (within kSameJobGapNs; clocks that are not wall time, such as
// relative timestamps, say nothing). A trace joins the first job, in order of time, that none of
// this tells it apart from. Traces without a wall clock (PyTorch 1.13 states neither world size
// nor time) are told apart by where they lie: when two traces claim one rank from different
// subfolders and one of them has no wall clock to place it, each subfolder is a job of its own
// (bySubfolder), and the logs, dumps and error files of a set-aside job's subfolder are set aside
// with its traces. Files of two runs side by side in one folder are told apart by the launch their
// ranks' logs name (MASTER_ADDR:MASTER_PORT, a torchelastic run id; byLaunch), only where that is
// unambiguous: one rank was launched under two of them, or their logs' dated lines lie more than
// kSameJobGapNs apart (ranks of one run that disagree on the port are a misconfiguration that
// ConfigCheck reports, not two runs), and every trace is placed, by a name its launch's logs share
// (`a_rank0.pt.trace.json` beside `a_rank0.log`) or by a rank only one launch has. Where no log
// names a launch, a rank's start stands for it (byStart): its log's first dated start-up line,
// starts more than kSameJobGapNs apart, or stating other world sizes, being other runs, and only
// where every two runs have a rank that started in both (one rank's logs can date only a late
// line; ranks of one run that state different world sizes are a misconfiguration). Otherwise logs
// and Flight Recorder dumps state too little to be placed: they stay with whichever job is
// analysed. Two files of one rank in one folder (a trace and its log, two profiling windows)
// never split it.
struct JobSplit {
    // Traces of one job more than this apart cannot be (profiling windows of one job are the
    // same steps on every rank, and hosts' clocks agree to far better than this).
    static constexpr std::int64_t kSameJobGapNs = 5LL * 60 * 1'000'000'000;

    std::vector<TraceJob> jobs; // in order of their first event; empty without traces
    // The job the cross-rank checks cover when the folder mixes jobs: the one with the most
    // ranks (then the most bytes, then the earliest). -1 without traces.
    int analysed = -1;
    // Per source of the folder: a trace of another job than the analysed one, or (bySubfolder,
    // byLaunch) a file placed in that job.
    std::vector<bool> setAside;
    // The jobs were told apart by their subfolders, or by the launches their logs name (above).
    bool bySubfolder = false;
    bool byLaunch = false;
    // byLaunch where no log names a launch: the launches are the ranks' starts (one rank's logs
    // state two starts far apart in time, or two world sizes).
    bool byStart = false;

    bool mixed() const { return jobs.size() > 1; }
    // The other jobs' logs, dumps and error files are set aside too, not only their traces.
    bool setsAsideEveryFile() const { return bySubfolder || byLaunch; }
    // The job source `sourceIndex` counts in: the set-aside job that holds it, else (a file of the
    // analysed job, or one no job placed) the analysed job; -1 without jobs.
    int jobOf(int sourceIndex) const;
};

// `logs` are the folder's (TraceRead::logs), read for the launches they name.
JobSplit splitJobs(const QList<SourceFile>& sources, const std::vector<RankLog>& logs);

// Why a mixed split's jobs were told apart, as its finding says it: "their ranks' logs name
// different launches (MASTER_ADDR:MASTER_PORT ...), and ranks 0, 1 were launched under more than
// one; ...".
std::string splitReason(const JobSplit& split);
// What a job's files state together: "ranks 0, 1; world size 2; nccl; 2023-04-29 ... UTC".
std::string jobFacts(const TraceJob& job);

// The one finding of a folder that mixes jobs (kind MixedJobs): each job's files, ranks, stated
// world size and backend, and time range, which job is analysed and that the others are set
// aside. Only for a mixed split.
Finding mixedJobsFinding(const JobSplit& split, const QList<SourceFile>& sources);

// `store` as the checks of the analysed job see it: the set-aside sources' lanes and collectives
// belong to no rank, as a trace that states none: no cross-rank check reads them, and the time
// breakdown measures each such file on its own, never merged into a rank of the analysed job.
// Lanes, collectives and strings keep their indexes in `store`, so what the analysis returns (a
// group's records, an op's name) resolves in the store the views show.
EventStore withoutSources(const EventStore& store, const std::vector<bool>& setAside);

} // namespace rankscope
