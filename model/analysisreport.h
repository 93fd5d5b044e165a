#pragma once

#include "model/tracesession.h"

#include <nlohmann/json.hpp>

namespace rankscope {

// The `rankscope analyze` document (schema rankscope.analysis/1) and its readable forms.
// The JSON is the contract other tools rely on; text and Markdown say the same for people.
class AnalysisReport {
public:
    static constexpr const char* kSchema = "rankscope.analysis/1";

    static nlohmann::ordered_json toJson(const TraceSession& session);
    static QString toText(const TraceSession& session);
};

} // namespace rankscope
