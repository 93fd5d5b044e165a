#pragma once

#include "model/kb/signaturewitness.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rankscope {

// What a finding says happened. Its name (findingKindName) is what reports, the CLI's JSON and
// taxonomy/fix_rules.json call it.
enum class FindingKind {
    CollectiveMismatch,  // ranks called different collectives, or with different shapes
    Hang,                // ranks left waiting in a collective
    Desync,              // the ranks' collective sequences diverged
    Straggler,           // a rank arrives last more often than chance
    IdleGpu,             // a rank's GPU idle far more than its peers'
    Crash,               // a rank died of an exception or a signal
    SetupFailure,        // rendezvous or communicator setup failed
    ConfigMismatch,      // the ranks' settings disagree
    MissingRanks,        // ranks of the job that left no file
    UnpairedCollectives, // a group whose collectives could not be paired across ranks
    MixedJobs,           // the folder holds traces of different jobs, never compared
    LogSymptom,          // an error line that is none of the above
};

// Errors first: the order findings are reported in.
enum class Severity { Error, Warning, Info };

std::string findingKindName(FindingKind kind);
std::string severityName(Severity severity);
// The kind or severity a name stands for, nullopt for any other text.
std::optional<FindingKind> findingKindFromName(std::string_view name);
std::optional<Severity> severityFromName(std::string_view name);

// One piece of evidence: a log line (path + line + text) or a trace event (path + event time),
// the same type whether a finding cites it, an auto-check rests on it, a rank's fact was read
// from it or the log classification produced it (classifyLogs: then it also carries the
// classifier's verdict below).
struct Evidence {
    std::string path;
    int line = -1;    // 1-based log line; -1 for a trace event
    std::string text; // the log line, or a description of the trace event
    // A trace event's start (the rank's own clock); a classified log line's wall-clock time
    // (unix epoch ns) when the line has a timestamp; else -1.
    std::int64_t timeNs = -1;
    int rank = -1; // -1 for a launcher-level line not attributable to one rank

    // What the symptom classifier made of a log line (empty and false for other evidence):
    // the taxonomy leaf and the signature that matched (empty for an exception none knows);
    // `cascade` marks lines that are consequences of another failure (watchdog teardown,
    // launcher SIGTERM, "Horovod has been shut down", exit -6 after a timeout); `fatal` the line
    // the process died with (the exception line of the final traceback, a fatal signal).
    std::string symptom;
    std::string signature;
    SignatureWitness witness = SignatureWitness::None; // the signature's, as signatures.json says
    bool cascade = false;
    bool fatal = false;

    // The line as a finding or an auto-check cites it: where it is and what it says, without
    // the classifier's verdict or its wall-clock time (a finding's times are trace times).
    Evidence cited() const;
};

// One diagnosis: which rank did what, tied to a taxonomy leaf with the evidence that shows it.
// A finding quotes at most this many evidence lines, when others' are folded into it or when it
// lists files one a line (the mixed-jobs finding): a summary names what the rest are.
constexpr std::size_t kMaxFindingEvidence = 24;

struct Finding {
    std::string id; // F1, F2, ... in report order
    // Every detector sets both; the defaults are the weakest claims.
    FindingKind kind = FindingKind::LogSymptom;
    std::string symptom; // taxonomy leaf id
    Severity severity = Severity::Info;
    std::vector<int> ranks;   // the ranks to blame, not every rank involved
    std::string processGroup; // empty when unknown
    std::int64_t seq = -1;
    int step = -1;
    std::int64_t startNs = -1; // aligned trace time, -1 when the finding has no trace interval
    std::int64_t endNs = -1;
    std::string summary;
    std::vector<Evidence> evidence;
    // What the evidence shows, as conditions of taxonomy/fix_rules.json ("never_issued",
    // "size_mismatch", "world_size_mismatch", ...), and its values in a few words
    // ("WORLD_SIZE 4, ranks 0, 1, 2 launched"): what the fixes are chosen by.
    std::vector<std::string> conditions;
    std::string detail;
    std::vector<std::string> fixPatterns; // best first
    std::string fixReason;                // why the first one fits this evidence, one line
    double confidence = 0.5; // in [0, 1]; how sure the mechanism is, feeds the symptom score
};

// A taxonomy leaf and how strongly the findings point at it.
struct SymptomScore {
    std::string symptom;
    double score = 0.0;
    std::vector<std::string> findings;
};

} // namespace rankscope
