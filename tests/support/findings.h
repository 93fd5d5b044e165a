#pragma once

#include "model/analysis/analyzer.h"

namespace rankscope::test {

// The finding the report puts first among the errors (findings are ranked best first).
inline const Finding* topError(const AnalysisResult& result)
{
    for (const Finding& f : result.findings)
        if (f.severity == "error") return &f;
    return nullptr;
}

} // namespace rankscope::test
