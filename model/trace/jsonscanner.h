#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace rankscope::json {

// A minimal JSON scanner for the trace reader's hot path. It works on a window [p, end) of a
// stream: every function either consumes a complete token (Ok), stops because the token runs
// past `end` (NeedMore: the caller refills and retries the whole unit), or rejects the bytes.
// Values the reader skips (args, deviceProperties) are checked structurally only, which is what
// lets it run at memory speed; values it keeps are checked fully.
enum class Scan : std::uint8_t { Ok, NeedMore, Error };

inline const char* skipWs(const char* p, const char* end)
{
    // One compare rejects every byte above the space, which is what follows almost every call.
    while (p < end && static_cast<unsigned char>(*p) <= ' ' &&
           (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        ++p;
    return p;
}

// `p` at the opening quote. `raw` is the content between the quotes, escapes untouched.
inline Scan scanString(const char*& p, const char* end, std::string_view& raw, bool& escaped)
{
    // 16 bytes at a time (SSE2 is part of x86-64): names of kernels and Python frames run to a
    // hundred bytes, and most strings hold no escape. Inline: it is called for every member key
    // and string value of every event, most of them a few bytes long.
    const char* begin = p + 1;
    const char* q = begin;
    escaped = false;
    for (;;) {
#ifdef __SSE2__
        const __m128i quote = _mm_set1_epi8('"');
        const __m128i backslash = _mm_set1_epi8('\\');
        while (end - q >= 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
            const int hits = _mm_movemask_epi8(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
            if (hits != 0) {
                q += __builtin_ctz(unsigned(hits));
                break;
            }
            q += 16;
        }
#endif
        while (q < end && *q != '"' && *q != '\\')
            ++q;
        if (q >= end) return Scan::NeedMore;
        if (*q == '"') {
            raw = std::string_view(begin, std::size_t(q - begin));
            p = q + 1;
            return Scan::Ok;
        }
        escaped = true;
        q += 2;
    }
}
// `p` after an object member's key: scans the colon and leaves `p` at the value (whitespace
// skipped).
[[gnu::always_inline]] inline Scan scanColon(const char*& p, const char* end)
{
    // Writers put ':' or ": " there; anything else takes the general path.
    if (end - p >= 3 && *p == ':') {
        const char* value = p + 1 + (p[1] == ' ');
        if (static_cast<unsigned char>(*value) > ' ') {
            p = value;
            return Scan::Ok;
        }
    }
    p = skipWs(p, end);
    if (p >= end) return Scan::NeedMore;
    if (*p != ':') return Scan::Error;
    p = skipWs(p + 1, end);
    return p >= end ? Scan::NeedMore : Scan::Ok;
}
// `p` after an object member's value: true, with `p` at the next member's opening quote, when
// the separator is ',' or ", " (as writers put it); false, `p` unchanged, for anything else.
inline bool nextMemberPlain(const char*& p, const char* end)
{
    if (end - p < 3 || *p != ',') return false;
    const char* key = p + 1 + (p[1] == ' ');
    if (*key != '"') return false;
    p = key;
    return true;
}
// `p` at an object member's opening quote: scans the key and the colon and leaves `p` at the
// value (whitespace skipped).
inline Scan scanMemberKey(const char*& p, const char* end, std::string_view& key, bool& escaped)
{
    if (*p != '"') return Scan::Error;
    const Scan s = scanString(p, end, key, escaped);
    if (s != Scan::Ok) return s;
    return scanColon(p, end);
}
// Containers nested deeper than this in a skipped value are an error (see skipValue).
inline constexpr int kMaxDepth = 512;
// `p` at a value; skips it (nesting limited to `maxDepth`).
Scan skipValue(const char*& p, const char* end, int maxDepth = kMaxDepth);
// `p` at a number; `token` is its text. NeedMore when the number touches `end`.
Scan scanNumber(const char*& p, const char* end, std::string_view& token);

inline bool isDigit(char c)
{
    return static_cast<unsigned char>(c - '0') < 10;
}
// A byte that may continue a number (scanNumber's set).
[[gnu::always_inline]] inline bool continuesNumber(char c)
{
    return isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}
// Eight bytes at `q` (all readable) as digits, for the number fast paths below: `digits` gets
// each byte's value less '0' (byte k of the number in byte k, little-endian), the result is how
// many of the leading bytes are decimal digits (0-8). No branch per byte: a number's digits are
// told apart from what follows by one mask.
[[gnu::always_inline]] inline int leadingDigits8(const char* q, std::uint64_t& digits)
{
    static_assert(std::endian::native == std::endian::little);
    std::uint64_t v;
    std::memcpy(&v, q, 8);
    const std::uint64_t t = v ^ 0x3030303030303030ull; // '0'-'9' become 0-9, nothing else does
    // A byte is not a digit when its top bit is set or its low seven bits reach 10 (adding 0x76
    // sets the top bit from 10 up and never carries into the next byte).
    const std::uint64_t nonDigit =
        (((t & 0x7F7F7F7F7F7F7F7Full) + 0x7676767676767676ull) | t) & 0x8080808080808080ull;
    digits = t;
    return nonDigit == 0 ? 8 : __builtin_ctzll(nonDigit) >> 3;
}
// The value of the first `n` (1-8) digits of leadingDigits8's `digits`: pairs, then quads, then
// the eight combined in three multiplications. The digits are moved to the top bytes, so the
// zeros shifted in below them are leading zeros.
[[gnu::always_inline]] inline std::uint64_t digitsValue(std::uint64_t digits, int n)
{
    std::uint64_t t = digits << (8 * (8 - n));
    t = (t * 10 + (t >> 8)) & 0x00FF00FF00FF00FFull;
    t = (t * 100 + (t >> 16)) & 0x0000FFFF0000FFFFull;
    return (t * 10000 + (t >> 32)) & 0xFFFFFFFFull;
}
inline constexpr std::uint64_t kPow10[9] = {1,      10,      100,      1000,     10000,
                                            100000, 1000000, 10000000, 100000000};
// The fast paths load eight bytes at a time up to this far past the number's first byte;
// closer to the window's end the general path takes the number.
inline constexpr std::ptrdiff_t kFastNumberReach = 32;
// Up to 16 leading digits at `q` (at least 17 bytes readable): their value, `q` past them.
// False when there are none or more than 16 (which the general path takes).
[[gnu::always_inline]] inline bool scanDigits16(const char*& q, std::uint64_t& value)
{
    std::uint64_t digits;
    int n = leadingDigits8(q, digits);
    if (n == 0) return false;
    value = digitsValue(digits, n);
    q += n;
    if (n < 8) return true;
    n = leadingDigits8(q, digits);
    if (n == 8) {
        if (isDigit(q[8])) return false;
    } else if (n == 0) {
        return true;
    }
    value = value * kPow10[n] + digitsValue(digits, n);
    q += n;
    return true;
}
// The common forms of scanNumber + microsToNanos (`digits[.digits]`, at most 16 integer digits)
// and of scanNumber + toInt64 (at most 16 digits) in one pass, with the same results: true and
// `p` past the number when it has that form and ends inside the window; false, `p` unchanged,
// for anything else (a sign, an exponent, more digits, the window's end), which the caller
// takes through the general functions.
[[gnu::always_inline]] inline bool scanPlainMicros(const char*& p, const char* end,
                                                   std::int64_t& ns)
{
    if (end - p < kFastNumberReach) return false;
    const char* q = p;
    std::uint64_t whole = 0;
    if (!scanDigits16(q, whole)) return false;
    std::uint64_t frac = 0;
    if (*q == '.') {
        ++q; // at most 17 bytes in: the next eight are inside the reach
        std::uint64_t digits;
        int n = leadingDigits8(q, digits);
        if (n == 0) return false;
        // The first three fractional digits are the nanoseconds; the fourth rounds them half
        // away from zero; the rest are below 1 ns.
        frac = n >= 3
                   ? (digits & 0xFF) * 100 + ((digits >> 8) & 0xFF) * 10 + ((digits >> 16) & 0xFF)
                   : digitsValue(digits, n) * kPow10[3 - n];
        if (n >= 4 && ((digits >> 24) & 0xFF) >= 5) ++frac;
        q += n;
        while (n == 8) {
            if (end - q < 8) return false;
            n = leadingDigits8(q, digits);
            q += n;
        }
    }
    constexpr std::uint64_t kMaxWhole = (std::uint64_t(1) << 63) / 1000 - 1;
    if (continuesNumber(*q) || whole > kMaxWhole) return false;
    ns = std::int64_t(whole * 1000 + frac);
    p = q;
    return true;
}
[[gnu::always_inline]] inline bool scanPlainInt(const char*& p, const char* end,
                                                std::int64_t& value)
{
    if (end - p < kFastNumberReach) return false;
    // Thread and process ids are often one digit.
    if (isDigit(p[0]) && !continuesNumber(p[1])) {
        value = p[0] - '0';
        ++p;
        return true;
    }
    const char* q = p;
    std::uint64_t v = 0;
    if (!scanDigits16(q, v) || continuesNumber(*q)) return false;
    value = std::int64_t(v);
    p = q;
    return true;
}

// Decodes JSON escapes of `raw` into `out`; false on a malformed escape or invalid UTF-8.
bool unescape(std::string_view raw, std::string& out);
bool isValidUtf8(std::string_view s);
// A JSON number in microseconds (with fractions or an exponent) to integer nanoseconds, exactly
// (decimal arithmetic, no double), rounded half away from zero below 1 ns; false if it is not a
// number or out of int64 range.
bool microsToNanos(std::string_view token, std::int64_t& ns);
// A JSON integer (a fraction is truncated); false if not a number or out of range.
bool toInt64(std::string_view token, std::int64_t& value);

} // namespace rankscope::json
