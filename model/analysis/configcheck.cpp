#include "model/analysis/configcheck.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/symptomids.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

namespace rankscope {

namespace {

struct Setting {
    const char* key;   // lower-case fact key, or "<component> version"
    const char* label; // as people write it
    bool rendezvous;   // ranks with different values cannot form the group at all
    const char* fix;   // the study's fix pattern for it
};

constexpr std::array<Setting, 6> kSettings = {{
    {"master_addr", "MASTER_ADDR", true, "fix-communication-configuration"},
    {"master_port", "MASTER_PORT", true, "fix-communication-configuration"},
    {"world_size", "WORLD_SIZE", true, "fix-communication-configuration"},
    {"torch version", "the PyTorch version", false, "fix-framework-version"},
    {"cuda version", "the CUDA version", false, "fix-dependency-version"},
    {"nccl version", "the NCCL version", false, "fix-dependency-version"},
}};

struct Seen {
    std::string value;
    std::string path;
    int line = -1;
    std::string text;
};

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

} // namespace

std::vector<Finding> ConfigCheck::check(const std::vector<RankLog>& logs)
{
    // Per setting, per rank: the first value the rank's logs state. A rank's own log comes
    // before its lines split out of a combined launcher log (the same lines, seen twice).
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
    for (const bool split : {false, true})
        for (const RankLog& log : logs) {
            if (!log.rank || log.splitFromCombined != split) continue;
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
                    note("nccl version", f.value("version"), f.line);
                }
            }
        }

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
        f.kind = "config_mismatch";
        f.symptom = symptoms::kSetupFailure;
        f.severity = s.rendezvous ? "error" : "warning";
        f.confidence = tie ? 0.6 : byConnect ? 0.85 : 0.95;
        f.fixPatterns = {s.fix};
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
        f.summary += s.rendezvous ? ": those ranks cannot join the same process group"
                                  : ": the ranks run different builds";
        for (int r : f.ranks) {
            const Seen& seen = it->second.at(r);
            Evidence e;
            e.path = seen.path;
            e.line = seen.line;
            e.text = seen.text;
            e.rank = r;
            f.evidence.push_back(std::move(e));
        }
        if (!tie) {
            const Seen& seen = it->second.at(common->second.front());
            Evidence e;
            e.path = seen.path;
            e.line = seen.line;
            e.text = seen.text + "  [the majority's value]";
            e.rank = common->second.front();
            f.evidence.push_back(std::move(e));
        }
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace rankscope
