#include "model/analysis/flightrecorderchecks.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/symptomids.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <tuple>

namespace rankscope {

namespace {

using json = nlohmann::json;

std::optional<int> majorOf(const std::string& version)
{
    int major = -1;
    const char* end = version.data() + version.size();
    const auto [ptr, ec] = std::from_chars(version.data(), end, major);
    if (ec != std::errc() || (ptr != end && *ptr != '.')) return std::nullopt;
    return major;
}

// pg_status values are ints in the pickle form and strings in the JSON form.
std::int64_t seqOf(const json& status, const char* key)
{
    const auto it = status.find(key);
    if (it == status.end()) return -1;
    if (it->is_number_integer()) return it->get<std::int64_t>();
    if (it->is_string()) {
        const std::string s = it->get<std::string>();
        std::int64_t v = -1;
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        return ec == std::errc() && ptr == s.data() + s.size() ? v : -1;
    }
    return -1;
}

std::string pathOf(const FlightRecorderDump& d, const std::vector<std::string>& paths)
{
    return d.sourceIndex >= 0 && std::size_t(d.sourceIndex) < paths.size()
               ? paths[std::size_t(d.sourceIndex)]
               : std::string();
}

Evidence dumpEvidence(const FlightRecorderDump& d, const std::vector<std::string>& paths,
                      std::string text)
{
    Evidence e;
    e.path = pathOf(d, paths);
    e.rank = d.rank.value_or(-1);
    e.text = std::move(text);
    return e;
}

void checkVersions(const std::vector<FlightRecorderDump>& dumps,
                   const std::vector<std::string>& paths, std::vector<Finding>& out)
{
    std::map<std::string, std::vector<const FlightRecorderDump*>> byVersion;
    for (const FlightRecorderDump& d : dumps) {
        byVersion[d.version].push_back(&d);
        const std::optional<int> major = majorOf(d.version);
        if (major && *major == FlightRecorderChecks::kKnownMajorVersion) continue;
        Finding f;
        f.kind = FindingKind::ConfigMismatch;
        f.severity = Severity::Warning;
        f.confidence = 0.5;
        if (d.rank) f.ranks = {*d.rank};
        f.summary = pathOf(d, paths) + ": Flight Recorder dump version \"" + d.version + "\" " +
                    (major ? "has major version " + std::to_string(*major) : "is not major.minor") +
                    ", this reader knows " +
                    std::to_string(FlightRecorderChecks::kKnownMajorVersion) +
                    ".x; its entries may be misread and the checks on them are unreliable";
        f.evidence.push_back(dumpEvidence(d, paths, "version " + d.version));
        out.push_back(std::move(f));
    }
    if (byVersion.size() < 2) return;
    auto common = byVersion.begin();
    for (auto it = byVersion.begin(); it != byVersion.end(); ++it)
        if (it->second.size() > common->second.size()) common = it;
    for (const auto& [version, list] : byVersion) {
        if (version == common->first) continue;
        Finding f;
        f.kind = FindingKind::ConfigMismatch;
        f.symptom = symptoms::kSetupFailure;
        f.severity = Severity::Warning;
        f.confidence = 0.6;
        for (const FlightRecorderDump* d : list) {
            if (d->rank) f.ranks.push_back(*d->rank);
            f.evidence.push_back(dumpEvidence(*d, paths, "version " + version));
        }
        std::sort(f.ranks.begin(), f.ranks.end());
        f.detail = formatRanks(f.ranks) + " wrote Flight Recorder version " + version +
                   ", the others " + common->first;
        f.summary = f.detail + ": the ranks run different PyTorch builds";
        // The dump format is PyTorch's: the fix is the framework's version, not the network's.
        f.conditions = {"framework_version_mismatch"};
        out.push_back(std::move(f));
    }
}

// Retired without completing: the watchdog gave up on the entry, i.e. it timed out there.
void checkRetired(const std::vector<FlightRecorderDump>& dumps,
                  const std::vector<std::string>& paths, std::vector<Finding>& out)
{
    struct First {
        std::int64_t seq = -1;
        std::string op;
        bool pointToPoint = false; // a send or recv: its seq is the group's p2p counter
        std::vector<int> ranks;
        std::vector<Evidence> evidence;
    };
    std::map<std::string, First> byGroup; // the earliest timed-out collective per group
    for (const FlightRecorderDump& d : dumps) {
        for (const FlightRecorderEntry& e : d.entries) {
            if (!e.timedOut()) continue;
            const std::int64_t seq = e.isP2p ? e.p2pSeqId : e.collectiveSeqId;
            First& f = byGroup[e.pgName];
            if (f.seq >= 0 && seq > f.seq) continue;
            if (seq != f.seq) {
                f = First{};
                f.seq = seq;
                f.op = e.op;
                f.pointToPoint = e.isP2p;
            }
            if (d.rank) f.ranks.push_back(*d.rank);
            f.evidence.push_back(dumpEvidence(
                d, paths,
                "record_id " + std::to_string(e.recordId) + ": " + e.profilingName + " #" +
                    std::to_string(seq) + " retired in state " +
                    FlightRecorderEntry::stateName(e.state) +
                    (e.timeoutMs >= 0 ? " (timeout " + std::to_string(e.timeoutMs) + " ms)" : "")));
            break; // a rank's later entries wait behind its first timed-out one
        }
    }
    for (auto& [group, first] : byGroup) {
        std::sort(first.ranks.begin(), first.ranks.end());
        Finding f;
        f.kind = FindingKind::Hang;
        f.symptom = symptoms::kHang;
        f.severity = Severity::Warning;
        f.confidence = 0.5;
        f.processGroup = group;
        f.seq = first.seq;
        // A send or recv is no row of the group's collectives.
        if (first.pointToPoint) f.conditions = {"point_to_point"};
        // Those ranks waited; the rank they waited for is the participation finding's.
        f.summary = first.op + " #" + std::to_string(first.seq) + " timed out on " +
                    formatRanks(first.ranks) +
                    " (retired without completing in the Flight Recorder); these ranks waited";
        f.evidence = std::move(first.evidence);
        out.push_back(std::move(f));
    }
}

// A coalescing block is matched as one collective with its ops' elements summed (the matcher
// reports blocks whose kind, totals or dtype differ). NCCL pairs the ops of a block by position,
// so blocks with equal totals still fail when a rank orders or splits its tensors differently:
// compare the ops one by one where the totals agree.
void checkCoalesced(const std::vector<FlightRecorderDump>& dumps,
                    const std::vector<std::string>& paths, std::vector<Finding>& out)
{
    struct Op {
        std::string kind, dtype;
        std::int64_t in = -1, outElems = -1;
        bool operator==(const Op&) const = default;
        bool operator<(const Op& o) const
        {
            return std::tie(kind, dtype, in, outElems) <
                   std::tie(o.kind, o.dtype, o.in, o.outElems);
        }
    };
    struct Block {
        const FlightRecorderDump* dump;
        std::vector<Op> ops;
        std::vector<std::int64_t> recordIds;
    };
    std::map<std::pair<std::string, std::int64_t>, std::vector<Block>> blocks; // (group, seq)
    for (const FlightRecorderDump& d : dumps) {
        if (!d.rank) continue;
        for (const FlightRecorderUnit& u : FlightRecorderReader::collectiveUnits(d)) {
            Block b{&d, {}, {}};
            for (const FlightRecorderEntry* e : u.ops) {
                b.ops.push_back({FlightRecorderReader::collectiveOf(*e),
                                 e->inputDtypes.empty() ? std::string() : e->inputDtypes.front(),
                                 FlightRecorderReader::numel(e->inputSizes),
                                 FlightRecorderReader::numel(e->outputSizes)});
                b.recordIds.push_back(e->recordId);
            }
            blocks[{u.ops.front()->pgName, u.ops.front()->collectiveSeqId}].push_back(std::move(b));
        }
    }
    const auto totals = [](const Block& b) {
        std::int64_t in = 0, outElems = 0;
        for (const Op& op : b.ops) {
            if (op.in < 0 || op.outElems < 0) return std::pair<std::int64_t, std::int64_t>{-1, -1};
            in += op.in;
            outElems += op.outElems;
        }
        return std::pair{in, outElems};
    };
    for (const auto& [key, list] : blocks) {
        const bool coalesced =
            std::any_of(list.begin(), list.end(), [](const Block& b) { return b.ops.size() > 1; });
        if (!coalesced || list.size() < 2 || key.second < 0) continue;
        const Block& first = list.front(); // clang 14 cannot capture a structured binding
        const auto sameTotals = [&](const Block& b) {
            return totals(b) == totals(first) && b.ops.front().dtype == first.ops.front().dtype;
        };
        if (!std::all_of(list.begin(), list.end(), sameTotals)) continue; // the matcher's finding
        std::map<std::vector<Op>, int> votes;
        for (const Block& b : list)
            ++votes[b.ops];
        if (votes.size() < 2) continue;
        const auto most =
            std::max_element(votes.begin(), votes.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; });
        const bool tie = std::count_if(votes.begin(), votes.end(),
                                       [&](const auto& v) { return v.second == most->second; }) > 1;
        const std::vector<Op>& usual = most->first;
        Finding f;
        f.kind = FindingKind::CollectiveMismatch;
        f.symptom = symptoms::kTensorMismatch;
        f.severity = Severity::Error;
        f.confidence = tie ? 0.6 : 0.8;
        f.processGroup = key.first;
        f.seq = key.second;
        const Block* deviant = nullptr;
        for (const Block& b : list) {
            if (!tie && b.ops == usual) continue;
            f.ranks.push_back(*b.dump->rank);
            std::string ids;
            for (std::int64_t id : b.recordIds)
                ids += (ids.empty() ? "" : ", ") + std::to_string(id);
            f.evidence.push_back(dumpEvidence(*b.dump, paths,
                                              "record_ids " + ids + ": coalesced #" +
                                                  std::to_string(key.second) + " of " +
                                                  std::to_string(b.ops.size()) + " ops"));
            if (b.ops != usual && !deviant) deviant = &b;
        }
        std::sort(f.ranks.begin(), f.ranks.end());
        std::size_t k = 0;
        while (k < deviant->ops.size() && k < usual.size() && deviant->ops[k] == usual[k])
            ++k;
        const auto describe = [](const std::vector<Op>& ops, std::size_t k) {
            return k < ops.size()
                       ? ops[k].kind + " of " + std::to_string(ops[k].in) + " " + ops[k].dtype
                       : std::string("nothing");
        };
        f.summary = "coalesced " + usual.front().kind + " #" + std::to_string(key.second) +
                    " pairs different tensors: op " + std::to_string(k + 1) + " is " +
                    describe(deviant->ops, k) + " on rank " + std::to_string(*deviant->dump->rank) +
                    " but " + describe(usual, k) + (tie ? " on another rank" : " on the others") +
                    " (same totals); NCCL pairs a block's ops by position, so the block hangs "
                    "or mixes up tensors";
        out.push_back(std::move(f));
    }
}

void checkPgStatus(const std::vector<FlightRecorderDump>& dumps,
                   const std::vector<std::string>& paths, FlightRecorderChecks::Result& res)
{
    std::map<std::string, GroupProgress> byGroup;
    std::map<std::string, std::vector<const FlightRecorderDump*>> dumpsOf;
    for (const FlightRecorderDump& d : dumps) {
        if (!d.rank || !d.pgStatus.is_object()) continue;
        std::map<std::int64_t, std::string> nameOfId;
        for (const FlightRecorderEntry& e : d.entries)
            if (e.pgId >= 0) nameOfId.emplace(e.pgId, e.pgName);
        for (const auto& [key, status] : d.pgStatus.items()) {
            if (!status.is_object()) continue;
            std::int64_t id = -1;
            std::from_chars(key.data(), key.data() + key.size(), id);
            const auto named = nameOfId.find(id);
            const std::string group = named != nameOfId.end() ? named->second : key;
            RankProgress p;
            p.rank = *d.rank;
            p.lastIssued = seqOf(status, "last_enqueued_collective");
            p.lastStarted = seqOf(status, "last_started_collective");
            p.lastCompleted = seqOf(status, "last_completed_collective");
            GroupProgress& g = byGroup[group];
            g.group = group;
            g.ranks.push_back(p);
            g.wavefront = std::max(g.wavefront, p.lastIssued);
            dumpsOf[group].push_back(&d);
        }
    }
    for (auto& [group, g] : byGroup) {
        std::sort(g.ranks.begin(), g.ranks.end(),
                  [](const RankProgress& a, const RankProgress& b) { return a.rank < b.rank; });
        std::int64_t lowest = g.wavefront;
        for (const RankProgress& p : g.ranks)
            lowest = std::min(lowest, p.lastIssued);
        std::vector<int> behind, stuck, started;
        for (const RankProgress& p : g.ranks) {
            if (p.lastIssued == lowest) behind.push_back(p.rank);
            if (p.lastIssued == g.wavefront && p.lastCompleted < g.wavefront)
                stuck.push_back(p.rank);
            if (p.lastStarted >= g.wavefront) started.push_back(p.rank);
        }
        Finding f;
        f.processGroup = group;
        f.kind = FindingKind::Hang;
        f.symptom = symptoms::kHang;
        for (const FlightRecorderDump* d : dumpsOf[group])
            f.evidence.push_back(dumpEvidence(
                *d, paths, "pg_status of group " + group + " on rank " + std::to_string(*d->rank)));
        if (lowest < g.wavefront && !stuck.empty()) {
            f.severity = Severity::Error;
            f.confidence = 0.85;
            f.ranks = behind;
            f.seq = lowest + 1;
            f.summary = formatRanks(behind) + " last enqueued collective #" +
                        std::to_string(lowest) + " of group " + group + " while " +
                        formatRanks(stuck) + " enqueued #" + std::to_string(g.wavefront) +
                        " and did not complete it (Flight Recorder pg_status): the rank that "
                        "never issued the next collective";
        } else if (lowest == g.wavefront && !stuck.empty() && started.size() == g.ranks.size() &&
                   g.ranks.size() > 1) {
            f.severity = Severity::Warning;
            f.confidence = 0.4;
            f.seq = g.wavefront;
            f.summary = "every rank of group " + group + " started collective #" +
                        std::to_string(g.wavefront) +
                        " and none completed it (Flight Recorder pg_status): suspect the "
                        "network or a dead peer";
        } else if (lowest == g.wavefront && !stuck.empty() && !started.empty() &&
                   started.size() < g.ranks.size()) {
            f.severity = Severity::Warning;
            f.confidence = 0.5;
            f.seq = g.wavefront;
            for (const RankProgress& p : g.ranks)
                if (p.lastStarted < g.wavefront) f.ranks.push_back(p.rank);
            f.summary = formatRanks(f.ranks) + " enqueued collective #" +
                        std::to_string(g.wavefront) + " of group " + group +
                        " but never started it (Flight Recorder pg_status): its GPU was blocked "
                        "by earlier work";
        } else {
            res.progress.push_back(std::move(g));
            continue;
        }
        res.findings.push_back(std::move(f));
        res.progress.push_back(std::move(g));
    }
}

} // namespace

FlightRecorderChecks::Result
FlightRecorderChecks::check(const std::vector<FlightRecorderDump>& dumps,
                            const std::vector<std::string>& sourcePaths)
{
    Result res;
    checkVersions(dumps, sourcePaths, res.findings);
    checkRetired(dumps, sourcePaths, res.findings);
    checkCoalesced(dumps, sourcePaths, res.findings);
    checkPgStatus(dumps, sourcePaths, res);
    return res;
}

} // namespace rankscope
