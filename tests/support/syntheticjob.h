#pragma once

// Builds EventStores the way the trace readers will: per rank a main CPU thread with
// ProfilerStep#N spans and the c10d:: call of each collective, and an execution lane (a gloo
// worker thread or a GPU stream) holding the collective's execution span.
// The one synthetic-job builder of the analysis tests and of bench/analysis_bench: it has to
// build 1,024 ranks x 10,000 collectives in seconds, hence names interned once and per-rank
// vectors.

#include "model/store/eventstore.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace rankscope::test {

struct PendingEvent {
    std::int64_t startNs, endNs;
    StringId name;
    EventCategory category;
};

class SyntheticJob {
public:
    explicit SyntheticJob(int worldSize, bool withGroups = true, bool gpu = false)
        : m_world(worldSize), m_groups(withGroups), m_gpu(gpu),
          m_offsetNs(std::size_t(worldSize), 0), m_delayNs(std::size_t(worldSize), 0),
          m_seq(std::size_t(worldSize), 0), m_records(std::size_t(worldSize)),
          m_main(std::size_t(worldSize)), m_exec(std::size_t(worldSize))
    {
        if (m_groups) {
            m_defaultGroup = store.strings.intern("0");
            std::vector<int> members(static_cast<std::size_t>(worldSize));
            std::iota(members.begin(), members.end(), 0);
            m_groupRanks = store.rankLists.intern(members);
        }
    }

    void setClockOffset(int rank, std::int64_t ns) { m_offsetNs[std::size_t(rank)] = ns; }
    // Whether records list their group's members (Flight Recorder, Kineto's record_param_comms)
    // or only name the group; large jobs without member lists save 4 bytes x ranks per record.
    void setMembersInRecords(bool on) { m_membersInRecords = on; }
    // In step(), `rank` reaches every collective `ns` after it would have (a straggler).
    void setArrivalDelay(int rank, std::int64_t ns) { m_delayNs[std::size_t(rank)] = ns; }
    // In step(), every arrival is late by a uniform random 0..maxNs (scheduling noise).
    void setArrivalJitter(std::int64_t maxNs, std::uint64_t seed)
    {
        m_jitterNs = maxNs;
        m_rng.seed(seed);
    }
    int worldSize() const { return m_world; }
    std::int64_t nowNs() const { return m_nowNs; }

    void event(int rank, bool mainLane, std::int64_t startNs, std::int64_t endNs,
               const std::string& name, EventCategory cat)
    {
        event(rank, mainLane, startNs, endNs, store.strings.intern(name), cat);
    }
    void event(int rank, bool mainLane, std::int64_t startNs, std::int64_t endNs, StringId name,
               EventCategory cat)
    {
        auto& lane = mainLane ? m_main[std::size_t(rank)] : m_exec[std::size_t(rank)];
        const std::int64_t off = m_offsetNs[std::size_t(rank)];
        lane.push_back({startNs + off, endNs + off, name, cat});
    }

    // One collective on one rank; times are on the true (reference) clock.
    void collective(int rank, const std::string& op, std::int64_t issueNs, std::int64_t execStartNs,
                    std::int64_t execEndNs, CollectiveRecord::State state, int step,
                    std::int64_t nelems = 1024, std::string dtype = "Float",
                    std::int64_t outNelems = -2)
    {
        const OpNames& names = namesOf(op);
        CollectiveRecord c;
        c.rank = rank;
        c.op = names.op;
        if (m_groups) {
            c.processGroupName = m_defaultGroup;
            if (m_membersInRecords) c.groupRanks = m_groupRanks;
            c.groupSize = m_world;
            c.seq = ++m_seq[std::size_t(rank)]; // from 1, as c10d numbers them
            c.seqFromSource = true;
        }
        c.inNelems = nelems;
        c.outNelems =
            outNelems == -2 ? (op == "all_gather" ? nelems * m_world : nelems) : outNelems;
        c.dtype = store.strings.intern(dtype);
        const std::int64_t off = m_offsetNs[std::size_t(rank)];
        c.issueStartNs = issueNs + off;
        c.issueEndNs = issueNs + off + 20'000;
        event(rank, true, issueNs, issueNs + 20'000, names.call, EventCategory::CpuOp);
        if (execStartNs >= 0) {
            c.execStartNs = execStartNs + off;
            c.execEndNs = execEndNs + off;
            event(rank, false, execStartNs, execEndNs, names.exec, EventCategory::CommKernel);
        }
        c.state = state;
        c.step = step;
        m_records[std::size_t(rank)].push_back(std::move(c));
    }

    // A synchronous step: rank r computes computeNs[r], then every op in `ops` runs as a blocking
    // collective that ends `commNs` after the last rank arrived. Ranks listed in `absent` never
    // reach the collectives (the step then lasts `hangNs` and the others' collectives never
    // complete).
    void step(const std::vector<std::int64_t>& computeNs, const std::vector<std::string>& ops,
              std::int64_t commNs = 200'000, const std::vector<int>& absent = {},
              std::int64_t hangNs = 10'000'000'000)
    {
        const std::int64_t t0 = m_nowNs;
        std::vector<std::int64_t> cursor(std::size_t(m_world), t0);
        const StringId mm = store.strings.intern("aten::mm");
        const StringId sgemm = store.strings.intern("volta_sgemm");
        for (int r = 0; r < m_world; ++r) {
            cursor[std::size_t(r)] += computeNs[std::size_t(r)];
            event(r, true, t0 + 1000, t0 + computeNs[std::size_t(r)] - 1000, mm,
                  EventCategory::CpuOp);
            if (m_gpu)
                event(r, false, t0 + 2000, t0 + computeNs[std::size_t(r)] - 2000, sgemm,
                      EventCategory::Kernel);
        }
        std::int64_t end = t0;
        const bool hang = !absent.empty();
        std::uniform_int_distribution<std::int64_t> jitter(0, m_jitterNs);
        for (const std::string& op : ops) {
            for (int r = 0; r < m_world; ++r)
                cursor[std::size_t(r)] +=
                    m_delayNs[std::size_t(r)] + (m_jitterNs > 0 ? jitter(m_rng) : 0);
            std::int64_t last = 0;
            for (int r = 0; r < m_world; ++r)
                if (!isIn(absent, r)) last = std::max(last, cursor[std::size_t(r)]);
            const std::int64_t done = last + commNs;
            for (int r = 0; r < m_world; ++r) {
                if (isIn(absent, r)) continue;
                const std::int64_t a = cursor[std::size_t(r)];
                if (hang)
                    collective(r, op, a - 30'000, a, a + hangNs, hangState, m_stepNo);
                else
                    collective(r, op, a - 30'000, a, done, CollectiveRecord::State::Completed,
                               m_stepNo);
                cursor[std::size_t(r)] = hang ? a + hangNs : done;
            }
            if (hang) break;
        }
        for (int r = 0; r < m_world; ++r)
            end = std::max(end,
                           isIn(absent, r) ? t0 + hangNs + 4'000'000'000 : cursor[std::size_t(r)]);
        const StringId stepName = store.strings.intern("ProfilerStep#" + std::to_string(m_stepNo));
        for (int r = 0; r < m_world; ++r) {
            const std::int64_t stepEnd =
                hang ? (isIn(absent, r) ? end : cursor[std::size_t(r)]) : end + 10'000;
            event(r, true, t0, stepEnd, stepName, EventCategory::UserAnnotation);
        }
        m_nowNs = end + 20'000;
        ++m_stepNo;
    }

    int stepNumber() const { return m_stepNo; }
    void advance(std::int64_t ns) { m_nowNs += ns; }

    // Moves the pending events into lanes (sorted, with depth) and returns the store.
    EventStore& finish()
    {
        int source = 0;
        std::vector<int> execLane(std::size_t(m_world), -1);
        for (int r = 0; r < m_world; ++r) {
            addLane(r, LaneKind::CpuThread, 1, m_main[std::size_t(r)], source);
            execLane[std::size_t(r)] = addLane(r, m_gpu ? LaneKind::GpuStream : LaneKind::CpuThread,
                                               m_gpu ? 7 : 2, m_exec[std::size_t(r)], source);
            ++source;
        }
        std::size_t total = store.collectives.size();
        for (const auto& list : m_records)
            total += list.size();
        store.collectives.reserve(total);
        for (auto& list : m_records) {
            for (CollectiveRecord& c : list)
                store.collectives.push_back(std::move(c));
            list.clear();
            list.shrink_to_fit();
        }
        for (CollectiveRecord& c : store.collectives)
            c.laneIndex = c.rank >= 0 && c.rank < m_world ? execLane[std::size_t(c.rank)] : -1;
        const auto byRankThenIssue = [](const CollectiveRecord& a, const CollectiveRecord& b) {
            return a.rank != b.rank ? a.rank < b.rank : a.issueStartNs < b.issueStartNs;
        };
        if (!std::is_sorted(store.collectives.begin(), store.collectives.end(), byRankThenIssue))
            std::sort(store.collectives.begin(), store.collectives.end(), byRankThenIssue);
        return store;
    }

    std::vector<std::string> sourcePaths() const
    {
        std::vector<std::string> p;
        for (int r = 0; r < m_world; ++r)
            p.push_back("rank" + std::to_string(r) + ".pt.trace.json");
        return p;
    }

    EventStore store;
    // How the collective the others wait in looks when the trace is written: still running
    // (GPU, Flight Recorder) or closed by the error that ended the wait (a gloo span).
    CollectiveRecord::State hangState = CollectiveRecord::State::Started;

private:
    struct OpNames {
        StringId op, call, exec;
    };

    const OpNames& namesOf(const std::string& op)
    {
        auto it = m_names.find(op);
        if (it == m_names.end())
            it = m_names
                     .emplace(op,
                              OpNames{store.strings.intern(op),
                                      store.strings.intern("c10d::" + op + "_"),
                                      store.strings.intern((m_gpu ? "ncclKernel_" : "gloo:") + op)})
                     .first;
        return it->second;
    }

    static bool isIn(const std::vector<int>& v, int r)
    {
        return std::find(v.begin(), v.end(), r) != v.end();
    }

    int addLane(int rank, LaneKind kind, std::int64_t tid, std::vector<PendingEvent>& events,
                int source)
    {
        if (events.empty()) return -1;
        std::stable_sort(
            events.begin(), events.end(), [](const PendingEvent& a, const PendingEvent& b) {
                return a.startNs != b.startNs ? a.startNs < b.startNs : a.endNs > b.endNs;
            });
        Lane lane;
        lane.rank = rank;
        lane.kind = kind;
        lane.pid = rank;
        lane.tid = tid;
        lane.sourceIndex = source;
        std::vector<std::int64_t> open;
        for (const PendingEvent& e : events) {
            while (!open.empty() && open.back() <= e.startNs)
                open.pop_back();
            lane.startNs.push_back(e.startNs);
            lane.endNs.push_back(e.endNs);
            lane.nameId.push_back(e.name);
            lane.category.push_back(e.category);
            lane.depth.push_back(std::uint8_t(open.size()));
            lane.sourceOffset.push_back(0);
            lane.maxDepth = std::max(lane.maxDepth, std::uint8_t(open.size()));
            open.push_back(e.endNs);
        }
        events.clear();
        events.shrink_to_fit();
        store.lanes.push_back(std::move(lane));
        return int(store.lanes.size()) - 1;
    }

    int m_world;
    bool m_groups;
    bool m_gpu;
    std::vector<std::int64_t> m_offsetNs;
    std::vector<std::int64_t> m_delayNs;
    std::vector<std::int64_t> m_seq;
    std::vector<std::vector<CollectiveRecord>> m_records;
    std::vector<std::vector<PendingEvent>> m_main, m_exec;
    RankListId m_groupRanks = 0;
    StringId m_defaultGroup = 0;
    std::map<std::string, OpNames> m_names;
    bool m_membersInRecords = true;
    std::int64_t m_jitterNs = 0;
    std::mt19937_64 m_rng;
    std::int64_t m_nowNs = 1'000'000;
    int m_stepNo = 0;
};

inline std::vector<std::int64_t> uniform(int n, std::int64_t ns)
{
    return std::vector<std::int64_t>(std::size_t(n), ns);
}

} // namespace rankscope::test
