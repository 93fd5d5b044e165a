#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rankscope {

// A per-load budget (in one unit or several: events and decompressed bytes) shared by the
// sources of one load so that what each source gets depends on the sources alone, never on which
// worker reads first (max-min fairness, "water filling"): every source may first read an equal
// share of the budget; the sources that ended within it give back what they left, and those
// stopped at their share are read again with an equal share of what is left, until none is
// stopped or the shares no longer grow. A source still stopped at its share is truncated by the
// load limit, and every such source got the same share.
//
//   LoadShare share(perLoad, perFile, sources);
//   read every source with share.caps(); call share.ended(used) for each that was not stopped
//   while (share.grow()) read the stopped ones again with share.caps(), the same way
class LoadShare {
public:
    // `perLoad[u]` and `perFile[u]`: the load's and one source's budget in unit u; `sources`:
    // how many sources share it.
    LoadShare(std::vector<std::int64_t> perLoad, std::vector<std::int64_t> perFile,
              std::size_t sources);

    // What each source read in this round may use, per unit: its share, at most its own budget.
    const std::vector<std::int64_t>& caps() const { return m_caps; }
    // Whether a source that stopped at caps()[unit] was stopped by the load (not by its own
    // budget).
    bool isLoadLimit(std::size_t unit) const { return m_caps[unit] < m_perFile[unit]; }
    // A source of this round that was not stopped by the load; `used` per unit.
    void ended(const std::vector<std::int64_t>& used);
    // After a round: whether the sources stopped at their share get more (caps() grows) and are
    // to be read again; false when none was stopped or nothing more is left for them.
    bool grow();
    // The load's budget in `unit`.
    std::int64_t perLoad(std::size_t unit) const { return m_perLoad[unit]; }
    // Sources still stopped at their share.
    std::size_t stopped() const { return m_pending; }

private:
    std::vector<std::int64_t> capsFor(std::size_t sources) const;

    std::vector<std::int64_t> m_perLoad;
    std::vector<std::int64_t> m_perFile;
    std::vector<std::int64_t> m_left; // of the load's budget, for the sources not yet ended
    std::size_t m_pending;            // sources not yet ended
    std::vector<std::int64_t> m_caps;
};

} // namespace rankscope
