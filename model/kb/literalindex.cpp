#include "model/kb/literalindex.h"

#include <algorithm>
#include <deque>

namespace rankscope {

LiteralIndex::LiteralIndex(const QList<QList<QByteArray>>& literalsPerRule, bool foldCase)
    : m_rules(int(literalsPerRule.size())), m_foldCase(foldCase)
{
    m_next.assign(256, -1);
    m_output.emplace_back();
    for (int rule = 0; rule < m_rules; ++rule) {
        for (const QByteArray& literal : literalsPerRule[rule]) {
            int state = 0;
            for (char c : literal) {
                const int b = static_cast<unsigned char>(c);
                if (m_next[size_t(state) * 256 + b] < 0) {
                    m_next[size_t(state) * 256 + b] = int(m_output.size());
                    m_output.emplace_back();
                    m_next.resize(m_next.size() + 256, -1);
                }
                state = m_next[size_t(state) * 256 + b];
            }
            m_output[state].push_back(rule);
        }
    }
    // Breadth-first failure links, folded into a complete transition table.
    std::vector<int> fail(m_output.size(), 0);
    std::deque<int> queue;
    for (int b = 0; b < 256; ++b) {
        int& t = m_next[b];
        if (t < 0) {
            t = 0;
        } else {
            fail[t] = 0;
            queue.push_back(t);
        }
    }
    while (!queue.empty()) {
        const int s = queue.front();
        queue.pop_front();
        const std::vector<int>& inherited = m_output[fail[s]];
        m_output[s].insert(m_output[s].end(), inherited.begin(), inherited.end());
        for (int b = 0; b < 256; ++b) {
            int& t = m_next[size_t(s) * 256 + b];
            const int viaFail = m_next[size_t(fail[s]) * 256 + b];
            if (t < 0) {
                t = viaFail;
            } else {
                fail[t] = viaFail;
                queue.push_back(t);
            }
        }
    }
    for (std::vector<int>& out : m_output) {
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    }
}

std::vector<std::vector<qsizetype>> LiteralIndex::candidateLines(QByteArrayView text,
                                                                 qsizetype byteLimit) const
{
    std::vector<std::vector<qsizetype>> lines(static_cast<size_t>(m_rules));
    if (m_rules == 0) return lines;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const qsizetype n = text.size();
    int state = 0;
    qsizetype line = 0;
    for (qsizetype i = 0; i < n; ++i) {
        unsigned char b = p[i];
        if (b == '\n') {
            if (i + 1 >= byteLimit) break; // later lines are out of scope
            ++line;
            state = 0;
            continue;
        }
        if (m_foldCase && b >= 'A' && b <= 'Z') b = static_cast<unsigned char>(b + ('a' - 'A'));
        state = m_next[size_t(state) * 256 + b];
        for (int rule : m_output[size_t(state)]) {
            std::vector<qsizetype>& l = lines[size_t(rule)];
            if (l.empty() || l.back() != line) l.push_back(line);
        }
    }
    return lines;
}

} // namespace rankscope
