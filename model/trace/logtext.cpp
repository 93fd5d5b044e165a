#include "model/trace/logtext.h"

#include <QStringDecoder>
#include <QStringList>
#include <algorithm>
#include <optional>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace rankscope {

namespace {

// A CSI sequence (ESC [ params final) longer than this is no escape but a stray ESC.
constexpr qsizetype kMaxEscapeBytes = 64;

bool isDropped(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

// UTF-16 from its byte-order mark, or from every other byte of the first 4 KiB being NUL (ASCII
// text in UTF-16); none when the bytes do not look like it.
std::optional<QStringConverter::Encoding> utf16Of(const QByteArray& b)
{
    if (b.startsWith("\xFF\xFE")) return QStringConverter::Utf16LE;
    if (b.startsWith("\xFE\xFF")) return QStringConverter::Utf16BE;
    const qsizetype pairs = std::min<qsizetype>(b.size(), 4096) / 2;
    if (pairs < 2) return std::nullopt;
    qsizetype evenZero = 0, oddZero = 0;
    for (qsizetype i = 0; i < pairs; ++i) {
        evenZero += b[2 * i] == 0;
        oddZero += b[2 * i + 1] == 0;
    }
    if (oddZero * 10 >= pairs * 7 && evenZero * 10 < pairs) return QStringConverter::Utf16LE;
    if (evenZero * 10 >= pairs * 7 && oddZero * 10 < pairs) return QStringConverter::Utf16BE;
    return std::nullopt;
}

// Length of the escape sequence at `i` (an ESC), or 1 when it is a stray ESC.
qsizetype escapeLength(const QByteArray& b, qsizetype i)
{
    const qsizetype n = b.size();
    if (i + 1 >= n) return 1;
    const char kind = b[i + 1];
    if (kind == '[') { // CSI: parameters and intermediates 0x20-0x3f, a final byte 0x40-0x7e
        for (qsizetype j = i + 2; j < n && j - i <= kMaxEscapeBytes; ++j) {
            const auto c = static_cast<unsigned char>(b[j]);
            if (c >= 0x40 && c <= 0x7e) return j - i + 1;
            if (c < 0x20 || c > 0x3f) return 1;
        }
        return 1;
    }
    if (kind == ']') { // OSC (hyperlinks, titles): ends at BEL or ESC backslash
        for (qsizetype j = i + 2; j < n && j - i <= 4 * kMaxEscapeBytes; ++j) {
            if (b[j] == '\a') return j - i + 1;
            if (b[j] == '\x1b' && j + 1 < n && b[j + 1] == '\\') return j - i + 2;
        }
        return 1;
    }
    const auto c = static_cast<unsigned char>(kind);
    return c >= 0x30 && c <= 0x7e ? 2 : 1; // ESC and one byte: ESC 7, ESC M, ESC c ...
}

// Whether some byte of `text` is one isDropped() removes, 16 bytes at a time where SSE2 is there
// (every x86-64), so that the common clean log is checked at memory speed.
bool hasDroppedBytes(const QByteArray& text)
{
    const auto* p = reinterpret_cast<const unsigned char*>(text.constData());
    const qsizetype n = text.size();
    qsizetype i = 0;
#ifdef __SSE2__
    const __m128i below = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);
    const __m128i tab = _mm_set1_epi8('\t'), lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
        const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, below), v); // v <= 0x1f
        const __m128i kept = _mm_or_si128(
            _mm_cmpeq_epi8(v, tab), _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
        const __m128i dropped =
            _mm_or_si128(_mm_andnot_si128(kept, control), _mm_cmpeq_epi8(v, del));
        if (_mm_movemask_epi8(dropped)) return true;
    }
#endif
    for (; i < n; ++i)
        if (isDropped(p[i])) return true;
    return false;
}

constexpr std::uint32_t kSet = 1u << 24;
// Colour changes kept for display, at most (16 bytes each); past them the log shows uncoloured.
constexpr std::size_t kMaxColourChanges = std::size_t(8) << 20;

// xterm's colour of a 256-colour palette index, marked as set.
std::uint32_t paletteColour(int index)
{
    static constexpr std::uint32_t kSixteen[16] = {
        0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
        0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff};
    if (index < 16) return kSet | kSixteen[index];
    if (index >= 232) return kSet | 0x010101u * std::uint32_t(8 + 10 * (index - 232));
    const int cube = index - 16;
    const auto level = [](int v) { return std::uint32_t(v ? 55 + 40 * v : 0); };
    return kSet | level(cube / 36) << 16 | level(cube / 6 % 6) << 8 | level(cube % 6);
}

// Applies the parameters of an SGR sequence ("1;31", "38;5;208", "38;2;255;0;0", "" = reset) to
// the foreground colour and weight; background and other attributes are read past.
void applySgr(QByteArrayView params, LogColourChange& style)
{
    std::vector<int> codes(1, 0);
    for (const char c : params) {
        if (c == ';' || c == ':')
            codes.push_back(0);
        else if (c >= '0' && c <= '9')
            codes.back() = std::min(codes.back() * 10 + (c - '0'), 1 << 20);
    }
    for (std::size_t k = 0; k < codes.size(); ++k) {
        const int c = codes[k];
        if (c == 0) {
            style.rgb = 0;
            style.bold = false;
        } else if (c == 1) {
            style.bold = true;
        } else if (c == 22) {
            style.bold = false;
        } else if (c >= 30 && c <= 37) {
            style.rgb = paletteColour(c - 30);
        } else if (c >= 90 && c <= 97) {
            style.rgb = paletteColour(c - 90 + 8);
        } else if (c == 39) {
            style.rgb = 0;
        } else if (c == 38 || c == 48) { // extended colour: 5;index or 2;r;g;b
            const bool indexed = k + 2 < codes.size() && codes[k + 1] == 5;
            const bool direct = k + 4 < codes.size() && codes[k + 1] == 2;
            if (c == 38 && indexed) style.rgb = paletteColour(std::min(codes[k + 2], 255));
            if (c == 38 && direct)
                style.rgb = kSet | std::uint32_t(std::min(codes[k + 2], 255)) << 16 |
                            std::uint32_t(std::min(codes[k + 3], 255)) << 8 |
                            std::uint32_t(std::min(codes[k + 4], 255));
            k += indexed ? 2 : direct ? 4 : 0;
        }
    }
}

} // namespace

QByteArray logTextForAnalysis(QByteArray bytes, QString* note,
                              std::vector<LogColourChange>* colours)
{
    QStringList done;
    QByteArray text = std::move(bytes);
    if (const auto encoding = utf16Of(text)) {
        QStringDecoder decode(*encoding, QStringConverter::Flag::Stateless);
        text = QString(decode(text)).toUtf8();
        if (text.startsWith("\xEF\xBB\xBF")) text.remove(0, 3);
        done << QStringLiteral("decoded from UTF-16");
    }
    if (!hasDroppedBytes(text)) {
        if (note) *note = done.join(QStringLiteral("; "));
        return text;
    }
    // In place: what is kept is never longer than what was read, so the write position trails
    // the read position and the log is not held twice.
    char* out = text.data();
    qsizetype kept = 0, escapes = 0, dropped = 0;
    LogColourChange style;
    for (qsizetype i = 0; i < text.size();) {
        const char c = out[i];
        if (c == '\x1b') {
            const qsizetype length = escapeLength(text, i);
            (length > 1 ? escapes : dropped) += 1;
            if (colours && colours->size() < kMaxColourChanges && length > 2 && out[i + 1] == '[' &&
                out[i + length - 1] == 'm') {
                LogColourChange next = style;
                applySgr(QByteArrayView(out + i + 2, length - 3), next);
                if (next.rgb != style.rgb || next.bold != style.bold) {
                    next.offset = kept;
                    if (!colours->empty() && colours->back().offset == kept)
                        colours->pop_back(); // several escapes in a row: the last one holds
                    if (colours->empty() || colours->back().rgb != next.rgb ||
                        colours->back().bold != next.bold)
                        colours->push_back(next);
                    style = next;
                }
            }
            i += length;
            continue;
        }
        if (isDropped(static_cast<unsigned char>(c)))
            ++dropped;
        else
            out[kept++] = c;
        ++i;
    }
    text.truncate(kept);
    if (escapes) done << QStringLiteral("%1 ANSI escape sequences removed").arg(escapes);
    if (dropped) done << QStringLiteral("%1 NUL or other binary bytes skipped").arg(dropped);
    if (note) *note = done.join(QStringLiteral("; "));
    return text;
}

bool isMostlyText(const QByteArray& text)
{
    if (text.size() < 16 || !text.contains('\n')) return false; // a few bytes of a header
    const auto printable = std::count_if(text.cbegin(), text.cend(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r';
    });
    return printable * 4 >= text.size() * 3;
}

} // namespace rankscope
