#include "model/trace/ncclcollectives.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <set>

namespace rankscope {

namespace {

std::int64_t parseNumber(const std::string& s, int base)
{
    std::string_view v = s;
    if (base == 16 && (v.starts_with("0x") || v.starts_with("0X"))) v.remove_prefix(2);
    std::int64_t out = -1;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out, base);
    return ec == std::errc() && end == v.data() + v.size() && !v.empty() ? out : -1;
}

struct Comm {
    std::string commId;
    int nranks = -1;
};

// ncclDataType_t: ncclInt8 = 0 ... ncclBfloat16 = 9, then the fp8 types (NCCL 2.24+), named as
// PyTorch names the tensor dtypes of each.
constexpr std::array<std::string_view, 12> kNcclDtypeNames = {
    "Char", "Byte",  "Int",    "UInt32",   "Long",          "UInt64",
    "Half", "Float", "Double", "BFloat16", "Float8_e4m3fn", "Float8_e5m2"};

constexpr std::uint16_t datatypeBit(int ncclDatatype)
{
    return std::uint16_t(1u << ncclDatatype);
}

// The ncclDataType_t values ProcessGroupNCCL may launch a tensor of each dtype as, under the
// names c10d and Flight Recorder give (c10::ScalarType's) and those the profiler's "Input type"
// gives (the C++ type). Bool and the fnuz fp8 types have no NCCL type of their own and go as
// uint8; e4m3fn and e5m2 go as uint8 before NCCL 2.24 and as NCCL's fp8 types from it.
constexpr std::array<std::pair<std::string_view, std::uint16_t>, 25> kDtypeDatatypes = {{
    {"Char", datatypeBit(0)},
    {"signed char", datatypeBit(0)},
    {"Byte", datatypeBit(1)},
    {"unsigned char", datatypeBit(1)},
    {"Bool", datatypeBit(1)},
    {"bool", datatypeBit(1)},
    {"Float8_e4m3fnuz", datatypeBit(1)},
    {"Float8_e5m2fnuz", datatypeBit(1)},
    {"Int", datatypeBit(2)},
    {"int", datatypeBit(2)},
    {"UInt32", datatypeBit(3)},
    {"Long", datatypeBit(4)},
    {"long", datatypeBit(4)},
    {"long int", datatypeBit(4)},
    {"UInt64", datatypeBit(5)},
    {"Half", datatypeBit(6)},
    {"c10::Half", datatypeBit(6)},
    {"Float", datatypeBit(7)},
    {"float", datatypeBit(7)},
    {"Double", datatypeBit(8)},
    {"double", datatypeBit(8)},
    {"BFloat16", datatypeBit(9)},
    {"c10::BFloat16", datatypeBit(9)},
    {"Float8_e4m3fn", std::uint16_t(datatypeBit(10) | datatypeBit(1))},
    {"Float8_e5m2", std::uint16_t(datatypeBit(11) | datatypeBit(1))},
}};

} // namespace

std::string NcclCollectives::opName(std::string_view n)
{
    static const std::array<std::pair<std::string_view, std::string_view>, 11> names = {{
        {"AllReduce", "all_reduce"},
        {"AllGather", "all_gather"},
        {"ReduceScatter", "reduce_scatter"},
        {"Broadcast", "broadcast"},
        {"Reduce", "reduce"},
        {"AlltoAll", "all_to_all"},
        {"Gather", "gather"},
        {"Scatter", "scatter"},
        {"Send", "send"},
        {"Recv", "recv"},
        {"SendRecv", "send_recv"},
    }};
    for (const auto& [nccl, ours] : names)
        if (nccl == n) return std::string(ours);
    std::string lower(n);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return lower;
}

std::string NcclCollectives::dtypeName(std::string_view number)
{
    const std::int64_t v = parseNumber(std::string(number), 10);
    if (v >= 0 && std::size_t(v) < kNcclDtypeNames.size())
        return std::string(kNcclDtypeNames[std::size_t(v)]);
    return number.empty() ? std::string() : "nccl dtype " + std::string(number);
}

bool NcclCollectives::launchedAs(std::string_view dtype, std::string_view ncclDtype)
{
    if (dtype == ncclDtype) return true;
    const auto datatype = std::find(kNcclDtypeNames.begin(), kNcclDtypeNames.end(), ncclDtype);
    if (datatype == kNcclDtypeNames.end()) return false;
    const int bit = int(datatype - kNcclDtypeNames.begin());
    for (const auto& [name, datatypes] : kDtypeDatatypes)
        if (name == dtype) return (datatypes & datatypeBit(bit)) != 0;
    return false;
}

std::string NcclCollectives::reduceOpName(std::string_view number)
{
    // ncclRedOp_t: sum, prod, max, min, avg; higher values are ops the program created
    // (ncclRedOpCreatePreMulSum), distinct per communicator.
    static const std::array<std::string_view, 5> names = {"sum", "prod", "max", "min", "avg"};
    const std::int64_t v = parseNumber(std::string(number), 10);
    if (v >= 0 && std::size_t(v) < names.size()) return std::string(names[std::size_t(v)]);
    return number.empty() ? std::string() : "custom op " + std::string(number);
}

NcclCollectives::Result NcclCollectives::append(const std::vector<RankLog>& logs, EventStore& store)
{
    Result result;
    // Per log: communicator pointer -> (commId, nranks); per commId: the ranks that joined.
    std::vector<std::map<std::string, Comm>> commsOf(logs.size());
    std::map<std::string, std::set<int>> members;
    for (std::size_t l = 0; l < logs.size(); ++l) {
        const RankLog& log = logs[l];
        for (const LogFact* f : log.factsOfKind(LogFactKind::NcclInit)) {
            const std::string comm = f->value("comm");
            if (comm.empty()) continue;
            Comm c;
            c.commId = f->value("commId");
            c.nranks = int(parseNumber(f->value("nranks"), 10));
            commsOf[l][comm] = c;
            if (log.rank && !c.commId.empty()) members[c.commId].insert(*log.rank);
        }
    }
    for (std::size_t l = 0; l < logs.size(); ++l) {
        const RankLog& log = logs[l];
        if (!log.rank) continue; // a record must belong to a rank to be matched
        for (const LogFact* f : log.factsOfKind(LogFactKind::NcclColl)) {
            const auto comm = commsOf[l].find(f->value("comm"));
            if (comm == commsOf[l].end() || comm->second.commId.empty()) {
                ++result.withoutCommId;
                continue;
            }
            const Comm& info = comm->second;
            CollectiveRecord c;
            c.rank = *log.rank;
            const std::string op = opName(f->value("op"));
            c.op = store.strings.intern(op);
            c.processGroupName = store.strings.intern("nccl:" + info.commId);
            const std::set<int>& joined = members[info.commId];
            c.groupRanks = store.rankLists.intern(std::vector<int>(joined.begin(), joined.end()));
            const std::string nranks = f->value("nranks");
            c.groupSize = nranks.empty() ? info.nranks : int(parseNumber(nranks, 10));
            c.seq = parseNumber(f->value("opCount"), 16);
            c.seqFromSource = c.seq >= 0;
            // NCCL's count is per rank: what one rank sends to (all_gather) or receives from
            // (reduce_scatter) the collective; the other side scales with the group.
            const std::int64_t count = parseNumber(f->value("count"), 10);
            // Both numbers come from the line: a product that overflows is unknown.
            std::int64_t scaled = -1;
            if (count < 0 || c.groupSize <= 0 ||
                __builtin_mul_overflow(count, c.groupSize, &scaled))
                scaled = -1;
            c.inNelems = count;
            c.outNelems = count;
            if (op == "all_gather" || op == "gather") c.outNelems = op == "gather" ? -1 : scaled;
            if (op == "reduce_scatter") c.inNelems = scaled;
            if (op == "scatter") c.inNelems = -1;
            c.dtype = store.strings.intern(dtypeName(f->value("datatype")));
            if (op == "all_reduce" || op == "reduce" || op == "reduce_scatter")
                c.reduceOp = store.strings.intern(reduceOpName(f->value("redOp")));
            if (op == "broadcast" || op == "reduce" || op == "gather" || op == "scatter")
                c.root = int(parseNumber(f->value("root"), 10));
            if (log.timestampNs(f->line) >= 0 && log.timestampHasDate(f->line))
                c.issueStartNs = log.timestampNs(f->line);
            // Printed when the call is enqueued; nothing in the log says when it ran.
            c.state = CollectiveRecord::State::Issued;
            c.stateUnknown = true;
            c.sourceIndex = log.sourceIndex;
            c.sourceLine = log.lineNumber(f->line);
            store.collectives.push_back(std::move(c));
            ++result.appended;
        }
    }
    return result;
}

} // namespace rankscope
