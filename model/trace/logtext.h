#pragma once

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <vector>

namespace rankscope {

// Text that log parsing can read, from the bytes a log was written in: UTF-16 (with or without a
// byte-order mark) decoded to UTF-8, ANSI escape sequences (rich, loguru, colorlog colours)
// removed, and NUL runs and other control bytes (binary junk at the start, the zero-filled tail a
// crashed node leaves) dropped. Clean text is returned as it is, without a copy. `note`, when
// given, says in one line what was done (empty when nothing was). Bytes handed over (moved in)
// are cleaned in place, so a large log is never held twice. `colours`, when given, receives the
// text colours the removed escapes set (SGR), so that a view can show the log as it was coloured
// (the first 8 M changes of a log).
struct LogColourChange {
    std::int64_t offset = 0; // in the returned text: the colour holds from here on
    std::uint32_t rgb = 0;   // 0xRRGGBB with bit 24 set; 0: the terminal's default colour
    bool bold = false;
};
QByteArray logTextForAnalysis(QByteArray bytes, QString* note = nullptr,
                              std::vector<LogColourChange>* colours = nullptr);

// True when `text` (as logTextForAnalysis returns it) reads as a text log: a line break in at least
// 16 bytes, at least three quarters of them printable ASCII, tabs and newlines. Random binary data
// left after dropping its control bytes is mostly bytes >= 0x80 and fails.
bool isMostlyText(const QByteArray& text);

} // namespace rankscope
