#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rankscope {

// One piece of evidence: a log line (path + line + text) or a trace event (path + event time).
struct Evidence {
    std::string path;
    int line = -1;            // 1-based log line; -1 for a trace event
    std::string text;         // the log line, or a description of the trace event
    std::int64_t timeNs = -1; // trace event start (the rank's own clock), -1 for log lines
    int rank = -1;
};

// One diagnosis: which rank did what, tied to a taxonomy leaf with the evidence that shows it.
struct Finding {
    std::string id;   // F1, F2, ... in report order
    std::string kind; // collective_mismatch|hang|desync|straggler|idle_gpu|crash|setup_failure|...
    std::string symptom;      // taxonomy leaf id
    std::string severity;     // error|warning|info
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
