#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace rankscope {

// The lines a scan reads, one at a time: a text's lines, or a log's lines where they lie in its
// file, so that nothing is copied together first. `line(i)` is line i without its line break.
struct LineSource {
    qsizetype count = 0;
    std::function<QByteArrayView(qsizetype)> line;
};

// Aho-Corasick over every rule's literals: one pass over the input finds, per rule, the lines
// containing any of its literals, instead of one pass per literal (hundreds of passes over a
// 10 MB log). With foldCase, input bytes match case-insensitively (literals must be lower-case).
class LiteralIndex {
public:
    LiteralIndex() = default;
    LiteralIndex(const QList<QList<QByteArray>>& literalsPerRule, bool foldCase);

    // Per rule, the ascending unique line indexes, below `lineLimit`, that contain one of its
    // literals.
    std::vector<std::vector<qsizetype>> candidateLines(const LineSource& lines,
                                                       qsizetype lineLimit) const;

private:
    int m_rules = 0;
    // state * 256 + byte -> next state * 256; states are numbered so that those where a literal
    // ends come last (from m_firstOutput on): one compare per byte tells that a rule may have hit.
    // Case folding is built into the table.
    std::vector<std::uint32_t> m_next;
    std::uint32_t m_firstOutput = 0;        // the first output state * 256
    std::vector<std::vector<int>> m_output; // (state - first output state) -> rules
    // Byte pairs that begin a literal (every pair after a one-byte literal), bit first << 8 |
    // second: in the root state, the pairs that begin none are skipped without the table.
    std::vector<std::uint64_t> m_startPairs;
    std::array<bool, 256> m_startsLiteral = {}; // bytes that leave the root state
};

} // namespace rankscope
