#pragma once

#include <QByteArray>
#include <QString>
#include <string>
#include <zlib.h>

// Test helpers on both sides of gzip, written with zlib (tests that use them link ZLIB::ZLIB).

// `raw` as one gzip member, written by zlib (tests that use it link ZLIB::ZLIB); empty when
// zlib fails.
inline QByteArray gzip(const QByteArray& raw)
{
    z_stream z{};
    if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
    QByteArray out(qsizetype(deflateBound(&z, uLong(raw.size()))), Qt::Uninitialized);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.constData()));
    z.avail_in = uInt(raw.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.truncate(qsizetype(z.total_out));
    deflateEnd(&z);
    return rc == Z_STREAM_END ? out : QByteArray();
}

// The inflated bytes of a gzip file (a plain file's bytes as they are), for tests that compute
// their truth from a raw trace; empty when it cannot be opened.
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
