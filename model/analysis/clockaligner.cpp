#include "model/analysis/clockaligner.h"

#include "model/store/parallelfor.h"

#include <algorithm>
#include <set>

namespace rankscope {

namespace {

std::int64_t median(std::vector<std::int64_t>& v)
{
    const auto mid = v.begin() + std::ptrdiff_t(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    if (v.size() % 2 == 1) return *mid;
    const std::int64_t upper = *mid;
    const std::int64_t lower = *std::max_element(v.begin(), mid);
    return lower + (upper - lower) / 2;
}

} // namespace

std::int64_t ClockAlignment::offsetOf(int rank) const
{
    const auto it = offsetNs.find(rank);
    return it != offsetNs.end() && it->second ? *it->second : 0;
}

ClockAlignment ClockAligner::align(const std::vector<CollectiveGroup>& groups,
                                   const std::vector<int>& ranks)
{
    ClockAlignment out;
    std::set<int> all(ranks.begin(), ranks.end());
    for (const auto& g : groups)
        all.insert(g.members.begin(), g.members.end());
    if (all.empty()) return out;
    // The reference is the lowest rank that completed anything, so rank 0 stays at offset 0
    // whenever it can.
    for (int r : all) {
        for (const auto& g : groups) {
            const int slot = g.slotOf(r);
            if (slot < 0) continue;
            const auto ends =
                g.completedEndNs.begin() + std::ptrdiff_t(std::size_t(slot) * g.collectives.size());
            if (std::any_of(ends, ends + std::ptrdiff_t(g.collectives.size()),
                            [](std::int64_t t) { return t >= 0; })) {
                out.referenceRank = r;
                break;
            }
        }
        if (out.referenceRank >= 0) break;
    }
    for (int r : all)
        out.offsetNs[r] = std::nullopt;
    if (out.referenceRank < 0) {
        for (int r : all)
            out.notes[r] = "no completed collective to align on";
        return out;
    }
    out.offsetNs[out.referenceRank] = 0;
    out.samples[out.referenceRank] = 0;

    // Ranks that share no group with the reference are reached through ranks already aligned.
    bool progress = true;
    while (progress) {
        progress = false;
        for (const auto& g : groups) {
            int anchorSlot = -1;
            for (std::size_t s = 0; s < g.members.size() && anchorSlot < 0; ++s)
                if (out.offsetNs[g.members[s]]) anchorSlot = int(s);
            if (anchorSlot < 0) continue;
            const std::int64_t anchorOffset = *out.offsetNs[g.members[std::size_t(anchorSlot)]];
            std::vector<char> done(g.members.size());
            for (std::size_t s = 0; s < g.members.size(); ++s)
                done[s] = out.offsetNs[g.members[s]].has_value();
            // The matcher's completion column per member: sequential reads, not the records.
            // Members in parallel, each worker reusing one buffer of differences.
            const std::size_t rows = g.collectives.size();
            const std::int64_t* anchorNs = g.completedEndNs.data() + std::size_t(anchorSlot) * rows;
            std::vector<std::optional<std::int64_t>> found(g.members.size());
            std::vector<int> samples(g.members.size(), 0);
            std::vector<std::vector<std::int64_t>> diffsOf(parallelWorkers(g.members.size()));
            parallelFor(g.members.size(), [&](std::size_t s, std::size_t worker) {
                if (done[s]) return;
                std::vector<std::int64_t>& diffs = diffsOf[worker];
                diffs.clear();
                const std::int64_t* ns = g.completedEndNs.data() + s * rows;
                for (std::size_t k = 0; k < rows; ++k)
                    if (anchorNs[k] >= 0 && ns[k] >= 0) diffs.push_back(ns[k] - anchorNs[k]);
                if (diffs.empty()) return;
                samples[s] = int(diffs.size());
                found[s] = anchorOffset + median(diffs);
            });
            for (std::size_t s = 0; s < g.members.size(); ++s) {
                if (!found[s]) continue;
                out.samples[g.members[s]] = samples[s];
                out.offsetNs[g.members[s]] = found[s];
                progress = true;
            }
        }
    }
    for (const auto& [r, off] : out.offsetNs)
        if (!off) out.notes[r] = "no collective completed on both this rank and an aligned rank";
    return out;
}

} // namespace rankscope
