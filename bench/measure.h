#pragma once

// What the benches measure with, once: a thread's CPU time and a /proc/self/status figure.
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

// CPU seconds the calling thread has used (per thread, so a figure is per core).
inline double threadCpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// A kB figure of /proc/self/status ("VmRSS:", "VmHWM:"), -1 when absent.
inline std::int64_t statusKb(const char* key)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::strlen(key)));
    return -1;
}
