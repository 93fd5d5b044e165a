#pragma once

#include "model/analysis/clockaligner.h"
#include "model/analysis/collectivematcher.h"
#include "model/analysis/finding.h"
#include "model/analysis/flightrecorderchecks.h"
#include "model/analysis/hangdetector.h"
#include "model/analysis/rankfacts.h"
#include "model/analysis/steptimeline.h"
#include "model/analysis/stragglerdetector.h"
#include "model/analysis/timebreakdown.h"

#include <map>
#include <string>
#include <vector>

namespace rankscope {

struct AnalysisResult {
    std::vector<Finding> findings;      // errors first, then warnings, then info
    std::vector<SymptomScore> symptoms; // best first
    ClockAlignment clock;
    std::vector<CollectiveGroup> groups;
    // Which ranks the job has and what each left, as the groups' members were decided by it.
    RankPresence presence;
    std::vector<GroupProgress> progress;
    std::map<int, RankArrival> arrivals;
    std::vector<RankTimeBreakdown> breakdown;
    StepTimeline steps;
    // What the checks had to work on, so a report can tell "nothing found" from "nothing read".
    std::size_t collectiveCount = 0;
    std::size_t logLineCount = 0; // log lines the classifier read (set by diagnose)
    // The analysed job's world size as its files state it (RankFacts::statedWorldSize; 0: none
    // does), and the largest rank it shows + 1: a folder mixing jobs reports the analysed one's.
    // Set by diagnose.
    int statedWorldSize = 0;
    int worldSizeAtLeast = 0;
};

// Runs every cross-rank check on a session's events and classified log lines, reconciles what
// the traces and the logs say (a rank that only waited is not the culprit; a crash explains the
// hang it caused) and ranks the taxonomy symptoms.
class Analyzer {
public:
    // `sourcePaths[i]` is the folder-relative path of source i (Lane::sourceIndex);
    // `ranks` are the ranks that left files in the folder; `dumps` are the folder's Flight
    // Recorder dumps (their entries are also in `store`), for the checks only dumps can feed;
    // `config` the settings the ranks' logs disagree on (ConfigCheck) and what the folder's files
    // disagree on (a folder mixing jobs, jobsplit.h), reported as they are; `presence` which
    // ranks the job has and what each left (RankFacts::presence; without it, `ranks` and the
    // store's are taken as present, with files of unknown kind). Ranks of the job that left
    // nothing are reported once and never blamed: nothing is known of them. A rank is compared
    // (and can be blamed) in collectives only when it left a file that records them, in
    // timeouts the logs show only when it left a log. `breakdown`, when given, is the
    // TimeBreakdown::compute of the full lanes, for a store whose lanes were reduced (a digest).
    static AnalysisResult run(const EventStore& store, std::vector<std::string> sourcePaths,
                              std::vector<int> ranks, const std::vector<Evidence>& logs,
                              const std::vector<FlightRecorderDump>& dumps = {},
                              std::vector<Finding> config = {},
                              const RankPresence* presence = nullptr,
                              const std::vector<RankTimeBreakdown>* breakdown = nullptr);
};

} // namespace rankscope
