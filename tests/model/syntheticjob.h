#pragma once

// Builds EventStores the way the trace readers will: per rank a main CPU thread with
// ProfilerStep#N spans and the c10d:: call of each collective, and an execution lane (a gloo
// worker thread or a GPU stream) holding the collective's execution span.

#include "model/store/eventstore.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace rankscope::test {

struct PendingEvent {
    std::int64_t startNs, endNs;
    std::string name;
    EventCategory category;
};

class SyntheticJob {
public:
    explicit SyntheticJob(int worldSize, bool withGroups = true, bool gpu = false)
        : m_world(worldSize), m_groups(withGroups), m_gpu(gpu)
    {
        for (int r = 0; r < worldSize; ++r)
            m_offsetNs[r] = 0;
    }

    void setClockOffset(int rank, std::int64_t ns) { m_offsetNs[rank] = ns; }
    int worldSize() const { return m_world; }
    std::int64_t nowNs() const { return m_nowNs; }

    void event(int rank, bool mainLane, std::int64_t startNs, std::int64_t endNs, std::string name,
               EventCategory cat)
    {
        auto& lane = mainLane ? m_main[rank] : m_exec[rank];
        lane.push_back(
            {startNs + m_offsetNs[rank], endNs + m_offsetNs[rank], std::move(name), cat});
    }

    // One collective on one rank; times are on the true (reference) clock.
    void collective(int rank, const std::string& op, std::int64_t issueNs, std::int64_t execStartNs,
                    std::int64_t execEndNs, CollectiveRecord::State state, int step,
                    std::int64_t nelems = 1024, std::string dtype = "Float",
                    std::int64_t outNelems = -2)
    {
        CollectiveRecord c;
        c.rank = rank;
        c.op = store.strings.intern(op);
        if (m_groups) {
            c.processGroupName = store.strings.intern("0");
            c.groupRanks.resize(std::size_t(m_world));
            std::iota(c.groupRanks.begin(), c.groupRanks.end(), 0);
            c.groupSize = m_world;
            c.seq = m_seq[rank]++;
            c.seqFromSource = true;
        }
        c.inNelems = nelems;
        c.outNelems =
            outNelems == -2 ? (op == "all_gather" ? nelems * m_world : nelems) : outNelems;
        c.dtype = store.strings.intern(dtype);
        const std::int64_t off = m_offsetNs[rank];
        c.issueStartNs = issueNs + off;
        c.issueEndNs = issueNs + off + 20'000;
        event(rank, true, issueNs, issueNs + 20'000, "c10d::" + op + "_", EventCategory::CpuOp);
        if (execStartNs >= 0) {
            c.execStartNs = execStartNs + off;
            c.execEndNs = execEndNs + off;
            event(rank, false, execStartNs, execEndNs, (m_gpu ? "ncclKernel_" : "gloo:") + op,
                  EventCategory::CommKernel);
        }
        c.state = state;
        c.step = step;
        store.collectives.push_back(c);
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
        for (int r = 0; r < m_world; ++r) {
            cursor[std::size_t(r)] += computeNs[std::size_t(r)];
            event(r, true, t0 + 1000, t0 + computeNs[std::size_t(r)] - 1000, "aten::mm",
                  m_gpu ? EventCategory::CpuOp : EventCategory::CpuOp);
            if (m_gpu)
                event(r, false, t0 + 2000, t0 + computeNs[std::size_t(r)] - 2000, "volta_sgemm",
                      EventCategory::Kernel);
        }
        std::int64_t end = t0;
        const bool hang = !absent.empty();
        for (const std::string& op : ops) {
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
        for (int r = 0; r < m_world; ++r) {
            const std::int64_t stepEnd =
                hang ? (isIn(absent, r) ? end : cursor[std::size_t(r)]) : end + 10'000;
            event(r, true, t0, stepEnd, "ProfilerStep#" + std::to_string(m_stepNo),
                  EventCategory::UserAnnotation);
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
        std::map<int, int> execLane;
        for (int r = 0; r < m_world; ++r) {
            addLane(r, LaneKind::CpuThread, 1, m_main[r], source);
            execLane[r] = addLane(r, m_gpu ? LaneKind::GpuStream : LaneKind::CpuThread,
                                  m_gpu ? 7 : 2, m_exec[r], source);
            ++source;
        }
        for (CollectiveRecord& c : store.collectives)
            c.laneIndex = execLane[c.rank];
        std::sort(store.collectives.begin(), store.collectives.end(),
                  [](const CollectiveRecord& a, const CollectiveRecord& b) {
                      return a.rank != b.rank ? a.rank < b.rank : a.issueStartNs < b.issueStartNs;
                  });
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
            lane.nameId.push_back(store.strings.intern(e.name));
            lane.category.push_back(e.category);
            lane.depth.push_back(std::uint8_t(open.size()));
            lane.sourceOffset.push_back(0);
            lane.maxDepth = std::max(lane.maxDepth, std::uint8_t(open.size()));
            open.push_back(e.endNs);
        }
        store.lanes.push_back(std::move(lane));
        return int(store.lanes.size()) - 1;
    }

    int m_world;
    bool m_groups;
    bool m_gpu;
    std::map<int, std::int64_t> m_offsetNs;
    std::map<int, std::int64_t> m_seq;
    std::map<int, std::vector<PendingEvent>> m_main, m_exec;
    std::int64_t m_nowNs = 1'000'000;
    int m_stepNo = 0;
};

inline std::vector<std::int64_t> uniform(int n, std::int64_t ns)
{
    return std::vector<std::int64_t>(std::size_t(n), ns);
}

} // namespace rankscope::test
