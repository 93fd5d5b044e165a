#pragma once

#include "model/kb/walkthrough.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QStringList>
#include <vector>

namespace rankscope {

struct KeyCount {
    QString key;
    int count = 0;
};

// What we wrote about a node (taxonomy/descriptions.json).
struct NodeDescription {
    QString summary;      // one line
    QString symptoms;     // what the user sees
    QStringList messages; // typical message templates
    QString cause;        // why it happens in distributed training
    QString distinguish;  // how to tell it from its neighbours
    QStringList seeAlso;  // the neighbour node ids `distinguish` refers to
};

// A share (0.209) as the taxonomy browser, its tree and the CLI print it: "20.9 %".
QString shareText(double share);
// A classifier's probability (0.42) as the Issues tab and `rankscope classify` print it: "42 %".
// Whole percent, unlike shareText: a share counts the study's rows, while a probability is the
// ranker's calibrated guess from a few cues, and a tenth of a percent would claim a precision
// it does not have.
QString probabilityText(double probability);

struct TaxonomyNode {
    enum class Kind { Stage, Inner, Leaf };
    Kind kind = Kind::Leaf;
    QString id;       // slug(stage)[/slug(inner)]/slug(leaf)
    QString name;     // as the study spells it
    QString parentId; // empty for a stage
    QStringList childIds;
    int issueCount = 0;                // fault rows
    int linkCount = 0;                 // distinct issue links
    double studyShare = 0;             // issueCount / all fault rows
    double distributedShare = 0;       // share of the rows labelled distributed-specific
    std::vector<KeyCount> frameworks;  // "PyTorch" -> rows, most first
    std::vector<KeyCount> fixPatterns; // pattern id -> rows, most first
    QStringList exampleLinks;          // up to five issue links, spread over the sources
    NodeDescription description;
};

struct FixPattern {
    QString id;
    QString name;
    int count = 0;                // fault rows whose label includes this pattern
    int linkCount = 0;            // distinct links among them
    QStringList labels;           // the raw labels it was split or merged from
    std::vector<KeyCount> leaves; // leaf id -> rows, most first
};

// A node of the how-to tree (tosem23_howto.csv): a topic or a topic/subtopic.
struct HowToNode {
    QString id;
    QString name;
    QString parentId;
    QStringList childIds;
    int count = 0;
    int linkCount = 0;
    std::vector<KeyCount> frameworks;
};

// The study's taxonomy of distributed-training faults (Gu et al., TOSEM 2023) as the program
// uses it. Everything structural and every number is derived from the CSVs when loading; only the
// descriptions and walkthroughs are our own text.
//
//   const Taxonomy& t = Taxonomy::instance();  // loaded once from the resources, thread-safe
//   t.stages();                 // the four stage ids, in the study's order
//   t.node("training-and-evaluation/unexpected-performance/hang");
//   t.children(id); t.leaves(); t.isLeafId(id);
//   t.fixPatterns(); t.fixPattern("fix-communication-configuration");
//   t.walkthrough("fix-communication-configuration");  // nullptr when the pattern has none
//   t.walkthroughsForNode(leafId);  // the checklists that fixed that symptom, most used first
//   t.autoCheck("same_framework_version");
//   t.howToTopics(); t.howToNode(id);
//
// Pointers stay valid for the lifetime of the Taxonomy (instance() lives until exit). problems()
// lists what is inconsistent in the data (missing description, walkthrough of an unknown pattern,
// ...); it is empty for the shipped data, which the tests assert.
class Taxonomy {
public:
    static const Taxonomy& instance();
    // Builds from explicit documents (tests, tools). Unparsable input yields problems().
    static Taxonomy fromData(const QByteArray& faultsCsv, const QByteArray& howtoCsv,
                             const QByteArray& descriptionsJson,
                             const QByteArray& walkthroughsJson);

    const QStringList& problems() const { return m_problems; }

    int rowCount() const { return m_rowCount; }
    int linkCount() const { return m_linkCount; }
    int distributedRowCount() const { return m_distributedRows; }
    int howToRowCount() const { return m_howToRows; }
    int howToLinkCount() const { return m_howToLinks; }

    const std::vector<TaxonomyNode>& nodes() const { return m_nodes; } // depth-first order
    QStringList stages() const { return m_stageIds; }
    const TaxonomyNode* node(const QString& id) const;
    QStringList children(const QString& id) const;
    QStringList leaves() const { return m_leafIds; }
    bool isLeafId(const QString& id) const;

    const std::vector<FixPattern>& fixPatterns() const { return m_patterns; } // most rows first
    const FixPattern* fixPattern(const QString& id) const;
    // Pattern ids of a raw fix label as the sheet spells it.
    QStringList fixPatternIdsOfLabel(const QString& label) const;

    const std::vector<Walkthrough>& walkthroughs() const { return m_book.walkthroughs; }
    const Walkthrough* walkthrough(const QString& patternId) const;
    // The walkthroughs of the fix patterns that resolved a node's issues, most frequent first:
    // what the walkthrough panel offers for a diagnosed leaf.
    std::vector<const Walkthrough*> walkthroughsForNode(const QString& id) const;
    const std::vector<AutoCheck>& autoChecks() const { return m_book.autoChecks; }
    const AutoCheck* autoCheck(const QString& id) const;
    // The facts auto-checks read (every AutoCheck::needs entry is one of them).
    const std::vector<CheckFact>& checkFacts() const { return m_book.facts; }

    const std::vector<HowToNode>& howToNodes() const { return m_howTo; } // depth-first order
    QStringList howToTopics() const { return m_topicIds; }
    const HowToNode* howToNode(const QString& id) const;

    // "GitHub-pytorch" -> {"PyTorch"}, "SO-tensorflow & SO-keras" -> {"TensorFlow", "Keras"}.
    static QStringList frameworksOfSource(const QString& source);

private:
    void loadFaults(const QByteArray& csv);
    void loadHowTo(const QByteArray& csv);
    void loadDescriptions(const QByteArray& json);
    void loadWalkthroughs(const QByteArray& json);

    QStringList m_problems;
    int m_rowCount = 0;
    int m_linkCount = 0;
    int m_distributedRows = 0;
    int m_howToRows = 0;
    int m_howToLinks = 0;
    std::vector<TaxonomyNode> m_nodes;
    QHash<QString, qsizetype> m_nodeIndex;
    QStringList m_stageIds;
    QStringList m_leafIds;
    std::vector<FixPattern> m_patterns;
    QHash<QString, qsizetype> m_patternIndex;
    QHash<QString, QStringList> m_patternIdsOfLabel;
    WalkthroughBook m_book;
    std::vector<HowToNode> m_howTo;
    QHash<QString, qsizetype> m_howToIndex;
    QStringList m_topicIds;
};

} // namespace rankscope
