#include "bench/scan_candidates.h"

#include "bench/scan_candidates_detail.h"

#include <emmintrin.h>
#include <vector>

namespace rankscope::bench {

namespace {

using json::Scan;
using namespace detail;

// Key dispatch shared by the two scanner-based candidates.
template <typename Str, typename Skip>
Scan scannerEvent(const char*& p, const char* end, Fields& f, Str&& scanStr, Skip&& skip)
{
    ++p;
    bool first = true;
    for (;;) {
        p = json::skipWs(p, end);
        if (p >= end) return Scan::NeedMore;
        if (*p == '}') {
            ++p;
            return Scan::Ok;
        }
        if (!first) {
            if (*p != ',') return Scan::Error;
            p = json::skipWs(p + 1, end);
        }
        first = false;
        std::string_view key;
        bool esc = false;
        if (p >= end || *p != '"') return Scan::Error;
        Scan s = scanStr(p, end, key, esc);
        if (s != Scan::Ok) return s;
        p = json::skipWs(p, end);
        if (p >= end || *p != ':') return Scan::Error;
        p = json::skipWs(p + 1, end);
        const auto str = [&](std::string_view& out) {
            return *p == '"' ? scanStr(p, end, out, esc) : Scan::Error;
        };
        const auto num = [&](std::string_view& out) { return json::scanNumber(p, end, out); };
        const auto idv = [&](std::string_view& out) { return *p == '"' ? str(out) : num(out); };
        std::string_view ph;
        if (key == "ph") {
            s = str(ph);
            f.ph = ph.size() == 1 ? ph[0] : 0;
        } else if (key == "name") {
            s = str(f.name);
        } else if (key == "cat") {
            s = str(f.cat);
        } else if (key == "pid") {
            s = idv(f.pid);
        } else if (key == "tid") {
            s = idv(f.tid);
        } else if (key == "ts") {
            s = num(f.ts);
        } else if (key == "dur") {
            s = num(f.dur);
        } else if (key == "id") {
            s = idv(f.id);
        } else {
            f.args = f.args || key == "args";
            s = skip(p, end);
        }
        if (s != Scan::Ok) return s;
    }
}

ScanDigest scanner(std::string_view text)
{
    return walk(text, [](const char*& p, const char* end, Fields& f) {
        return scannerEvent(p, end, f, json::scanString,
                            [](const char*& q, const char* e) { return json::skipValue(q, e); });
    });
}

// A structural pass, as simdjson's stage 1 with SSE2 (the x86-64 baseline): for every 64-byte
// block, the bits of the quotes that open or close a string, of backslashes, and of the brackets
// outside strings. The scanner then finds a string's end or a container's end from the bits.
struct StructuralIndex {
    std::vector<std::uint64_t> quote, backslash, bracket;
    const char* base = nullptr;
};

std::uint64_t eqMask(const char* block, char c)
{
    const __m128i needle = _mm_set1_epi8(c);
    std::uint64_t m = 0;
    for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * k));
        m |= std::uint64_t(std::uint16_t(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle)))) << (16 * k);
    }
    return m;
}

std::uint64_t prefixXor(std::uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

// Backslash-escaped positions (odd-length backslash runs), carrying across blocks.
std::uint64_t escapedBy(std::uint64_t backslash, std::uint64_t& prevEscaped)
{
    backslash &= ~prevEscaped;
    const std::uint64_t followsEscape = backslash << 1 | prevEscaped;
    constexpr std::uint64_t kEven = 0x5555555555555555ull;
    const std::uint64_t oddStarts = backslash & ~kEven & ~followsEscape;
    std::uint64_t evenStarts = 0;
    prevEscaped = __builtin_add_overflow(oddStarts, backslash, &evenStarts) ? 1 : 0;
    return (kEven ^ (evenStarts << 1)) & followsEscape;
}

void buildIndex(std::string_view text, StructuralIndex& ix)
{
    const std::size_t blocks = (text.size() + 63) / 64;
    ix.base = text.data();
    ix.quote.resize(blocks);
    ix.backslash.resize(blocks);
    ix.bracket.resize(blocks);
    std::uint64_t prevEscaped = 0, prevInString = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
        const char* block = text.data() + 64 * b;
        const std::uint64_t valid = 64 * (b + 1) <= text.size()
                                        ? ~std::uint64_t(0)
                                        : (std::uint64_t(1) << (text.size() % 64)) - 1;
        const std::uint64_t bs = eqMask(block, '\\') & valid;
        const std::uint64_t quote = eqMask(block, '"') & valid & ~escapedBy(bs, prevEscaped);
        const std::uint64_t inString = prefixXor(quote) ^ prevInString;
        prevInString = std::uint64_t(std::int64_t(inString) >> 63);
        const std::uint64_t br =
            (eqMask(block, '{') | eqMask(block, '}') | eqMask(block, '[') | eqMask(block, ']')) &
            valid & ~inString;
        ix.quote[b] = quote;
        ix.backslash[b] = bs;
        ix.bracket[b] = br;
    }
}

// The first set bit of `masks` at or after byte `from`, or `limit`.
std::size_t nextBit(const std::vector<std::uint64_t>& masks, std::size_t from, std::size_t limit)
{
    std::size_t b = from / 64;
    if (b >= masks.size()) return limit;
    std::uint64_t m = masks[b] & (~std::uint64_t(0) << (from % 64));
    while (m == 0) {
        if (++b >= masks.size() || 64 * b >= limit) return limit;
        m = masks[b];
    }
    return std::min(limit, 64 * b + std::size_t(__builtin_ctzll(m)));
}

ScanDigest simdStructural(std::string_view text)
{
    StructuralIndex ix;
    buildIndex(text, ix);
    const auto scanStr = [&ix](const char*& p, const char* end, std::string_view& raw,
                               bool& escaped) {
        const std::size_t at = std::size_t(p - ix.base), limit = std::size_t(end - ix.base);
        const std::size_t close = nextBit(ix.quote, at + 1, limit);
        if (close >= limit) return Scan::NeedMore;
        escaped = nextBit(ix.backslash, at + 1, close) < close;
        raw = std::string_view(p + 1, close - at - 1);
        p = ix.base + close + 1;
        return Scan::Ok;
    };
    const auto skip = [&](const char*& p, const char* end) {
        if (*p == '"') {
            std::string_view raw;
            bool esc = false;
            return scanStr(p, end, raw, esc);
        }
        if (*p != '{' && *p != '[') return json::skipValue(p, end);
        const std::size_t limit = std::size_t(end - ix.base);
        int depth = 0;
        for (std::size_t at = std::size_t(p - ix.base);; ++at) {
            at = nextBit(ix.bracket, at, limit);
            if (at >= limit) return Scan::NeedMore;
            const char c = ix.base[at];
            depth += (c == '{' || c == '[') ? 1 : -1;
            if (depth > json::kMaxDepth) return Scan::Error;
            if (depth == 0) {
                p = ix.base + at + 1;
                return Scan::Ok;
            }
        }
    };
    return walk(text, [&](const char*& p, const char* end, Fields& f) {
        return scannerEvent(p, end, f, scanStr, skip);
    });
}

} // namespace

ScanDigest scanEvents(ScanCandidate candidate, std::string_view text)
{
    switch (candidate) {
    case ScanCandidate::Scanner:
        return scanner(text);
    case ScanCandidate::SimdStructural:
        return simdStructural(text);
    case ScanCandidate::SimdjsonOnDemand:
        return simdjsonOnDemand(text);
    case ScanCandidate::SimdjsonWindows:
        return simdjsonWindows(text);
    }
    return {0, 0, false};
}

} // namespace rankscope::bench
