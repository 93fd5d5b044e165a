#include "model/trace/jsonscanner.h"

#include <array>
#include <charconv>
#include <cmath>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <cstdlib>
#include <cstring>
#include <limits>

namespace rankscope::json {

namespace {

// What a byte outside strings inside a skipped container is: one table read tells the bytes
// passed over (most of them: digits, letters of literals, separators) from the few that matter.
enum class Skipped : std::uint8_t { Invalid, Plain, Quote, Open, Close };
constexpr std::array<Skipped, 256> makeSkipped()
{
    std::array<Skipped, 256> t{};
    for (const char c : std::string_view(" \t\r\n,:-+.eE0123456789truefalsn"))
        t[static_cast<unsigned char>(c)] = Skipped::Plain;
    t['"'] = Skipped::Quote;
    t['{'] = t['['] = Skipped::Open;
    t['}'] = t[']'] = Skipped::Close;
    return t;
}
constexpr std::array<Skipped, 256> kSkipped = makeSkipped();

Scan skipLiteral(const char*& p, const char* end, std::string_view word)
{
    const auto avail = std::size_t(end - p);
    if (avail < word.size())
        return std::memcmp(p, word.data(), avail) == 0 ? Scan::NeedMore : Scan::Error;
    if (std::memcmp(p, word.data(), word.size()) != 0) return Scan::Error;
    p += word.size();
    return Scan::Ok;
}

void appendUtf8(std::string& out, std::uint32_t cp)
{
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

bool hex4(std::string_view s, std::size_t i, std::uint32_t& v)
{
    if (i + 4 > s.size()) return false;
    v = 0;
    for (std::size_t k = i; k < i + 4; ++k) {
        const char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= std::uint32_t(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= std::uint32_t(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= std::uint32_t(c - 'A' + 10);
        else
            return false;
    }
    return true;
}

} // namespace

Scan scanNumber(const char*& p, const char* end, std::string_view& token)
{
    const char* q = p;
    while (q < end && continuesNumber(*q))
        ++q;
    if (q == end) return Scan::NeedMore;
    if (q == p) return Scan::Error;
    token = std::string_view(p, std::size_t(q - p));
    p = q;
    return Scan::Ok;
}

Scan skipValue(const char*& p, const char* end, int maxDepth)
{
    if (p >= end) return Scan::NeedMore;
    const char c = *p;
    if (c == '"') {
        std::string_view raw;
        bool esc = false;
        return scanString(p, end, raw, esc);
    }
    if (c == 't') return skipLiteral(p, end, "true");
    if (c == 'f') return skipLiteral(p, end, "false");
    if (c == 'n') return skipLiteral(p, end, "null");
    if (c != '{' && c != '[') {
        std::string_view tok;
        const Scan s = scanNumber(p, end, tok);
        if (s != Scan::Ok) return s;
        const std::string copy(tok);
        char* stop = nullptr;
        std::strtod(copy.c_str(), &stop);
        return stop == copy.c_str() + copy.size() ? Scan::Ok : Scan::Error;
    }
    int depth = 0;
    const char* q = p;
    while (q < end) {
        // Tested in the order of their frequency, not by a switch: its indirect jump is
        // mispredicted at almost every change of class (BENCHMARKS.md).
        const Skipped k = kSkipped[static_cast<unsigned char>(*q)];
        if (k == Skipped::Plain) {
            ++q;
        } else if (k == Skipped::Quote) {
            std::string_view raw;
            bool esc = false;
            const Scan s = scanString(q, end, raw, esc);
            if (s != Scan::Ok) return s;
        } else if (k == Skipped::Open) {
            if (++depth > maxDepth) return Scan::Error;
            ++q;
        } else if (k == Skipped::Close) {
            if (--depth == 0) {
                p = q + 1;
                return Scan::Ok;
            }
            ++q;
        } else {
            return Scan::Error;
        }
    }
    return Scan::NeedMore;
}

bool isValidUtf8(std::string_view s)
{
    const auto* u = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = u[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        int len = 0;
        std::uint32_t cp = 0;
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + std::size_t(len) > n) return false;
        for (int k = 1; k < len; ++k) {
            if ((u[i + std::size_t(k)] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (u[i + std::size_t(k)] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += std::size_t(len);
    }
    return true;
}

bool unescape(std::string_view raw, std::string& out)
{
    out.clear();
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        const char c = raw[i];
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i >= raw.size()) return false;
        switch (raw[i]) {
        case '"':
            out += '"';
            break;
        case '\\':
            out += '\\';
            break;
        case '/':
            out += '/';
            break;
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        case 'n':
            out += '\n';
            break;
        case 'r':
            out += '\r';
            break;
        case 't':
            out += '\t';
            break;
        case 'u': {
            std::uint32_t cp = 0;
            if (!hex4(raw, i + 1, cp)) return false;
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                std::uint32_t lo = 0;
                if (i + 2 >= raw.size() || raw[i + 1] != '\\' || raw[i + 2] != 'u' ||
                    !hex4(raw, i + 3, lo) || lo < 0xDC00 || lo > 0xDFFF)
                    return false;
                i += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return false;
            }
            appendUtf8(out, cp);
            break;
        }
        default:
            return false;
        }
    }
    return isValidUtf8(out);
}

namespace {

// Any JSON number: value = mantissa digits × 10^exp10 µs, so ns = digits × 10^(exp10 + 3).
bool decimalMicrosToNanos(std::string_view t, std::int64_t& ns)
{
    std::size_t i = 0;
    const bool neg = i < t.size() && t[i] == '-';
    if (neg) ++i;
    constexpr int kMaxDigits = 19; // int64 holds every 18-digit number
    char digits[kMaxDigits + 1];
    int nDigits = 0;
    int exp10 = 0;
    bool sawDigit = false;
    int firstDropped = -1; // the first significant digit that did not fit, for rounding
    const auto take = [&](char c, bool fraction) {
        sawDigit = true;
        if (nDigits == 0 && c == '0') {
            if (fraction) --exp10; // leading zeros of a fraction scale the value only
            return;
        }
        if (nDigits < kMaxDigits) {
            digits[nDigits++] = c;
            if (fraction) --exp10;
        } else {
            if (firstDropped < 0) firstDropped = c - '0';
            if (!fraction) ++exp10;
        }
    };
    const std::size_t intBegin = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9')
        take(t[i++], false);
    if (i == intBegin) return false;
    if (i < t.size() && t[i] == '.') {
        const std::size_t fracBegin = ++i;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9')
            take(t[i++], true);
        if (i == fracBegin) return false;
    }
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
        ++i;
        const bool expNeg = i < t.size() && t[i] == '-';
        if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
        const std::size_t expBegin = i;
        int e = 0;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
            e = std::min(e * 10 + (t[i] - '0'), 100000);
            ++i;
        }
        if (i == expBegin) return false;
        exp10 += expNeg ? -e : e;
    }
    if (i != t.size() || !sawDigit) return false;
    if (nDigits == 0) {
        ns = 0;
        return true;
    }
    int scale = exp10 + 3; // power of ten to apply to the kept digits
    if (scale < 0) {
        // Drop the digits below 1 ns, rounding half away from zero on the first dropped one.
        const int drop = -scale;
        if (drop > nDigits) {
            ns = 0;
            return true;
        }
        firstDropped = digits[nDigits - drop] - '0';
        nDigits -= drop;
        scale = 0;
    }
    std::uint64_t v = 0;
    for (int k = 0; k < nDigits; ++k) {
        if (v > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return false;
        v = v * 10 + std::uint64_t(digits[k] - '0');
    }
    for (int k = 0; k < scale; ++k) {
        if (v > std::numeric_limits<std::uint64_t>::max() / 10) return false;
        v *= 10;
    }
    if (firstDropped >= 5) ++v;
    if (v > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return false;
    ns = neg ? -std::int64_t(v) : std::int64_t(v);
    return true;
}

} // namespace

bool microsToNanos(std::string_view t, std::int64_t& ns)
{
    // Exact decimal arithmetic, never a double: epoch-µs timestamps have 16 integer digits and
    // 3 fractional ones, more than a double holds (it would round them to 256 ns). The common
    // form, `digits[.digits]` with at most 16 integer digits, is done inline.
    std::size_t i = 0;
    const bool neg = i < t.size() && t[i] == '-';
    if (neg) ++i;
    const std::size_t intBegin = i;
    std::uint64_t whole = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9' && i - intBegin < 16)
        whole = whole * 10 + std::uint64_t(t[i++] - '0');
    if (i == intBegin) return false;
    std::uint64_t frac = 0;
    if (i < t.size() && t[i] == '.') {
        const std::size_t fracBegin = ++i;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
            const std::size_t k = i - fracBegin;
            if (k < 3)
                frac = frac * 10 + std::uint64_t(t[i] - '0');
            else if (k == 3 && t[i] >= '5')
                ++frac; // round half away from zero on the first digit below 1 ns
            ++i;
        }
        if (i == fracBegin) return false;
        for (std::size_t k = i - fracBegin; k < 3; ++k)
            frac *= 10;
    }
    constexpr std::uint64_t kMaxWhole = (std::uint64_t(1) << 63) / 1000 - 1;
    if (i != t.size() || whole > kMaxWhole) return decimalMicrosToNanos(t, ns);
    const auto v = std::int64_t(whole * 1000 + frac);
    ns = neg ? -v : v;
    return true;
}

bool toInt64(std::string_view t, std::int64_t& value)
{
    // Ids (pid, tid, correlation) are short plain integers: at most 18 digits cannot overflow.
    if (!t.empty() && t.size() <= 18 && t[0] != '-') {
        std::int64_t v = 0;
        std::size_t i = 0;
        for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i)
            v = v * 10 + (t[i] - '0');
        if (i == t.size()) {
            value = v;
            return true;
        }
    }
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec == std::errc() && ptr == t.data() + t.size()) return true;
    const std::string copy(t);
    char* stop = nullptr;
    const double v = std::strtod(copy.c_str(), &stop);
    if (copy.empty() || stop != copy.c_str() + copy.size() || !std::isfinite(v) ||
        std::fabs(v) > 9.2e18)
        return false;
    value = std::int64_t(v);
    return true;
}

} // namespace rankscope::json
