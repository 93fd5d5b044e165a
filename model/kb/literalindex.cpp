#include "model/kb/literalindex.h"

#include <algorithm>
#include <cstring>
#include <deque>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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
    m_anchored = !foldCase;
    for (int rule = 0; rule < m_rules; ++rule)
        for (const QByteArray& literal : literalsPerRule[rule]) {
            m_breakFree = m_breakFree && !literal.contains('\n') && !literal.contains('\r');
            m_anchored = m_anchored && literal.size() >= 2;
            if (!foldCase) m_literals.emplace_back(literal, rule);
        }
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
    const qsizetype count = std::min(lines.count, lineLimit);
    if (m_rules == 0 || count <= 0) return found;
    if (lines.text.isNull() || !m_breakFree) {
        scanLines(lines, count, found);
    } else {
        // The text up to the end of the last line asked for.
        const QByteArrayView last = count < lines.count ? lines.line(count - 1) : QByteArrayView();
        const qsizetype end =
            count < lines.count ? last.data() + last.size() - lines.text.data() : lines.text.size();
        if (m_anchored)
            scanAnchored(lines.text.first(end), found);
        else
            scanText(lines.text.first(end), found);
    }
    return found;
}

const unsigned char* LiteralIndex::skipRoot(const unsigned char* p, const unsigned char* end) const
{
    // Most bytes of a log begin no literal: in the root state, the byte pairs that begin none are
    // skipped without the table (the state after such a pair is the one after its second byte
    // alone).
    while (end - p >= 2) {
        const unsigned pair = unsigned(p[0]) << 8 | p[1];
        if (m_startPairs[pair / 64] >> (pair % 64) & 1) return p;
        ++p;
    }
    return p < end && m_startsLiteral[*p] ? p : end;
}

void LiteralIndex::scanLines(const LineSource& lines, qsizetype count,
                             std::vector<std::vector<qsizetype>>& found) const
{
    const std::uint32_t* next = m_next.data();
    for (qsizetype line = 0; line < count; ++line) {
        const QByteArrayView text = lines.line(line);
        const auto* p = reinterpret_cast<const unsigned char*>(text.data());
        const auto* end = p + text.size();
        std::uint32_t state = 0;
        while (p < end) {
            if (state == 0 && (p = skipRoot(p, end)) == end) break;
            state = next[state + *p++];
            if (state >= m_firstOutput) report(state, line, found);
        }
    }
}

void LiteralIndex::scanText(QByteArrayView text, std::vector<std::vector<qsizetype>>& found) const
{
    // As scanLines() but over the whole text: a line break leads back to the root state, and the
    // line of a hit is the number of '\n' before it, counted from the previous hit on.
    const std::uint32_t* next = m_next.data();
    const auto* begin = reinterpret_cast<const unsigned char*>(text.data());
    const auto* p = begin;
    const auto* end = p + text.size();
    const auto* counted = p;
    qsizetype line = 0;
    std::uint32_t state = 0;
    while (p < end) {
        if (state == 0 && (p = skipRoot(p, end)) == end) break;
        state = next[state + *p++];
        if (state < m_firstOutput) continue;
        line += countNewlines(QByteArrayView(counted, p));
        counted = p;
        report(state, line, found);
    }
}

namespace {

// The byte pair at `p` as one number (a two-byte load), the same for a literal's bytes and the
// text's.
unsigned pairAt(const unsigned char* p)
{
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

} // namespace

void LiteralIndex::scanAnchored(QByteArrayView text,
                                std::vector<std::vector<qsizetype>>& found) const
{
    // Each literal is looked for at one of its byte pairs, the one least frequent in the text's
    // head: in a log, under 1 % of the positions hold one of those pairs (against a sixth that
    // begin some literal, where scanText() steps the automaton), so that eight positions at a
    // time are skipped with eight table reads and one branch.
    const auto* data = reinterpret_cast<const unsigned char*>(text.data());
    const qsizetype n = text.size();
    if (n < 2) return;
    std::vector<std::uint32_t> frequency(65536, 0);
    const qsizetype sample = std::min<qsizetype>(n, 64 * 1024);
    for (qsizetype i = 0; i + 1 < sample; ++i)
        ++frequency[pairAt(data + i)];
    // The literals by anchor pair, with the offset of the pair in each.
    struct Anchored {
        unsigned pair;
        qsizetype offset;
        const std::pair<QByteArray, int>* literal;
    };
    std::vector<Anchored> anchors;
    anchors.reserve(m_literals.size());
    std::vector<std::uint8_t> isAnchor(65536, 0);
    for (const auto& literal : m_literals) {
        const auto* l = reinterpret_cast<const unsigned char*>(literal.first.constData());
        qsizetype best = 0;
        for (qsizetype k = 1; k + 1 < literal.first.size(); ++k)
            if (frequency[pairAt(l + k)] < frequency[pairAt(l + best)]) best = k;
        anchors.push_back({pairAt(l + best), best, &literal});
        isAnchor[pairAt(l + best)] = 1;
    }
    std::sort(anchors.begin(), anchors.end(),
              [](const Anchored& a, const Anchored& b) { return a.pair < b.pair; });
    qsizetype line = 0, counted = 0;
    const auto verify = [&](qsizetype i) {
        const unsigned pair = pairAt(data + i);
        if (!isAnchor[pair]) return;
        auto it = std::lower_bound(anchors.begin(), anchors.end(), pair,
                                   [](const Anchored& a, unsigned p) { return a.pair < p; });
        for (; it != anchors.end() && it->pair == pair; ++it) {
            const QByteArray& literal = it->literal->first;
            const qsizetype start = i - it->offset;
            if (start < 0 || start + literal.size() > n ||
                std::memcmp(data + start, literal.constData(), size_t(literal.size())) != 0)
                continue;
            // The literal holds no '\n': it lies on the line of its anchor.
            line += countNewlines(QByteArrayView(data + counted, data + i));
            counted = i;
            std::vector<qsizetype>& l = found[size_t(it->literal->second)];
            if (l.empty() || l.back() != line) l.push_back(line);
        }
    };
    const std::uint8_t* anchor = isAnchor.data();
    qsizetype i = 0;
    for (; i + 9 <= n; i += 8) {
        const unsigned any = anchor[pairAt(data + i)] | anchor[pairAt(data + i + 1)] |
                             anchor[pairAt(data + i + 2)] | anchor[pairAt(data + i + 3)] |
                             anchor[pairAt(data + i + 4)] | anchor[pairAt(data + i + 5)] |
                             anchor[pairAt(data + i + 6)] | anchor[pairAt(data + i + 7)];
        if (!any) continue;
        for (qsizetype k = i; k < i + 8; ++k)
            verify(k);
    }
    for (; i + 1 < n; ++i)
        verify(i);
}

qsizetype countNewlines(QByteArrayView text)
{
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const qsizetype n = text.size();
    qsizetype i = 0, lines = 0;
#ifdef __SSE2__
    // Per byte lane, 0 - (number of '\n' seen) over at most 255 blocks, then summed.
    const __m128i lf = _mm_set1_epi8('\n');
    while (i + 16 <= n) {
        __m128i sum = _mm_setzero_si128();
        for (int block = 0; block < 255 && i + 16 <= n; ++block, i += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
            sum = _mm_sub_epi8(sum, _mm_cmpeq_epi8(v, lf));
        }
        const __m128i total = _mm_sad_epu8(sum, _mm_setzero_si128());
        lines += _mm_cvtsi128_si32(total) + _mm_cvtsi128_si32(_mm_srli_si128(total, 8));
    }
#endif
    for (; i < n; ++i)
        lines += p[i] == '\n';
    return lines;
}

} // namespace rankscope
