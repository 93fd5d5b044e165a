#include "model/kb/taxonomy.h"

#include "model/kb/csvtable.h"
#include "model/kb/fixpatterns.h"
#include "model/kb/slug.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <algorithm>
#include <map>

namespace rankscope {

namespace {

constexpr int kExampleLinks = 5;

struct Acc {
    TaxonomyNode::Kind kind = TaxonomyNode::Kind::Leaf;
    QString name, parent;
    QStringList children;
    int rows = 0, distributed = 0;
    QSet<QString> links;
    QHash<QString, int> frameworks, patterns;
    // Links per source ("GitHub-horovod", ...), in sheet order; examples are drawn from them
    // round-robin because the sheet is sorted by source and would otherwise show one framework.
    std::map<QString, QStringList> linksBySource;
};

QStringList examplesOf(const Acc& a, int limit)
{
    QStringList out;
    for (qsizetype i = 0; out.size() < limit; ++i) {
        bool any = false;
        for (const auto& [source, links] : a.linksBySource) {
            if (i >= links.size()) continue;
            any = true;
            if (!out.contains(links[i]) && out.size() < limit) out << links[i];
        }
        if (!any) break;
    }
    return out;
}

std::vector<KeyCount> sorted(const QHash<QString, int>& counts)
{
    std::vector<KeyCount> out;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        out.push_back({it.key(), it.value()});
    std::sort(out.begin(), out.end(), [](const KeyCount& a, const KeyCount& b) {
        return a.count != b.count ? a.count > b.count : a.key < b.key;
    });
    return out;
}

// Alphabetical, with the study's catch-all "others" last.
void sortChildren(QStringList& ids, const std::map<QString, Acc>& accs)
{
    std::sort(ids.begin(), ids.end(), [&](const QString& a, const QString& b) {
        const bool ao = accs.at(a).name == QLatin1String("others");
        const bool bo = accs.at(b).name == QLatin1String("others");
        if (ao != bo) return bo;
        return a < b;
    });
}

QByteArray readResource(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

} // namespace

QStringList Taxonomy::frameworksOfSource(const QString& source)
{
    QStringList out;
    for (const QString& part : source.split(QLatin1Char('&'), Qt::SkipEmptyParts)) {
        const QString p = part.trimmed();
        const qsizetype dash = p.indexOf(QLatin1Char('-'));
        const QString name = (dash < 0 ? p : p.mid(dash + 1)).trimmed().toLower();
        QString pretty;
        if (name == QLatin1String("pytorch"))
            pretty = QStringLiteral("PyTorch");
        else if (name == QLatin1String("tensorflow"))
            pretty = QStringLiteral("TensorFlow");
        else if (name == QLatin1String("keras"))
            pretty = QStringLiteral("Keras");
        else if (name == QLatin1String("horovod"))
            pretty = QStringLiteral("Horovod");
        else if (!name.isEmpty())
            pretty = name.left(1).toUpper() + name.mid(1);
        if (!pretty.isEmpty() && !out.contains(pretty)) out << pretty;
    }
    return out;
}

QString shareText(double share)
{
    return QStringLiteral("%1 %").arg(100.0 * share, 0, 'f', 1);
}

QString probabilityText(double probability)
{
    return QStringLiteral("%1 %").arg(100.0 * probability, 0, 'f', 0);
}

const Taxonomy& Taxonomy::instance()
{
    static const Taxonomy taxonomy =
        fromData(readResource(QStringLiteral(":/taxonomy/tosem23_faults.csv")),
                 readResource(QStringLiteral(":/taxonomy/tosem23_howto.csv")),
                 readResource(QStringLiteral(":/taxonomy/descriptions.json")),
                 readResource(QStringLiteral(":/taxonomy/walkthroughs.json")));
    return taxonomy;
}

Taxonomy Taxonomy::fromData(const QByteArray& faultsCsv, const QByteArray& howtoCsv,
                            const QByteArray& descriptionsJson, const QByteArray& walkthroughsJson)
{
    Taxonomy t;
    t.loadFaults(faultsCsv);
    t.loadHowTo(howtoCsv);
    t.loadDescriptions(descriptionsJson);
    t.loadWalkthroughs(walkthroughsJson);
    return t;
}

void Taxonomy::loadFaults(const QByteArray& csv)
{
    const CsvTable table = CsvTable::parse(csv);
    if (!table.isValid()) {
        m_problems << QStringLiteral("faults CSV: ") + table.error();
        return;
    }
    const int cSource = table.column(QStringLiteral("source"));
    const int cLink = table.column(QStringLiteral("link"));
    const int cDist = table.column(QStringLiteral("distributed_specific"));
    const int cStage = table.column(QStringLiteral("stage"));
    const int cInner = table.column(QStringLiteral("inner_category"));
    const int cLeaf = table.column(QStringLiteral("leaf_category"));
    const int cFix = table.column(QStringLiteral("fix_pattern"));
    if (std::min({cSource, cLink, cDist, cStage, cInner, cLeaf, cFix}) < 0) {
        m_problems << QStringLiteral("faults CSV: missing one of the columns source, link, "
                                     "distributed_specific, stage, inner_category, leaf_category, "
                                     "fix_pattern");
        return;
    }
    QStringList labels;
    for (qsizetype r = 0; r < table.rowCount(); ++r)
        labels << table.row(r)[cFix].trimmed();
    const FixPatternCatalog catalog = FixPatternCatalog::build(labels);

    std::map<QString, Acc> accs;
    struct PatternAcc {
        int rows = 0;
        QSet<QString> links;
        QHash<QString, int> leaves;
    };
    QHash<QString, PatternAcc> patterns;
    QSet<QString> allLinks;
    for (qsizetype r = 0; r < table.rowCount(); ++r) {
        const QStringList& row = table.row(r);
        const QString stage = row[cStage].trimmed(), inner = row[cInner].trimmed(),
                      leaf = row[cLeaf].trimmed(), link = row[cLink].trimmed();
        if (stage.isEmpty() || leaf.isEmpty()) {
            m_problems << QStringLiteral("faults CSV: row %1 has no stage or leaf").arg(r + 2);
            continue;
        }
        const bool distributed = row[cDist].trimmed() == QLatin1String("1");
        const QStringList frameworks = frameworksOfSource(row[cSource]);
        const QStringList patternIds = catalog.patternIds(labels[r]);
        QStringList path{slugify(stage)};
        QList<std::pair<QString, TaxonomyNode::Kind>> names{{stage, TaxonomyNode::Kind::Stage}};
        if (!inner.isEmpty()) {
            path << path.last() + QLatin1Char('/') + slugify(inner);
            names.append({inner, TaxonomyNode::Kind::Inner});
        }
        path << path.last() + QLatin1Char('/') + slugify(leaf);
        names.append({leaf, TaxonomyNode::Kind::Leaf});
        for (qsizetype level = 0; level < path.size(); ++level) {
            Acc& a = accs[path[level]];
            a.name = names[level].first;
            a.kind = names[level].second;
            if (level > 0) {
                a.parent = path[level - 1];
                QStringList& siblings = accs[a.parent].children;
                if (!siblings.contains(path[level])) siblings << path[level];
            }
            ++a.rows;
            if (distributed) ++a.distributed;
            a.links.insert(link);
            for (const QString& f : frameworks)
                ++a.frameworks[f];
            for (const QString& p : patternIds)
                ++a.patterns[p];
            QStringList& bySource = a.linksBySource[row[cSource].trimmed()];
            if (bySource.size() < kExampleLinks && !bySource.contains(link)) bySource << link;
        }
        for (const QString& p : patternIds) {
            PatternAcc& pa = patterns[p];
            ++pa.rows;
            pa.links.insert(link);
            ++pa.leaves[path.last()];
        }
        ++m_rowCount;
        if (distributed) ++m_distributedRows;
        allLinks.insert(link);
    }
    m_linkCount = static_cast<int>(allLinks.size());

    for (auto& [id, acc] : accs)
        sortChildren(acc.children, accs);
    QStringList stages;
    for (const auto& [id, acc] : accs)
        if (acc.parent.isEmpty()) stages << id;
    sortChildren(stages, accs);
    m_stageIds = stages;
    // Depth-first, so a tree printer can walk nodes() in order.
    std::vector<QString> stack(stages.rbegin(), stages.rend());
    while (!stack.empty()) {
        const QString id = stack.back();
        stack.pop_back();
        const Acc& a = accs.at(id);
        TaxonomyNode n;
        n.kind = a.kind;
        n.id = id;
        n.name = a.name;
        n.parentId = a.parent;
        n.childIds = a.children;
        n.issueCount = a.rows;
        n.linkCount = static_cast<int>(a.links.size());
        n.studyShare = m_rowCount ? double(a.rows) / m_rowCount : 0;
        n.distributedShare = a.rows ? double(a.distributed) / a.rows : 0;
        n.frameworks = sorted(a.frameworks);
        n.fixPatterns = sorted(a.patterns);
        n.exampleLinks = examplesOf(a, kExampleLinks);
        if (n.kind == TaxonomyNode::Kind::Leaf) m_leafIds << id;
        m_nodeIndex.insert(id, static_cast<qsizetype>(m_nodes.size()));
        m_nodes.push_back(n);
        for (auto c = a.children.crbegin(); c != a.children.crend(); ++c)
            stack.push_back(*c);
    }

    for (auto it = patterns.cbegin(); it != patterns.cend(); ++it) {
        FixPattern p;
        p.id = it.key();
        p.name = catalog.names().value(it.key());
        p.count = it.value().rows;
        p.linkCount = static_cast<int>(it.value().links.size());
        p.labels = catalog.labelsOf(it.key());
        p.leaves = sorted(it.value().leaves);
        m_patterns.push_back(p);
    }
    std::sort(m_patterns.begin(), m_patterns.end(), [](const FixPattern& a, const FixPattern& b) {
        return a.count != b.count ? a.count > b.count : a.id < b.id;
    });
    for (qsizetype i = 0; i < static_cast<qsizetype>(m_patterns.size()); ++i)
        m_patternIndex.insert(m_patterns[static_cast<size_t>(i)].id, i);
    for (const QString& label : labels)
        if (!label.isEmpty()) m_patternIdsOfLabel.insert(label, catalog.patternIds(label));
}

void Taxonomy::loadHowTo(const QByteArray& csv)
{
    const CsvTable table = CsvTable::parse(csv);
    if (!table.isValid()) {
        m_problems << QStringLiteral("how-to CSV: ") + table.error();
        return;
    }
    const int cSource = table.column(QStringLiteral("source"));
    const int cLink = table.column(QStringLiteral("link"));
    const int cTopic = table.column(QStringLiteral("topic"));
    const int cSub = table.column(QStringLiteral("subtopic"));
    if (std::min({cSource, cLink, cTopic, cSub}) < 0) {
        m_problems << QStringLiteral("how-to CSV: missing one of the columns source, link, topic, "
                                     "subtopic");
        return;
    }
    std::map<QString, Acc> accs;
    QSet<QString> allLinks;
    for (qsizetype r = 0; r < table.rowCount(); ++r) {
        const QStringList& row = table.row(r);
        const QString topic = row[cTopic].trimmed(), sub = row[cSub].trimmed();
        if (topic.isEmpty()) {
            m_problems << QStringLiteral("how-to CSV: row %1 has no topic").arg(r + 2);
            continue;
        }
        QStringList path{slugify(topic)};
        QStringList names{topic};
        if (!sub.isEmpty()) {
            path << path.first() + QLatin1Char('/') + slugify(sub);
            names << sub;
        }
        const QStringList frameworks = frameworksOfSource(row[cSource]);
        for (qsizetype level = 0; level < path.size(); ++level) {
            Acc& a = accs[path[level]];
            a.name = names[level];
            if (level > 0) {
                a.parent = path[0];
                if (!accs[a.parent].children.contains(path[level]))
                    accs[a.parent].children << path[level];
            }
            ++a.rows;
            a.links.insert(row[cLink].trimmed());
            for (const QString& f : frameworks)
                ++a.frameworks[f];
        }
        ++m_howToRows;
        allLinks.insert(row[cLink].trimmed());
    }
    m_howToLinks = static_cast<int>(allLinks.size());
    for (auto& [id, acc] : accs)
        sortChildren(acc.children, accs);
    QStringList topics;
    for (const auto& [id, acc] : accs)
        if (acc.parent.isEmpty()) topics << id;
    sortChildren(topics, accs);
    m_topicIds = topics;
    for (const QString& topic : topics) {
        QStringList ids{topic};
        ids << accs.at(topic).children;
        for (const QString& id : ids) {
            const Acc& a = accs.at(id);
            HowToNode n{id,
                        a.name,
                        a.parent,
                        a.children,
                        a.rows,
                        static_cast<int>(a.links.size()),
                        sorted(a.frameworks)};
            m_howToIndex.insert(id, static_cast<qsizetype>(m_howTo.size()));
            m_howTo.push_back(n);
        }
    }
}

void Taxonomy::loadDescriptions(const QByteArray& json)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (!doc.isObject()) {
        m_problems << QStringLiteral("descriptions: %1 at offset %2")
                          .arg(error.errorString())
                          .arg(error.offset);
        return;
    }
    const QJsonObject nodes = doc.object().value(QLatin1String("nodes")).toObject();
    for (auto it = nodes.begin(); it != nodes.end(); ++it) {
        const auto index = m_nodeIndex.find(it.key());
        if (index == m_nodeIndex.end()) {
            m_problems << QStringLiteral("descriptions: unknown node '%1'").arg(it.key());
            continue;
        }
        const QJsonObject o = it.value().toObject();
        NodeDescription& d = m_nodes[static_cast<size_t>(*index)].description;
        d.summary = o.value(QLatin1String("summary")).toString();
        d.symptoms = o.value(QLatin1String("symptoms")).toString();
        for (const QJsonValue& m : o.value(QLatin1String("messages")).toArray())
            d.messages << m.toString();
        d.cause = o.value(QLatin1String("cause")).toString();
        d.distinguish = o.value(QLatin1String("distinguish")).toString();
        for (const QJsonValue& v : o.value(QLatin1String("see_also")).toArray()) {
            const QString other = v.toString();
            if (!m_nodeIndex.contains(other) || other == it.key())
                m_problems << QStringLiteral("descriptions: node '%1' refers to unknown node '%2'")
                                  .arg(it.key(), other);
            else
                d.seeAlso << other;
        }
    }
    for (const TaxonomyNode& n : m_nodes) {
        const NodeDescription& d = n.description;
        if (d.summary.isEmpty() || d.symptoms.isEmpty() || d.cause.isEmpty() ||
            d.distinguish.isEmpty())
            m_problems << QStringLiteral("descriptions: node '%1' lacks summary, symptoms, cause "
                                         "or distinguish")
                              .arg(n.id);
    }
}

void Taxonomy::loadWalkthroughs(const QByteArray& json)
{
    QString error;
    m_book = WalkthroughBook::parse(json, &error);
    if (!error.isEmpty()) {
        m_problems << error;
        return;
    }
    QSet<QString> facts;
    for (const CheckFact& f : m_book.facts) {
        if (f.id.isEmpty() || f.description.isEmpty())
            m_problems << QStringLiteral("fact '%1' lacks id or description").arg(f.id);
        facts.insert(f.id);
    }
    QSet<QString> checks;
    for (const AutoCheck& c : m_book.autoChecks) {
        for (const QString& need : c.needs)
            if (!facts.contains(need))
                m_problems
                    << QStringLiteral("auto check '%1' needs unknown fact '%2'").arg(c.id, need);
        if (c.id.isEmpty() || c.description.isEmpty() || c.needs.isEmpty())
            m_problems
                << QStringLiteral("auto check '%1' lacks id, description or needs").arg(c.id);
        if (checks.contains(c.id)) m_problems << QStringLiteral("auto check '%1' twice").arg(c.id);
        checks.insert(c.id);
    }
    QSet<QString> covered;
    for (const Walkthrough& w : m_book.walkthroughs) {
        if (!m_patternIndex.contains(w.patternId))
            m_problems << QStringLiteral("walkthrough of unknown pattern '%1'").arg(w.patternId);
        if (covered.contains(w.patternId))
            m_problems << QStringLiteral("pattern '%1' has two walkthroughs").arg(w.patternId);
        covered.insert(w.patternId);
        if (w.title.isEmpty() || w.steps.empty())
            m_problems
                << QStringLiteral("walkthrough '%1' lacks a title or steps").arg(w.patternId);
        for (size_t i = 0; i < w.steps.size(); ++i) {
            const WalkthroughStep& s = w.steps[i];
            if (s.title.isEmpty() || s.why.isEmpty() ||
                (s.how.isEmpty() && s.byFramework.empty()) || s.good.isEmpty() || s.bad.isEmpty())
                m_problems << QStringLiteral("walkthrough '%1' step %2 lacks title, why, how, good "
                                             "or bad")
                                  .arg(w.patternId)
                                  .arg(i + 1);
            if (!s.autoCheck.isEmpty() && !checks.contains(s.autoCheck))
                m_problems << QStringLiteral(
                                  "walkthrough '%1' step %2 uses unknown auto check '%3'")
                                  .arg(w.patternId)
                                  .arg(i + 1)
                                  .arg(s.autoCheck);
            for (const FrameworkHow& f : s.byFramework)
                if (f.framework != QLatin1String("pytorch") &&
                    f.framework != QLatin1String("horovod") &&
                    f.framework != QLatin1String("tensorflow"))
                    m_problems << QStringLiteral("walkthrough '%1' step %2: unknown framework '%3'")
                                      .arg(w.patternId)
                                      .arg(i + 1)
                                      .arg(f.framework);
        }
    }
    for (const FixPattern& p : m_patterns)
        if (p.count >= 2 && !covered.contains(p.id))
            m_problems << QStringLiteral("pattern '%1' (%2 rows) has no walkthrough")
                              .arg(p.id)
                              .arg(p.count);
}

const TaxonomyNode* Taxonomy::node(const QString& id) const
{
    const auto it = m_nodeIndex.find(id);
    return it == m_nodeIndex.end() ? nullptr : &m_nodes[static_cast<size_t>(*it)];
}

QStringList Taxonomy::children(const QString& id) const
{
    const TaxonomyNode* n = node(id);
    return n ? n->childIds : QStringList();
}

bool Taxonomy::isLeafId(const QString& id) const
{
    const TaxonomyNode* n = node(id);
    return n && n->kind == TaxonomyNode::Kind::Leaf;
}

const FixPattern* Taxonomy::fixPattern(const QString& id) const
{
    const auto it = m_patternIndex.find(id);
    return it == m_patternIndex.end() ? nullptr : &m_patterns[static_cast<size_t>(*it)];
}

QStringList Taxonomy::fixPatternIdsOfLabel(const QString& label) const
{
    return m_patternIdsOfLabel.value(label.trimmed());
}

const Walkthrough* Taxonomy::walkthrough(const QString& patternId) const
{
    for (const Walkthrough& w : m_book.walkthroughs)
        if (w.patternId == patternId) return &w;
    return nullptr;
}

std::vector<const Walkthrough*> Taxonomy::walkthroughsForNode(const QString& id) const
{
    std::vector<const Walkthrough*> out;
    if (const TaxonomyNode* n = node(id))
        for (const KeyCount& k : n->fixPatterns)
            if (const Walkthrough* w = walkthrough(k.key)) out.push_back(w);
    return out;
}

const AutoCheck* Taxonomy::autoCheck(const QString& id) const
{
    for (const AutoCheck& c : m_book.autoChecks)
        if (c.id == id) return &c;
    return nullptr;
}

const HowToNode* Taxonomy::howToNode(const QString& id) const
{
    const auto it = m_howToIndex.find(id);
    return it == m_howToIndex.end() ? nullptr : &m_howTo[static_cast<size_t>(*it)];
}

} // namespace rankscope
