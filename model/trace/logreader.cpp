#include "model/trace/logreader.h"

#include "model/trace/logtext.h"

#include <QFile>
#include <QRegularExpression>
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <unordered_map>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef __linux__
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace rankscope {

namespace {

#ifdef __linux__
// A transparent huge page on x86-64 (and arm64 with 4 KB base pages): 2 MB.
constexpr std::size_t kHugePage = std::size_t(2) << 20;
#endif

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

// Reads exactly `n` digits at `p`; -1 when they are not all digits.
int digits(QByteArrayView s, qsizetype p, int n)
{
    if (p < 0 || p + n > s.size()) return -1;
    int v = 0;
    for (int k = 0; k < n; ++k) {
        const char c = s[p + k];
        if (!isDigit(c)) return -1;
        v = v * 10 + (c - '0');
    }
    return v;
}

// Log clocks outside this range are corrupt text; it also keeps ns since epoch in int64.
bool plausibleYear(int y)
{
    return y >= 1970 && y <= 2200;
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
std::int64_t daysFromCivil(int y, int m, int d)
{
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

// "HH:MM:SS" then an optional fraction of any length; returns ns since midnight or -1.
std::int64_t timeOfDay(QByteArrayView s, qsizetype p)
{
    const int h = digits(s, p, 2), mi = digits(s, p + 3, 2), sec = digits(s, p + 6, 2);
    if (h < 0 || mi < 0 || sec < 0 || s[p + 2] != ':' || s[p + 5] != ':') return -1;
    if (h > 23 || mi > 59 || sec > 60) return -1;
    std::int64_t ns = (std::int64_t(h) * 3600 + mi * 60 + sec) * 1'000'000'000LL;
    qsizetype q = p + 8;
    if (q < s.size() && (s[q] == '.' || s[q] == ',')) {
        std::int64_t scale = 100'000'000LL;
        for (++q; q < s.size() && isDigit(s[q]); ++q) {
            ns += (s[q] - '0') * scale;
            scale /= 10;
        }
    }
    return ns;
}

std::string_view view(QByteArrayView b)
{
    return std::string_view(b.data(), std::size_t(b.size()));
}

std::string str(const QString& s)
{
    return s.toStdString();
}

// Bytes of a line as a field value. Lines are UTF-8 as written; an invalid sequence goes through
// QString so that it reads as U+FFFD, as the text view shows it.
std::string utf8(std::string_view s)
{
    for (const char c : s)
        if (static_cast<unsigned char>(c) >= 0x80)
            return QString::fromUtf8(s.data(), qsizetype(s.size())).toStdString();
    return std::string(s);
}

// ASCII classes as QRegularExpression reads \w, \s and \d without UseUnicodePropertiesOption.
bool isWord(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || c == '_';
}

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

// Case-insensitive: does `s` hold the lower-case `word` at `p`?
bool startsWithNoCase(std::string_view s, std::size_t p, std::string_view word)
{
    if (p + word.size() > s.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k)
        if (lower(s[p + k]) != word[k]) return false;
    return true;
}

bool startsWith(std::string_view s, std::size_t p, std::string_view word)
{
    if (p + word.size() > s.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k) // short literals: cheaper than a memcmp call
        if (s[p + k] != word[k]) return false;
    return true;
}

std::size_t skipSpaces(std::string_view s, std::size_t p)
{
    while (p < s.size() && isSpace(s[p]))
        ++p;
    return p;
}

// The literals the line facts hinge on, found in one pass over the line so that the common line
// (none of them) costs one table lookup per byte and no regex.
enum Needle : std::uint32_t {
    kSeqNum = 1u << 1,             // "SeqNum="
    kFingerprint = 1u << 2,        // "CollectiveFingerPrint("
    kEquals = 1u << 3,             // '='
    kOrch = 1u << 4,               // "orch" (torch, Torch, PyTorch)
    kOrchEquals = 1u << 5,         // "orch="
    kErsion = 1u << 6,             // "ersion"
    kCudaUpper = 1u << 7,          // "CUDA"
    kCudaLower = 1u << 8,          // "cuda"
    kCudaUpperEqOrSpace = 1u << 9, // "CUDA=" or "CUDA "
    kCudaLowerEq = 1u << 10,       // "cuda="
    kSignal = 1u << 11,            // "ignal" or "SIG"
    kStep = 1u << 12,              // "step", "Step" or "iter"
    kHost = 1u << 13,              // "host"
    kNcclInfo = 1u << 14,          // "NCCL INFO"
    kNcclWarn = 1u << 15,          // "NCCL WARN"
    kNcclVersion = 1u << 16,       // "NCCL version"
    kNetSlash = 1u << 17,          // "NET/"
    kIfname = 1u << 18,            // "IFNAME"
    kOpCount = 1u << 19,           // "opCount"
    kNranks = 1u << 20,            // " nranks "
};

bool contains(std::string_view s, std::string_view what)
{
    return s.find(what) != std::string_view::npos;
}

// `at` starts with the literal `word` (a compile-time length, so the compare is inlined).
template <std::size_t N> bool hasPrefix(std::string_view at, const char (&word)[N])
{
    return at.size() >= N - 1 && std::memcmp(at.data(), word, N - 1) == 0;
}

// The byte pairs a needle (or a case-insensitive "step" / "iter") begins with, as a bit set. The
// needles "ersion" and "opCount" are not among them: they matter only beside others ("orch",
// "cuda", "NCCL") and are looked for only when those were found.
class NeedlePairs {
public:
    NeedlePairs()
    {
        for (const char* word : {"NC", "NE", "IF", "nr", "Se", "SI", "St", "CU", "Co", "or", "cu",
                                 "it", "ig", "st", "ho"})
            set(word[0], word[1]);
        for (const char s : {'s', 'S'}) // any case of "step" and "iter", for where step() begins
            for (const char t : {'t', 'T'}) {
                set(s, t);
                set(s == 's' ? 'i' : 'I', t);
            }
        for (int c = 0; c < 256; ++c)
            set('=', char(c)); // '=' alone; also at a line's end (second byte 0)
    }
    bool has(unsigned char a, unsigned char b) const
    {
        const unsigned pair = unsigned(a) | unsigned(b) << 8;
        return m_bits[pair >> 6] >> (pair & 63) & 1;
    }

private:
    void set(char a, char b)
    {
        const unsigned pair =
            unsigned(static_cast<unsigned char>(a)) | unsigned(static_cast<unsigned char>(b)) << 8;
        m_bits[pair >> 6] |= std::uint64_t(1) << (pair & 63);
    }
    std::array<std::uint64_t, 1024> m_bits{};
};

#ifdef __SSE2__
// Bit k: a pair of NeedlePairs begins at p[k] (reads p[0..16]). Sixteen positions at a time, so
// that the common byte, which begins no needle, costs no branch.
unsigned needlePairMask(const char* p)
{
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
    const auto is = [](__m128i x, char c) { return _mm_cmpeq_epi8(x, _mm_set1_epi8(c)); };
    const auto any = [](__m128i x, __m128i y) { return _mm_or_si128(x, y); };
    const auto both = [](__m128i x, __m128i y) { return _mm_and_si128(x, y); };
    const __m128i t = any(is(w, 't'), is(w, 'T'));
    __m128i m = is(v, '=');
    m = any(m, both(is(v, 'N'), any(is(w, 'C'), is(w, 'E'))));
    m = any(m, both(is(v, 'I'), any(is(w, 'F'), t)));
    m = any(m, both(is(v, 'n'), is(w, 'r')));
    m = any(m, both(is(v, 'S'), any(any(is(w, 'e'), is(w, 'I')), t)));
    m = any(m, both(is(v, 'C'), any(is(w, 'U'), is(w, 'o'))));
    m = any(m, both(is(v, 'o'), is(w, 'r')));
    m = any(m, both(is(v, 'c'), is(w, 'u')));
    m = any(m, both(is(v, 'i'), any(is(w, 'g'), t)));
    m = any(m, both(is(v, 's'), t));
    m = any(m, both(is(v, 'h'), is(w, 'o')));
    return unsigned(_mm_movemask_epi8(m));
}
#endif

// "step" or "iter" in any case at `at` (4 bytes there): a letter's bit 0x20 is its case.
bool stepOrIterNoCase(const char* at)
{
    std::uint32_t w = 0;
    std::memcpy(&w, at, 4);
    w |= 0x20202020u;
    std::uint32_t step = 0, iter = 0;
    std::memcpy(&step, "step", 4);
    std::memcpy(&iter, "iter", 4);
    return w == step || w == iter;
}

// The needle (if any) that begins at d[p], into `found`.
void needleAt(const char* d, std::size_t p, std::size_t n, std::uint32_t& found,
              std::size_t* stepFrom)
{
    const std::string_view at(d + p, n - p);
    if (*stepFrom == std::string_view::npos && n - p >= 4 && stepOrIterNoCase(d + p)) *stepFrom = p;
    switch (d[p]) {
    case 'N':
        if (hasPrefix(at, "NCCL")) {
            if (hasPrefix(at, "NCCL INFO"))
                found |= kNcclInfo;
            else if (hasPrefix(at, "NCCL WARN"))
                found |= kNcclWarn;
            else if (hasPrefix(at, "NCCL version"))
                found |= kNcclVersion;
        } else if (hasPrefix(at, "NET/")) {
            found |= kNetSlash;
        }
        break;
    case 'I':
        if (hasPrefix(at, "IFNAME")) found |= kIfname;
        break;
    case 'n':
        if (p > 0 && d[p - 1] == ' ' && hasPrefix(at, "nranks ")) found |= kNranks;
        break;
    case 'S':
        if (hasPrefix(at, "SeqNum="))
            found |= kSeqNum;
        else if (hasPrefix(at, "SIG"))
            found |= kSignal;
        else if (hasPrefix(at, "Step"))
            found |= kStep;
        break;
    case 'C':
        if (hasPrefix(at, "CUDA")) {
            found |= kCudaUpper;
            if (at.size() > 4 && (at[4] == '=' || at[4] == ' ')) found |= kCudaUpperEqOrSpace;
        } else if (hasPrefix(at, "CollectiveFingerPrint(")) {
            found |= kFingerprint;
        }
        break;
    case '=':
        found |= kEquals;
        break;
    case 'o':
        if (hasPrefix(at, "orch")) {
            found |= kOrch;
            if (at.size() > 4 && at[4] == '=') found |= kOrchEquals;
        }
        break;
    case 'c':
        if (hasPrefix(at, "cuda")) {
            found |= kCudaLower;
            if (at.size() > 4 && at[4] == '=') found |= kCudaLowerEq;
        }
        break;
    case 'i':
        if (hasPrefix(at, "iter"))
            found |= kStep;
        else if (hasPrefix(at, "ignal"))
            found |= kSignal;
        break;
    case 's':
        if (hasPrefix(at, "step")) found |= kStep;
        break;
    case 'h':
        if (hasPrefix(at, "host")) found |= kHost;
        break;
    default:
        break;
    }
}

// The needles of `s`; *stepFrom: where its first "step" or "iter" in any case begins (npos when
// none), so that step() need not look before it.
std::uint32_t findNeedles(std::string_view s, std::size_t* stepFrom)
{
    static const NeedlePairs pairs;
    *stepFrom = std::string_view::npos;
    std::uint32_t found = 0;
    const std::size_t n = s.size();
    const char* d = s.data();
    std::size_t p = 0;
#ifdef __SSE2__
    for (; p + 17 <= n; p += 16)
        for (unsigned m = needlePairMask(d + p); m; m &= m - 1)
            needleAt(d, p + unsigned(__builtin_ctz(m)), n, found, stepFrom);
#endif
    for (; p < n; ++p)
        if (pairs.has(static_cast<unsigned char>(d[p]),
                      static_cast<unsigned char>(p + 1 < n ? d[p + 1] : 0)))
            needleAt(d, p, n, found, stepFrom);
    if ((found & (kOrch | kCudaUpper | kCudaLower)) && contains(s, "ersion")) found |= kErsion;
    if ((found & (kNcclInfo | kNcclWarn | kNcclVersion)) && contains(s, "opCount"))
        found |= kOpCount;
    return found;
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// Splits "A=1, B=[2, 3], C=T(x, y)" at top-level commas into key/value pairs.
std::vector<std::pair<std::string, std::string>> keyValues(std::string_view body)
{
    std::vector<std::pair<std::string, std::string>> out;
    int depth = 0;
    std::size_t begin = 0;
    for (std::size_t k = 0; k <= body.size(); ++k) {
        const char c = k < body.size() ? body[k] : ',';
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') --depth;
        if (c != ',' || depth > 0) continue;
        const std::string_view item = trimmed(body.substr(begin, k - begin));
        begin = k + 1;
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0) continue;
        out.emplace_back(std::string(trimmed(item.substr(0, eq))),
                         std::string(trimmed(item.substr(eq + 1))));
    }
    return out;
}

// The text between the '(' at `open` and its matching ')', or npos-length when unbalanced.
std::string_view parenBody(std::string_view s, std::size_t open)
{
    int depth = 0;
    for (std::size_t k = open; k < s.size(); ++k) {
        if (s[k] == '(') ++depth;
        if (s[k] == ')' && --depth == 0) return s.substr(open + 1, k - open - 1);
    }
    return s.substr(open + 1); // cut line: keep what is there
}

// Asks for transparent huge pages on the 2 MB-aligned inside of a buffer that is about to be
// filled: a GB log is then mapped in 2 MB pages, one page fault each instead of 512 (on a VM
// whose page faults are costly, the first touch of 4 KB pages cost more than reading the log).
void adviseHugePages(void* data, std::size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + size) & ~(kHugePage - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)size;
#endif
}

bool isEnvironmentKey(std::string_view key)
{
    static constexpr std::string_view keys[] = {
        "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE",
        "RANK",        "LOCAL_RANK",  "LOCAL_WORLD_SIZE",
        "GROUP_RANK",  "NODE_RANK",   "CUDA_VISIBLE_DEVICES",
    };
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

} // namespace

// The fields of the fact being read, packed (LogFact::packField) into a buffer that is reused.
class PackedFields {
public:
    void clear() { m_used = 0; }
    void add(std::string_view key, std::string_view value)
    {
        const std::size_t need = LogFact::packedSize(key, value);
        if (m_bytes.size() - m_used < need)
            m_bytes.resize(std::max(m_bytes.size() * 2, m_used + need));
        LogFact::packField(m_bytes.data() + m_used, key, value);
        m_used += need;
    }
    // A field whose value is a line's bytes, as UTF-8 (utf8()).
    void addText(std::string_view key, std::string_view value)
    {
        for (const char c : value)
            if (static_cast<unsigned char>(c) >= 0x80) {
                add(key, utf8(value));
                return;
            }
        add(key, value);
    }
    std::string_view bytes() const { return std::string_view(m_bytes.data(), m_used); }

private:
    std::string m_bytes;
    std::size_t m_used = 0;
};

// The packed fields of a read's facts, in blocks that grow from 4 KB to 2 MB (those on huge
// pages where the system has them): one allocation per block instead of one per fact, and a
// block outlives the read as long as a fact (or a copy of one) points into it.
class FactStore {
public:
    LogFact make(LogFactKind kind, int line, std::string_view packed)
    {
        if (packed.empty()) return LogFact(kind, line);
        if (packed.size() > m_size - m_used) grow(packed.size());
        char* at = m_block.get() + m_used;
        std::memcpy(at, packed.data(), packed.size());
        m_used += packed.size();
        return LogFact(kind, line, std::shared_ptr<const char>(m_block, at),
                       std::uint32_t(packed.size()));
    }

private:
    static constexpr std::size_t kFirstBlock = std::size_t(4) << 10;
    static constexpr std::size_t kLastBlock = std::size_t(2) << 20;

    void grow(std::size_t atLeast)
    {
        m_size = std::max(atLeast, m_size ? std::min(m_size * 2, kLastBlock) : kFirstBlock);
        m_used = 0;
        if (m_size == kLastBlock) {
            void* p = std::aligned_alloc(kLastBlock, kLastBlock);
            if (!p) throw std::bad_alloc();
            adviseHugePages(p, kLastBlock);
            m_block = std::shared_ptr<char[]>(static_cast<char*>(p), [](char* b) { std::free(b); });
        } else {
            m_block = std::shared_ptr<char[]>(new char[m_size]);
        }
    }

    std::shared_ptr<char[]> m_block;
    std::size_t m_size = 0;
    std::size_t m_used = 0;
};

// Fills one RankLog's line index and facts, line by line.
class RankLogBuilder {
public:
    explicit RankLogBuilder(RankLog& log) : m_log(log) {}

    // `number` is kept only for split streams (others number their lines 1, 2, ...).
    void addLine(std::int64_t start, int number, QByteArrayView content, bool keepNumber)
    {
        const int index = m_log.lineCount();
        m_log.m_startLow.push_back(std::uint32_t(start));
        while (std::int64_t(m_log.m_startHigh.size()) < (start >> 32))
            m_log.m_startHigh.push_back(index);
        if (keepNumber) m_log.m_number.push_back(number);
        if (content.size() > LogReader::kParseLimitBytes) {
            ++m_log.longLines;
            content = content.first(LogReader::kParseLimitBytes);
        }
        bool hasDate = false;
        int year = 0;
        const std::optional<std::int64_t> ts =
            LogReader::parseTimestamp(content, m_year, &hasDate, &year);
        if (year && year != m_year) {
            m_year = year;
            m_log.m_years.emplace_back(index, year);
        }
        parse(index, content, ts.has_value());
    }

    void finish() { closeException(); }

private:
    void closeException()
    {
        if (m_state != State::None && !m_current.type.empty())
            m_log.m_exceptions.push_back(std::move(m_current));
        m_current = LogException{};
        m_state = State::None;
    }

    // True for the lines that only frame a traceback (its header, File and code lines).
    bool traceback(int index, std::string_view line, bool timestamped)
    {
        const std::string_view t = trimmed(line);
        if (t == "Traceback (most recent call last):") {
            closeException();
            m_state = State::Frames;
            m_current.firstLine = index;
            return true;
        }
        if (m_state == State::None) return false;
        if (m_state == State::Frames) {
            if (t.empty()) return true;
            if (line.front() == ' ' || line.front() == '\t') {
                static const QRegularExpression frame(
                    QStringLiteral("^File \"([^\"]*)\", line (\\d+)(?:, in (.*))?$"));
                const QRegularExpressionMatch m =
                    frame.match(QString::fromUtf8(t.data(), qsizetype(t.size())));
                if (m.hasMatch())
                    m_current.frames.push_back(
                        {str(m.captured(1)), m.captured(2).toInt(), str(m.captured(3))});
                return true;
            }
            static const QRegularExpression exc(
                QStringLiteral("^([A-Za-z_][\\w.]*)(?::\\s?(.*))?$"));
            const QRegularExpressionMatch m =
                exc.match(QString::fromUtf8(t.data(), qsizetype(t.size())));
            if (!m.hasMatch() || timestamped) { // not an exception line: the traceback was cut
                m_current.type = m_current.frames.empty() ? std::string() : "(traceback cut)";
                m_current.lastLine = index - 1;
                closeException();
                return false;
            }
            m_current.type = str(m.captured(1));
            m_current.message = str(m.captured(2));
            m_current.lastLine = index;
            m_state = State::Message;
            m_messageLines = 0;
            return false; // its text may hold facts (fingerprints, NCCL errors)
        }
        // State::Message: a multi-line message continues until something else starts.
        const bool ends = timestamped || t.empty() || line.front() == '[' ||
                          t.starts_with("During handling") ||
                          t.starts_with("The above exception") || t.starts_with("=====") ||
                          contains(line, " NCCL ") || ++m_messageLines > 40;
        if (ends) {
            closeException();
            return false;
        }
        m_current.message += '\n';
        m_current.message += std::string(line);
        m_current.lastLine = index;
        return false;
    }

    void fact(LogFactKind kind, int index, std::vector<std::pair<std::string, std::string>> fields)
    {
        m_pack.clear();
        for (const auto& [k, v] : fields)
            m_pack.add(k, v);
        m_log.m_facts.push_back(m_store.make(kind, index, m_pack.bytes()));
    }

    void noteWorldSize(const std::string& v)
    {
        bool ok = false;
        const int n = QString::fromStdString(v).toInt(&ok);
        if (ok && n > 0 && n < 10'000'000)
            m_log.worldSize = std::max(m_log.worldSize.value_or(0), n);
    }

    // The "host:pid:tid [dev] [file:line ]NCCL INFO|WARN" prefix NCCL puts on its lines, matched
    // by hand: it is tried on every NCCL line of a log whose host is not known yet.
    struct NcclPrefix {
        std::string_view host, pid, tid, dev, level;
    };
    static std::optional<NcclPrefix> ncclPrefix(std::string_view s)
    {
        const auto digitsAt = [&](std::size_t p) {
            std::size_t q = p;
            while (q < s.size() && isDigit(s[q]))
                ++q;
            return q;
        };
        const auto tryAt = [&](std::size_t p) -> std::optional<NcclPrefix> {
            NcclPrefix out;
            std::size_t q = p;
            while (q < s.size() && (isWord(s[q]) || s[q] == '.' || s[q] == '-'))
                ++q;
            if (q == p || q >= s.size() || s[q] != ':') return std::nullopt;
            out.host = s.substr(p, q - p);
            std::size_t e = digitsAt(++q);
            if (e == q || e >= s.size() || s[e] != ':') return std::nullopt;
            out.pid = s.substr(q, e - q);
            q = e + 1;
            e = digitsAt(q);
            if (e == q || !startsWith(s, e, " [")) return std::nullopt;
            out.tid = s.substr(q, e - q);
            q = e + 2;
            e = digitsAt(q);
            if (e == q || !startsWith(s, e, "] ")) return std::nullopt;
            out.dev = s.substr(q, e - q);
            q = e + 2;
            const auto level = [&](std::size_t at) -> bool {
                if (!startsWith(s, at, "NCCL ")) return false;
                if (startsWith(s, at + 5, "INFO") || startsWith(s, at + 5, "WARN")) {
                    out.level = s.substr(at + 5, 4);
                    return true;
                }
                return false;
            };
            // An optional "file.cc:123 " source location sits before NCCL in WARN lines.
            std::size_t token = q;
            while (token < s.size() && !isSpace(s[token]))
                ++token;
            if (token < s.size() && s[token] == ' ') {
                const std::size_t colon = s.substr(q, token - q).rfind(':');
                if (colon != std::string_view::npos && colon > 0 &&
                    digitsAt(q + colon + 1) == token && token > q + colon + 1 && level(token + 1))
                    return out;
            }
            if (level(q)) return out;
            return std::nullopt;
        };
        if (auto m = tryAt(0)) return m;
        for (std::size_t p = 0; p < s.size(); ++p)
            if (isSpace(s[p]))
                if (auto m = tryAt(p + 1)) return m;
        return std::nullopt;
    }

    // "AllReduce: opCount 1a sendbuff 0x.. recvbuff 0x.. count N datatype T op O root R comm C
    // [nranks=N] stream S", the line NCCL_DEBUG_SUBSYS=COLL prints per collective.
    void ncclColl(int index, std::string_view body)
    {
        std::size_t p = skipSpaces(body, 0);
        const std::size_t opStart = p;
        while (p < body.size() && isWord(body[p]))
            ++p;
        if (p == opStart || !startsWith(body, p, ": opCount ")) return;
        const std::string_view op = body.substr(opStart, p - opStart);
        p += 10;
        const std::size_t countStart = p;
        while (p < body.size() && isWord(body[p]))
            ++p;
        if (p == countStart) return;
        m_pack.clear();
        m_pack.add("op", op);
        m_pack.add("opCount", body.substr(countStart, p - countStart));
        const std::string_view rest = body.substr(p);
        bool afterWord = false; // rest[k - 1] is a word character
        for (std::size_t k = 0; k < rest.size();) {
            const bool word = isWord(rest[k]);
            if (!word || afterWord) {
                afterWord = word;
                ++k;
                continue;
            }
            // At most one key begins here; the line's second "op" is the reduction (the first,
            // the call, is "op").
            std::string_view key, name;
            switch (rest[k]) {
            case 's':
                key = startsWith(rest, k, "sendbuff") ? "sendbuff" : "stream";
                break;
            case 'r':
                key = startsWith(rest, k, "recvbuff") ? "recvbuff" : "root";
                break;
            case 'c':
                key = startsWith(rest, k, "count") ? "count" : "comm";
                break;
            case 'd':
                key = "datatype";
                break;
            case 'o':
                key = "op";
                name = "redOp";
                break;
            default:
                break;
            }
            std::size_t end = 0;
            if (!key.empty() && startsWith(rest, k, key)) {
                const std::size_t v = skipSpaces(rest, k + key.size());
                if (v > k + key.size() && v < rest.size()) {
                    end = v;
                    while (end < rest.size() && !isSpace(rest[end]))
                        ++end;
                    m_pack.addText(name.empty() ? key : name, rest.substr(v, end - v));
                }
            }
            afterWord = end ? isWord(rest[end - 1]) : true;
            k = end ? end : k + 1;
        }
        for (std::size_t at = rest.find("[nranks="); at != std::string_view::npos;
             at = rest.find("[nranks=", at + 1)) {
            const std::size_t d = at + 8;
            std::size_t e = d;
            while (e < rest.size() && isDigit(rest[e]))
                ++e;
            if (e > d && e < rest.size() && rest[e] == ']') {
                m_pack.add("nranks", rest.substr(d, e - d));
                break;
            }
        }
        m_log.m_facts.push_back(m_store.make(LogFactKind::NcclColl, index, m_pack.bytes()));
    }

    // A match only when `wanted`: most NCCL lines are none of the rare kinds, and even an empty
    // QRegularExpressionMatch costs an allocation.
    template <typename Text>
    static std::optional<QRegularExpressionMatch> matchIf(bool wanted, const QRegularExpression& re,
                                                          const Text& text)
    {
        if (!wanted) return std::nullopt;
        return re.match(text());
    }

    void nccl(int index, std::string_view bytes, std::uint32_t needles)
    {
        // The prefix names the host: needed once, and for WARN and init lines.
        const bool warn = needles & kNcclWarn;
        const bool isInit = needles & kNranks;
        std::optional<NcclPrefix> p;
        if (m_log.host.empty() || warn || isInit) p = ncclPrefix(bytes);
        std::size_t level =
            (needles & kNcclInfo) ? bytes.find("NCCL INFO ") : std::string_view::npos;
        if (level == std::string_view::npos && warn) level = bytes.find("NCCL WARN ");
        const std::string_view bodyBytes =
            level != std::string_view::npos ? bytes.substr(level + 10) : bytes;
        const auto body = [&] {
            return QString::fromUtf8(bodyBytes.data(), qsizetype(bodyBytes.size()));
        };
        std::vector<std::pair<std::string, std::string>> origin;
        if (p) {
            if (m_log.host.empty()) m_log.host = utf8(p->host);
            origin = {{"host", utf8(p->host)},
                      {"pid", std::string(p->pid)},
                      {"tid", std::string(p->tid)},
                      {"cudaDev", std::string(p->dev)}};
        }
        if (p && p->level == "WARN") {
            auto f = origin;
            f.emplace_back("text", utf8(bodyBytes));
            fact(LogFactKind::NcclWarn, index, std::move(f));
        }
        static const QRegularExpression version(QStringLiteral("NCCL version (\\S+)"));
        if (const auto m = matchIf(needles & kNcclVersion, version, body); m && m->hasMatch()) {
            auto f = origin;
            f.emplace_back("version", str(m->captured(1)));
            static const QRegularExpression cuda(QStringLiteral("\\+cuda(\\d+(?:\\.\\d+)*)"));
            if (const auto c = cuda.match(m->captured(1)); c.hasMatch())
                f.emplace_back("cuda", str(c.captured(1)));
            fact(LogFactKind::NcclVersion, index, std::move(f));
            return;
        }
        static const QRegularExpression init(QStringLiteral("\\brank (\\d+) nranks (\\d+)\\b"));
        if (isInit) {
            const QString text = body();
            if (init.match(text).hasMatch()) {
                std::vector<std::pair<std::string, std::string>> f;
                static const QRegularExpression pair(
                    QStringLiteral("\\b(comm|rank|nranks|cudaDev|nvmlDev|busId|commId|localRank|"
                                   "localRanks|nNodes)\\s+(\\S+)"));
                auto it = pair.globalMatch(text);
                while (it.hasNext()) {
                    const auto m = it.next();
                    f.emplace_back(str(m.captured(1)), str(m.captured(2)));
                }
                if (text.contains(QLatin1String("Init COMPLETE")))
                    f.emplace_back("status", "complete");
                else if (text.contains(QLatin1String("Init START")))
                    f.emplace_back("status", "start");
                for (const auto& kv : origin)
                    if (kv.first == "host") f.push_back(kv);
                noteWorldSize(LogFact(LogFactKind::NcclInit, index, f).value("nranks"));
                fact(LogFactKind::NcclInit, index, std::move(f));
                return;
            }
        }
        static const QRegularExpression net(QStringLiteral("NET/(\\w+)\\s*:\\s*Using\\s+(.*)$"));
        if (const auto m = matchIf(needles & kNetSlash, net, body); m && m->hasMatch()) {
            fact(LogFactKind::NcclNetInterface, index,
                 {{"transport", str(m->captured(1))}, {"using", str(m->captured(2).trimmed())}});
            return;
        }
        static const QRegularExpression ifname(
            QStringLiteral("NCCL_SOCKET_IFNAME set (?:by environment )?to (\\S+)"));
        if (const auto m = matchIf(needles & kIfname, ifname, body); m && m->hasMatch()) {
            fact(LogFactKind::NcclNetInterface, index,
                 {{"NCCL_SOCKET_IFNAME", str(m->captured(1))}});
            return;
        }
        if (needles & kOpCount) ncclColl(index, bodyBytes);
    }

    // `\bhost(?:name)?\s*[=:]\s*([\w.\-]+)`: the first host name a line states.
    static std::string_view hostKey(std::string_view s)
    {
        for (std::size_t at = s.find("host"); at != std::string_view::npos;
             at = s.find("host", at + 1)) {
            if (at > 0 && isWord(s[at - 1])) continue;
            for (const std::size_t key : {at + 8, at + 4}) {
                if (key == at + 8 && !startsWith(s, at + 4, "name")) continue;
                std::size_t p = skipSpaces(s, key);
                if (p >= s.size() || (s[p] != '=' && s[p] != ':')) continue;
                p = skipSpaces(s, p + 1);
                std::size_t e = p;
                while (e < s.size() && (isWord(s[e]) || s[e] == '.' || s[e] == '-'))
                    ++e;
                if (e > p) return s.substr(p, e - p);
            }
        }
        return {};
    }

    void parse(int index, QByteArrayView content, bool timestamped)
    {
        const std::string_view line = view(content);
        if (traceback(index, line, timestamped)) return;
        if (line.empty()) return;

        std::size_t stepFrom = 0;
        const std::uint32_t needles = findNeedles(line, &stepFrom);
        QString text;
        const auto qtext = [&]() -> const QString& {
            if (text.isNull()) text = QString::fromUtf8(content);
            return text;
        };
        if (needles & (kNcclInfo | kNcclWarn | kNcclVersion)) nccl(index, line, needles);

        bool structured = false;
        if (const std::size_t w = (needles & kSeqNum) ? line.find("Work") : std::string_view::npos;
            w != std::string_view::npos) {
            const std::size_t open = line.find('(', w);
            if (open != std::string_view::npos) {
                auto f = keyValues(parenBody(line, open));
                f.insert(f.begin(), {"work", std::string(line.substr(w, open - w))});
                static const QRegularExpression ranFor(
                    QStringLiteral("ran for (\\d+) milliseconds"));
                if (const auto m = ranFor.match(qtext()); m.hasMatch())
                    f.emplace_back("ran_for_ms", str(m.captured(1)));
                static const QRegularExpression who(QStringLiteral("\\[Rank (\\d+)\\]"));
                if (const auto m = who.match(qtext()); m.hasMatch())
                    f.emplace_back("reporting_rank", str(m.captured(1)));
                if (contains(line, "timeout") || contains(line, "Timeout"))
                    f.emplace_back(
                        "timed_out",
                        contains(line, "timing out") || contains(line, "timed out") ? "true" : "");
                fact(LogFactKind::Watchdog, index, std::move(f));
                structured = true;
            }
        }
        for (std::size_t at = (needles & kFingerprint) ? line.find("CollectiveFingerPrint(")
                                                       : std::string_view::npos;
             at != std::string_view::npos; at = line.find("CollectiveFingerPrint(", at + 1)) {
            auto f = keyValues(parenBody(line, at + std::strlen("CollectiveFingerPrint")));
            // "Rank 1 is running collective: CollectiveFingerPrint(...)" names whose it is.
            static const QRegularExpression who(QStringLiteral(
                "Rank (\\d+) is running (?:collective|inconsistent collective): ?$"));
            const QString before = QString::fromUtf8(line.data(), qsizetype(at));
            if (const auto m = who.match(before.right(64)); m.hasMatch())
                f.emplace_back("of_rank", str(m.captured(1)));
            fact(LogFactKind::Fingerprint, index, std::move(f));
            structured = true;
        }
        if (!structured && (needles & kEquals)) environment(index, line);
        // Versions are printed as "torch=2.1", "torch==2.1", "PyTorch version: 2.1", "CUDA 12.1".
        const bool torchVersion = (needles & kOrch) && (needles & (kErsion | kOrchEquals));
        const bool cudaVersion = (needles & (kCudaUpper | kCudaLower)) &&
                                 (needles & (kErsion | kCudaUpperEqOrSpace | kCudaLowerEq));
        if (torchVersion || cudaVersion) versions(index, qtext());
        if (needles & kSignal) signal(index, qtext());
        if (needles & kStep) step(index, line, stepFrom);
        if (m_log.host.empty() && (needles & kHost))
            if (const std::string_view h = hostKey(line); !h.empty()) m_log.host = utf8(h);
    }

    // `(?<![\w.\-/])([A-Za-z_][\w.]*)=("[^"]*"|'[^']*'|[^\s,;()\[\]]+)`, every match, by hand:
    // a line with '=' is common (loss=0.5) and must not cost a regex.
    void environment(int index, std::string_view line)
    {
        const auto keyChar = [](char c) { return isWord(c) || c == '.'; };
        const auto valueChar = [](char c) {
            return !isSpace(c) && c != ',' && c != ';' && c != '(' && c != ')' && c != '[' &&
                   c != ']';
        };
        std::vector<std::pair<std::string, std::string>> f;
        bool known = false;
        std::size_t from = 0; // matches do not overlap
        for (std::size_t eq = line.find('='); eq != std::string_view::npos;
             eq = line.find('=', std::max(eq + 1, from))) {
            if (eq < from) break;
            std::size_t k = eq;
            while (k > 0 && keyChar(line[k - 1]))
                --k;
            if (k == eq || k < from) continue;
            if (!(isWord(line[k]) && !isDigit(line[k]))) continue;
            if (k > 0 && (line[k - 1] == '-' || line[k - 1] == '/')) continue;
            const std::size_t v = eq + 1;
            std::size_t end = v;
            if (v < line.size() && (line[v] == '"' || line[v] == '\'')) {
                const std::size_t close = line.find(line[v], v + 1);
                if (close != std::string_view::npos) end = close + 1;
            }
            if (end == v)
                while (end < line.size() && valueChar(line[end]))
                    ++end;
            if (end == v) continue;
            from = end;
            std::string_view value = line.substr(v, end - v);
            if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
                value = value.substr(1, value.size() - 2);
            const std::string_view key = line.substr(k, eq - k);
            // world_size= alone is a world size too (a program's init_process_group call).
            known |= isEnvironmentKey(key) || key.starts_with("NCCL_") ||
                     key.starts_with("TORCH_") || key == "world_size";
            f.emplace_back(std::string(key), utf8(value));
        }
        if (f.size() < 2 && !known) return;
        std::vector<std::pair<std::string, std::string>> derived;
        for (const auto& [k, v] : f) {
            std::string key = k;
            std::transform(key.begin(), key.end(), key.begin(), lower);
            if (key == "world_size") noteWorldSize(v);
            if (key == "master") {
                // master=host:port, as launch scripts print it.
                const std::size_t colon = v.rfind(':');
                if (colon != std::string::npos) {
                    derived.emplace_back("master_addr", v.substr(0, colon));
                    derived.emplace_back("master_port", v.substr(colon + 1));
                }
            }
            if ((key == "host" || key == "hostname") && m_log.host.empty()) m_log.host = v;
        }
        f.insert(f.end(), derived.begin(), derived.end());
        fact(LogFactKind::Environment, index, std::move(f));
    }

    void versions(int index, const QString& line)
    {
        static const QRegularExpression torch(
            QStringLiteral(
                "\\b(?:torch|pytorch)(?:\\.__version__| "
                "version|_version)?\\s*(?:={1,2}|:|\\s)\\s*v?(\\d+\\.\\d+(?:\\.\\d+)?[\\w.+]*)"),
            QRegularExpression::CaseInsensitiveOption);
        static const QRegularExpression cuda(
            QStringLiteral("\\bCUDA(?: version|_VERSION| "
                           "runtime)?\\s*(?:=|:|\\s)\\s*v?(\\d+\\.\\d+(?:\\.\\d+)?)"),
            QRegularExpression::CaseInsensitiveOption);
        if (const auto m = torch.match(line); m.hasMatch())
            fact(LogFactKind::Version, index,
                 {{"component", "torch"}, {"version", str(m.captured(1))}});
        if (const auto m = cuda.match(line); m.hasMatch())
            fact(LogFactKind::Version, index,
                 {{"component", "cuda"}, {"version", str(m.captured(1))}});
    }

    void signal(int index, const QString& line)
    {
        static const QRegularExpression numbered(QStringLiteral(
            "[Ss]ignal\\s+(\\d+)\\s*\\((SIG[A-Z0-9]+)\\)(?:\\s+received by PID\\s+(\\d+))?"));
        static const QRegularExpression named(QStringLiteral(
            "\\b(SIG(?:TERM|KILL|SEGV|ABRT|BUS|FPE|ILL|INT|HUP|PIPE|USR1|USR2|QUIT))\\b"));
        if (const auto m = numbered.match(line); m.hasMatch()) {
            std::vector<std::pair<std::string, std::string>> f = {{"signal", str(m.captured(2))},
                                                                  {"number", str(m.captured(1))}};
            if (m.hasCaptured(3)) f.emplace_back("pid", str(m.captured(3)));
            fact(LogFactKind::Signal, index, std::move(f));
        } else if (const auto n = named.match(line); n.hasMatch()) {
            fact(LogFactKind::Signal, index, {{"signal", str(n.captured(1))}});
        }
    }

    // `(?<![\w\-])(?<!before )(?:step|iter(?:ation)?)[\s:=#]*(\d+)\b`, case-insensitive, first
    // match. DDP's logger prints "[before iteration N]": a step that has not run yet.
    // `from`: no "step" or "iter" in any case before it.
    void step(int index, std::string_view s, std::size_t from)
    {
        for (std::size_t p = from; p + 4 <= s.size(); ++p) {
            const char c = lower(s[p]);
            if (c != 's' && c != 'i') continue;
            const bool isStep = startsWithNoCase(s, p, "step");
            if (!isStep && !startsWithNoCase(s, p, "iter")) continue;
            if (p > 0 && (isWord(s[p - 1]) || s[p - 1] == '-')) continue;
            if (p >= 7 && startsWithNoCase(s, p - 7, "before ")) continue;
            // iter(?:ation)? is greedy: "iteration" first, then "iter".
            const bool ation = !isStep && startsWithNoCase(s, p + 4, "ation");
            const std::array<std::size_t, 2> ends = {ation ? p + 9 : p + 4, p + 4};
            for (std::size_t e = 0; e < (ation ? 2u : 1u); ++e) {
                std::size_t q = ends[e];
                while (q < s.size() && (isSpace(s[q]) || s[q] == ':' || s[q] == '=' || s[q] == '#'))
                    ++q;
                const std::size_t d = q;
                while (q < s.size() && isDigit(s[q]))
                    ++q;
                if (q == d || (q < s.size() && isWord(s[q]))) continue;
                bool ok = false;
                const int n = QByteArrayView(s.data() + d, qsizetype(q - d)).toInt(&ok);
                if (ok) m_log.m_steps.push_back({n, index});
                return;
            }
        }
    }

    enum class State { None, Frames, Message };
    RankLog& m_log;
    FactStore m_store;
    PackedFields m_pack;
    State m_state = State::None;
    LogException m_current;
    int m_messageLines = 0;
    int m_year = 0;
};

std::optional<std::int64_t> LogReader::parseTimestamp(QByteArrayView s, int yearHint, bool* hasDate,
                                                      int* year)
{
    *hasDate = false;
    qsizetype p = 0;
    if (p < s.size() && s[p] == '[') ++p;
    // ISO / Python logging / NCCL: 2026-12-02 13:41:34.806 or 2026-12-02T13:41:34
    const int y = digits(s, p, 4);
    if (y >= 0 && p + 19 <= s.size() && s[p + 4] == '-' && s[p + 7] == '-' &&
        (s[p + 10] == ' ' || s[p + 10] == 'T')) {
        const int mo = digits(s, p + 5, 2), d = digits(s, p + 8, 2);
        const std::int64_t tod = timeOfDay(s, p + 11);
        if (plausibleYear(y) && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && tod >= 0) {
            *hasDate = true;
            if (year) *year = y;
            return daysFromCivil(y, mo, d) * 86'400'000'000'000LL + tod;
        }
        return std::nullopt;
    }
    // glog / c10 logging: I20261202 13:35:55.418524 or [E1218 20:27:21.426415540 ...]
    if (p < s.size() && (s[p] == 'I' || s[p] == 'W' || s[p] == 'E' || s[p] == 'F')) {
        const qsizetype q = p + 1;
        int gy = digits(s, q, 4), mo = -1, d = -1;
        qsizetype t = -1;
        if (gy > 0 && digits(s, q + 4, 4) >= 0 && q + 8 < s.size() && s[q + 8] == ' ') {
            mo = digits(s, q + 4, 2);
            d = digits(s, q + 6, 2);
            t = q + 9;
        } else if (digits(s, q, 4) >= 0 && q + 4 < s.size() && s[q + 4] == ' ') {
            gy = yearHint;
            mo = digits(s, q, 2);
            d = digits(s, q + 2, 2);
            t = q + 5;
        }
        if (t < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || t + 8 > s.size()) return std::nullopt;
        const std::int64_t tod = timeOfDay(s, t);
        if (tod < 0) return std::nullopt;
        if (!plausibleYear(gy)) return tod;
        *hasDate = true;
        if (year) *year = gy;
        return daysFromCivil(gy, mo, d) * 86'400'000'000'000LL + tod;
    }
    return std::nullopt;
}

std::optional<int> LogReader::rankTag(QByteArrayView line, qsizetype* contentStart)
{
    *contentStart = 0;
    const auto number = [&](qsizetype p, qsizetype* end) -> int {
        qsizetype q = p;
        int v = 0;
        while (q < line.size() && isDigit(line[q]) && q - p < 7)
            v = v * 10 + (line[q++] - '0');
        *end = q;
        return q > p ? v : -1;
    };
    const auto after = [&](qsizetype p, const char* tail) {
        const auto n = qsizetype(std::strlen(tail));
        return p + n <= line.size() && std::memcmp(line.data() + p, tail, std::size_t(n)) == 0;
    };
    if (line.startsWith("[rank") || line.startsWith("[default")) {
        qsizetype end = 0;
        const int r = number(line.startsWith("[rank") ? 5 : 8, &end);
        if (r >= 0 && after(end, "]:")) {
            *contentStart = end + 2;
            return r;
        }
    }
    if (line.startsWith("[")) {
        // mpirun --tag-output: [1,3]<stderr>: (jobid,rank) or [3]<stdout>:
        qsizetype end = 0;
        int r = number(1, &end);
        if (r >= 0 && after(end, ",")) r = number(end + 1, &end);
        if (r >= 0 && (after(end, "]<stderr>:") || after(end, "]<stdout>:"))) {
            *contentStart = end + 10;
            return r;
        }
    }
    // Python logging with the rank in the record: "2026-12-02 13:41:34.806 [rank3] INFO ..."
    bool hasDate = false;
    if (LogReader::parseTimestamp(line, 0, &hasDate)) {
        const qsizetype open = line.first(std::min<qsizetype>(line.size(), 48)).indexOf("[rank");
        if (open > 0) {
            qsizetype end = 0;
            const int r = number(open + 5, &end);
            if (r >= 0 && after(end, "]")) return r;
        }
    }
    return std::nullopt;
}

LogReader::Result LogReader::read(const QByteArray& bytes, const QString& sourcePath,
                                  int sourceIndex, std::optional<int> rank, bool splitByTag)
{
    return read(bytes, sourcePath, sourceIndex, rank, splitByTag, Control{});
}

namespace {

// Reserves `n` entries of an index vector, in huge pages where the system has them.
template <typename T> void reserveIndex(std::vector<T>& v, std::size_t n)
{
    v.reserve(n);
    adviseHugePages(v.data(), v.capacity() * sizeof(T));
}

// Lines in `bytes`, the last one counted whether or not it ends in '\n'.
qint64 countLines(const char* data, qsizetype size)
{
    qint64 lines = 0;
    for (qsizetype pos = 0; pos < size; ++lines) {
        const void* nl = std::memchr(data + pos, '\n', std::size_t(size - pos));
        pos = nl ? static_cast<const char*>(nl) - data + 1 : size;
    }
    return lines;
}

// Takes up to `wanted` of the load's budget in `unit`; all of it when the read has no load.
qint64 takeFromLoad(const LogReader::Control& control, LogReader::LoadUnit unit, qint64 wanted)
{
    return control.load ? control.load->take(std::size_t(unit), wanted) : wanted;
}

// The load's budget in `unit`, for the message of a read the load cut.
qint64 perLoad(const LogReader::Control& control, LogReader::LoadUnit unit)
{
    return control.load->perLoad(std::size_t(unit));
}

// A split line: its stream and the length of the rank tag in front of the rank's own text.
constexpr int kTagBits = 8; // tags are read from a line's first 256 bytes and are shorter
constexpr std::uint32_t kMaxStreams = (1u << (32 - kTagBits)) - 1;

} // namespace

LoadShare LogReader::loadShare(const Budget& budget)
{
    // In LoadUnit's order.
    return LoadShare::firstCome({budget.linesPerLoad, budget.rankTagsPerLoad, budget.bytesPerLoad});
}

LogReader::Result LogReader::read(const QByteArray& bytes, const QString& sourcePath,
                                  int sourceIndex, std::optional<int> rank, bool splitByTag,
                                  const Control& control)
{
    return readShared(std::make_shared<const QByteArray>(bytes), sourcePath, sourceIndex, rank,
                      splitByTag, control);
}

LogReader::Result LogReader::readShared(std::shared_ptr<const QByteArray> shared,
                                        const QString& sourcePath, int sourceIndex,
                                        std::optional<int> rank, bool splitByTag,
                                        const Control& control)
{
    Result result;
    const char* data = shared->constData();
    const qsizetype size = shared->size();
    const Budget& budget = control.budget;

    // Counting the lines first (at memory speed) sizes the index exactly and applies the line
    // budgets before anything is allocated.
    const qint64 lines = countLines(data, size);
    const qint64 perFile =
        std::min<qint64>({lines, budget.linesPerFile, std::numeric_limits<int>::max()});
    const qint64 granted = takeFromLoad(control, LoadUnit::Lines, perFile);
    if (granted < lines) {
        result.truncated = true;
        result.limit = LoadLimit::LogLines;
        result.message =
            QStringLiteral("indexed the first %1 of %2 lines (over the budget of %3 "
                           "log lines a %4)")
                .arg(granted)
                .arg(lines)
                .arg(granted < perFile ? perLoad(control, LoadUnit::Lines) : budget.linesPerFile)
                .arg(granted < perFile ? QStringLiteral("load") : QStringLiteral("file"));
    }

    std::vector<RankLog> streams;
    std::vector<RankLogBuilder> builders;
    std::unordered_map<int, std::size_t> byRank; // -1: untagged
    const int tagBudget = std::clamp<int>(budget.rankTagsPerFile, 0, int(kMaxStreams - 1));
    int tags = 0;
    qint64 linesOverTagBudget = 0;
    // The stream of rank `r` (untagged: empty), or nothing when a new tag is over budget.
    const auto streamOf = [&](std::optional<int> r) -> std::optional<std::size_t> {
        const int key = r.value_or(-1);
        if (const auto it = byRank.find(key); it != byRank.end()) return it->second;
        if (r && (tags >= tagBudget || takeFromLoad(control, LoadUnit::RankTags, 1) == 0))
            return std::nullopt;
        if (r) ++tags;
        RankLog log;
        log.rank = r;
        log.sourceIndex = sourceIndex;
        log.sourcePath = sourcePath;
        log.splitFromCombined = splitByTag && r.has_value();
        log.m_bytes = shared;
        streams.push_back(std::move(log));
        byRank[key] = streams.size() - 1;
        return streams.size() - 1;
    };
    // Cancellation and progress are looked at once per kPollBytes of input.
    qint64 reported = 0;
    std::atomic<std::int64_t>* progress = control.progressBytes;
    const auto poll = [&](qint64 at) {
        if (at - reported < kPollBytes && at < size) return true;
        if (progress) progress->fetch_add(at - reported);
        reported = at;
        return !(control.cancel && control.cancel->load(std::memory_order_relaxed));
    };
    const auto cancelledResult = [&] {
        Result r;
        r.ok = false;
        r.cancelled = true;
        r.message = QStringLiteral("cancelled");
        return r;
    };
    // Calls `line(start, contentEnd, number)` for the granted lines, '\n' or "\r\n" terminated
    // or not.
    const auto eachLine = [&](auto&& line) {
        qsizetype pos = 0;
        for (int number = 1; number <= granted; ++number) {
            const void* nl = std::memchr(data + pos, '\n', std::size_t(size - pos));
            const qsizetype end = nl ? static_cast<const char*>(nl) - data : size;
            qsizetype contentEnd = end;
            if (contentEnd > pos && data[contentEnd - 1] == '\r') --contentEnd;
            line(pos, contentEnd, number);
            pos = std::min<qsizetype>(end + 1, size);
            if (!poll(pos)) return false;
        }
        return poll(size);
    };
    if (!splitByTag) {
        // One stream: lines go straight into it, no intermediate table.
        streamOf(rank);
        RankLog& log = streams.front();
        reserveIndex(log.m_startLow, std::size_t(granted));
        builders.emplace_back(log);
        const bool complete = eachLine([&](qsizetype start, qsizetype end, int no) {
            builders.front().addLine(start, no, QByteArrayView(data + start, end - start), false);
        });
        if (!complete) return cancelledResult();
    } else {
        // Streams appear as tags are met, so lines are first assigned (4 bytes each: the stream
        // and the tag's length), then parsed per stream.
        std::vector<std::uint32_t> assigned;
        reserveIndex(assigned, std::size_t(granted));
        // Splitting is a small part of the work; progress counts the parsing that follows.
        progress = nullptr;
        const bool split = eachLine([&](qsizetype start, qsizetype end, int) {
            qsizetype skip = 0;
            const QByteArrayView head(data + start, std::min<qsizetype>(end - start, 256));
            std::optional<std::size_t> stream = streamOf(rankTag(head, &skip));
            if (!stream) {
                ++linesOverTagBudget;
                skip = 0;
                stream = streamOf(std::nullopt);
            }
            assigned.push_back(std::uint32_t(*stream) << kTagBits | std::uint32_t(skip));
        });
        progress = control.progressBytes;
        if (!split) return cancelledResult();
        if (streams.empty()) streamOf(rank);
        std::vector<std::size_t> perStream(streams.size(), 0);
        for (const std::uint32_t a : assigned)
            ++perStream[a >> kTagBits];
        builders.reserve(streams.size());
        for (std::size_t k = 0; k < streams.size(); ++k) {
            reserveIndex(streams[k].m_startLow, perStream[k]);
            streams[k].m_number.reserve(perStream[k]);
            builders.emplace_back(streams[k]);
        }
        reported = 0;
        std::size_t k = 0;
        const bool complete = eachLine([&](qsizetype start, qsizetype end, int no) {
            const std::uint32_t a = assigned[k++];
            const qsizetype from = start + qsizetype(a & ((1u << kTagBits) - 1));
            builders[a >> kTagBits].addLine(from, no, QByteArrayView(data + from, end - from),
                                            true);
        });
        if (!complete) return cancelledResult();
    }
    for (RankLogBuilder& b : builders)
        b.finish();

    int longLines = 0;
    for (const RankLog& s : streams)
        longLines += s.longLines;
    if (!result.truncated) result.message = QStringLiteral("%1 lines").arg(lines);
    if (splitByTag) {
        const auto tagged = std::count_if(streams.begin(), streams.end(),
                                          [](const RankLog& s) { return s.rank.has_value(); });
        result.message += QStringLiteral(", %1 rank streams").arg(tagged);
    }
    if (linesOverTagBudget) {
        result.truncated = true;
        if (result.limit == LoadLimit::None) result.limit = LoadLimit::RankTags;
        result.message +=
            (linesOverTagBudget == 1
                 ? QStringLiteral("; %1 line tagged with a rank past the budget of %2 "
                                  "distinct rank tags kept untagged")
                 : QStringLiteral("; %1 lines tagged with ranks past the budget of %2 "
                                  "distinct rank tags kept untagged"))
                .arg(linesOverTagBudget)
                .arg(tags < tagBudget ? perLoad(control, LoadUnit::RankTags) : tagBudget);
    }
    if (longLines)
        result.message +=
            (longLines == 1 ? QStringLiteral("; %1 line over %2 KB, only its first %2 KB parsed")
                            : QStringLiteral("; %1 lines over %2 KB, only their first %2 KB "
                                             "parsed"))
                .arg(longLines)
                .arg(kParseLimitBytes / 1024);
    result.streams = std::move(streams);
    return result;
}

LogReader::Result LogReader::readFile(const QString& absolutePath, const QString& sourcePath,
                                      int sourceIndex, std::optional<int> rank, bool splitByTag)
{
    return readFile(absolutePath, sourcePath, sourceIndex, rank, splitByTag, Control{});
}

LogReader::Result LogReader::readFile(const QString& absolutePath, const QString& sourcePath,
                                      int sourceIndex, std::optional<int> rank, bool splitByTag,
                                      const Control& control)
{
    QFile file(absolutePath);
    if (!file.open(QIODevice::ReadOnly)) {
        Result r;
        r.ok = false;
        r.message = QStringLiteral("cannot open: %1").arg(file.errorString());
        return r;
    }
    return readOpened(file, sourcePath, sourceIndex, rank, splitByTag, control);
}

LogReader::Result LogReader::readSource(const SourceFile& source, int sourceIndex, bool splitByTag,
                                        const Control& control)
{
    QString error;
    QFile file;
    if (!source.openForReading(file, &error)) {
        Result r;
        r.ok = false;
        r.message = error;
        return r;
    }
    return readOpened(file, source.relativePath, sourceIndex, source.rank, splitByTag, control);
}

namespace {

// A file's bytes in memory of this process that nothing else holds, so that, unlike a mapping of
// the log itself, no truncation of the log (copytruncate rotation) can take them away under the
// reader: a mapping this struct unmaps.
struct MappedFile {
    QByteArray bytes; // over the mapping, not owning it
    void* map = nullptr;
    std::size_t length = 0;
    MappedFile() = default;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile()
    {
#ifdef __linux__
        if (map) munmap(map, length);
#endif
    }
};

#ifdef __linux__
// Files from this size on are read into huge pages: the last one is at most 2 MB, partly unused.
constexpr qint64 kHugeReadBytes = qint64(16) << 20;

// Whether anonymous memory can be on transparent huge pages when asked (MADV_HUGEPAGE): the
// system's setting is "always" or "madvise", not "never".
bool hugePagesOnRequest()
{
    static const bool on = [] {
        QFile f(QStringLiteral("/sys/kernel/mm/transparent_hugepage/enabled"));
        if (!f.open(QIODevice::ReadOnly)) return false;
        const QByteArray mode = f.readAll();
        return mode.contains("[always]") || mode.contains("[madvise]");
    }();
    return on;
}

// Anonymous memory of `bytes` (a multiple of kHugePage) starting on a 2 MB boundary and advised
// MADV_HUGEPAGE; nullptr when it cannot be had.
void* mapHuge(std::size_t bytes)
{
    void* raw = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const auto begin = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (begin + kHugePage - 1) & ~(kHugePage - 1);
    if (aligned > begin) munmap(raw, aligned - begin);
    if (const std::uintptr_t slack = begin + kHugePage - aligned; slack > 0)
        munmap(reinterpret_cast<void*>(aligned + bytes), slack);
    madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
    return reinterpret_cast<void*>(aligned);
}

std::size_t roundToHugePages(qint64 bytes)
{
    return (std::size_t(bytes) + kHugePage - 1) & ~(kHugePage - 1);
}

// The first `maxBytes` of `fd` read (pread, from offset 0) into huge pages: every 4 KB page of
// fresh memory costs a fault, and on a paravirtual machine such as the benchmark VM that first
// touch cost more than reading and indexing the log (0.2 s per 200 MB where a log in 2 MB pages
// takes 0.06 s, copy included). Grows with the file when it grew since it was opened.
std::shared_ptr<MappedFile> readToHugePages(int fd, qint64 size, qint64 maxBytes,
                                            const std::atomic<bool>* cancel, bool* cancelled,
                                            bool* cut)
{
    auto mapped = std::make_shared<MappedFile>();
    mapped->length = roundToHugePages(std::min(size, maxBytes));
    mapped->map = mapHuge(mapped->length);
    if (!mapped->map) return nullptr;
    char* data = static_cast<char*>(mapped->map);
    qint64 filled = 0;
    while (filled < maxBytes) {
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            *cancelled = true;
            return nullptr;
        }
        if (std::size_t(filled) == mapped->length) {
            char next = 0;
            if (pread(fd, &next, 1, filled) != 1) break; // at the end: the common case
            const std::size_t grown =
                roundToHugePages(std::min(maxBytes, std::max<qint64>(filled * 2, filled + 1)));
            void* moved = mremap(mapped->map, mapped->length, grown, MREMAP_MAYMOVE);
            if (moved == MAP_FAILED) break; // keep what was read
            madvise(moved, grown, MADV_HUGEPAGE);
            mapped->map = moved;
            mapped->length = grown;
            data = static_cast<char*>(moved);
        }
        const ssize_t got = pread(fd, data + filled,
                                  std::size_t(std::min<qint64>({qint64(mapped->length) - filled,
                                                                maxBytes - filled, 4 << 20})),
                                  filled);
        if (got < 0) return nullptr; // the caller reads the file itself and reports the error
        if (got == 0) break;
        filled += got;
    }
    mapped->bytes = QByteArray::fromRawData(data, qsizetype(filled));
    char next = 0;
    *cut = filled >= maxBytes && pread(fd, &next, 1, filled) == 1;
    return mapped;
}
#endif

// The first `maxBytes` of the regular file `fd` (from offset 0, leaving the descriptor's
// position alone), 4 MB between looks at `cancel`; null when this way is not available here
// (then the caller reads the file itself) or `cancel` was seen (*cancelled). *cut: the file
// holds more than maxBytes. A large file goes into huge pages where the system has them; any
// other is copied by the kernel (`sendfile`) into a memory file of this process (memfd) and
// mapped: its pages arrive filled from the page cache, where a read() into fresh 4 KB pages has
// the kernel zero every page first.
std::shared_ptr<MappedFile> copyToMemory(int fd, qint64 maxBytes, const std::atomic<bool>* cancel,
                                         bool* cancelled, bool* cut)
{
#if defined(__linux__) && defined(MFD_CLOEXEC)
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || maxBytes <= 0)
        return nullptr;
    if (std::min<qint64>(st.st_size, maxBytes) >= kHugeReadBytes && hugePagesOnRequest())
        if (auto mapped = readToHugePages(fd, st.st_size, maxBytes, cancel, cancelled, cut);
            mapped || *cancelled)
            return mapped;
    const int memory = memfd_create("rankscope-log", MFD_CLOEXEC);
    if (memory < 0) return nullptr;
    off_t offset = 0;
    while (offset < maxBytes) {
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            *cancelled = true;
            close(memory);
            return nullptr;
        }
        const ssize_t sent = sendfile(memory, fd, &offset,
                                      std::size_t(std::min<qint64>(maxBytes - offset, 4 << 20)));
        if (sent < 0) {
            close(memory);
            return nullptr;
        }
        if (sent == 0) break;
    }
    auto mapped = std::make_shared<MappedFile>();
    if (offset > 0) {
        void* map =
            mmap(nullptr, std::size_t(offset), PROT_READ, MAP_SHARED | MAP_POPULATE, memory, 0);
        if (map == MAP_FAILED) {
            close(memory);
            return nullptr;
        }
        mapped->map = map;
        mapped->length = std::size_t(offset);
        mapped->bytes = QByteArray::fromRawData(static_cast<const char*>(map), qsizetype(offset));
    }
    close(memory);
    char next = 0;
    *cut = offset >= maxBytes && pread(fd, &next, 1, offset) == 1;
    return mapped;
#else
    (void)fd;
    (void)maxBytes;
    (void)cancel;
    (void)cancelled;
    (void)cut;
    return nullptr;
#endif
}

} // namespace

LogReader::Result LogReader::readOpened(QFile& file, const QString& sourcePath, int sourceIndex,
                                        std::optional<int> rank, bool splitByTag,
                                        const Control& control)
{
    Result r;
    // The file's bytes (at most its own budget) are taken from the load's byte budget before they
    // are read; what the load has no room for is cut like a file over its own budget.
    const qint64 perFile = std::max<qint64>(0, control.budget.bytesPerFile);
    const qint64 wanted = std::min(perFile, std::max<qint64>(file.size(), 0));
    const qint64 granted = takeFromLoad(control, LoadUnit::Bytes, wanted);
    const bool loadCut = granted < wanted;
    const qint64 maxBytes = loadCut ? granted : perFile;
    bool cancelled = false, cut = false;
    std::shared_ptr<MappedFile> mapped =
        copyToMemory(file.handle(), maxBytes, control.cancel, &cancelled, &cut);
    if (cancelled) {
        r.ok = false;
        r.cancelled = true;
        r.message = QStringLiteral("cancelled");
        return r;
    }
    QByteArray bytes;
    if (mapped)
        bytes = mapped->bytes;
    else if (!readInto(file, maxBytes, control, bytes, r, cut))
        return r;
    QString note;
    std::vector<LogColourChange> colours;
    bytes = logTextForAnalysis(std::move(bytes), &note, &colours);
    // Clean text is the mapping itself; text that was cleaned or decoded is a copy.
    std::shared_ptr<const QByteArray> shared;
    if (mapped && bytes.constData() == mapped->bytes.constData())
        shared = std::shared_ptr<const QByteArray>(mapped, &mapped->bytes);
    else
        shared = std::make_shared<const QByteArray>(std::move(bytes));
    mapped.reset();
    r = readShared(std::move(shared), sourcePath, sourceIndex, rank, splitByTag, control);
    if (r.ok && !note.isEmpty()) r.message += QStringLiteral("; ") + note;
    if (!colours.empty()) {
        auto sharedColours =
            std::make_shared<const std::vector<LogColourChange>>(std::move(colours));
        for (RankLog& s : r.streams)
            s.m_colours = sharedColours;
    }
    if (cut && !r.cancelled) {
        r.truncated = true;
        r.limit = LoadLimit::LogBytes;
        r.message += loadCut
                         ? QStringLiteral("; read the first %1 bytes (what was left of the "
                                          "budget of %2 log bytes a load)")
                               .arg(maxBytes)
                               .arg(perLoad(control, LoadUnit::Bytes))
                         : QStringLiteral("; read the first %1 bytes (the budget of a log file)")
                               .arg(maxBytes);
    }
    return r;
}

bool LogReader::readInto(QFile& file, qint64 maxBytes, const Control& control, QByteArray& bytes,
                         Result& r, bool& cut)
{
    // Read in slices straight into one buffer (no slice copies; it grows only when the file
    // does) so that a cancel during a multi-GB read is seen within one slice; at most the byte
    // budget, so that an endless file stops there.
    bytes.resize(std::min(std::max<qint64>(file.size(), 0), maxBytes));
    adviseHugePages(bytes.data(), std::size_t(bytes.size()));
    qint64 filled = 0;
    while (filled < maxBytes) {
        if (control.cancel && control.cancel->load(std::memory_order_relaxed)) {
            r.ok = false;
            r.cancelled = true;
            r.message = QStringLiteral("cancelled");
            return false;
        }
        if (filled == bytes.size()) {
            // Full at the size the file had when opened: grow only when it has grown since.
            if (file.atEnd()) break;
            bytes.resize(std::min(maxBytes, std::max(filled * 2, filled + kPollBytes * 4)));
            adviseHugePages(bytes.data() + filled, std::size_t(bytes.size() - filled));
        }
        const qint64 got = file.read(bytes.data() + filled,
                                     std::min<qint64>(kPollBytes * 4, bytes.size() - filled));
        if (got <= 0) break;
        filled += got;
    }
    bytes.truncate(filled);
    cut = bytes.size() >= maxBytes && !file.read(1).isEmpty();
    if (file.error() != QFileDevice::NoError) {
        r.ok = false;
        r.message = QStringLiteral("cannot read: %1").arg(file.errorString());
        return false;
    }
    return true;
}

} // namespace rankscope
