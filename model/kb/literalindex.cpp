#include "model/kb/literalindex.h"

#include <algorithm>
#include <deque>

namespace rankscope {

LiteralIndex::LiteralIndex(const QList<QList<QByteArray>>& literalsPerRule, bool foldCase)
    : m_rules(int(literalsPerRule.size()))
{
    // The trie, with -1 for a missing edge.
    std::vector<int> next(256, -1);
    std::vector<std::vector<int>> output(1);
    for (int rule = 0; rule < m_rules; ++rule) {
        for (const QByteArray& literal : literalsPerRule[rule]) {
            int state = 0;
            for (char c : literal) {
                const int b = static_cast<unsigned char>(c);
                if (next[size_t(state) * 256 + size_t(b)] < 0) {
                    next[size_t(state) * 256 + size_t(b)] = int(output.size());
                    output.emplace_back();
                    next.resize(next.size() + 256, -1);
                }
                state = next[size_t(state) * 256 + size_t(b)];
            }
            output[size_t(state)].push_back(rule);
        }
    }
    // Breadth-first failure links, folded into a complete transition table.
    std::vector<int> fail(output.size(), 0);
    std::deque<int> queue;
    for (int b = 0; b < 256; ++b) {
        int& t = next[size_t(b)];
        if (t < 0) {
            t = 0;
        } else {
            fail[size_t(t)] = 0;
            queue.push_back(t);
        }
    }
    while (!queue.empty()) {
        const int s = queue.front();
        queue.pop_front();
        const std::vector<int>& inherited = output[size_t(fail[size_t(s)])];
        output[size_t(s)].insert(output[size_t(s)].end(), inherited.begin(), inherited.end());
        for (int b = 0; b < 256; ++b) {
            int& t = next[size_t(s) * 256 + size_t(b)];
            const int viaFail = next[size_t(fail[size_t(s)]) * 256 + size_t(b)];
            if (t < 0) {
                t = viaFail;
            } else {
                fail[size_t(t)] = viaFail;
                queue.push_back(t);
            }
        }
    }
    // Reading an upper-case byte is reading its lower-case one (the literals are lower-case).
    const std::size_t states = output.size();
    if (foldCase)
        for (std::size_t s = 0; s < states; ++s)
            for (int c = 'A'; c <= 'Z'; ++c)
                next[s * 256 + size_t(c)] = next[s * 256 + size_t(c - 'A' + 'a')];
    // Renumber: states without output first (the root stays 0: no literal is empty).
    std::vector<std::uint32_t> number(states);
    std::uint32_t counter = 0;
    for (std::size_t s = 0; s < states; ++s)
        if (output[s].empty()) number[s] = counter++;
    m_firstOutput = counter * 256;
    for (std::size_t s = 0; s < states; ++s)
        if (!output[s].empty()) {
            number[s] = counter++;
            std::vector<int> rules = std::move(output[s]);
            std::sort(rules.begin(), rules.end());
            rules.erase(std::unique(rules.begin(), rules.end()), rules.end());
            m_output.push_back(std::move(rules));
        }
    m_next.assign(states * 256, 0);
    for (std::size_t s = 0; s < states; ++s)
        for (std::size_t b = 0; b < 256; ++b)
            m_next[std::size_t(number[s]) * 256 + b] = number[size_t(next[s * 256 + b])] * 256;
    for (std::size_t b = 0; b < 256; ++b)
        m_startsLiteral[b] = m_next[b] != 0;
    m_startPairs.assign(65536 / 64, 0);
    // The bytes that read as `c` (with foldCase, a lower-case letter's upper case too).
    const auto spellings = [foldCase](unsigned char c) {
        std::vector<unsigned> out = {c};
        if (foldCase && c >= 'a' && c <= 'z') out.push_back(c - 'a' + 'A');
        return out;
    };
    for (const QList<QByteArray>& literals : literalsPerRule)
        for (const QByteArray& literal : literals)
            for (const unsigned first : spellings(static_cast<unsigned char>(literal[0])))
                for (unsigned second = 0; second < 256; ++second) {
                    const std::vector<unsigned> seconds =
                        literal.size() > 1 ? spellings(static_cast<unsigned char>(literal[1]))
                                           : std::vector<unsigned>{second};
                    if (std::find(seconds.begin(), seconds.end(), second) == seconds.end())
                        continue;
                    const unsigned pair = first << 8 | second;
                    m_startPairs[pair / 64] |= std::uint64_t(1) << (pair % 64);
                }
}

std::vector<std::vector<qsizetype>> LiteralIndex::candidateLines(const LineSource& lines,
                                                                 qsizetype lineLimit) const
{
    std::vector<std::vector<qsizetype>> found(static_cast<size_t>(m_rules));
    if (m_rules == 0) return found;
    const std::uint32_t* next = m_next.data();
    const std::size_t outputBase = m_firstOutput / 256;
    const qsizetype count = std::min(lines.count, lineLimit);
    for (qsizetype line = 0; line < count; ++line) {
        const QByteArrayView text = lines.line(line);
        const auto* p = reinterpret_cast<const unsigned char*>(text.data());
        const auto* end = p + text.size();
        std::uint32_t state = 0;
        while (p < end) {
            // Most bytes of a log begin no literal: in the root state, skip the byte pairs that
            // begin none without the table (the state after such a pair is the one after its
            // second byte alone).
            if (state == 0) {
                while (end - p >= 2) {
                    const unsigned pair = unsigned(p[0]) << 8 | p[1];
                    if (m_startPairs[pair / 64] >> (pair % 64) & 1) break;
                    ++p;
                }
                if (end - p < 2 && !m_startsLiteral[*p]) break;
            }
            state = next[state + *p++];
            if (state < m_firstOutput) continue;
            for (int rule : m_output[state / 256 - outputBase]) {
                std::vector<qsizetype>& l = found[size_t(rule)];
                if (l.empty() || l.back() != line) l.push_back(line);
            }
        }
    }
    return found;
}

} // namespace rankscope
