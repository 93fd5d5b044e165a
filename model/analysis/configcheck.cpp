#include "model/analysis/configcheck.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/sessionanalysis.h"
#include "model/analysis/symptomids.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <set>

namespace rankscope {

namespace {

struct Setting {
    const char* key;       // lower-case fact key, or "<component> version"
    const char* label;     // as people write it
    bool rendezvous;       // ranks with different values cannot form the group at all
    const char* condition; // what a disagreement shows (a condition of taxonomy/fix_rules.json)
};

constexpr std::array<Setting, 6> kSettings = {{
    {"master_addr", "MASTER_ADDR", true, "rendezvous_mismatch"},
    {"master_port", "MASTER_PORT", true, "rendezvous_mismatch"},
    {"world_size", "WORLD_SIZE", true, "world_size_mismatch"},
    {"torch version", "the PyTorch version", false, "framework_version_mismatch"},
    {"cuda version", "the CUDA version", false, "dependency_version_mismatch"},
    {"nccl version", "the NCCL version", false, "dependency_version_mismatch"},
}};

struct Seen {
    std::string value;
    std::string path;
    int line = -1;
    std::string text;
};

Evidence evidenceOf(const Seen& seen, int rank)
{
    Evidence e;
    e.path = seen.path;
    e.line = seen.line;
    e.text = seen.text;
    e.rank = rank;
    return e;
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// Whether `rank`'s logs have a line about connecting that names `value` as a whole token, such
// as c10d's "The client socket has timed out ... while trying to connect to (10.0.0.1, 29500)".
bool failedToConnect(const std::vector<RankLog>& logs, int rank, const std::string& value)
{
    const auto isTokenChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)); };
    for (const RankLog& log : logs) {
        if (log.rank != rank) continue;
        for (int i = 0; i < log.lineCount(); ++i) {
            const QByteArrayView line = log.lineBytes(i);
            if (!line.contains("connect")) continue;
            for (qsizetype at = line.indexOf(QByteArrayView(value)); at >= 0;
                 at = line.indexOf(QByteArrayView(value), at + 1)) {
                const qsizetype end = at + qsizetype(value.size());
                if ((at == 0 || !isTokenChar(line[at - 1])) &&
                    (end >= line.size() || !isTokenChar(line[end])))
                    return true;
            }
        }
    }
    return false;
}

// Every rank that states WORLD_SIZE states the same N, but fewer than N ranks were launched:
// the job waits for ranks that never started (the rendezvous or the first collective times
// out on the others, which is all their logs show).
std::optional<Finding> unlaunchedRanks(const std::map<int, Seen>& stated,
                                       const std::vector<int>& launched)
{
    if (stated.empty() || launched.empty()) return std::nullopt;
    std::set<std::string> sizes;
    for (const auto& [rank, seen] : stated)
        sizes.insert(seen.value);
    if (sizes.size() != 1) return std::nullopt; // a disagreement, reported as such
    const std::string& text = *sizes.begin();
    if (text.empty() ||
        !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
        return std::nullopt;
    // More ranks than any job has is a typo, not a launch to compare with.
    if (text.size() > 7) return std::nullopt;
    const int world = std::stoi(text);
    std::vector<int> absent;
    for (int r = 0; r < world; ++r)
        if (!std::binary_search(launched.begin(), launched.end(), r)) absent.push_back(r);
    if (absent.empty() || int(launched.size()) >= world) return std::nullopt;
    Finding f;
    f.kind = FindingKind::ConfigMismatch;
    f.symptom = symptoms::kSetupFailure;
    f.severity = Severity::Error;
    f.confidence = 0.95;
    f.ranks = absent;
    f.conditions = {"world_size_not_launched"};
    f.detail = "WORLD_SIZE is " + text + " but " + std::to_string(launched.size()) +
               (launched.size() == 1 ? " process was" : " processes were") + " launched (" +
               formatRanks(launched) + ")";
    f.summary = f.detail + ": " + formatRanks(absent) + " never started, so the others wait for " +
                (absent.size() == 1 ? "it" : "them");
    for (const auto& [rank, seen] : stated) {
        if (f.evidence.size() == 4) break;
        f.evidence.push_back(evidenceOf(seen, rank));
    }
    return f;
}

} // namespace

std::string ConfigCheck::comparableVersion(const std::string& version)
{
    return version.substr(0, version.find('+'));
}

std::map<int, ConfigCheck::Stated> ConfigCheck::traceNcclVersions(const QList<SourceFile>& sources)
{
    std::map<int, Stated> out;
    for (const SourceFile& s : sources) {
        if (!s.rank || s.statedNcclVersion.isEmpty() || out.count(*s.rank)) continue;
        Stated& v = out[*s.rank];
        v.value = comparableVersion(s.statedNcclVersion.toStdString());
        v.evidence.path = s.relativePath.toStdString();
        v.evidence.rank = *s.rank;
        v.evidence.text =
            "distributedInfo.nccl_version \"" + s.statedNcclVersion.toStdString() + "\"";
    }
    return out;
}

std::vector<Finding> ConfigCheck::check(const std::vector<RankLog>& logs,
                                        const std::vector<int>& launchedRanks,
                                        const std::map<int, Stated>& traceNcclVersions)
{
    // Per setting, per rank: the first value the rank's logs (rankLogStreams) state.
    std::map<std::string, std::map<int, Seen>> values;
    // What the launcher's own lines state (torchrun's "Rendezvous complete ... master_port=").
    std::map<std::string, std::set<std::string>> launcherValues;
    for (const RankLog& log : logs) {
        if (log.rank) continue;
        for (const LogFact& f : log.facts())
            if (f.kind == LogFactKind::Environment)
                for (const auto& [k, v] : f.fields())
                    if (!v.empty()) launcherValues[lower(k)].insert(v);
    }
    for (const RankLog* stream : rankLogStreams(logs)) {
        const RankLog& log = *stream;
        if (!log.rank) continue;
        const auto note = [&](const std::string& key, const std::string& value, int line) {
            if (value.empty()) return;
            std::map<int, Seen>& byRank = values[key];
            if (byRank.count(*log.rank)) return;
            byRank[*log.rank] = {value, log.sourcePath.toStdString(), log.lineNumber(line),
                                 log.lineText(line).toStdString()};
        };
        for (const LogFact& f : log.facts()) {
            if (f.kind == LogFactKind::Environment) {
                for (const auto& [k, v] : f.fields()) {
                    const std::string key = lower(k);
                    for (const Setting& s : kSettings)
                        if (key == s.key) note(key, v, f.line);
                }
            } else if (f.kind == LogFactKind::Version) {
                note(f.value("component") + " version", f.value("version"), f.line);
            } else if (f.kind == LogFactKind::NcclVersion) {
                note("nccl version", comparableVersion(f.value("version")), f.line);
            }
        }
    }

    // A rank's trace states the NCCL version its log may not print (NCCL_DEBUG unset).
    for (const auto& [rank, stated] : traceNcclVersions)
        values["nccl version"].emplace(rank, Seen{stated.value, stated.evidence.path,
                                                  stated.evidence.line, stated.evidence.text});

    std::vector<Finding> out;
    for (const Setting& s : kSettings) {
        const auto it = values.find(s.key);
        if (it == values.end() || it->second.size() < 2) continue;
        std::map<std::string, std::vector<int>> ranksOf;
        for (const auto& [rank, seen] : it->second)
            ranksOf[seen.value].push_back(rank);
        if (ranksOf.size() < 2) continue;
        auto common = ranksOf.begin();
        bool tie = false;
        for (auto v = ranksOf.begin(); v != ranksOf.end(); ++v) {
            if (v->second.size() > common->second.size()) {
                common = v;
                tie = false;
            } else if (v != common && v->second.size() == common->second.size()) {
                tie = true;
            }
        }
        // The launcher's own value, when it states exactly one, is what every rank was meant to
        // get. Without it and without a majority, the ranks that could not connect to the
        // address they were given are the odd ones (the store is where the others got through;
        // under torchrun it is the agent's, not rank 0's).
        bool byLauncher = false, byConnect = false;
        const auto stated = launcherValues.find(s.key);
        if (s.rendezvous && stated != launcherValues.end() && stated->second.size() == 1 &&
            ranksOf.count(*stated->second.begin())) {
            common = ranksOf.find(*stated->second.begin());
            tie = false;
            byLauncher = true;
        } else if (tie && std::string_view(s.key).starts_with("master_")) {
            std::vector<std::map<std::string, std::vector<int>>::iterator> reached;
            for (auto v = ranksOf.begin(); v != ranksOf.end(); ++v)
                if (!std::all_of(v->second.begin(), v->second.end(),
                                 [&](int r) { return failedToConnect(logs, r, v->first); }))
                    reached.push_back(v);
            if (reached.size() == 1 && ranksOf.size() > 1) {
                common = reached.front();
                tie = false;
                byConnect = true;
            }
        }
        Finding f;
        f.kind = FindingKind::ConfigMismatch;
        f.symptom = symptoms::kSetupFailure;
        f.severity = s.rendezvous ? Severity::Error : Severity::Warning;
        f.confidence = tie ? 0.6 : byConnect ? 0.85 : 0.95;
        f.conditions = {s.condition};
        std::string values;
        for (const auto& [value, ranks] : ranksOf) {
            if (!tie && value == common->first) continue;
            f.ranks.insert(f.ranks.end(), ranks.begin(), ranks.end());
            if (!values.empty()) values += ", ";
            values += formatRanks(ranks) + " " + value;
        }
        std::sort(f.ranks.begin(), f.ranks.end());
        if (tie) {
            f.summary = "the ranks disagree on " + std::string(s.label) + " (" + values +
                        ") and no value has a majority";
        } else if (ranksOf.size() == 2) {
            const std::string& odd = std::next(ranksOf.begin())->first == common->first
                                         ? ranksOf.begin()->first
                                         : std::next(ranksOf.begin())->first;
            f.summary = formatRanks(f.ranks) + (f.ranks.size() > 1 ? " use " : " uses ") + s.label +
                        " " + odd + " where " + formatRanks(common->second) +
                        (common->second.size() > 1 ? " use " : " uses ") + common->first;
        } else {
            f.summary = "ranks differ in " + std::string(s.label) + ": " + values +
                        "; the majority (" + formatRanks(common->second) + ") uses " +
                        common->first;
        }
        if (byLauncher) f.summary += " (the value the launcher states)";
        if (byConnect) f.summary += " (and only they failed to connect to it)";
        for (const auto& [value, ranks] : ranksOf)
            f.detail += (f.detail.empty() ? std::string(s.label) + " " : std::string("; ")) +
                        value + " on " + formatRanks(ranks);
        f.summary += s.rendezvous ? ": those ranks cannot join the same process group"
                                  : ": the ranks run different builds";
        for (int r : f.ranks)
            f.evidence.push_back(evidenceOf(it->second.at(r), r));
        if (!tie) {
            Evidence e = evidenceOf(it->second.at(common->second.front()), common->second.front());
            e.text += "  [the majority's value]";
            f.evidence.push_back(std::move(e));
        }
        out.push_back(std::move(f));
    }
    if (const auto world = values.find("world_size"); world != values.end())
        if (std::optional<Finding> f = unlaunchedRanks(world->second, launchedRanks))
            out.push_back(std::move(*f));
    return out;
}

} // namespace rankscope
