#pragma once

#include "model/analysis/analyzer.h"
#include "model/tracesession.h" // TraceRead, and the sessions its callers pass

#include <nlohmann/json.hpp>

namespace rankscope {

// The `rankscope analyze` document (schema rankscope.analysis/1) and its readable forms.
// The JSON is the contract other tools rely on; text and Markdown say the same for people.
// Built from what was read and the analysis of it (a loaded TraceSession is both, or a
// TraceRead and diagnose(read).analysis), so a digest or a test can build one without a load.
class AnalysisReport {
public:
    static constexpr const char* kSchema = "rankscope.analysis/1";

    static nlohmann::ordered_json toJson(const TraceRead& read, const AnalysisResult& result);
    static QString toText(const TraceRead& read, const AnalysisResult& result);
    static QString toMarkdown(const TraceRead& read, const AnalysisResult& result);
    static nlohmann::ordered_json findingsJson(const AnalysisResult& result);
    static nlohmann::ordered_json symptomsJson(const AnalysisResult& result);
    // A finding's symptom id; for a finding that has none (ranks that left no file, collectives
    // that could not be paired, a dump format the reader does not know) what stands in its
    // place: "none (a fact about what the folder holds, not a fault)".
    static QString symptomText(const Finding& f);
    // A position on the traces' aligned time axis as the readable forms print it: whole
    // microseconds, the number alone ("1234568" for 1234567891 ns); each form adds its unit.
    static QString wholeMicros(std::int64_t ns);

    // The job's world size as the folder shows it. Only a source states it
    // (distributedInfo.world_size, a Horovod timeline, WORLD_SIZE / world_size= / nranks in a
    // log); the ranks seen say only that there were at least that many. Once diagnosed, the
    // analysed job's (AnalysisResult::statedWorldSize: a folder mixing jobs reports the job its
    // findings are about); before, or when the diagnosis found nothing to size, the folder's.
    struct WorldSize {
        int stated = 0;  // 0: no source states one
        int atLeast = 0; // largest rank seen + 1
        // "4", "unknown (at least 3)", "unknown"
        QString text() const;
    };
    static WorldSize worldSize(const TraceRead& read, const AnalysisResult& result);
};

} // namespace rankscope
