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
// `text`, when not null, holds the same lines one after the other, each but perhaps the last
// ended by '\n' (a '\r' before it may belong to the line or not): the scan then reads it in one
// pass, without a call per line.
struct LineSource {
    qsizetype count = 0;
    std::function<QByteArrayView(qsizetype)> line;
    QByteArrayView text = {};
};

// How many '\n' bytes `text` holds, 16 bytes at a time where SSE2 is there.
qsizetype countNewlines(QByteArrayView text);

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
    // No literal holds '\n' or '\r': a line break always leads back to the root state, so that a
    // scan of lines joined by '\n' finds what a scan line by line finds.
    bool m_breakFree = true;
    // Every literal and its rule, for scanAnchored(): exact-case indexes whose literals all have
    // two bytes or more (m_anchored).
    bool m_anchored = false;
    std::vector<std::pair<QByteArray, int>> m_literals;

    // From `p` in the root state, the first position whose byte pair may begin a literal; `end`
    // when there is none.
    const unsigned char* skipRoot(const unsigned char* p, const unsigned char* end) const;
    void scanLines(const LineSource& lines, qsizetype count,
                   std::vector<std::vector<qsizetype>>& found) const;
    void scanText(QByteArrayView text, std::vector<std::vector<qsizetype>>& found) const;
    void scanAnchored(QByteArrayView text, std::vector<std::vector<qsizetype>>& found) const;
    // Adds `line` to the rules of output state `state` (a multiple of 256).
    void report(std::uint32_t state, qsizetype line,
                std::vector<std::vector<qsizetype>>& found) const
    {
        for (int rule : m_output[state / 256 - m_firstOutput / 256]) {
            std::vector<qsizetype>& l = found[size_t(rule)];
            if (l.empty() || l.back() != line) l.push_back(line);
        }
    }
};

} // namespace rankscope
