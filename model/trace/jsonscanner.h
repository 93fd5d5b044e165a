#pragma once

#include <cstdint>
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
inline Scan scanColon(const char*& p, const char* end)
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
inline bool continuesNumber(char c)
{
    return isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}
// The common forms of scanNumber + microsToNanos (`digits[.digits]`, at most 16 integer digits)
// and of scanNumber + toInt64 (at most 18 digits) in one pass, with the same results: true and
// `p` past the number when it has that form and ends inside the window; false, `p` unchanged,
// for anything else (a sign, an exponent, more digits, the window's end), which the caller
// takes through the general functions.
inline bool scanPlainMicros(const char*& p, const char* end, std::int64_t& ns)
{
    const char* q = p;
    const char* limit = end - p > 16 ? p + 16 : end;
    std::uint64_t whole = 0;
    while (q < limit && isDigit(*q))
        whole = whole * 10 + std::uint64_t(*q++ - '0');
    if (q == p || q >= end) return false;
    std::uint64_t frac = 0;
    if (*q == '.') {
        const char* fracBegin = ++q;
        while (q < end && isDigit(*q)) {
            const auto k = q - fracBegin;
            if (k < 3)
                frac = frac * 10 + std::uint64_t(*q - '0');
            else if (k == 3 && *q >= '5')
                ++frac; // round half away from zero on the first digit below 1 ns
            ++q;
        }
        if (q == fracBegin || q >= end) return false;
        for (auto k = q - fracBegin; k < 3; ++k)
            frac *= 10;
    }
    constexpr std::uint64_t kMaxWhole = (std::uint64_t(1) << 63) / 1000 - 1;
    if (continuesNumber(*q) || whole > kMaxWhole) return false;
    ns = std::int64_t(whole * 1000 + frac);
    p = q;
    return true;
}
inline bool scanPlainInt(const char*& p, const char* end, std::int64_t& value)
{
    const char* q = p;
    const char* limit = end - p > 18 ? p + 18 : end;
    std::int64_t v = 0;
    while (q < limit && isDigit(*q))
        v = v * 10 + (*q++ - '0');
    if (q == p || q >= end || continuesNumber(*q)) return false;
    value = v;
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
