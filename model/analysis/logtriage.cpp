#include "model/analysis/logtriage.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/symptomids.h"
#include "model/kb/symptomclassifier.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace rankscope {

namespace {

// Ranks whose first error comes this close to the root's are taken to have failed on their
// own (a symmetric fault: every rank ran the same wrong code); later ones follow from it.
constexpr std::int64_t kSymmetricWindowNs = 2'000'000'000;
constexpr std::int64_t kPeerSlackNs = 2'000'000'000;

// Errors that say a peer went away or did not answer: on their own they blame the network,
// next to a rank that failed they are what its peers saw of the failure.
bool isPeerFailure(const std::string& symptom)
{
    return symptom == symptoms::kCommunicationError || symptom == symptoms::kHang;
}

using LineKey = std::pair<std::string, int>;

LineKey keyOf(const Evidence& e)
{
    return {e.path, e.line};
}

// Two signatures can match one line; cite it once.
bool cites(const std::vector<Evidence>& list, const Evidence& e)
{
    return std::any_of(list.begin(), list.end(),
                       [&](const Evidence& x) { return x.path == e.path && x.line == e.line; });
}

// TORCH_DISTRIBUTED_DEBUG=DETAIL names two ranks per mismatch: "Rank A is running collective:
// <fingerprint>, but Rank B is running collective: <fingerprint>". Collects rank -> fingerprint.
void readFingerprints(const std::string& text, std::map<int, std::string>& out)
{
    static const std::string kIntro = " is running collective: ";
    static const std::string kBut = ", but Rank ";
    std::size_t at = 0;
    while ((at = text.find(kIntro, at)) != std::string::npos) {
        std::size_t digits = at;
        while (digits > 0 && std::isdigit(static_cast<unsigned char>(text[digits - 1])))
            --digits;
        const std::size_t from = at + kIntro.size();
        if (digits == at || digits < 5 || text.compare(digits - 5, 5, "Rank ") != 0) {
            at = from;
            continue;
        }
        const int rank = std::stoi(text.substr(digits, at - digits));
        std::size_t end = text.find(kBut, from);
        std::string fp =
            text.substr(from, end == std::string::npos ? std::string::npos : end - from);
        while (!fp.empty() && (fp.back() == '.' || fp.back() == ' '))
            fp.pop_back();
        out.emplace(rank, fp);
        at = from;
    }
}

// One field of a fingerprint: "OpType=ALLREDUCE, TensorShape=[2], ..." -> "[2]" for
// "TensorShape"; empty when absent.
std::string fingerprintField(const std::string& fp, const std::string& name)
{
    const std::size_t at = fp.find(name + "=");
    if (at == std::string::npos) return {};
    const std::size_t from = at + name.size() + 1;
    std::size_t end = from;
    for (int depth = 0; end < fp.size(); ++end) {
        const char c = fp[end];
        if (c == '[' || c == '(') ++depth;
        if ((c == ']' || c == ')') && depth > 0)
            --depth;
        else if ((c == ',' || c == ')') && depth == 0)
            break;
    }
    return fp.substr(from, end - from);
}

// What differs between the fingerprints the ranks report: the fix-rule conditions and the
// values ("TensorShape [1] on ranks 0, 2; [2] on rank 1").
void fingerprintDifferences(const std::map<int, std::string>& byRank, Finding& f)
{
    static const std::pair<const char*, const char*> kFields[] = {
        {"OpType", "op_mismatch"},
        {"TensorShape", "size_mismatch"},
        {"TensorDtypes", "dtype_mismatch"},
    };
    for (const auto& [field, condition] : kFields) {
        std::map<std::string, std::vector<int>> ranksOf;
        for (const auto& [rank, fp] : byRank)
            if (std::string v = fingerprintField(fp, field); !v.empty()) ranksOf[v].push_back(rank);
        if (ranksOf.size() < 2) continue;
        f.conditions.push_back(condition);
        std::string values;
        for (const auto& [v, ranks] : ranksOf)
            values += (values.empty() ? std::string(field) + " " : std::string("; ")) + v + " on " +
                      formatRanks(ranks);
        f.detail += (f.detail.empty() ? "" : "; ") + values;
    }
}

bool earlier(const Evidence& a, const Evidence& b)
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

// A line cut into runs of digits and runs of the rest ("port ", "45958", "]"): lines of one
// shape have the same runs of the rest.
std::vector<std::string> digitRuns(const std::string& text)
{
    std::vector<std::string> runs;
    for (std::size_t i = 0; i < text.size();) {
        const bool digit = std::isdigit(static_cast<unsigned char>(text[i])) != 0;
        std::size_t end = i;
        while (end < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[end])) != 0) == digit)
            ++end;
        runs.push_back(text.substr(i, end - i));
        i = end;
    }
    return runs;
}

bool sameShape(const std::vector<std::string>& a, const std::vector<std::string>& b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!a[i].empty() && std::isdigit(static_cast<unsigned char>(a[i][0])) == 0 && a[i] != b[i])
            return false;
    return true;
}

// What the ranks failing one way each wrote, so no rank is quoted with another's words: the line
// when they all wrote it; else each shape of line with the ranks that wrote it ("rank 0: ... recv
// ...; rank 2: ... send ..."), its first rank's words quoted and the ranks whose line differs
// only in its numbers (ports, pids, a tensor's shape) named after it; after the first line, the
// start a line shares with it is "…".
std::string ownWords(const std::vector<int>& ranks, const std::map<int, const Evidence*>& ownLine,
                     const Evidence& root)
{
    constexpr std::size_t kQuoted = 3;
    struct Shape {
        std::string text;              // its first rank's line
        std::vector<std::string> runs; // digitRuns(text)
        std::vector<int> ranks;        // in order, the first rank's words quoted
        std::vector<int> otherNumbers; // of `ranks`, those whose line has other numbers
    };
    std::vector<Shape> shapes; // in order of their first rank
    for (const int r : ranks) {
        const auto line = ownLine.find(r);
        std::string text = shortText(line == ownLine.end() ? root.text : line->second->text);
        std::vector<std::string> runs = digitRuns(text);
        auto same = std::find_if(shapes.begin(), shapes.end(),
                                 [&](const Shape& s) { return sameShape(s.runs, runs); });
        if (same == shapes.end()) {
            shapes.push_back({std::move(text), std::move(runs), {r}, {}});
            continue;
        }
        same->ranks.push_back(r);
        if (text != same->text) same->otherNumbers.push_back(r);
    }
    const auto quote = [](const Shape& s) {
        if (s.otherNumbers.empty()) return s.text;
        return s.text + " (" + formatRanks({s.ranks.front()}) + "'s words; " +
               formatRanks(s.otherNumbers) + " wrote it with other numbers)";
    };
    if (shapes.size() == 1) return quote(shapes.front());
    // After the first line, what a line shares with it from its start is "…" (to the last space,
    // '/', ':' or '[' before they part), so a summary stays short enough to read.
    const auto unshared = [&](const std::string& text) {
        const std::string& first = shapes.front().text;
        std::size_t same = 0;
        while (same < text.size() && same < first.size() && text[same] == first[same])
            ++same;
        const std::size_t cut = text.find_last_of(" /:[", same == 0 ? 0 : same - 1);
        constexpr std::size_t kWorthEliding = 20;
        return cut == std::string::npos || cut < kWorthEliding ? text : "…" + text.substr(cut + 1);
    };
    std::string out;
    for (std::size_t i = 0; i < shapes.size() && i < kQuoted; ++i)
        out += (i ? "; " : "") + formatRanks(shapes[i].ranks) + ": " +
               (i ? unshared(quote(shapes[i])) : quote(shapes[i]));
    if (shapes.size() > kQuoted)
        out += "; and " + std::to_string(shapes.size() - kQuoted) +
               (shapes.size() - kQuoted == 1 ? " other line" : " other lines");
    return out;
}

} // namespace

bool LogTriage::isWaiting(const Evidence& e)
{
    return e.symptom == symptoms::kHang || e.witness == SignatureWitness::CollectiveWait;
}

FindingKind LogTriage::kindOf(const Evidence& e)
{
    if (e.symptom.rfind("communication-setup/", 0) == 0) return FindingKind::SetupFailure;
    if (e.symptom == symptoms::kTensorMismatch) return FindingKind::CollectiveMismatch;
    if (isWaiting(e)) return FindingKind::Hang; // it died waiting: a timeout, no crash
    if (e.fatal) return FindingKind::Crash;
    return FindingKind::LogSymptom;
}

LogTriage::Result LogTriage::triage(std::vector<Evidence> items, const std::vector<int>& worldRanks)
{
    Result res;
    std::stable_sort(items.begin(), items.end(), earlier);
    // Whatever a rank reports after its own cascade line (it was sent SIGTERM, its watchdog
    // tore it down) is part of the teardown too. In one file the lines' order says what came
    // after: the watchdog stamps its timeout and the teardown lines it prints right after with
    // the same microsecond, and an equal stamp would make the timeout part of its own teardown.
    std::map<int, const Evidence*> firstCascade;
    for (const Evidence& e : items)
        if (e.cascade && e.rank >= 0) firstCascade.emplace(e.rank, &e);
    for (Evidence& e : items) {
        const auto it = firstCascade.find(e.rank);
        if (e.cascade || it == firstCascade.end()) continue;
        const Evidence& c = *it->second;
        const bool after = e.path == c.path ? e.line > c.line
                                            : e.timeNs >= 0 && c.timeNs >= 0 && e.timeNs > c.timeNs;
        if (after) e.cascade = true;
    }
    std::set<int> waiting, lostPeer;
    std::set<std::string> waitSymptoms; // the leaves the waits were read as
    std::set<LineKey> waitLines, peerLossLines;
    for (const Evidence& e : items) {
        if (isWaiting(e)) waitLines.insert(keyOf(e));
        if (e.witness == SignatureWitness::PeerFailure) peerLossLines.insert(keyOf(e));
        if (e.cascade || e.rank < 0) continue;
        if (e.witness == SignatureWitness::PeerFailure) lostPeer.insert(e.rank);
        if (isWaiting(e)) {
            waiting.insert(e.rank);
            res.waitingEvidence.push_back(e.cited());
            waitSymptoms.insert(e.symptom);
        }
    }
    const auto losesPeer = [&](const Evidence& e) { return peerLossLines.count(keyOf(e)) > 0; };
    // A failure of the rank's own: neither a wait nor a peer gone.
    const auto ownFailure = [&](const Evidence& e) {
        return !losesPeer(e) && !waitLines.count(keyOf(e));
    };
    res.waitingRanks.assign(waiting.begin(), waiting.end());
    if (waitSymptoms.size() == 1 && (*waitSymptoms.begin() == symptoms::kSetupHang ||
                                     *waitSymptoms.begin() == symptoms::kPreparationHang))
        res.waitStageHang = *waitSymptoms.begin();
    res.lostPeerRanks.assign(lostPeer.begin(), lostPeer.end());
    // A rank that lost its peer was inside a collective too (the peer it waited for went away
    // first): it is no more the rank that never arrived than one that timed out.
    if (!waiting.empty())
        for (int r : worldRanks)
            if (!waiting.count(r) && !lostPeer.count(r)) res.silentRanks.push_back(r);

    // Roots: non-cascade failures that are not just waits, and the waits a rank died of (its
    // line read as a wait, whatever else matches it). Each rank's first one counts.
    std::vector<const Evidence*> roots;
    std::set<int> seen;
    for (const Evidence& e : items) {
        if (e.cascade || (isWaiting(e) ? !e.fatal : waitLines.count(keyOf(e)) > 0)) continue;
        if (e.rank >= 0 && !seen.insert(e.rank).second) continue;
        roots.push_back(&e);
    }
    if (roots.empty()) return res;

    // A peer's connection error stamped just before a rank's own fatal failure follows from
    // that failure: stamps of unstamped traceback lines are only lower bounds, so a peer can
    // look a little earlier than the rank that died.
    // A rank that lost its peer next to a rank that failed on its own (a gloo enforce, an
    // abort) saw that failure, whichever symptom both lines share.
    const Evidence* chosen = roots.front();
    if ((isPeerFailure(chosen->symptom) || losesPeer(*chosen)) && chosen->timeNs >= 0)
        for (const Evidence* o : roots)
            if (o->rank != chosen->rank && o->timeNs >= 0 &&
                o->timeNs - chosen->timeNs <= kPeerSlackNs &&
                ((o->fatal && !isPeerFailure(o->symptom)) ||
                 (losesPeer(*chosen) && ownFailure(*o)))) {
                chosen = o;
                break;
            }
    // A lost peer is what a rank sees of another's failure or teardown; a rank that died waiting
    // for a peer that never answered is nearer the cause, however its lines are stamped.
    if (losesPeer(*chosen))
        for (const Evidence* o : roots)
            if (!losesPeer(*o) && isWaiting(*o)) {
                chosen = o;
                break;
            }
    if (chosen != roots.front()) {
        roots.erase(std::find(roots.begin(), roots.end(), chosen));
        roots.insert(roots.begin(), chosen);
    }
    const Evidence& root = *roots.front();
    Finding f;
    f.kind = kindOf(root);
    f.symptom = root.symptom;
    f.severity = Severity::Error;
    f.confidence = 0.9;
    std::vector<int> blamed;
    std::map<int, const Evidence*> ownLine; // per blamed rank, the line it failed with
    if (root.rank >= 0) {
        blamed.push_back(root.rank);
        ownLine.emplace(root.rank, &root);
    }
    std::vector<const Evidence*> alsoFailed;
    for (std::size_t i = 1; i < roots.size(); ++i) {
        const Evidence& o = *roots[i];
        const bool close =
            root.timeNs >= 0 && o.timeNs >= 0 && o.timeNs - root.timeNs <= kSymmetricWindowNs;
        // A rank that lost its peer did not fail the way a rank failing on its own did.
        const bool sawTheRoot = losesPeer(o) && !losesPeer(root);
        if (o.symptom == root.symptom && !sawTheRoot && o.rank >= 0 && (close || root.timeNs < 0)) {
            blamed.push_back(o.rank);
            ownLine.emplace(o.rank, &o);
        } else
            alsoFailed.push_back(&o);
    }
    std::sort(blamed.begin(), blamed.end());
    blamed.erase(std::unique(blamed.begin(), blamed.end()), blamed.end());
    std::string fingerprintNote;
    if (f.kind == FindingKind::CollectiveMismatch && blamed.size() > 1) {
        // Every rank of a mismatch reports it; the fingerprints say whose call differs from the
        // one most ranks made.
        std::map<int, std::string> byRank;
        for (const Evidence& e : items)
            if (e.symptom == root.symptom) readFingerprints(e.text, byRank);
        fingerprintDifferences(byRank, f);
        std::map<std::string, std::vector<int>> byFingerprint;
        for (const auto& [r, fp] : byRank)
            byFingerprint[fp].push_back(r);
        std::size_t most = 0;
        for (const auto& [fp, rs] : byFingerprint)
            most = std::max(most, rs.size());
        if (byFingerprint.size() > 1 && 2 * most > byRank.size()) {
            std::vector<int> odd;
            for (const auto& [fp, rs] : byFingerprint)
                if (rs.size() != most) odd.insert(odd.end(), rs.begin(), rs.end());
            std::sort(odd.begin(), odd.end());
            blamed = odd;
            fingerprintNote = "; " + formatRanks(odd) + " called with a fingerprint that differs " +
                              "from the one " + std::to_string(most) + " ranks used";
        } else if (byFingerprint.size() > 1) {
            fingerprintNote = "; " + std::to_string(byRank.size()) +
                              " ranks report different fingerprints and no majority, so the logs "
                              "cannot tell which rank's call deviates: compare the shapes";
        }
    }
    // The ranks that reported a mismatch a peer's message showed them only witnessed it: any
    // member's call may be the one of another size, so the finding names them all.
    const bool witnessed = f.kind == FindingKind::CollectiveMismatch && fingerprintNote.empty() &&
                           root.witness == SignatureWitness::CollectiveMismatch &&
                           worldRanks.size() > 1;
    if (witnessed) {
        fingerprintNote = "; " + formatRanks(blamed) +
                          " received a message of another size than its own call posted, so the "
                          "ranks passed different sizes or dtypes to one collective; the line "
                          "does not say whose call deviates: compare what each rank passes";
        f.conditions.push_back("message_size_mismatch");
    }
    f.ranks = witnessed ? worldRanks : blamed;
    const auto knownSignature = [](const std::string& s) {
        return !s.empty() && s != SymptomClassifier::kUncaughtExceptionSignature;
    };
    const bool known = knownSignature(root.signature);
    // Every signature the root line matched: "NCCL error in: ..., unhandled cuda error" is both
    // the generic NCCL error and NCCL's failed CUDA call, and a fix rule may name either.
    if (known) {
        f.conditions.push_back("signature:" + root.signature);
        for (const Evidence& e : items) {
            const std::string condition = "signature:" + e.signature;
            if (e.path == root.path && e.line == root.line && knownSignature(e.signature) &&
                std::find(f.conditions.begin(), f.conditions.end(), condition) ==
                    f.conditions.end())
                f.conditions.push_back(condition);
        }
    }
    if (root.fatal && !known) f.conditions.push_back("unknown_exception");
    if (f.detail.empty()) f.detail = shortText(root.text);
    const std::string who = blamed.empty() ? std::string("the launcher") : formatRanks(blamed);
    f.summary = (witnessed           ? who + " reported: "
                 : blamed.size() > 1 ? who + " failed the same way: "
                                     : who + " failed first: ") +
                (witnessed ? shortText(root.text) : ownWords(blamed, ownLine, root)) +
                fingerprintNote;

    // The root's own lines, then the consequences on other ranks.
    std::set<int> cascaded;
    for (const Evidence& e : items)
        if (std::find(blamed.begin(), blamed.end(), e.rank) != blamed.end() &&
            (e.symptom == root.symptom || e.fatal) && f.evidence.size() < 8 &&
            !cites(f.evidence, e))
            f.evidence.push_back(e.cited());
    if (f.evidence.empty()) f.evidence.push_back(root.cited());
    for (const Evidence& e : items) {
        if (std::find(blamed.begin(), blamed.end(), e.rank) != blamed.end()) continue;
        const bool after = root.timeNs < 0 || e.timeNs < 0 || e.timeNs >= root.timeNs ||
                           (isPeerFailure(e.symptom) && e.timeNs >= root.timeNs - kPeerSlackNs);
        if (!after) continue;
        if (!e.cascade && !isWaiting(e) && e.symptom != symptoms::kCommunicationError) continue;
        if (e.rank >= 0) cascaded.insert(e.rank);
        if (f.evidence.size() < 16 && !cites(f.evidence, e)) {
            Evidence ev = e.cited();
            ev.text += kConsequenceMark;
            f.evidence.push_back(ev);
        }
    }
    Finding consequence;
    if (!cascaded.empty()) {
        const std::string peers = formatRanks(std::vector<int>(cascaded.begin(), cascaded.end()));
        f.summary += "; " + peers + " failed after it as a consequence";
        consequence.kind = FindingKind::LogSymptom;
        consequence.symptom = symptoms::kCommunicationError;
        consequence.severity = Severity::Warning;
        consequence.confidence = 0.4;
        consequence.ranks.assign(cascaded.begin(), cascaded.end());
        consequence.summary =
            peers + " lost their peer after " + who + " failed: consequences, not a cause";
        for (const Evidence& ev : f.evidence)
            if (cascaded.count(ev.rank) && consequence.evidence.size() < 8)
                consequence.evidence.push_back(ev);
    }
    res.findings.push_back(std::move(f));
    if (!consequence.ranks.empty()) res.findings.push_back(std::move(consequence));

    // Independent failures on other ranks that are not explained as consequences.
    for (const Evidence* o : alsoFailed) {
        if (o->rank >= 0 && cascaded.count(o->rank) && o->symptom == symptoms::kCommunicationError)
            continue;
        Finding g;
        g.kind = kindOf(*o) == FindingKind::Crash ? FindingKind::Crash : FindingKind::LogSymptom;
        g.symptom = o->symptom;
        g.severity = Severity::Warning;
        g.confidence = 0.5;
        if (o->rank >= 0) g.ranks = {o->rank};
        g.summary = (o->rank >= 0 ? "rank " + std::to_string(o->rank) : std::string("launcher")) +
                    " also reports: " + shortText(o->text);
        g.evidence.push_back(o->cited());
        res.findings.push_back(std::move(g));
    }
    return res;
}

} // namespace rankscope
