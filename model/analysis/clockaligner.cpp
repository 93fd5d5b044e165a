#include "model/analysis/clockaligner.h"

#include <algorithm>
#include <set>

namespace rankscope {

namespace {

constexpr std::size_t kRowBlock = 64;

std::int64_t median(std::vector<std::int64_t>& v)
{
    const auto mid = v.begin() + std::ptrdiff_t(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    if (v.size() % 2 == 1) return *mid;
    const std::int64_t upper = *mid;
    const std::int64_t lower = *std::max_element(v.begin(), mid);
    return lower + (upper - lower) / 2;
}

std::int64_t completionNs(const CollectiveRecord& c)
{
    if (c.state != CollectiveRecord::State::Completed) return -1;
    return c.execEndNs >= 0 ? c.execEndNs : -1;
}

} // namespace

std::int64_t ClockAlignment::offsetOf(int rank) const
{
    const auto it = offsetNs.find(rank);
    return it != offsetNs.end() && it->second ? *it->second : 0;
}

ClockAlignment ClockAligner::align(const EventStore& store,
                                   const std::vector<CollectiveGroup>& groups,
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
            for (const auto& row : g.collectives) {
                const std::int32_t i = row.records[std::size_t(slot)];
                if (i >= 0 && completionNs(store.collectives[std::size_t(i)]) >= 0) {
                    out.referenceRank = r;
                    break;
                }
            }
            if (out.referenceRank >= 0) break;
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
            std::vector<std::vector<std::int64_t>> diffs(g.members.size());
            std::vector<std::int64_t> anchorNs(g.collectives.size(), -1);
            for (std::size_t k = 0; k < g.collectives.size(); ++k) {
                const std::int32_t a = g.collectives[k].records[std::size_t(anchorSlot)];
                if (a >= 0) anchorNs[k] = completionNs(store.collectives[std::size_t(a)]);
            }
            // Blocks of rows, member by member inside a block: a member's records of
            // consecutive rows are neighbours in the store, a row's records are not.
            for (std::size_t k0 = 0; k0 < g.collectives.size(); k0 += kRowBlock) {
                const std::size_t k1 = std::min(g.collectives.size(), k0 + kRowBlock);
                for (std::size_t s = 0; s < g.members.size(); ++s) {
                    if (done[s]) continue;
                    for (std::size_t k = k0; k < k1; ++k) {
                        if (anchorNs[k] < 0) continue;
                        const std::int32_t b = g.collectives[k].records[s];
                        if (b < 0) continue;
                        const std::int64_t tb = completionNs(store.collectives[std::size_t(b)]);
                        if (tb >= 0) diffs[s].push_back(tb - anchorNs[k]);
                    }
                }
            }
            for (std::size_t s = 0; s < g.members.size(); ++s) {
                if (diffs[s].empty()) continue;
                out.samples[g.members[s]] = int(diffs[s].size());
                out.offsetNs[g.members[s]] = anchorOffset + median(diffs[s]);
                progress = true;
            }
        }
    }
    for (const auto& [r, off] : out.offsetNs)
        if (!off) out.notes[r] = "no collective completed on both this rank and an aligned rank";
    return out;
}

} // namespace rankscope
