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
};

} // namespace rankscope
