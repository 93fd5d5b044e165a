#include "app/cli.h"
#include "model/kb/symptomclassifier.h"
#include "model/kb/taxonomy.h"

#include <QCommandLineParser>
#include <QFile>
#include <QTextStream>
#include <nlohmann/json.hpp>

namespace rankscope {

namespace {

using Json = nlohmann::ordered_json;

Json candidateJson(const Candidate& c)
{
    Json evidence = Json::array();
    for (const CandidateEvidence& e : c.evidence) {
        Json o = {{"line", e.line},
                  {"text", e.text.toStdString()},
                  {"signature", e.signature.toStdString()},
                  {"role", signatureRoleName(e.role).toStdString()}};
        if (!e.fields.isEmpty()) {
            Json fields = Json::object();
            for (auto it = e.fields.begin(); it != e.fields.end(); ++it)
                fields[it.key().toStdString()] = it.value().toStdString();
            o["fields"] = fields;
        }
        evidence.push_back(o);
    }
    Json terms = Json::array();
    for (const TermWeight& t : c.terms)
        terms.push_back({{"term", t.term.toStdString()}, {"weight", t.weight}});
    Json neighbours = Json::array();
    for (const NeighbourReport& n : c.neighbours)
        neighbours.push_back({{"link", n.link.toStdString()}, {"similarity", n.similarity}});
    // Unrounded (the shortest decimal that reads back as the same double): scripts/ranker.py
    // recomputes every leaf's logit from base_rate, score and stage_hint, so rounding would tie
    // leaves the program tells apart; and the tail of a 38-leaf ranking has probabilities far
    // below 0.001 whose order and sum (1 over all leaves) a reader should be able to check.
    return {{"symptom", c.symptom.toStdString()},
            {"probability", c.probability},
            {"score", c.score},
            {"base_rate", c.baseRate},
            {"stage_hint", c.stageHint},
            {"term_score", c.termScore},
            {"terms", terms},
            {"neighbour_share", c.neighbourShare},
            {"neighbour_tokens", c.neighbourTokens},
            {"neighbours", neighbours},
            {"evidence", evidence}};
}

Json classificationJson(const SymptomClassifier& classifier, const QList<Candidate>& candidates,
                        const QStringList& termTokens)
{
    Json list = Json::array();
    for (const Candidate& c : candidates)
        list.push_back(candidateJson(c));
    Json tokens = Json::array();
    for (const QString& token : termTokens)
        tokens.push_back(token.toStdString());
    return {{"schema", "rankscope.classification/1"},
            {"unsure", classifier.isUnsure(candidates)},
            {"unsure_below", classifier.ranking().unsureBelow},
            {"tokens", tokens},
            {"candidates", list}};
}

// --jsonl: many reports in one process (scripts/ranker.py ranks thousands; loading the rules and
// the term model once per report costs more than ranking it). Every input line is one report as
// a JSON string; every output line is its classification, compact, in the same order. A line
// that is not a JSON string, a blank one too, gets an error object in its place, so that output
// line N always answers input line N.
int classifyJsonLines(QFile& file, const SymptomClassifier& classifier,
                      const SymptomClassifier::Options& options, QTextStream& out)
{
    const auto printError = [&out](const std::string& message) {
        out << QString::fromStdString(Json{{"error", message}}.dump()) << "\n";
    };
    int lineNumber = 0;
    for (;;) {
        const QByteArray line = file.readLine();
        if (line.isEmpty()) break; // the end of the input (a blank line still holds its '\n')
        ++lineNumber;
        if (line.trimmed().isEmpty()) {
            printError("line " + std::to_string(lineNumber) + " is blank, not a JSON string");
            continue;
        }
        const Json in = Json::parse(line.constData(), line.constData() + line.size(), nullptr,
                                    /*allow_exceptions=*/false);
        if (!in.is_string()) {
            printError("line " + std::to_string(lineNumber) + " is not a JSON string");
            continue;
        }
        QStringList termTokens;
        const QList<Candidate> candidates = classifier.classify(
            QByteArray::fromStdString(in.get<std::string>()), options, &termTokens);
        out << QString::fromStdString(classificationJson(classifier, candidates, termTokens).dump())
            << "\n";
    }
    return Cli::Success;
}

} // namespace

int runClassifyCommand(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Rank the study's leaf symptoms for an issue report or a log (prose plus pasted logs)."));
    parser.addPositionalArgument(QStringLiteral("file"),
                                 QStringLiteral("The report or log; '-' or nothing reads stdin."));
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print the rankscope.classification/1 JSON."));
    const QCommandLineOption top(
        QStringLiteral("top"), QStringLiteral("Show N candidates (default 5; never fewer than 3)."),
        QStringLiteral("N"), QStringLiteral("5"));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    const QCommandLineOption jsonLines(
        QStringLiteral("jsonl"),
        QStringLiteral("Read one report per line, each a JSON string, and print one compact "
                       "classification JSON per line, in order; a line that is not a JSON "
                       "string, a blank one too, gets {\"error\": ...} in its place."));
    parser.addOption(json);
    parser.addOption(jsonLines);
    parser.addOption(top);
    parser.addOption(help);
    if (!parser.parse(arguments)) return Cli::usageError(err, parser.errorText());
    if (parser.isSet(help)) {
        out << Cli::commandHelp(parser, "classify");
        return Cli::Success;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1)
        return Cli::usageError(err, QStringLiteral("classify takes at most one file"));
    if (parser.isSet(json) && parser.isSet(jsonLines))
        return Cli::usageError(err, QStringLiteral("--json and --jsonl exclude each other"));
    bool ok = false;
    const int topN = parser.value(top).toInt(&ok);
    if (!ok || topN < 1)
        return Cli::usageError(
            err, QStringLiteral("--top needs a positive number, not '%1'").arg(parser.value(top)));

    const QString path = positional.value(0, QStringLiteral("-"));
    QFile file;
    const bool opened = path == QLatin1String("-")
                            ? file.open(stdin, QIODevice::ReadOnly)
                            : (file.setFileName(path), file.open(QIODevice::ReadOnly));
    if (!opened) {
        err << "rankscope: cannot read '" << path << "': " << file.errorString() << "\n";
        return Cli::Unreadable;
    }
    const SymptomClassifier& classifier = SymptomClassifier::instance();
    SymptomClassifier::Options options;
    options.maxCandidates = topN;
    if (parser.isSet(jsonLines)) return classifyJsonLines(file, classifier, options, out);
    const QByteArray text = Cli::readInput(file, err);

    // The words the term model read, so that scripts/ranker.py learns term weights from the
    // program's own reading of a report (--json).
    QStringList termTokens;
    const QList<Candidate> candidates = classifier.classify(text, options, &termTokens);
    const bool unsure = classifier.isUnsure(candidates);

    if (parser.isSet(json)) {
        out << QString::fromStdString(
                   classificationJson(classifier, candidates, termTokens).dump(2))
            << "\n";
        return Cli::Success;
    }
    if (candidates.isEmpty()) {
        out << "The input is empty: nothing to classify.\n";
        return Cli::Success;
    }
    if (unsure)
        out << QStringLiteral("Unsure: the best candidate is below %1; the list is a ranked "
                              "guess from weak evidence and the study's base rates.\n")
                   .arg(probabilityText(classifier.ranking().unsureBelow));
    out << QStringLiteral("%1  %2  %3\n")
               .arg(QStringLiteral("prob"), -6)
               .arg(QStringLiteral("evid"), -6)
               .arg(QStringLiteral("symptom"));
    for (const Candidate& c : candidates) {
        out << QStringLiteral("%1  %2  %3\n")
                   .arg(c.probability, -6, 'f', 3)
                   .arg(c.score, -6, 'f', 3)
                   .arg(c.symptom);
        out << QStringLiteral("        base rate %1%2\n")
                   .arg(shareText(c.baseRate))
                   .arg(c.stageHint > 0.0
                            ? QStringLiteral(", context hint %1").arg(c.stageHint, 0, 'f', 2)
                            : QString());
        for (const CandidateEvidence& e : c.evidence)
            out << QStringLiteral("        line %1 [%2 %3] %4\n")
                       .arg(e.line)
                       .arg(signatureRoleName(e.role), e.signature, e.text.left(120));
        if (!c.terms.isEmpty())
            out << QStringLiteral("        terms %1\n").arg(termListText(c.terms));
        if (!c.neighbours.isEmpty())
            out << QStringLiteral("        similar reports %1\n")
                       .arg(neighbourListText(c.neighbourShare, c.neighbours));
    }
    return Cli::Success;
}

} // namespace rankscope
