#include "model/analysis/logtriage.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/symptomids.h"

#include <algorithm>
#include <map>
#include <set>

namespace rankscope {

namespace {

// Ranks whose first error comes this close to the root's are taken to have failed on their
// own (a symmetric fault: every rank ran the same wrong code); later ones follow from it.
constexpr std::int64_t kSymmetricWindowNs = 2'000'000'000;

Evidence evidenceOf(const LogEvidence& e)
{
    Evidence ev;
    ev.path = e.path;
    ev.line = e.line;
    ev.text = e.text;
    ev.rank = e.rank;
    return ev;
}

bool earlier(const LogEvidence& a, const LogEvidence& b)
{
    // Lines without a timestamp sort after timed ones, then by file position.
    const bool at = a.timeNs >= 0, bt = b.timeNs >= 0;
    if (at != bt) return at;
    if (at && a.timeNs != b.timeNs) return a.timeNs < b.timeNs;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.line < b.line;
}

std::string shortText(const std::string& text)
{
    constexpr std::size_t kMax = 160;
    return text.size() <= kMax ? text : text.substr(0, kMax) + "...";
}

} // namespace

bool LogTriage::isWaiting(const std::string& symptom)
{
    return symptom == symptoms::kHang;
}

std::string LogTriage::kindOf(const LogEvidence& e)
{
    if (e.symptom.rfind("communication-setup/", 0) == 0) return "setup_failure";
    if (e.symptom == symptoms::kTensorMismatch) return "collective_mismatch";
    if (e.fatal) return "crash";
    return "log_symptom";
}

LogTriage::Result LogTriage::triage(std::vector<LogEvidence> items,
                                    const std::vector<int>& worldRanks)
{
    Result res;
    std::stable_sort(items.begin(), items.end(), earlier);
    // Whatever a rank reports after its own cascade line (it was sent SIGTERM, its watchdog
    // tore it down) is part of the teardown too.
    std::map<int, const LogEvidence*> firstCascade;
    for (const LogEvidence& e : items)
        if (e.cascade && e.rank >= 0) firstCascade.emplace(e.rank, &e);
    for (LogEvidence& e : items) {
        const auto it = firstCascade.find(e.rank);
        if (e.cascade || it == firstCascade.end()) continue;
        const LogEvidence& c = *it->second;
        const bool timedAfter = e.timeNs >= 0 && c.timeNs >= 0 && e.timeNs >= c.timeNs;
        const bool linedAfter = e.path == c.path && e.line > c.line;
        if (timedAfter || linedAfter) e.cascade = true;
    }
    std::set<int> waiting;
    for (const LogEvidence& e : items)
        if (!e.cascade && isWaiting(e.symptom) && e.rank >= 0) {
            waiting.insert(e.rank);
            res.waitingEvidence.push_back(evidenceOf(e));
        }
    res.waitingRanks.assign(waiting.begin(), waiting.end());
    if (!waiting.empty())
        for (int r : worldRanks)
            if (!waiting.count(r)) res.silentRanks.push_back(r);

    // Roots: non-cascade failures that are not just waits. Each rank's first one counts.
    std::vector<const LogEvidence*> roots;
    std::set<int> seen;
    for (const LogEvidence& e : items) {
        if (e.cascade || isWaiting(e.symptom)) continue;
        if (e.rank >= 0 && !seen.insert(e.rank).second) continue;
        roots.push_back(&e);
    }
    if (roots.empty()) return res;

    const LogEvidence& root = *roots.front();
    Finding f;
    f.kind = kindOf(root);
    f.symptom = root.symptom;
    f.severity = "error";
    f.confidence = 0.9;
    std::vector<int> blamed;
    if (root.rank >= 0) blamed.push_back(root.rank);
    std::vector<const LogEvidence*> alsoFailed;
    for (std::size_t i = 1; i < roots.size(); ++i) {
        const LogEvidence& o = *roots[i];
        const bool close =
            root.timeNs >= 0 && o.timeNs >= 0 && o.timeNs - root.timeNs <= kSymmetricWindowNs;
        if (o.symptom == root.symptom && o.rank >= 0 && (close || root.timeNs < 0))
            blamed.push_back(o.rank);
        else
            alsoFailed.push_back(&o);
    }
    std::sort(blamed.begin(), blamed.end());
    blamed.erase(std::unique(blamed.begin(), blamed.end()), blamed.end());
    f.ranks = blamed;
    const std::string who = blamed.empty() ? std::string("the launcher") : formatRanks(blamed);
    f.summary = (blamed.size() > 1 ? who + " failed the same way: " : who + " failed first: ") +
                shortText(root.text);

    // The root's own lines, then the consequences on other ranks.
    std::set<int> cascaded;
    for (const LogEvidence& e : items)
        if (std::find(blamed.begin(), blamed.end(), e.rank) != blamed.end() &&
            (e.symptom == root.symptom || e.fatal) && f.evidence.size() < 8)
            f.evidence.push_back(evidenceOf(e));
    if (f.evidence.empty()) f.evidence.push_back(evidenceOf(root));
    for (const LogEvidence& e : items) {
        if (std::find(blamed.begin(), blamed.end(), e.rank) != blamed.end()) continue;
        const bool after = root.timeNs < 0 || e.timeNs < 0 || e.timeNs >= root.timeNs;
        if (!after) continue;
        if (!e.cascade && !isWaiting(e.symptom) && e.symptom != symptoms::kCommunicationError)
            continue;
        if (e.rank >= 0) cascaded.insert(e.rank);
        if (f.evidence.size() < 16) {
            Evidence ev = evidenceOf(e);
            ev.text += "  [consequence]";
            f.evidence.push_back(ev);
        }
    }
    if (!cascaded.empty())
        f.summary += "; " + formatRanks(std::vector<int>(cascaded.begin(), cascaded.end())) +
                     " failed after it as a consequence";
    res.findings.push_back(std::move(f));

    // Independent failures on other ranks that are not explained as consequences.
    for (const LogEvidence* o : alsoFailed) {
        if (o->rank >= 0 && cascaded.count(o->rank) && o->symptom == symptoms::kCommunicationError)
            continue;
        Finding g;
        g.kind = kindOf(*o) == "crash" ? "crash" : "log_symptom";
        g.symptom = o->symptom;
        g.severity = "warning";
        g.confidence = 0.5;
        if (o->rank >= 0) g.ranks = {o->rank};
        g.summary = (o->rank >= 0 ? "rank " + std::to_string(o->rank) : std::string("launcher")) +
                    " also reports: " + shortText(o->text);
        g.evidence.push_back(evidenceOf(*o));
        res.findings.push_back(std::move(g));
    }
    return res;
}

} // namespace rankscope
