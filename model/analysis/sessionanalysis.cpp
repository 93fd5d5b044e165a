#include "model/analysis/sessionanalysis.h"

#include "model/analysis/configcheck.h"
#include "model/analysis/jobsplit.h"
#include "model/kb/signatureset.h"
#include "model/kb/symptomclassifier.h"
#include "model/trace/traceread.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace rankscope {

namespace {

// Gives `out` the symptom of a failure's text, the signature that says so and that signature's
// witness: the first classifier candidate that has a root cause (an exception no signature knows
// is the classifier's catch-all program failure, as `rankscope classify` names it). A failure
// with no exception line (an exit code, a signal) is that catch-all too.
void classifyFailure(const QByteArray& text, Evidence& out)
{
    SymptomClassifier::Options options;
    options.useCues = false;
    options.ranked = false; // what the lines show, not a guess from base rates
    for (const Candidate& c : SymptomClassifier::instance().classify(text, options))
        if (c.hasRoot)
            for (const CandidateEvidence& e : c.evidence)
                if (e.role == SignatureRole::Root) {
                    out.symptom = c.symptom.toStdString();
                    out.signature = e.signature.toStdString();
                    for (const Signature& s : SignatureSet::builtin().signatures())
                        if (s.id == e.signature) out.witness = s.witness;
                    return;
                }
    out.symptom = SymptomClassifier::kUncaughtExceptionLeaf;
}

// A Python traceback quotes the program's source under each frame ('  File "x", line N, in f'
// then the code): a signature matching that code ('raise ValueError("loss is nan")') matches
// what the program says it may print, not what it printed.
bool quotesSource(const RankLog& log, int i)
{
    if (i <= 0) return false;
    const QByteArrayView line = log.lineBytes(i);
    return (line.startsWith(' ') || line.startsWith('\t')) &&
           log.lineBytes(i - 1).trimmed().startsWith("File \"");
}

// The time of each of `lines` (ascending stream indexes): that of the last line at or before it
// with a dated timestamp, since a line without one (a traceback, a C++ message) happened at or
// after it; -1 when there is none. One backward walk per gap between the lines asked for, so the
// whole log is parsed at most once and nothing is kept per line.
std::map<int, std::int64_t> timesOf(const RankLog& log, const std::set<int>& lines)
{
    std::map<int, std::int64_t> out;
    int previous = -1;
    for (const int line : lines) {
        std::int64_t t = previous >= 0 ? out[previous] : -1;
        for (int i = line; i > previous; --i)
            if (log.timestampHasDate(i)) {
                t = log.timestampNs(i);
                break;
            }
        out[line] = t;
        previous = line;
    }
    return out;
}

// The signatures' hits in a stream's lines, as one scanLines() of all of them finds them (at most
// kMaxHitsPerRule per rule, the first ones), scanned kLinesPerPoll lines at a time so that
// `control` is polled; nullopt when it says stop.
std::optional<QList<SignatureHit>> scanStream(const RankLog& log, const SignatureSet& signatures,
                                              const ParallelControl& control)
{
    constexpr int kMaxHitsPerRule = 64;
    constexpr int chunk = AutoCheckEvaluator::kLinesPerPoll;
    QList<SignatureHit> hits;
    std::map<int, int> perRule;
    for (int begin = 0; begin < log.lineCount(); begin += chunk) {
        if (stopRequested(control)) return std::nullopt;
        // A stream whose lines follow one another in its file is read in one pass; a split stream
        // line by line where each lies.
        const int count = std::min(chunk, log.lineCount() - begin);
        const LineSource lines{count,
                               [&log, begin](qsizetype i) { return log.lineBytes(begin + int(i)); },
                               log.linesBytes(begin, count)};
        for (SignatureHit& hit : signatures.scanLines(lines, kMaxHitsPerRule)) {
            if (perRule[hit.rule]++ >= kMaxHitsPerRule) continue;
            hit.line += begin;
            hits.append(std::move(hit));
        }
    }
    return hits;
}

// `diedAtNs`: when torchelastic's error file says the rank died (whole seconds), or -1.
void classifyStream(const RankLog& log, const QList<SignatureHit>& hits,
                    const SignatureSet& signatures, std::int64_t diedAtNs,
                    std::vector<Evidence>& out)
{
    std::set<int> fatalLines;
    if (!log.exceptions().empty()) fatalLines.insert(log.exceptions().back().lastLine);

    std::set<int> timed;
    for (const SignatureHit& hit : hits)
        timed.insert(int(hit.line));
    if (!log.exceptions().empty() && log.exceptions().back().lastLine >= 0 &&
        log.exceptions().back().lastLine < log.lineCount())
        timed.insert(log.exceptions().back().lastLine);
    const std::map<int, std::int64_t> stamped = timesOf(log, timed);
    // The final traceback is printed without timestamps, so the last stamped line is only a
    // lower bound for it, possibly long before; the error file's time is a later lower bound.
    const auto timeOf = [&](int i) {
        std::int64_t t = stamped.at(i);
        if (diedAtNs >= 0 && !log.exceptions().empty()) {
            const LogException& died = log.exceptions().back();
            if (i >= std::max(0, died.firstLine) && i <= died.lastLine) t = std::max(t, diedAtNs);
        }
        return t;
    };

    const int rank = log.rank.value_or(-1);
    for (const SignatureHit& hit : hits) {
        const Signature& rule = signatures.signatures().at(hit.rule);
        const int i = int(hit.line);
        if (quotesSource(log, i)) continue;
        Evidence e;
        e.rank = rank;
        e.path = log.sourcePath.toStdString();
        e.line = log.lineNumber(i);
        e.text = hit.text.toStdString();
        e.symptom = rule.symptomOf(hit.fields).toStdString();
        e.signature = rule.id.toStdString();
        e.witness = rule.witness;
        e.cascade = rule.role == SignatureRole::Cascade;
        e.fatal = fatalLines.count(i) > 0;
        e.timeNs = timeOf(i);
        out.push_back(std::move(e));
    }

    // The exception the rank died with is fatal evidence even when no signature knows it:
    // without it, a crash in user code leaves only its peers' connection errors to blame.
    if (log.exceptions().empty()) return;
    const LogException& died = log.exceptions().back();
    if (died.lastLine < 0 || died.lastLine >= log.lineCount()) return;
    // A traceback the program logged and then went on training from was handled, not fatal.
    for (const LogStep& s : log.steps())
        if (s.line > died.lastLine) return;
    for (const Evidence& e : out)
        if (e.fatal && e.rank == rank && e.path == log.sourcePath.toStdString()) return;
    QByteArray text;
    for (int i = std::max(0, died.firstLine); i <= died.lastLine; ++i) {
        text.append(log.lineBytes(i));
        text.append('\n');
    }
    Evidence e;
    e.rank = rank;
    e.path = log.sourcePath.toStdString();
    e.line = log.lineNumber(died.lastLine);
    e.text = died.text();
    classifyFailure(text, e);
    e.fatal = true;
    e.timeNs = timeOf(died.lastLine);
    out.push_back(std::move(e));
}

// What torchelastic recorded of a rank's death (its error file, or its entry in torchrun's
// ChildFailedError box) is the only record of it when the rank's own log is missing or stops
// before the traceback. A rank whose log already shows how it died is not cited twice.
void addElasticErrors(const TraceRead& read, std::vector<Evidence>& out)
{
    std::set<int> explained, cascading;
    for (const Evidence& e : out) {
        if (e.rank < 0) continue;
        if (e.fatal) explained.insert(e.rank);
        if (e.cascade) cascading.insert(e.rank);
    }
    for (const RankLog& log : read.logs)
        if (log.rank && !log.exceptions().empty()) explained.insert(*log.rank);
    // Error files first: they hold the exception itself; the box often only an exit code.
    std::vector<const ElasticError*> ordered;
    for (const ElasticError& e : read.errors)
        if (e.origin == ElasticError::Origin::ErrorFile) ordered.push_back(&e);
    for (const ElasticError& e : read.errors)
        if (e.origin != ElasticError::Origin::ErrorFile) ordered.push_back(&e);
    const QList<SourceFile> sources = read.folder.sources();
    std::map<int, std::int64_t> lastStamped;
    for (const RankLog* log : rankLogStreams(read.logs)) {
        if (!log->rank || log->lineCount() == 0) continue;
        const int last = log->lineCount() - 1;
        const std::int64_t t = timesOf(*log, {last}).at(last);
        if (t >= 0) lastStamped[*log->rank] = std::max(lastStamped[*log->rank], t);
    }
    for (const ElasticError* e : ordered) {
        if (!e->rank || explained.count(*e->rank)) continue;
        if (e->sourceIndex < 0 || e->sourceIndex >= sources.size()) continue;
        std::string text =
            e->exceptionType.empty() ? e->message : e->exceptionType + ": " + e->message;
        if (text.empty() && !e->signal.empty()) text = "killed by " + e->signal;
        if (text.empty() && e->exitCode) text = "exit code " + std::to_string(*e->exitCode);
        if (text.empty()) continue;
        Evidence ev;
        ev.rank = *e->rank;
        ev.path = sources.at(e->sourceIndex).relativePath.toStdString();
        ev.line = e->origin == ElasticError::Origin::ErrorFile ? 1 : e->line;
        ev.text = text.substr(0, text.find('\n'));
        classifyFailure(QByteArray::fromStdString(e->traceback + "\n" + text), ev);
        ev.fatal = true;
        // A rank that was already being torn down died of the teardown.
        ev.cascade = cascading.count(*e->rank) > 0;
        // The box's time is when the launcher noticed the death (up to its monitor interval
        // later), so a rank's own log dates it better: it died after its last stamped line, the
        // lower bound an unstamped traceback line gets too.
        const std::int64_t seconds = e->timestampS;
        ev.timeNs = seconds >= 0 ? seconds * 1'000'000'000 : -1;
        if (e->origin != ElasticError::Origin::ErrorFile)
            if (const auto last = lastStamped.find(*e->rank); last != lastStamped.end())
                ev.timeNs = last->second;
        out.push_back(std::move(ev));
        explained.insert(*e->rank);
    }
}

// The ranks the analysed job shows (its files', every log's, its lanes' and collectives'):
// the job has at least the largest of them + 1.
int jobWorldSizeAtLeast(const TraceRead& read, const RankFacts& facts, const EventStore& events)
{
    int largest = facts.ranks.empty() ? -1 : facts.ranks.back();
    for (const RankLog& log : read.logs)
        largest = std::max(largest, log.rank.value_or(-1));
    for (const Lane& lane : events.lanes)
        largest = std::max(largest, lane.rank);
    for (const CollectiveRecord& c : events.collectives)
        largest = std::max(largest, c.rank);
    return largest + 1;
}

// The files of the analysed job alone, for a folder whose jobs were told apart by their subfolders
// or their launches (JobSplit::setsAsideEveryFile()): the other jobs' logs, dumps and error files
// are set aside with their traces, so no launch line or dump of one run is compared with another's.
TraceRead analysedJobRead(const TraceRead& read, const std::vector<bool>& setAside)
{
    const auto kept = [&](int sourceIndex) {
        return sourceIndex < 0 || std::size_t(sourceIndex) >= setAside.size() ||
               !setAside[std::size_t(sourceIndex)];
    };
    TraceRead job;
    job.folder = read.folder;
    job.events = withoutSources(read.events, setAside);
    for (const RankLog& log : read.logs)
        if (kept(log.sourceIndex)) job.logs.push_back(log);
    for (const FlightRecorderDump& dump : read.dumps)
        if (kept(dump.sourceIndex)) job.dumps.push_back(dump);
    for (const ElasticError& error : read.errors)
        if (kept(error.sourceIndex)) job.errors.push_back(error);
    job.warnings = read.warnings;
    return job;
}

} // namespace

AnalysedJob::AnalysedJob(const TraceRead& folderRead)
    : m_folderRead(folderRead), m_jobs(splitJobs(folderRead.folder.sources(), folderRead.logs))
{
    if (m_jobs.setsAsideEveryFile()) m_read = analysedJobRead(folderRead, m_jobs.setAside);
    if (m_jobs.mixed() && !m_read) m_events = withoutSources(folderRead.events, m_jobs.setAside);
    m_facts = RankFacts::of(read(), m_jobs, m_jobs.mixed() ? &events() : nullptr);
}

std::vector<Evidence> classifyLogs(const TraceRead& read, std::size_t* linesScanned,
                                   const ParallelControl& control)
{

    std::map<int, std::int64_t> diedAtNs;
    for (const ElasticError& e : read.errors)
        if (e.origin == ElasticError::Origin::ErrorFile && e.rank && e.timestampS >= 0)
            diedAtNs[*e.rank] = e.timestampS * 1'000'000'000;

    std::vector<Evidence> evidence;
    const std::vector<const RankLog*> streams = rankLogStreams(read.logs);
    // The signatures are compiled at their first use (about 0.1 s): not for a folder without logs.
    if (!streams.empty()) {
        const SignatureSet& signatures = SignatureSet::builtin();
        for (const RankLog* log : streams) {
            if (linesScanned) *linesScanned += std::size_t(log->lineCount());
            const auto died = log->rank ? diedAtNs.find(*log->rank) : diedAtNs.end();
            const std::optional<QList<SignatureHit>> hits = scanStream(*log, signatures, control);
            if (!hits) return {};
            classifyStream(*log, *hits, signatures, died == diedAtNs.end() ? -1 : died->second,
                           evidence);
        }
    }
    addElasticErrors(read, evidence);
    return evidence;
}

std::string nothingReadableReason(const TraceRead& read)
{
    const bool readLines = std::any_of(read.logs.begin(), read.logs.end(),
                                       [](const RankLog& log) { return log.lineCount() > 0; });
    if (!read.events.lanes.empty() || !read.events.collectives.empty() || readLines ||
        !read.dumps.empty() || !read.errors.empty())
        return {};
    const QList<SourceFile> sources = read.folder.sources();
    if (sources.isEmpty()) return "the folder holds no files";
    std::string failed;
    int broken = 0;
    for (const SourceFile& s : sources) {
        if (s.status != SourceStatus::Error) continue;
        if (++broken <= 3)
            failed += (failed.empty() ? "" : "; ") + s.relativePath.toStdString() + ": " +
                      s.message.toStdString();
    }
    const std::string count =
        std::to_string(sources.size()) + (sources.size() == 1 ? " file" : " files");
    if (broken == int(sources.size())) return "none of its " + count + " could be read: " + failed;
    return "its " + count + (sources.size() == 1 ? " holds" : " hold") +
           " no trace events, log lines or dumps RankScope reads" +
           (failed.empty() ? std::string() : " (" + failed + ")");
}

Diagnosis diagnose(const TraceRead& folderRead, const ParallelControl& control,
                   const std::vector<RankTimeBreakdown>* breakdown)
{
    // A folder mixing traces of different jobs: one job is analysed, the others' traces are set
    // aside, and one finding says so (model/analysis/jobsplit.h). Jobs told apart by their
    // subfolders or launches also leave their logs, dumps and error files aside.
    const AnalysedJob job(folderRead);
    const JobSplit& jobs = job.jobs();
    const TraceRead& read = job.read();
    const EventStore& events = job.events();
    Diagnosis stopped;
    stopped.interrupted = true;
    std::vector<std::string> paths;
    std::vector<int> ranks;
    for (int i = 0; i < int(read.folder.sources().size()); ++i) {
        const SourceFile& s = read.folder.sources()[i];
        paths.push_back(s.relativePath.toStdString());
        if (jobs.setAside[std::size_t(i)]) continue;
        if (s.rank) ranks.push_back(*s.rank);
    }
    std::size_t lines = 0;
    const std::vector<Evidence> logs = classifyLogs(read, &lines, control);
    if (stopRequested(control)) return stopped;
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    // What the analysed job's files say about each rank, read once for ConfigCheck, the
    // Analyzer and the auto-checks alike; which ranks are missing is decided there once.
    const RankFacts& facts = job.facts();
    std::vector<Finding> config = ConfigCheck::check(facts);
    if (jobs.mixed()) config.push_back(mixedJobsFinding(jobs, read.folder.sources()));
    Diagnosis diagnosis;
    diagnosis.analysis = Analyzer::run(events, std::move(paths), std::move(ranks), logs, read.dumps,
                                       std::move(config), &facts.presence, breakdown);
    diagnosis.analysis.logLineCount = lines;
    diagnosis.analysis.statedWorldSize = facts.statedWorldSize;
    diagnosis.analysis.worldSizeAtLeast = jobWorldSizeAtLeast(read, facts, events);
    if (stopRequested(control)) return stopped;
    diagnosis.autoChecks =
        AutoCheckEvaluator::evaluateAll(read, facts, diagnosis.analysis, logs, control);
    if (stopRequested(control)) return stopped;
    return diagnosis;
}

} // namespace rankscope
