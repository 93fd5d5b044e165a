#include "app/cli.h"
#include "model/kb/signatureset.h"
#include "model/kb/taxonomy.h"

#include <QCommandLineParser>
#include <QTextStream>
#include <nlohmann/json.hpp>

namespace rankscope {

namespace {

using nlohmann::json;

std::string s(const QString& q)
{
    return q.toStdString();
}

json counts(const std::vector<KeyCount>& list, const char* keyName)
{
    json out = json::array();
    for (const KeyCount& k : list)
        out.push_back({{keyName, s(k.key)}, {"count", k.count}});
    return out;
}

json strings(const QStringList& list)
{
    json out = json::array();
    for (const QString& q : list)
        out.push_back(s(q));
    return out;
}

const char* kindName(TaxonomyNode::Kind kind)
{
    switch (kind) {
    case TaxonomyNode::Kind::Stage:
        return "stage";
    case TaxonomyNode::Kind::Inner:
        return "category";
    case TaxonomyNode::Kind::Leaf:
        return "leaf";
    }
    return "leaf";
}

json nodeJson(const Taxonomy& t, const TaxonomyNode& n)
{
    json children = json::array();
    for (const QString& c : n.childIds)
        children.push_back(nodeJson(t, *t.node(c)));
    const NodeDescription& d = n.description;
    return {{"id", s(n.id)},
            {"name", s(n.name)},
            {"kind", kindName(n.kind)},
            {"count", n.issueCount},
            {"links", n.linkCount},
            {"share_of_study", n.studyShare},
            {"share_distributed_specific", n.distributedShare},
            {"frameworks", counts(n.frameworks, "framework")},
            {"message_frameworks", strings(SignatureSet::builtin().messageFrameworks(n.id))},
            {"fix_patterns", counts(n.fixPatterns, "id")},
            {"example_links", strings(n.exampleLinks)},
            {"description",
             {{"summary", s(d.summary)},
              {"symptoms", s(d.symptoms)},
              {"messages", strings(d.messages)},
              {"cause", s(d.cause)},
              {"distinguish", s(d.distinguish)},
              {"see_also", strings(d.seeAlso)}}},
            {"children", children}};
}

json howToJson(const Taxonomy& t, const HowToNode& n)
{
    json children = json::array();
    for (const QString& c : n.childIds)
        children.push_back(howToJson(t, *t.howToNode(c)));
    return {{"id", s(n.id)},
            {"name", s(n.name)},
            {"count", n.count},
            {"links", n.linkCount},
            {"frameworks", counts(n.frameworks, "framework")},
            {"children", children}};
}

json walkthroughJson(const Taxonomy& t, const Walkthrough& w)
{
    json steps = json::array();
    for (const WalkthroughStep& st : w.steps) {
        json by = json::object();
        for (const FrameworkHow& f : st.byFramework)
            by[s(f.framework)] = s(f.how);
        json step = {{"title", s(st.title)}, {"why", s(st.why)},   {"how", s(st.how)},
                     {"by_framework", by},   {"good", s(st.good)}, {"bad", s(st.bad)}};
        if (const AutoCheck* c = t.autoCheck(st.autoCheck))
            step["auto_check"] = {
                {"id", s(c->id)}, {"description", s(c->description)}, {"needs", strings(c->needs)}};
        else
            step["auto_check"] = nullptr;
        steps.push_back(step);
    }
    const FixPattern* p = t.fixPattern(w.patternId);
    return {{"pattern", s(w.patternId)}, {"name", p ? s(p->name) : std::string()},
            {"count", p ? p->count : 0}, {"title", s(w.title)},
            {"summary", s(w.summary)},   {"steps", steps}};
}

json taxonomyJson(const Taxonomy& t)
{
    json nodes = json::array();
    for (const QString& stage : t.stages())
        nodes.push_back(nodeJson(t, *t.node(stage)));
    json patterns = json::array();
    for (const FixPattern& p : t.fixPatterns())
        patterns.push_back({{"id", s(p.id)},
                            {"name", s(p.name)},
                            {"count", p.count},
                            {"links", p.linkCount},
                            {"labels", strings(p.labels)},
                            {"leaves", counts(p.leaves, "id")},
                            {"walkthrough", t.walkthrough(p.id) != nullptr}});
    json howto = json::array();
    for (const QString& topic : t.howToTopics())
        howto.push_back(howToJson(t, *t.howToNode(topic)));
    json checks = json::array();
    for (const AutoCheck& c : t.autoChecks())
        checks.push_back(
            {{"id", s(c.id)}, {"description", s(c.description)}, {"needs", strings(c.needs)}});
    json facts = json::array();
    for (const CheckFact& f : t.checkFacts())
        facts.push_back({{"id", s(f.id)}, {"description", s(f.description)}});
    return {{"schema", "rankscope.taxonomy/1"},
            {"source", "Gu et al., TOSEM 32(6), 2023"},
            {"totals",
             {{"rows", t.rowCount()},
              {"links", t.linkCount()},
              {"distributed_specific_rows", t.distributedRowCount()},
              {"stages", t.stages().size()},
              {"leaves", t.leaves().size()},
              {"fix_patterns", t.fixPatterns().size()},
              {"howto_rows", t.howToRowCount()},
              {"howto_links", t.howToLinkCount()}}},
            {"nodes", nodes},
            {"fix_patterns", patterns},
            {"howto", howto},
            {"auto_checks", checks},
            {"check_facts", facts}};
}

void printOutline(const Taxonomy& t, QTextStream& out)
{
    out << "Fault taxonomy (" << t.rowCount() << " fault rows, " << t.linkCount()
        << " issues; Gu et al., TOSEM 2023)\n";
    for (const TaxonomyNode& n : t.nodes()) {
        const int depth = static_cast<int>(n.id.count(QLatin1Char('/')));
        out << QString(2 + depth * 2, QLatin1Char(' ')) << n.name << "  [" << n.id << "]  "
            << n.issueCount << " (" << shareText(n.studyShare) << ", "
            << shareText(n.distributedShare) << " distributed-specific)\n";
    }
    out << "\nFix patterns (rows; * = has a walkthrough: rankscope taxonomy --walkthrough ID)\n";
    for (const FixPattern& p : t.fixPatterns())
        out << "  " << QString::number(p.count).rightJustified(3) << "  " << p.id
            << (t.walkthrough(p.id) ? " *" : "") << "\n";
    // By name only: a bracketed id would read as one --node takes. The ids are in the JSON.
    out << "\nHow-to topics (" << t.howToRowCount()
        << " questions; not fault nodes: rankscope issues search how-to WORDS)\n";
    for (const HowToNode& n : t.howToNodes())
        out << QString(n.parentId.isEmpty() ? 2 : 4, QLatin1Char(' ')) << n.name << "  " << n.count
            << "\n";
}

void printWalkthrough(const Taxonomy& t, const Walkthrough& w, QTextStream& out)
{
    const FixPattern* p = t.fixPattern(w.patternId);
    out << w.title << "  [" << w.patternId << "]";
    if (p) out << "  (" << p->count << " fault rows in the study)";
    out << "\n" << w.summary << "\n";
    int i = 0;
    for (const WalkthroughStep& st : w.steps) {
        out << "\n" << ++i << ". " << st.title << "\n";
        out << "   Why: " << st.why << "\n";
        if (!st.how.isEmpty()) out << "   How: " << st.how << "\n";
        for (const FrameworkHow& f : st.byFramework)
            out << "   " << f.framework << ": " << f.how << "\n";
        out << "   Good: " << st.good << "\n";
        out << "   Bad: " << st.bad << "\n";
        if (!st.autoCheck.isEmpty()) out << "   Auto-check: " << st.autoCheck << "\n";
    }
}

void printNode(const Taxonomy& t, const TaxonomyNode& n, QTextStream& out)
{
    const NodeDescription& d = n.description;
    out << n.name << "  [" << n.id << "]\n" << d.summary << "\n\n";
    out << n.issueCount << (n.issueCount == 1 ? " fault row (" : " fault rows (")
        << shareText(n.studyShare) << " of the study), " << n.linkCount
        << (n.linkCount == 1 ? " issue, " : " issues, ") << shareText(n.distributedShare)
        << " distributed-specific\nReported on: ";
    QStringList frameworks;
    for (const KeyCount& f : n.frameworks)
        frameworks << QStringLiteral("%1 %2").arg(f.key).arg(f.count);
    out << frameworks.join(QStringLiteral("; "));
    out << "\n\nWhat you see: " << d.symptoms << "\n";
    if (!d.messages.isEmpty()) {
        out << "Typical messages:\n";
        for (const QString& m : d.messages)
            out << "  " << m << "\n";
    }
    const QStringList recognised = SignatureSet::builtin().messageFrameworks(n.id);
    if (!recognised.isEmpty())
        out << "Messages recognised from: " << recognised.join(QStringLiteral(", ")) << "\n";
    out << "Why: " << d.cause << "\n";
    out << "Not to confuse with: " << d.distinguish << "\n";
    if (!d.seeAlso.isEmpty()) out << "See also: " << d.seeAlso.join(QStringLiteral(", ")) << "\n";
    if (!n.childIds.isEmpty()) out << "Children: " << n.childIds.join(QStringLiteral(", ")) << "\n";
    out << "\nFixes that worked (rows; * = rankscope taxonomy --walkthrough ID):\n";
    for (const KeyCount& k : n.fixPatterns)
        out << "  " << QString::number(k.count).rightJustified(3) << "  " << k.key
            << (t.walkthrough(k.key) ? " *" : "") << "\n";
    out << "Examples:\n";
    for (const QString& link : n.exampleLinks)
        out << "  " << link << "\n";
}

} // namespace

int runTaxonomyCommand(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Print the study's fault taxonomy (stages, categories, leaf symptoms with counts), its fix "
        "patterns and how-to topics, or the walkthrough of one fix pattern."));
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print JSON (rankscope.taxonomy/1; "
                                                 "rankscope.walkthrough/1 with --walkthrough; "
                                                 "rankscope.taxonomy-node/1 with --node)."));
    const QCommandLineOption walkthrough(
        QStringList{QStringLiteral("walkthrough")},
        QStringLiteral("Print the walkthrough of fix pattern ID (ids: see 'rankscope taxonomy')."),
        QStringLiteral("ID"));
    const QCommandLineOption nodeOption(
        QStringList{QStringLiteral("node")},
        QStringLiteral("Print one node (stage, category or leaf symptom) with its description."),
        QStringLiteral("ID"));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    parser.addOption(json);
    parser.addOption(walkthrough);
    parser.addOption(nodeOption);
    parser.addOption(help);
    if (!parser.parse(arguments)) return Cli::usageError(err, parser.errorText());
    if (parser.isSet(help)) {
        out << Cli::commandHelp(parser, "taxonomy");
        return Cli::Success;
    }
    if (!parser.positionalArguments().isEmpty())
        return Cli::usageError(err, QStringLiteral("taxonomy takes no positional arguments"));

    if (parser.isSet(walkthrough) && parser.isSet(nodeOption))
        return Cli::usageError(err, QStringLiteral("--walkthrough and --node exclude each other"));

    const Taxonomy& t = Taxonomy::instance();
    if (parser.isSet(nodeOption)) {
        const QString id = parser.value(nodeOption);
        const TaxonomyNode* n = t.node(id);
        if (const HowToNode* h = n ? nullptr : t.howToNode(id))
            return Cli::usageError(err, QStringLiteral("'%1' is a how-to topic, not a fault node: "
                                                       "rankscope issues search how-to %2")
                                            .arg(id, h->name));
        if (!n) return Cli::usageError(err, QStringLiteral("unknown taxonomy node '%1'").arg(id));
        if (parser.isSet(json)) {
            nlohmann::json doc = nodeJson(t, *n);
            doc["schema"] = "rankscope.taxonomy-node/1";
            out << QString::fromStdString(doc.dump(2)) << "\n";
        } else {
            printNode(t, *n, out);
        }
        return Cli::Success;
    }
    if (parser.isSet(walkthrough)) {
        const QString id = parser.value(walkthrough);
        const Walkthrough* w = t.walkthrough(id);
        if (!w) {
            const FixPattern* p = t.fixPattern(id);
            return Cli::usageError(
                err, p ? QStringLiteral("fix pattern '%1' occurs once in the study and has no "
                                        "walkthrough")
                             .arg(id)
                       : QStringLiteral("unknown fix pattern '%1'").arg(id));
        }
        if (parser.isSet(json)) {
            nlohmann::json doc = walkthroughJson(t, *w);
            doc["schema"] = "rankscope.walkthrough/1";
            out << QString::fromStdString(doc.dump(2)) << "\n";
        } else {
            printWalkthrough(t, *w, out);
        }
        return Cli::Success;
    }
    if (parser.isSet(json)) {
        nlohmann::json doc = taxonomyJson(t);
        doc["problems"] = strings(t.problems());
        out << QString::fromStdString(doc.dump(2)) << "\n";
    } else {
        printOutline(t, out);
    }
    return Cli::Success;
}

} // namespace rankscope
