#pragma once

#include <cstdint>
#include <string>

namespace rankscope {

// A classified log line, as the log reader + symptom classifier hand it to the analysis.
// `cascade` marks lines that are consequences of another failure (watchdog teardown, launcher
// SIGTERM, "Horovod has been shut down", exit -6 after a timeout); `fatal` marks the line the
// process died with (the exception line of the final traceback, a fatal signal).
struct LogEvidence {
    int rank = -1; // -1 for a launcher-level line not attributable to one rank
    std::string path;
    int line = -1;
    std::string text;
    std::string symptom;   // taxonomy leaf id
    std::string signature; // the log signature that matched; empty for an exception none knows
    bool cascade = false;
    bool fatal = false;
    std::int64_t timeNs = -1; // wall-clock (unix epoch ns) when the line has a timestamp
};

} // namespace rankscope
