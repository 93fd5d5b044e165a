#include "model/trace/kinetocollectives.h"

#include <algorithm>
#include <limits>
#include <map>

namespace rankscope {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return out;
}

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

bool stripSuffix(std::string& s, std::string_view suffix)
{
    if (s.size() <= suffix.size() || s.compare(s.size() - suffix.size(), suffix.size(), suffix))
        return false;
    s.resize(s.size() - suffix.size());
    return true;
}

enum class CommKind { None, C10d, RecordParamComms, NcclAnnotation, Gloo };

// What a comm event's name makes of it (an "nccl:" name is an annotation unless it runs as a
// kernel).
CommKind commKind(std::string_view name, EventCategory cat)
{
    if (startsWith(name, "c10d::")) return CommKind::C10d;
    if (name == "record_param_comms") return CommKind::RecordParamComms;
    if (startsWith(name, "nccl:") && cat != EventCategory::Kernel &&
        cat != EventCategory::CommKernel)
        return CommKind::NcclAnnotation;
    if (startsWith(name, "gloo:")) return CommKind::Gloo;
    return CommKind::None;
}

// One CPU call of a collective: the outermost comm event and what its comm descendants say.
struct Group {
    int lane = -1;
    std::int64_t root = -1;
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
    std::string c10dOp, argsOp, ncclOp, glooOp;
    bool issues = false; // has a c10d / record_param_comms / nccl member (not only gloo spans)
    CommArgs args;
    bool haveArgs = false;
    int execLane = -1;
    std::int64_t execEvent = -1;
    std::int64_t execStartNs = -1;
    std::int64_t execEndNs = -1;
    bool execUnfinished = false;
};

void mergeArgs(CommArgs& into, const CommArgs& from)
{
    if (into.op.empty()) into.op = from.op;
    if (into.dtype.empty()) into.dtype = from.dtype;
    if (into.inNelems < 0) into.inNelems = from.inNelems;
    if (into.outNelems < 0) into.outNelems = from.outNelems;
    if (into.groupSize < 0) into.groupSize = from.groupSize;
    if (into.groupName.empty()) into.groupName = from.groupName;
    if (into.groupDesc.empty()) into.groupDesc = from.groupDesc;
    if (into.groupRanks.empty()) into.groupRanks = from.groupRanks;
    if (into.seq < 0) into.seq = from.seq;
    if (into.peer < 0) into.peer = from.peer;
}

const CommArgs* argsOf(const std::vector<CommEventArgs>& all, int lane, std::int64_t event)
{
    const auto it =
        std::lower_bound(all.begin(), all.end(), std::pair{lane, event},
                         [](const CommEventArgs& a, const std::pair<int, std::int64_t>& k) {
                             return std::pair{a.lane, a.event} < k;
                         });
    return it != all.end() && it->lane == lane && it->event == event ? &it->args : nullptr;
}

std::string firstKnown(std::initializer_list<const std::string*> names)
{
    for (const std::string* n : names) {
        std::string op = normaliseCollectiveName(*n);
        if (!op.empty()) return op;
    }
    return {};
}

} // namespace

std::string normaliseCollectiveName(std::string_view name)
{
    std::string s = lower(name);
    bool kernel = false;
    for (std::string_view prefix : {"c10d::", "nccl:", "gloo:", "nccldevkernel_", "ncclkernel_"}) {
        if (startsWith(s, prefix)) {
            kernel = prefix.back() == '_';
            s.erase(0, prefix.size());
            break;
        }
    }
    if (kernel) s = s.substr(0, s.find_first_of("_("));
    std::erase(s, '_');
    while (stripSuffix(s, "coalesced") || stripSuffix(s, "base") || stripSuffix(s, "intotensor") ||
           stripSuffix(s, "tensor") || stripSuffix(s, "oop")) {
    }
    static const std::map<std::string, std::string, std::less<>> known = {
        {"allreduce", "all_reduce"},
        {"sparseallreduce", "all_reduce"},
        {"allgather", "all_gather"},
        {"reducescatter", "reduce_scatter"},
        {"alltoall", "all_to_all"},
        {"alltoallv", "all_to_all"},
        {"broadcast", "broadcast"},
        {"bcast", "broadcast"},
        {"barrier", "barrier"},
        {"monitoredbarrier", "barrier"},
        {"reduce", "reduce"},
        {"gather", "gather"},
        {"scatter", "scatter"},
        {"send", "send"},
        {"recv", "recv"},
        {"recvanysource", "recv"},
        {"sendrecv", "send_recv"},
    };
    const auto it = known.find(s);
    return it == known.end() ? std::string() : it->second;
}

bool isPointToPointOp(std::string_view normalisedOp)
{
    return normalisedOp == "send" || normalisedOp == "recv" || normalisedOp == "send_recv";
}

void CollectiveExtractor::extract(EventStore& store, int rank, std::vector<CommEventArgs> args,
                                  const std::vector<ProcessGroupInfo>& groups)
{
    std::sort(args.begin(), args.end(), [](const CommEventArgs& a, const CommEventArgs& b) {
        return std::pair{a.lane, a.event} < std::pair{b.lane, b.event};
    });
    const StringTable& strings = store.strings;

    // ProfilerStep spans in time order: a collective's step is the index of the one around it.
    std::vector<std::pair<std::int64_t, std::int64_t>> steps;
    std::vector<Group> all;
    std::vector<std::vector<std::size_t>> groupsOfLane(store.lanes.size());
    // A trace repeats a few thousand names millions of times: each is looked at once.
    struct NameClass {
        bool known = false;
        bool step = false;
        CommKind kind = CommKind::None; // for a category other than a kernel's
    };
    std::vector<NameClass> classOf(strings.size());
    for (int li = 0; li < int(store.lanes.size()); ++li) {
        const Lane& lane = store.lanes[std::size_t(li)];
        if (lane.kind != LaneKind::CpuThread) continue;
        std::int64_t open = -1; // index in `all` of the group whose root is still open
        for (std::int64_t e = 0; e < std::int64_t(lane.size()); ++e) {
            NameClass& c = classOf[std::size_t(lane.nameId[std::size_t(e)])];
            if (!c.known) {
                const std::string_view name = strings.view(lane.nameId[std::size_t(e)]);
                c = {true, startsWith(name, "ProfilerStep#"), commKind(name, EventCategory::Other)};
            }
            const std::int64_t s = lane.startNs[std::size_t(e)];
            if (c.step) steps.emplace_back(s, lane.endNs[std::size_t(e)]);
            const EventCategory category = lane.category[std::size_t(e)];
            const CommKind kind =
                c.kind == CommKind::NcclAnnotation &&
                        (category == EventCategory::Kernel || category == EventCategory::CommKernel)
                    ? CommKind::None
                    : c.kind;
            if (kind == CommKind::None) continue;
            const std::string_view name = strings.view(lane.nameId[std::size_t(e)]);
            if (open >= 0 && s > all[std::size_t(open)].endNs) open = -1;
            if (open < 0) {
                Group g;
                g.lane = li;
                g.root = e;
                g.startNs = s;
                g.endNs = lane.endNs[std::size_t(e)];
                open = std::int64_t(all.size());
                groupsOfLane[std::size_t(li)].push_back(all.size());
                all.push_back(std::move(g));
            }
            Group& g = all[std::size_t(open)];
            const CommArgs* a = argsOf(args, li, e);
            if (a) {
                mergeArgs(g.args, *a);
                g.haveArgs = true;
            }
            switch (kind) {
            case CommKind::C10d:
                if (g.c10dOp.empty()) g.c10dOp = std::string(name);
                g.issues = true;
                break;
            case CommKind::RecordParamComms:
                g.issues = true;
                break;
            case CommKind::NcclAnnotation:
                if (g.ncclOp.empty()) g.ncclOp = std::string(name);
                g.issues = true;
                break;
            case CommKind::Gloo:
                if (g.glooOp.empty()) g.glooOp = std::string(name);
                break;
            case CommKind::None:
                break;
            }
        }
    }
    std::sort(steps.begin(), steps.end());

    std::vector<CollectiveRecord> records;
    struct Pending {
        CollectiveRecord rec;
        CommArgs args;
    };
    std::vector<Pending> pending;

    // NCCL kernels: attach to the CPU call their launch flows from, or stand alone.
    for (int li = 0; li < int(store.lanes.size()); ++li) {
        const Lane& lane = store.lanes[std::size_t(li)];
        for (std::int64_t e = 0; e < std::int64_t(lane.size()); ++e) {
            if (lane.category[std::size_t(e)] != EventCategory::CommKernel ||
                !startsWith(lower(strings.view(lane.nameId[std::size_t(e)])), "nccl"))
                continue;
            const std::int64_t ks = lane.startNs[std::size_t(e)];
            const std::int64_t ke = lane.endNs[std::size_t(e)];
            const CommArgs* ka = argsOf(args, li, e);
            Group* owner = nullptr;
            if (const FlowLink* f = store.flowInto(li, e)) {
                const Lane& from = store.lanes[std::size_t(f->fromLane)];
                const std::int64_t t = from.startNs[std::size_t(f->fromEvent)];
                // Roots on one lane do not nest, so the last one starting at or before t is the
                // only candidate.
                const auto& lg = groupsOfLane[std::size_t(f->fromLane)];
                const auto it = std::upper_bound(
                    lg.begin(), lg.end(), t,
                    [&all](std::int64_t v, std::size_t gi) { return v < all[gi].startNs; });
                if (it != lg.begin()) {
                    Group& g = all[*std::prev(it)];
                    if (g.issues && t <= g.endNs) owner = &g;
                }
            }
            if (owner) {
                if (owner->execStartNs < 0 || ks < owner->execStartNs) {
                    owner->execStartNs = ks;
                    owner->execLane = li;
                    owner->execEvent = e;
                }
                owner->execEndNs = std::max(owner->execEndNs, ke);
                owner->execUnfinished = owner->execUnfinished || lane.isUnfinished(e);
                if (ka) mergeArgs(owner->args, *ka);
                continue;
            }
            const std::string kernelName(strings.view(lane.nameId[std::size_t(e)]));
            std::string op = ka ? normaliseCollectiveName(ka->op) : std::string();
            if (op.empty()) op = normaliseCollectiveName(kernelName);
            if (op.empty()) continue; // e.g. ncclDevKernel_Generic without args: op unknown
            Pending p;
            p.rec.op = store.strings.intern(op);
            p.rec.execStartNs = ks;
            p.rec.execEndNs = ke;
            p.rec.state = lane.isUnfinished(e) ? CollectiveRecord::State::Started
                                               : CollectiveRecord::State::Completed;
            p.rec.laneIndex = li;
            p.rec.eventIndex = e;
            if (ka) p.args = *ka;
            pending.push_back(std::move(p));
        }
    }

    // gloo execution spans (groups of gloo spans only), by kind, in time order.
    std::map<std::string, std::vector<const Group*>> glooByOp;
    std::vector<Group*> issued;
    for (Group& g : all) {
        if (g.issues) {
            issued.push_back(&g);
        } else {
            const std::string op = normaliseCollectiveName(g.glooOp);
            if (!op.empty()) glooByOp[op].push_back(&g);
        }
    }
    for (auto& [op, v] : glooByOp)
        std::sort(v.begin(), v.end(),
                  [](const Group* a, const Group* b) { return a->startNs < b->startNs; });
    std::sort(issued.begin(), issued.end(),
              [](const Group* a, const Group* b) { return a->startNs < b->startNs; });
    std::map<std::string, std::size_t> glooNext;
    for (Group* g : issued) {
        const std::string op = firstKnown({&g->c10dOp, &g->args.op, &g->ncclOp, &g->glooOp});
        if (op.empty()) continue; // record_param_comms of a wait, or of an unnamed op
        if (g->execStartNs < 0) {
            const auto it = glooByOp.find(op);
            if (it != glooByOp.end()) {
                std::size_t& next = glooNext[op];
                while (next < it->second.size() && it->second[next]->startNs < g->startNs)
                    ++next;
                if (next < it->second.size()) {
                    const Group* x = it->second[next++];
                    g->execLane = x->lane;
                    g->execEvent = x->root;
                    g->execStartNs = x->startNs;
                    g->execEndNs = x->endNs;
                    g->execUnfinished = store.lanes[std::size_t(x->lane)].isUnfinished(x->root);
                }
            }
        }
        Pending p;
        p.rec.op = store.strings.intern(op);
        p.rec.issueStartNs = g->startNs;
        p.rec.issueEndNs = g->endNs;
        p.rec.execStartNs = g->execStartNs;
        p.rec.execEndNs = g->execEndNs;
        if (g->execStartNs < 0)
            p.rec.state = CollectiveRecord::State::Issued;
        else
            p.rec.state = g->execUnfinished ? CollectiveRecord::State::Started
                                            : CollectiveRecord::State::Completed;
        p.rec.laneIndex = g->execLane >= 0 ? g->execLane : g->lane;
        p.rec.eventIndex = g->execLane >= 0 ? g->execEvent : g->root;
        p.args = g->args;
        pending.push_back(std::move(p));
    }

    for (Pending& p : pending) {
        CollectiveRecord& r = p.rec;
        const CommArgs& a = p.args;
        r.rank = rank;
        std::string pgDesc = a.groupDesc;
        std::vector<int> ranks = a.groupRanks;
        int size = a.groupSize;
        for (const ProcessGroupInfo& pg : groups) {
            if (a.groupName.empty() || pg.name != a.groupName) continue;
            if (pgDesc.empty()) pgDesc = pg.desc;
            if (ranks.empty()) ranks = pg.ranks;
            if (size < 0) size = pg.size;
        }
        r.processGroupName = store.strings.intern(a.groupName);
        r.processGroupDesc = store.strings.intern(pgDesc);
        r.groupRanks = store.rankLists.intern(ranks);
        r.groupSize = size >= 0 ? size : (ranks.empty() ? -1 : int(ranks.size()));
        r.inNelems = a.inNelems;
        r.outNelems = a.outNelems;
        r.dtype = store.strings.intern(a.dtype);
        r.seq = a.seq;
        r.seqFromSource = a.seq >= 0;
        // For send and recv the root is the peer, as NCCL's own COLL lines put it.
        if (isPointToPointOp(strings.view(r.op))) r.root = a.peer;
        const std::int64_t t = r.issueStartNs >= 0 ? r.issueStartNs : r.execStartNs;
        auto it = std::upper_bound(steps.begin(), steps.end(),
                                   std::pair{t, std::numeric_limits<std::int64_t>::max()});
        if (it != steps.begin() && std::prev(it)->second >= t)
            r.step = int(std::prev(it) - steps.begin());
        records.push_back(std::move(r));
    }
    const auto when = [](const CollectiveRecord& r) {
        return r.issueStartNs >= 0 ? r.issueStartNs : r.execStartNs;
    };
    std::stable_sort(records.begin(), records.end(),
                     [&when](const CollectiveRecord& a, const CollectiveRecord& b) {
                         return when(a) < when(b);
                     });
    // Without a source Seq, number the group's collectives from 1 in time order, whatever their
    // kind, like the per-group counters of c10d; point-to-point ops count apart (c10d's p2p
    // counter), so ranks that send and receive different numbers of them still number the
    // collectives they share alike.
    std::map<std::pair<StringId, bool>, std::int64_t> ordinal;
    for (CollectiveRecord& r : records) {
        const std::int64_t n =
            ++ordinal[{r.processGroupName, isPointToPointOp(strings.view(r.op))}];
        if (!r.seqFromSource) r.seq = n;
    }
    for (CollectiveRecord& r : records)
        store.collectives.push_back(std::move(r));
}

} // namespace rankscope
