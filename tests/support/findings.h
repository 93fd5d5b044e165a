#pragma once

#include "model/analysis/analyzer.h"

#include <QByteArray>

namespace rankscope {

// QCOMPARE prints a kind or a severity by its name (found by argument-dependent lookup).
inline char* toString(FindingKind kind)
{
    return qstrdup(findingKindName(kind).c_str());
}

inline char* toString(Severity severity)
{
    return qstrdup(severityName(severity).c_str());
}

} // namespace rankscope

namespace rankscope::test {

// The finding the report puts first among the errors (findings are ranked best first).
inline const Finding* topError(const AnalysisResult& result)
{
    for (const Finding& f : result.findings)
        if (f.severity == Severity::Error) return &f;
    return nullptr;
}

} // namespace rankscope::test
