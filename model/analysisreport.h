#pragma once

#include "model/analysis/analyzer.h"
#include "model/tracesession.h"

#include <nlohmann/json.hpp>

namespace rankscope {

// The `rankscope analyze` document (schema rankscope.analysis/1) and its readable forms.
// The JSON is the contract other tools rely on; text and Markdown say the same for people.
class AnalysisReport {
public:
    static constexpr const char* kSchema = "rankscope.analysis/1";

    static nlohmann::ordered_json toJson(const TraceSession& session, const AnalysisResult& result);
    static QString toText(const TraceSession& session, const AnalysisResult& result);
    static QString toMarkdown(const TraceSession& session, const AnalysisResult& result);
    static nlohmann::ordered_json findingsJson(const AnalysisResult& result);
    static nlohmann::ordered_json symptomsJson(const AnalysisResult& result);

    // The job's world size as the folder shows it. Only a source states it
    // (distributedInfo.world_size, a Horovod timeline, WORLD_SIZE / world_size= / nranks in a
    // log); the ranks seen say only that there were at least that many.
    struct WorldSize {
        int stated = 0;  // 0: no source states one
        int atLeast = 0; // largest rank seen + 1
        // "4", "unknown (at least 3)", "unknown"
        QString text() const;
    };
    static WorldSize worldSize(const TraceSession& session);
};

} // namespace rankscope
