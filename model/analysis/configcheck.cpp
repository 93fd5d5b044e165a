#include "model/analysis/configcheck.h"

#include "model/analysis/analysiscontext.h"
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
    const char* key;            // the launcher's lower-case key
    PerRank RankFacts::*values; // the ranks' values
    const char* label;          // as people write it
    bool rendezvous;            // ranks with different values cannot form the group at all
    const char* condition; // what a disagreement shows (a condition of taxonomy/fix_rules.json)
};

constexpr std::array<Setting, 6> kSettings = {{
    {"master_addr", &RankFacts::masterAddr, "MASTER_ADDR", true, "rendezvous_mismatch"},
    {"master_port", &RankFacts::masterPort, "MASTER_PORT", true, "rendezvous_mismatch"},
    {"world_size", &RankFacts::worldSize, "WORLD_SIZE", true, "world_size_mismatch"},
    {"torch version", &RankFacts::torchVersion, "the PyTorch version", false,
     "framework_version_mismatch"},
    {"cuda version", &RankFacts::cudaVersion, "the CUDA version", false,
     "dependency_version_mismatch"},
    {"nccl version", &RankFacts::ncclVersion, "the NCCL version", false,
     "dependency_version_mismatch"},
}};

// Whether `rank`'s logs have a line about connecting that names `value` as a whole token, such
// as c10d's "The client socket has timed out ... while trying to connect to (10.0.0.1, 29500)".
bool failedToConnect(const RankFacts& facts, int rank, const std::string& value)
{
    const auto isTokenChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)); };
    const auto streams = facts.logs.find(rank);
    if (streams == facts.logs.end()) return false;
    for (const RankLog* stream : streams->second) {
        const RankLog& log = *stream;
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

// The ranks the job's WORLD_SIZE names that never started (RankPresence::neverStarted): the
// job waits for them (the rendezvous or the first collective times out on the others, which is
// all their logs show).
std::optional<Finding> unlaunchedRanks(const RankFacts& facts)
{
    const RankPresence& p = facts.presence;
    if (!p.neverStarted) return std::nullopt;
    const std::vector<int> launched = p.present();
    const std::string world = std::to_string(p.worldSize);
    Finding f;
    f.kind = FindingKind::ConfigMismatch;
    f.symptom = symptoms::kSetupFailure;
    f.severity = Severity::Error;
    f.confidence = 0.95;
    for (const auto& [first, last] : p.absent)
        for (int r = first; r <= last && f.ranks.size() < 4096; ++r)
            f.ranks.push_back(r);
    f.conditions = {"world_size_not_launched"};
    f.detail = "WORLD_SIZE is " + world + " but " + std::to_string(launched.size()) +
               (launched.size() == 1 ? " process was" : " processes were") + " launched (" +
               formatRanks(launched) + ")";
    f.summary = f.detail + ": " + formatRankRanges(p.absent) + " never started, so the others " +
                "wait for " + (rankCount(p.absent) == 1 ? "it" : "them");
    for (const auto& [rank, seen] : facts.worldSize) {
        if (f.evidence.size() == 4) break;
        f.evidence.push_back(seen.source);
    }
    return f;
}

// What `ranks`, which state the world size `size` last, did as their lines show it: launched
// with WORLD_SIZE N (their first statement, on another line naming WORLD_SIZE), and passed
// `size` to init_process_group (their last statement is that call). What no line shows is not
// said: a size read from one line is just the size they use.
std::string worldSizeStory(const RankFacts& facts, const std::vector<int>& ranks,
                           const std::string& size)
{
    std::string launched;
    bool sameLaunch = true, init = true;
    for (int r : ranks) {
        const Evidence& last = facts.worldSize.at(r).source;
        init = init && last.text.find("init_process_group") != std::string::npos;
        const auto first = facts.launchWorldSize.find(r);
        const bool fromEnvironment =
            first != facts.launchWorldSize.end() && first->second.source.line != last.line &&
            first->second.source.text.find("WORLD_SIZE") != std::string::npos;
        sameLaunch =
            sameLaunch && fromEnvironment && (launched.empty() || launched == first->second.value);
        if (fromEnvironment) launched = first->second.value;
    }
    const bool many = ranks.size() > 1;
    const std::string who = formatRanks(ranks);
    const std::string passed = "passed world_size=" + size + " to init_process_group";
    if (sameLaunch)
        return who + (many ? " were" : " was") + " launched with WORLD_SIZE " + launched +
               (init ? " and " + passed : " and later stated world size " + size);
    if (init) return who + " " + passed;
    return who + (many ? " use" : " uses") + " WORLD_SIZE " + size;
}

} // namespace

std::vector<Finding> ConfigCheck::check(const RankFacts& facts)
{
    std::vector<Finding> out;
    for (const Setting& s : kSettings) {
        const PerRank& values = facts.*(s.values);
        std::map<std::string, std::vector<int>> ranksOf = ranksByValue(values);
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
        // Ranks that disagree on their world size: the one they were meant to have (the one they
        // were all launched with, which the odd ranks overrode) is the reference.
        bool byLauncher = false, byConnect = false, byLaunch = false;
        const auto stated = facts.launcherEnvironment.find(s.key);
        const std::string intended =
            s.values == &RankFacts::worldSize ? facts.intendedWorldSize() : std::string();
        if (s.rendezvous && stated != facts.launcherEnvironment.end() &&
            stated->second.size() == 1 && ranksOf.count(*stated->second.begin())) {
            common = ranksOf.find(*stated->second.begin());
            tie = false;
            byLauncher = true;
        } else if (!intended.empty() && (tie || intended != common->first)) {
            common = ranksOf.find(intended);
            tie = false;
            byLaunch = true;
        } else if (tie && std::string_view(s.key).starts_with("master_")) {
            std::vector<std::map<std::string, std::vector<int>>::iterator> reached;
            for (auto v = ranksOf.begin(); v != ranksOf.end(); ++v)
                if (!std::all_of(v->second.begin(), v->second.end(),
                                 [&](int r) { return failedToConnect(facts, r, v->first); }))
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
        // A world size some rank passed to init_process_group is not its WORLD_SIZE.
        const std::string label =
            s.values == &RankFacts::worldSize &&
                    std::any_of(values.begin(), values.end(),
                                [](const auto& v) {
                                    return v.second.source.text.find("WORLD_SIZE") ==
                                           std::string::npos;
                                })
                ? std::string("world size")
                : std::string(s.label);
        std::string listed;
        for (const auto& [value, ranks] : ranksOf) {
            if (!tie && value == common->first) continue;
            f.ranks.insert(f.ranks.end(), ranks.begin(), ranks.end());
            if (!listed.empty()) listed += ", ";
            listed += formatRanks(ranks) + " " + value;
        }
        std::sort(f.ranks.begin(), f.ranks.end());
        if (tie) {
            f.summary =
                "the ranks disagree on " + label + " (" + listed + ") and no value has a majority";
        } else if (ranksOf.size() == 2 && s.values == &RankFacts::worldSize) {
            // Not "uses WORLD_SIZE 4" for a rank launched with 3 that passed 4 to init.
            const auto& odd = std::next(ranksOf.begin()) == common ? *ranksOf.begin()
                                                                   : *std::next(ranksOf.begin());
            const bool commonInit =
                std::all_of(common->second.begin(), common->second.end(), [&](int r) {
                    return values.at(r).source.text.find("init_process_group") != std::string::npos;
                });
            f.summary = worldSizeStory(facts, odd.second, odd.first) + ", where " +
                        formatRanks(common->second) +
                        (commonInit                  ? " passed "
                         : common->second.size() > 1 ? " use "
                                                     : " uses ") +
                        common->first;
        } else if (ranksOf.size() == 2) {
            const std::string& odd = std::next(ranksOf.begin())->first == common->first
                                         ? ranksOf.begin()->first
                                         : std::next(ranksOf.begin())->first;
            f.summary = formatRanks(f.ranks) + (f.ranks.size() > 1 ? " use " : " uses ") + s.label +
                        " " + odd + " where " + formatRanks(common->second) +
                        (common->second.size() > 1 ? " use " : " uses ") + common->first;
        } else {
            f.summary = "ranks differ in " + label + ": " + listed + "; the majority (" +
                        formatRanks(common->second) + ") uses " + common->first;
        }
        if (byLauncher) f.summary += " (the value the launcher states)";
        if (byConnect) f.summary += " (and only they failed to connect to it)";
        if (byLaunch) f.summary += " (the value every rank was launched with)";
        for (const auto& [value, ranks] : ranksOf)
            f.detail += (f.detail.empty() ? label + " " : std::string("; ")) + value + " on " +
                        formatRanks(ranks);
        f.summary += s.rendezvous ? ": those ranks cannot join the same process group"
                                  : ": the ranks run different builds";
        for (int r : f.ranks)
            f.evidence.push_back(values.at(r).source);
        if (!tie) {
            Evidence e = values.at(common->second.front()).source;
            // Said as the reference was chosen: with two ranks, one against one, no value has a
            // majority.
            e.text += byLaunch     ? "  [the value the ranks were launched with]"
                      : byLauncher ? "  [the value the launcher states]"
                      : byConnect  ? "  [the value no rank failed to connect to]"
                                   : "  [the majority's value]";
            f.evidence.push_back(std::move(e));
        }
        out.push_back(std::move(f));
    }
    if (std::optional<Finding> f = unlaunchedRanks(facts)) out.push_back(std::move(*f));
    return out;
}

} // namespace rankscope
