#include "model/trace/logtext.h"

#include <QStringDecoder>
#include <QStringList>
#include <algorithm>
#include <optional>

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

} // namespace

QByteArray logTextForAnalysis(const QByteArray& bytes, QString* note)
{
    QStringList done;
    QByteArray text = bytes;
    if (const auto encoding = utf16Of(bytes)) {
        QStringDecoder decode(*encoding, QStringConverter::Flag::Stateless);
        text = QString(decode(bytes)).toUtf8();
        if (text.startsWith("\xEF\xBB\xBF")) text.remove(0, 3);
        done << QStringLiteral("decoded from UTF-16");
    }
    if (std::none_of(text.cbegin(), text.cend(),
                     [](char c) { return isDropped(static_cast<unsigned char>(c)); })) {
        if (note) *note = done.join(QStringLiteral("; "));
        return text;
    }
    QByteArray out;
    out.reserve(text.size());
    qsizetype escapes = 0, dropped = 0;
    for (qsizetype i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '\x1b') {
            const qsizetype length = escapeLength(text, i);
            (length > 1 ? escapes : dropped) += 1;
            i += length;
            continue;
        }
        if (isDropped(static_cast<unsigned char>(c)))
            ++dropped;
        else
            out.append(c);
        ++i;
    }
    if (escapes) done << QStringLiteral("%1 ANSI escape sequences removed").arg(escapes);
    if (dropped) done << QStringLiteral("%1 NUL or other binary bytes skipped").arg(dropped);
    if (note) *note = done.join(QStringLiteral("; "));
    return out;
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
