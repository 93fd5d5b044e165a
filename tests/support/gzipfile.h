#pragma once

#include <QString>
#include <string>
#include <zlib.h>

// The inflated bytes of a gzip file (a plain file's bytes as they are), for tests that compute
// their truth from a raw trace; empty when it cannot be opened. Link ZLIB::ZLIB.
inline std::string inflate(const QString& path)
{
    gzFile f = gzopen(path.toStdString().c_str(), "rb");
    std::string out;
    if (!f) return out;
    char buf[1 << 16];
    for (int n; (n = gzread(f, buf, sizeof buf)) > 0;)
        out.append(buf, std::size_t(n));
    gzclose(f);
    return out;
}
