#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rankscope {

// How the sources of one load share its budgets.
enum class LoadSharing : std::uint8_t {
    // Evenly (max-min fairness, "water filling"), so that what each source gets depends on the
    // sources alone, never on which worker reads first: every source may first read an equal
    // share of the budget; the sources that ended within it give back what they left, and those
    // stopped at their share are read again with an equal share of what is left, until none is
    // stopped or the shares no longer grow. A source still stopped at its share is truncated by
    // the load limit, and every such source got the same share.
    // For trace events, decompressed trace bytes and Flight Recorder entries: a trace or dump is
    // read against a cap it stops at and can be read again with a larger one, and which ranks a
    // large job loses to the budget must not change from one load to the next.
    Even,
    // First come, first served, in one pass: a source takes (take()) what it needs of what is
    // left when it gets there, and what it got stays its own.
    // For log lines, rank tags and log bytes: a log's bytes are held from when it is read and its
    // lines and tags are only known as it is indexed, so reading logs in rounds would read and
    // index every log cut at its share twice. These budgets are memory guards far above what a
    // job's logs hold; which log a runaway load cuts depends on the order the workers reach them.
    FirstCome,
};

// A per-load budget (in one unit or several: events and decompressed bytes, or log lines, rank
// tags and log bytes) shared by the sources of one load, evenly or first come first served.
//
//   Even:      LoadShare share = LoadShare::even(perLoad, perFile, sources);
//              read every source with share.caps(); call share.ended(used) for each that was not
//              stopped; while (share.grow()) read the stopped ones again with share.caps(), the
//              same way
//   FirstCome: LoadShare share = LoadShare::firstCome(perLoad);
//              every source, on any thread, share.take(unit, wanted) before it uses that much
class LoadShare {
public:
    // `perLoad[u]` and `perFile[u]`: the load's and one source's budget in unit u; `sources`:
    // how many sources share it.
    static LoadShare even(std::vector<std::int64_t> perLoad, std::vector<std::int64_t> perFile,
                          std::size_t sources);
    // `perLoad[u]`: the load's budget in unit u; a source's own budgets are its reader's.
    static LoadShare firstCome(std::vector<std::int64_t> perLoad);

    // The load's budget in `unit`.
    std::int64_t perLoad(std::size_t unit) const { return m_perLoad[unit]; }
    // What is used of it: taken (FirstCome), or read by the sources that ended (Even).
    std::int64_t used(std::size_t unit) const { return m_perLoad[unit] - m_left[unit].load(); }

    // Even: what each source read in this round may use, per unit: its share, at most its own
    // budget.
    const std::vector<std::int64_t>& caps() const { return m_caps; }
    // Even: whether a source that stopped at caps()[unit] was stopped by the load (not by its own
    // budget).
    bool isLoadLimit(std::size_t unit) const { return m_caps[unit] < m_perFile[unit]; }
    // Even: a source of this round that was not stopped by the load; `used` per unit.
    void ended(const std::vector<std::int64_t>& used);
    // Even, after a round: whether the sources stopped at their share get more (caps() grows) and
    // are to be read again; false when none was stopped or nothing more is left for them.
    bool grow();
    // Even: sources still stopped at their share.
    std::size_t stopped() const { return m_pending; }

    // FirstCome: takes up to `wanted` of what is left of the load's budget in `unit` and returns
    // what it took (less than `wanted` when the load is cut). Safe from any thread.
    std::int64_t take(std::size_t unit, std::int64_t wanted);

private:
    LoadShare(LoadSharing sharing, std::vector<std::int64_t> perLoad,
              std::vector<std::int64_t> perFile, std::size_t sources);
    std::vector<std::int64_t> capsFor(std::size_t sources) const;

    LoadSharing m_sharing;
    std::vector<std::int64_t> m_perLoad;
    std::vector<std::int64_t> m_perFile; // Even
    // Of the load's budget: what is not yet taken (FirstCome), or left for the sources not yet
    // ended (Even).
    std::unique_ptr<std::atomic<std::int64_t>[]> m_left;
    std::size_t m_pending; // Even: sources not yet ended
    std::vector<std::int64_t> m_caps;
};

} // namespace rankscope
