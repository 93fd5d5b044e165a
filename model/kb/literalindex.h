#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <vector>

namespace rankscope {

// Aho-Corasick over every rule's literals: one pass over the input finds, per rule, the lines
// containing any of its literals, instead of one pass per literal (hundreds of passes over a
// 10 MB log). With foldCase, input bytes are lower-cased on the fly (literals must be lower-case).
class LiteralIndex {
public:
    LiteralIndex() = default;
    LiteralIndex(const QList<QList<QByteArray>>& literalsPerRule, bool foldCase);

    // Per rule, the ascending unique 0-based lines that contain one of its literals, considering
    // only lines that start before byteLimit.
    std::vector<std::vector<qsizetype>> candidateLines(QByteArrayView text,
                                                       qsizetype byteLimit) const;

private:
    int m_rules = 0;
    bool m_foldCase = false;
    std::vector<int> m_next;                // state * 256 + byte -> state
    std::vector<std::vector<int>> m_output; // state -> rules whose literal ends here
};

} // namespace rankscope
