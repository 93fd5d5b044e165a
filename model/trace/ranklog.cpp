#include "model/trace/ranklog.h"

#include "model/trace/logreader.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>

namespace rankscope {

QString logFactKindName(LogFactKind kind)
{
    switch (kind) {
    case LogFactKind::NcclInit:
        return QStringLiteral("nccl_init");
    case LogFactKind::NcclNetInterface:
        return QStringLiteral("nccl_net");
    case LogFactKind::NcclVersion:
        return QStringLiteral("nccl_version");
    case LogFactKind::NcclWarn:
        return QStringLiteral("nccl_warn");
    case LogFactKind::NcclColl:
        return QStringLiteral("nccl_coll");
    case LogFactKind::Watchdog:
        return QStringLiteral("watchdog");
    case LogFactKind::Fingerprint:
        return QStringLiteral("fingerprint");
    case LogFactKind::Environment:
        return QStringLiteral("environment");
    case LogFactKind::Version:
        return QStringLiteral("version");
    case LogFactKind::Signal:
        return QStringLiteral("signal");
    }
    return QStringLiteral("unknown");
}

namespace {

// Timestamps sit at the head of a line; this much of it is all the parser looks at.
constexpr qsizetype kTimestampHeadBytes = 64;

std::size_t getSize(const char* in, std::size_t size, std::size_t& p)
{
    std::size_t n = 0;
    for (int shift = 0; p < size; shift += 7) {
        const auto c = static_cast<unsigned char>(in[p++]);
        n |= std::size_t(c & 0x7f) << shift;
        if (!(c & 0x80)) break;
    }
    return n;
}

} // namespace

LogFact::LogFact(LogFactKind kind, int line, const Fields& fields) : kind(kind), line(line)
{
    std::size_t size = 0;
    for (const auto& [k, v] : fields)
        size += packedSize(k, v);
    if (size == 0) return;
    const std::shared_ptr<char[]> bytes(new char[size]);
    char* out = bytes.get();
    for (const auto& [k, v] : fields)
        out = packField(out, k, v);
    m_packed = std::shared_ptr<const char>(bytes, bytes.get());
    m_size = std::uint32_t(size);
}

LogFact::LogFact(LogFactKind kind, int line, std::shared_ptr<const char> packed, std::uint32_t size)
    : kind(kind), line(line), m_packed(std::move(packed)), m_size(size)
{}

template <typename Fn> bool LogFact::forEach(Fn&& fn) const
{
    const char* data = m_packed.get();
    for (std::size_t p = 0; p < m_size;) {
        const std::size_t k = getSize(data, m_size, p);
        const std::size_t v = getSize(data, m_size, p);
        const std::string_view key(data + p, k);
        const std::string_view value(data + p + k, v);
        p += k + v;
        if (fn(key, value)) return true;
    }
    return false;
}

LogFact::Fields LogFact::fields() const
{
    Fields out;
    forEach([&](std::string_view k, std::string_view v) {
        out.emplace_back(std::string(k), std::string(v));
        return false;
    });
    return out;
}

std::string LogFact::value(std::string_view key) const
{
    std::string out;
    forEach([&](std::string_view k, std::string_view v) {
        if (k != key) return false;
        out = std::string(v);
        return true;
    });
    return out;
}

bool LogFact::has(std::string_view key) const
{
    return forEach([&](std::string_view k, std::string_view) { return k == key; });
}

qint64 RankLog::lineOffset(int i) const
{
    const auto high =
        std::upper_bound(m_startHigh.begin(), m_startHigh.end(), i) - m_startHigh.begin();
    return (qint64(high) << 32) + m_startLow[std::size_t(i)];
}

QByteArrayView RankLog::lineHead(int i, qsizetype maxBytes) const
{
    const qint64 start = lineOffset(i);
    const char* data = m_bytes->constData() + start;
    const qsizetype n = std::min<qsizetype>(m_bytes->size() - start, maxBytes);
    const void* nl = std::memchr(data, '\n', std::size_t(n));
    qsizetype end = nl ? static_cast<const char*>(nl) - data : n;
    if (nl && end > 0 && data[end - 1] == '\r') --end;
    return QByteArrayView(data, end);
}

QByteArrayView RankLog::lineBytes(int i) const
{
    return lineHead(i, std::numeric_limits<qsizetype>::max());
}

QByteArrayView RankLog::linesBytes(int first, int count) const
{
    // A split stream numbers its lines; a stream that does not is its file's lines in order.
    if (!m_number.empty() || count <= 0 || !m_bytes) return {};
    const qint64 start = lineOffset(first);
    const QByteArrayView last = lineBytes(first + count - 1);
    return QByteArrayView(m_bytes->constData() + start, last.data() + last.size());
}

QString RankLog::lineText(int i) const
{
    return QString::fromUtf8(lineBytes(i));
}

std::vector<LogColourSpan> RankLog::lineColours(int i) const
{
    std::vector<LogColourSpan> out;
    if (!m_colours || m_colours->empty()) return out;
    const qint64 start = lineOffset(i);
    const qsizetype length = lineBytes(i).size();
    const std::vector<LogColourChange>& changes = *m_colours;
    // The change in effect at the line's start, then those inside it.
    auto it =
        std::upper_bound(changes.begin(), changes.end(), start,
                         [](qint64 offset, const LogColourChange& c) { return offset < c.offset; });
    LogColourChange current = it == changes.begin() ? LogColourChange{} : *std::prev(it);
    qsizetype from = 0;
    for (;; ++it) {
        const qsizetype to =
            it == changes.end() ? length : std::min<qsizetype>(length, it->offset - start);
        if (to > from) out.push_back({from, to - from, current.rgb, current.bold});
        if (it == changes.end() || to >= length) break;
        current = *it;
        from = to;
    }
    return out;
}

int RankLog::indexOfLineNumber(int number) const
{
    if (m_number.empty()) return number >= 1 && number <= lineCount() ? number - 1 : -1;
    const auto it = std::lower_bound(m_number.begin(), m_number.end(), number);
    if (it == m_number.end() || *it != number) return -1;
    return int(it - m_number.begin());
}

int RankLog::yearBefore(int i) const
{
    const auto it =
        std::lower_bound(m_years.begin(), m_years.end(), i,
                         [](const auto& entry, int line) { return entry.first < line; });
    return it == m_years.begin() ? 0 : std::prev(it)->second;
}

std::int64_t RankLog::timestampNs(int i) const
{
    bool hasDate = false;
    return LogReader::parseTimestamp(lineHead(i, kTimestampHeadBytes), yearBefore(i), &hasDate)
        .value_or(-1);
}

bool RankLog::timestampHasDate(int i) const
{
    bool hasDate = false;
    LogReader::parseTimestamp(lineHead(i, kTimestampHeadBytes), yearBefore(i), &hasDate);
    return hasDate;
}

std::vector<const LogFact*> RankLog::factsOfKind(LogFactKind kind) const
{
    std::vector<const LogFact*> out;
    for (const LogFact& f : m_facts)
        if (f.kind == kind) out.push_back(&f);
    return out;
}

std::optional<int> RankLog::lastStep() const
{
    if (m_steps.empty()) return std::nullopt;
    return m_steps.back().step;
}

} // namespace rankscope
