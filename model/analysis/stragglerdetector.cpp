#include "model/analysis/stragglerdetector.h"

#include "model/analysis/symptomids.h"
#include "model/store/parallelfor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

namespace rankscope {

namespace {

// Upper tail of Binomial(n, p) at k, summed in log space so that n in the tens of thousands
// neither overflows nor underflows.
double binomialUpperTail(int k, int n, double p)
{
    if (k <= 0) return 1.0;
    if (k > n) return 0.0;
    const double lp = std::log(p), lq = std::log1p(-p);
    double maxTerm = -INFINITY;
    std::vector<double> terms;
    terms.reserve(std::size_t(n - k + 1));
    for (int i = k; i <= n; ++i) {
        const double t = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                         i * lp + (n - i) * lq;
        terms.push_back(t);
        maxTerm = std::max(maxTerm, t);
        if (t < maxTerm - 40.0) break; // the rest no longer changes the sum
    }
    double sum = 0.0;
    for (double t : terms)
        sum += std::exp(t - maxTerm);
    return std::min(1.0, std::exp(maxTerm) * sum);
}

std::int64_t median(std::vector<std::int64_t> v)
{
    if (v.empty()) return -1;
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
}

// Fewer than this many collectives cannot tell a pattern from noise.
constexpr int kMinSamples = 5;
constexpr double kAlpha = 0.01;
// Ranks in lock-step differ by microseconds; a wait shorter than this is not a straggler's.
constexpr std::int64_t kMinSkewNs = 1'000'000;
constexpr std::size_t kRowBlock = 512; // rows judged per task
constexpr std::int64_t kNoArrival = std::numeric_limits<std::int64_t>::min();

// One row's arrivals judged: the member that arrived last, by how much before the next one,
// and whether the others really waited for it. last is -1 when fewer than two members arrived
// or the last ones tie: such a row carries no information on who was waited for.
struct RowVerdict {
    std::int64_t delayNs = 0;
    int last = -1;
    int arrivals = 0;
    bool waited = false;
};

// A row's arrivals met member by member, in slot order.
struct RowScan {
    std::int64_t latest = kNoArrival, second = kNoArrival;
    int last = -1, arrivals = 0;

    void add(int slot, std::int64_t t)
    {
        ++arrivals;
        if (t >= latest) {
            second = latest;
            latest = t;
            last = slot;
        } else if (t > second) {
            second = t;
        }
    }
    RowVerdict verdict() const
    {
        RowVerdict v;
        v.arrivals = arrivals;
        if (arrivals < 2 || latest - second <= 0) return v;
        v.last = last;
        v.delayNs = latest - second;
        v.waited = v.delayNs >= kMinSkewNs;
        return v;
    }
};

} // namespace

StragglerDetector::Result StragglerDetector::detect(const AnalysisContext& ctx,
                                                    const std::vector<CollectiveGroup>& groups)
{
    Result res;
    struct Acc {
        int last = 0, samples = 0;
        double sumProb = 0.0; // expected count of being last under random arrival
        std::int64_t delaySum = 0;
        // The same over the collectives where someone waited at least kMinSkewNs: the
        // significance test, since the order of lock-step arrivals is noise that dilutes a rank
        // that is last at every collective that did wait.
        int waitedLast = 0, waitedSamples = 0;
        double waitedSumProb = 0.0;
        std::int64_t waitedDelaySum = 0;
        std::vector<std::tuple<int, std::int64_t, std::int32_t>> delays; // step, delay, record
    };
    std::map<int, Acc> acc;
    for (const CollectiveGroup& g : groups) {
        if (g.members.size() < 2) continue;
        const std::size_t n = g.members.size(), rows = g.collectives.size();
        std::vector<std::optional<std::int64_t>> offsets;
        for (int r : g.members) {
            const auto off = ctx.clock.offsetNs.find(r);
            offsets.push_back(off == ctx.clock.offsetNs.end() ? std::nullopt : off->second);
        }
        const auto arrivalAt = [&](std::size_t m, std::size_t k) {
            const std::int64_t start = g.completedStartNs[m * rows + k];
            return offsets[m] && start >= 0 ? start - *offsets[m] : kNoArrival;
        };
        // First the rows, in blocks in parallel: who arrived last and by how much. Each block
        // reads its stretch of every member's column of the matcher
        // (CollectiveGroup::completedStartNs), member by member.
        std::vector<RowVerdict> verdicts(rows);
        parallelFor((rows + kRowBlock - 1) / kRowBlock, [&](std::size_t block, std::size_t) {
            const std::size_t k0 = block * kRowBlock, k1 = std::min(rows, k0 + kRowBlock);
            std::vector<RowScan> scan(k1 - k0);
            for (std::size_t m = 0; m < n; ++m)
                for (std::size_t k = k0; k < k1; ++k) {
                    const std::int64_t t = arrivalAt(m, k);
                    if (t != kNoArrival) scan[k - k0].add(int(m), t);
                }
            for (std::size_t k = k0; k < k1; ++k)
                verdicts[k] = scan[k - k0].verdict();
        });
        // Then the members, in parallel, each summing over the rows in row order (so the sums
        // do not depend on the threads).
        std::vector<Acc> bySlot(n);
        parallelFor(n, [&](std::size_t m, std::size_t) {
            Acc& a = bySlot[m];
            for (std::size_t k = 0; k < rows; ++k) {
                const RowVerdict& v = verdicts[k];
                if (v.last < 0 || arrivalAt(m, k) == kNoArrival) continue;
                const double p = 1.0 / double(v.arrivals);
                ++a.samples;
                a.sumProb += p;
                if (v.waited) {
                    ++a.waitedSamples;
                    a.waitedSumProb += p;
                }
                if (std::size_t(v.last) != m) continue;
                ++a.last;
                a.delaySum += v.delayNs;
                if (!v.waited) continue;
                ++a.waitedLast;
                a.waitedDelaySum += v.delayNs;
                const std::int32_t rec = g.collectives[k].records[m];
                const CollectiveRecord& c = ctx.store.collectives[std::size_t(rec)];
                // The index of its step among the rank's steps, whichever way it is found (a
                // PyTorch 1.13 trace labels two steps ProfilerStep#0: labels are not indexes).
                a.delays.emplace_back(c.step >= 0 ? c.step
                                                  : ctx.steps.indexAt(c.rank, c.execStartNs),
                                      v.delayNs, rec);
            }
        });
        for (std::size_t m = 0; m < n; ++m) {
            Acc& from = bySlot[m];
            if (from.samples == 0) continue;
            Acc& to = acc[g.members[m]];
            to.last += from.last;
            to.samples += from.samples;
            to.sumProb += from.sumProb;
            to.delaySum += from.delaySum;
            to.waitedLast += from.waitedLast;
            to.waitedSamples += from.waitedSamples;
            to.waitedSumProb += from.waitedSumProb;
            to.waitedDelaySum += from.waitedDelaySum;
            to.delays.insert(to.delays.end(), from.delays.begin(), from.delays.end());
        }
    }

    std::vector<std::int64_t> stepDurations;
    for (const auto& [rank, steps] : ctx.steps.all())
        for (const StepSpan& s : steps)
            stepDurations.push_back(s.durationNs());
    const std::int64_t medianStep = median(stepDurations);
    std::map<int, std::int64_t> nonComm;
    for (const auto& [rank, steps] : ctx.steps.all()) {
        std::vector<std::int64_t> v;
        for (const StepSpan& s : steps)
            v.push_back(s.nonCommNs());
        nonComm[rank] = median(v);
    }

    const double alpha = kAlpha / double(std::max<std::size_t>(1, acc.size()));
    for (auto& [rank, a] : acc) {
        RankArrival r;
        r.rank = rank;
        r.lastCount = a.last;
        r.samples = a.samples;
        const double p = a.samples > 0 ? a.sumProb / a.samples : 1.0;
        r.pValue = binomialUpperTail(a.last, a.samples, p);
        r.meanDelayNs = a.last > 0 ? a.delaySum / a.last : 0;
        const auto nc = nonComm.find(rank);
        r.medianNonCommNs = nc == nonComm.end() ? -1 : nc->second;
        // A delay matters when the waits it causes add up to a visible share of the rank's
        // steps (several collectives per step each add theirs).
        // Median x count, so that one step that hung does not hide a steady straggler.
        std::vector<std::int64_t> own;
        for (const StepSpan& sp : ctx.steps.stepsOf(rank))
            own.push_back(sp.durationNs());
        const std::int64_t stepTotal = own.empty() ? 0 : median(own) * std::int64_t(own.size());
        const bool visible = stepTotal <= 0 || double(a.waitedDelaySum) >= 0.1 * double(stepTotal);
        const std::int64_t perStepMaterial =
            std::max<std::int64_t>(kMinSkewNs, medianStep > 0 ? medianStep / 20 : 0);
        std::set<int> steps;
        for (const auto& [step, d, rec] : a.delays)
            if (d >= perStepMaterial && step >= 0) steps.insert(step);
        r.steps.assign(steps.begin(), steps.end());
        const double waitedP = a.waitedSamples > 0 ? a.waitedSumProb / a.waitedSamples : 1.0;
        const double waitedPValue = binomialUpperTail(a.waitedLast, a.waitedSamples, waitedP);
        const std::int64_t waitedMeanNs = a.waitedLast > 0 ? a.waitedDelaySum / a.waitedLast : 0;
        const bool significant = a.waitedSamples >= kMinSamples && waitedPValue < alpha && visible;
        if (significant) {
            Finding f;
            f.kind = FindingKind::Straggler;
            f.symptom = symptoms::kLowEfficiency;
            f.severity = Severity::Warning;
            f.ranks = {rank};
            f.confidence =
                std::min(0.95, 0.5 + 0.05 * std::log10(1.0 / std::max(waitedPValue, 1e-300)));
            f.step = r.steps.empty() ? -1 : r.steps.front();
            f.summary = "rank " + std::to_string(rank) + " arrives last at " +
                        std::to_string(a.waitedLast) + " of " + std::to_string(a.waitedSamples) +
                        " collectives where a rank waited at least " +
                        formatDurationNs(kMinSkewNs) +
                        " (chance: " + std::to_string(int(std::lround(waitedP * a.waitedSamples))) +
                        "), on average " + formatDurationNs(waitedMeanNs) +
                        " after the next rank; the others wait for it";
            std::vector<std::int64_t> othersNonComm;
            for (const auto& [o, v] : nonComm)
                if (o != rank && v >= 0) othersNonComm.push_back(v);
            const std::int64_t others = median(othersNonComm);
            if (r.medianNonCommNs >= 0 && others >= 0)
                f.summary += "; per step it spends " + formatDurationNs(r.medianNonCommNs) +
                             " outside collectives vs " + formatDurationNs(others) +
                             " on the others";
            if (!r.steps.empty())
                f.summary +=
                    " (" + std::to_string(r.steps.size()) +
                    (r.steps.size() == 1 ? " step, " : " steps, ") +
                    ctx.steps.label(rank, r.steps.front()) +
                    (r.steps.size() == 1 ? std::string()
                                         : " to " + ctx.steps.label(rank, r.steps.back())) +
                    " in the trace's own numbering)";
            std::sort(a.delays.begin(), a.delays.end(),
                      [](const auto& x, const auto& y) { return std::get<1>(x) > std::get<1>(y); });
            for (std::size_t e = 0; e < a.delays.size() && e < 5; ++e) {
                const std::int32_t rec = std::get<2>(a.delays[e]);
                f.evidence.push_back(
                    ctx.evidenceOf(rec, "arrived " + formatDurationNs(std::get<1>(a.delays[e])) +
                                            " after the next rank"));
                const CollectiveRecord& c = ctx.store.collectives[std::size_t(rec)];
                const std::int64_t b = ctx.clock.toReference(c.rank, c.execStartNs);
                f.startNs = f.startNs < 0 ? b : std::min(f.startNs, b);
                f.endNs = std::max(f.endNs, ctx.clock.toReference(c.rank, c.execEndNs));
            }
            res.findings.push_back(std::move(f));
        }
        res.arrivals[rank] = std::move(r);
    }
    return res;
}

} // namespace rankscope
