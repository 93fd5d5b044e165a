#include "app/cli.h"
#include "model/analysisreport.h"
#include "model/export/exportpath.h"

#include <QCommandLineParser>
#include <QFile>
#include <QTextStream>
#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

namespace rankscope {
namespace {

// "1024", "64K", "512M", "32G" (binary multiples); nullopt unless positive and within qint64.
std::optional<qint64> positiveNumber(QString text, bool allowSuffix)
{
    int shift = 0;
    if (allowSuffix && !text.isEmpty()) {
        const QChar unit = text.back().toUpper();
        shift = unit == QLatin1Char('K')   ? 10
                : unit == QLatin1Char('M') ? 20
                : unit == QLatin1Char('G') ? 30
                                           : 0;
        if (shift) text.chop(1);
    }
    bool ok = false;
    const qint64 n = text.toLongLong(&ok);
    if (!ok || n < 1 || n > (std::numeric_limits<qint64>::max() >> shift)) return std::nullopt;
    return n << shift;
}

QString sizeText(qint64 bytes)
{
    static constexpr std::pair<int, char> units[] = {{30, 'G'}, {20, 'M'}, {10, 'K'}};
    for (const auto& [shift, unit] : units)
        if (bytes % (qint64(1) << shift) == 0)
            return QString::number(bytes >> shift) + QChar::fromLatin1(unit);
    return QString::number(bytes);
}

} // namespace

int runAnalyzeCommand(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Read a folder of per-rank traces and logs and report what it holds."));
    parser.addPositionalArgument(QStringLiteral("folder"), QStringLiteral("The trace folder."));
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print the rankscope.analysis/1 JSON document."));
    const QCommandLineOption format(
        QStringList{QStringLiteral("format")},
        QStringLiteral("Output format: text (default), json or markdown."),
        QStringLiteral("format"), QStringLiteral("text"));
    const QCommandLineOption output(
        QStringList{QStringLiteral("o"), QStringLiteral("output")},
        QStringLiteral("Write the report to FILE (never inside the folder) instead of stdout."),
        QStringLiteral("FILE"));
    // The budgets a source is read up to (over one: what fit is kept, the source is truncated).
    const LogReader::Budget defaults;
    const KinetoReader::Budget traceDefaults;
    const QCommandLineOption maxLogLines(
        QStringLiteral("max-log-lines"),
        QStringLiteral("Index at most N lines of the folder's logs (default %1); a log over it is "
                       "read up to it and marked truncated.")
            .arg(defaults.linesPerLoad),
        QStringLiteral("N"));
    const QCommandLineOption maxLogBytes(
        QStringLiteral("max-log-bytes"),
        QStringLiteral("Read at most SIZE bytes of the folder's logs (default %1 a log, %2 in "
                       "all; suffix K, M or G); a log over it is read up to it and marked "
                       "truncated.")
            .arg(sizeText(defaults.bytesPerFile), sizeText(defaults.bytesPerLoad)),
        QStringLiteral("SIZE"));
    const QCommandLineOption maxTraceEvents(
        QStringLiteral("max-trace-events"),
        QStringLiteral("Read at most N events of the folder's Kineto/Chrome traces (default %1 a "
                       "trace, %2 in all, shared out evenly among the traces that need more).")
            .arg(traceDefaults.maxEvents)
            .arg(traceDefaults.maxEventsPerLoad),
        QStringLiteral("N"));
    const QCommandLineOption maxDecompressed(
        QStringLiteral("max-decompressed"),
        QStringLiteral("Read at most SIZE decompressed bytes of the folder's traces (default %1 a "
                       "trace, %2 in all, shared out like --max-trace-events; suffix K, M or G).")
            .arg(sizeText(traceDefaults.maxInflatedBytes),
                 sizeText(traceDefaults.maxInflatedBytesPerLoad)),
        QStringLiteral("SIZE"));
    const QCommandLineOption maxInflation(
        QStringLiteral("max-inflation"),
        QStringLiteral("Stop reading a gzip trace that inflates to more than N times its "
                       "compressed size, past its first %1 MB (default %2; a gzip bomb).")
            .arg(traceDefaults.inflationRatioFloor >> 20)
            .arg(traceDefaults.maxInflationRatio),
        QStringLiteral("N"));
    const QCommandLineOption maxRankTags(
        QStringLiteral("max-rank-tags"),
        QStringLiteral("Split the folder's launcher logs into at most N rank streams (default %1 "
                       "a log, %2 in all); lines of further ranks stay in the launcher's own "
                       "stream and the log is marked truncated.")
            .arg(defaults.rankTagsPerFile)
            .arg(defaults.rankTagsPerLoad),
        QStringLiteral("N"));
    const FlightRecorderReader::Budget dumpDefaults;
    const QCommandLineOption maxDumpEntries(
        QStringLiteral("max-dump-entries"),
        QStringLiteral("Read at most N entries of the folder's Flight Recorder dumps (default %1 "
                       "a dump, %2 in all, shared out like --max-trace-events).")
            .arg(dumpDefaults.maxEntries)
            .arg(dumpDefaults.maxEntriesPerLoad),
        QStringLiteral("N"));
    const QCommandLineOption maxDumpBytes(
        QStringLiteral("max-dump-bytes"),
        QStringLiteral("Decode a pickled Flight Recorder dump into at most SIZE bytes of values "
                       "(default %1; suffix K, M or G).")
            .arg(sizeText(dumpDefaults.maxDecodedBytes)),
        QStringLiteral("SIZE"));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    parser.addOption(json);
    parser.addOption(format);
    parser.addOption(output);
    parser.addOption(maxLogLines);
    parser.addOption(maxLogBytes);
    parser.addOption(maxTraceEvents);
    parser.addOption(maxDecompressed);
    parser.addOption(maxInflation);
    parser.addOption(maxRankTags);
    parser.addOption(maxDumpEntries);
    parser.addOption(maxDumpBytes);
    parser.addOption(help);
    if (!parser.parse(arguments)) return Cli::usageError(err, parser.errorText());
    if (parser.isSet(help)) {
        out << Cli::commandHelp(parser, "analyze");
        return Cli::Success;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return Cli::usageError(err, QStringLiteral("analyze takes exactly one folder"));
    const QString fmt = parser.isSet(json) ? QStringLiteral("json") : parser.value(format);
    if (fmt != QLatin1String("json") && fmt != QLatin1String("text") &&
        fmt != QLatin1String("markdown"))
        return Cli::usageError(
            err, QStringLiteral("unknown format '%1' (text, json or markdown)").arg(fmt));

    LoadOptions options;
    options.buildLaneLods = false; // no timeline is drawn
    // Each budget flag: a positive count, or a size with an optional K/M/G suffix.
    const std::pair<const QCommandLineOption*, std::function<void(qint64)>> budgets[] = {
        {&maxLogLines,
         [&](qint64 n) { options.logBudget.linesPerFile = options.logBudget.linesPerLoad = n; }},
        {&maxLogBytes,
         [&](qint64 n) { options.logBudget.bytesPerFile = options.logBudget.bytesPerLoad = n; }},
        {&maxTraceEvents,
         [&](qint64 n) {
             options.traceBudget.maxEvents = options.traceBudget.maxEventsPerLoad = n;
         }},
        {&maxDecompressed,
         [&](qint64 n) {
             options.traceBudget.maxInflatedBytes = options.traceBudget.maxInflatedBytesPerLoad = n;
         }},
        {&maxInflation, [&](qint64 n) { options.traceBudget.maxInflationRatio = n; }},
        {&maxRankTags,
         [&](qint64 n) {
             options.logBudget.rankTagsPerFile = options.logBudget.rankTagsPerLoad =
                 int(std::min<qint64>(n, std::numeric_limits<int>::max()));
         }},
        {&maxDumpEntries,
         [&](qint64 n) {
             options.dumpBudget.maxEntries = options.dumpBudget.maxEntriesPerLoad = n;
         }},
        {&maxDumpBytes, [&](qint64 n) { options.dumpBudget.maxDecodedBytes = n; }},
    };
    for (const auto& [option, apply] : budgets) {
        if (!parser.isSet(*option)) continue;
        const bool size = option->valueName() == QLatin1String("SIZE");
        const std::optional<qint64> n = positiveNumber(parser.value(*option), size);
        if (!n)
            return Cli::usageError(err, QStringLiteral("--%1 needs a positive %2, not '%3'")
                                            .arg(option->names().constFirst(),
                                                 size ? QStringLiteral("size (N, NK, NM or NG)")
                                                      : QStringLiteral("number"),
                                                 parser.value(*option)));
        apply(*n);
    }
    const QString outputPath = parser.value(output);
    if (const QString refused = ExportPath::refusal(outputPath, positional.first());
        !outputPath.isEmpty() && !refused.isEmpty())
        return Cli::usageError(err, refused);
    QFile outputFile(outputPath);
    if (!outputPath.isEmpty() && !outputFile.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        err << "rankscope: cannot write " << outputPath << ": " << outputFile.errorString() << "\n";
        return Cli::Unreadable;
    }
    const SessionPtr session = loadSession(positional.first(), {}, {}, options);
    if (!session->folder.isValid()) {
        if (!outputPath.isEmpty()) outputFile.remove();
        err << "rankscope: " << session->folder.error() << "\n";
        return Cli::Unreadable;
    }
    QTextStream toFile(&outputFile);
    QTextStream& report = outputPath.isEmpty() ? out : toFile;
    const AnalysisResult& result = session->analysis;
    if (fmt == QLatin1String("json"))
        report << QString::fromStdString(AnalysisReport::toJson(*session, result).dump(2)) << "\n";
    else if (fmt == QLatin1String("markdown"))
        report << AnalysisReport::toMarkdown(*session, result);
    else
        report << AnalysisReport::toText(*session, result);
    return Cli::Success;
}

} // namespace rankscope
