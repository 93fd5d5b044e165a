#include "model/trace/flightrecorderreader.h"

#include "model/trace/kinetocollectives.h"
#include "model/trace/picklereader.h"

#include <QRegularExpression>
#include <algorithm>
#include <cstdint>
#include <map>

namespace rankscope {

namespace {

using json = nlohmann::json;

std::int64_t intOf(const json& obj, const char* key, std::int64_t fallback = -1)
{
    const auto it = obj.find(key);
    if (it == obj.end()) return fallback;
    if (it->is_number_unsigned())
        return it->get<std::uint64_t>() <= std::uint64_t(INT64_MAX) ? it->get<std::int64_t>()
                                                                    : fallback;
    if (it->is_number_integer()) return it->get<std::int64_t>();
    if (it->is_number_float()) {
        // A float outside int64's range (a corrupt dump) is not a number of anything.
        const double d = it->get<double>();
        return d > -9.2e18 && d < 9.2e18 ? std::int64_t(d) : fallback;
    }
    if (it->is_string()) {
        bool ok = false;
        const qint64 v = QString::fromStdString(it->get<std::string>()).toLongLong(&ok);
        if (ok) return v;
    }
    return fallback;
}

std::string stringOf(const json& v)
{
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return {};
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string stringOf(const json& obj, const char* key)
{
    const auto it = obj.find(key);
    return it == obj.end() ? std::string() : stringOf(*it);
}

bool boolOf(const json& obj, const char* key)
{
    const auto it = obj.find(key);
    if (it == obj.end()) return false;
    if (it->is_boolean()) return it->get<bool>();
    if (it->is_number()) return it->get<double>() != 0;
    if (it->is_string())
        return it->get<std::string>() == "True" || it->get<std::string>() == "true";
    return false;
}

std::vector<std::vector<std::int64_t>> sizesOf(const json& obj, const char* key)
{
    std::vector<std::vector<std::int64_t>> out;
    const auto it = obj.find(key);
    if (it == obj.end() || !it->is_array()) return out;
    for (const json& shape : *it) {
        std::vector<std::int64_t> dims;
        if (shape.is_array())
            for (const json& d : shape)
                if (d.is_number()) dims.push_back(d.get<std::int64_t>());
        out.push_back(std::move(dims));
    }
    return out;
}

std::vector<std::string> stringsOf(const json& obj, const char* key)
{
    std::vector<std::string> out;
    const auto it = obj.find(key);
    if (it == obj.end() || !it->is_array()) return out;
    for (const json& v : *it)
        out.push_back(stringOf(v));
    return out;
}

// JSON dumps write unknown times as 0, pickles as None.
std::int64_t timeOf(const json& obj, const char* key)
{
    const std::int64_t v = intOf(obj, key);
    return v > 0 ? v : -1;
}

void parseProfilingName(FlightRecorderEntry& e)
{
    std::string name = e.profilingName;
    if (const auto colon = name.find(':'); colon != std::string::npos)
        name = name.substr(colon + 1);
    const QString rest = QString::fromStdString(name);
    static const QRegularExpression p2p(QStringLiteral("^(\\w+)\\s+(\\d+)\\s*(->|<-)\\s*(\\d+)"));
    const QRegularExpressionMatch m = p2p.match(rest);
    if (m.hasMatch()) {
        e.op = m.captured(1).toStdString();
        // "send 1->2": self is 1, peer 2; "recv 3<-0": self 3, peer 0.
        e.p2pPeer = m.captured(4).toInt();
        return;
    }
    const qsizetype space = rest.indexOf(QLatin1Char(' '));
    e.op = (space < 0 ? rest : rest.left(space)).toStdString();
}

// The global rank of a p2p entry's peer. ProcessGroupNCCL writes "send a->b" / "recv a<-b" with
// ranks of the entry's process group, its place among the group's sorted members (the order
// torch's own Flight Recorder analyzer maps them back by); in the default group, and when the
// dump lists no members, that place is the global rank. -1 when the group has no such place.
int globalPeer(int groupRank, std::vector<int> members)
{
    if (members.empty() || groupRank < 0) return groupRank;
    std::sort(members.begin(), members.end());
    return std::size_t(groupRank) < members.size() ? members[std::size_t(groupRank)] : -1;
}

FlightRecorderEntry::State entryStateOf(const std::string& text)
{
    using State = FlightRecorderEntry::State;
    return text == "completed"   ? State::Completed
           : text == "started"   ? State::Started
           : text == "scheduled" ? State::Scheduled
                                 : State::Unknown;
}

// An entry in an unknown state is taken as issued: it was recorded, nothing says it ran.
CollectiveRecord::State stateOf(const FlightRecorderEntry& e)
{
    switch (e.state) {
    case FlightRecorderEntry::State::Completed:
        return CollectiveRecord::State::Completed;
    case FlightRecorderEntry::State::Started:
        return CollectiveRecord::State::Started;
    case FlightRecorderEntry::State::Scheduled:
    case FlightRecorderEntry::State::Unknown:
        break;
    }
    return CollectiveRecord::State::Issued;
}

bool parseEntry(const json& j, FlightRecorderEntry& e)
{
    if (!j.is_object()) return false;
    e.recordId = intOf(j, "record_id");
    e.pgId = intOf(j, "pg_id");
    if (const auto pg = j.find("process_group"); pg != j.end() && pg->is_array()) {
        if (pg->size() > 0) e.pgName = stringOf((*pg)[0]);
        if (pg->size() > 1) e.pgDesc = stringOf((*pg)[1]);
    }
    e.collectiveSeqId = intOf(j, "collective_seq_id");
    e.p2pSeqId = intOf(j, "p2p_seq_id");
    e.opId = intOf(j, "op_id");
    e.profilingName = stringOf(j, "profiling_name");
    if (e.profilingName.empty()) return false;
    parseProfilingName(e);
    e.inputSizes = sizesOf(j, "input_sizes");
    e.outputSizes = sizesOf(j, "output_sizes");
    e.inputDtypes = stringsOf(j, "input_dtypes");
    e.outputDtypes = stringsOf(j, "output_dtypes");
    e.state = entryStateOf(stringOf(j, "state"));
    e.timeCreatedNs = timeOf(j, "time_created_ns");
    e.timeStartedNs = timeOf(j, "time_discovered_started_ns");
    e.timeCompletedNs = timeOf(j, "time_discovered_completed_ns");
    if (const auto d = j.find("duration_ms"); d != j.end() && d->is_number())
        e.durationMs = d->get<double>();
    e.retired = boolOf(j, "retired");
    e.timeoutMs = intOf(j, "timeout_ms");
    e.isP2p = boolOf(j, "is_p2p");
    e.threadId = intOf(j, "thread_id");
    e.threadName = stringOf(j, "thread_name");
    if (const auto frames = j.find("frames"); frames != j.end() && frames->is_array()) {
        for (const json& f : *frames) {
            if (!f.is_object()) continue;
            FlightRecorderEntry::Frame frame;
            frame.name = stringOf(f, "name");
            frame.filename = stringOf(f, "filename");
            frame.line = int(intOf(f, "line"));
            e.frames.push_back(std::move(frame));
        }
    }
    return true;
}

// The end entry of a coalescing block, or the fast path's one entry for a block.
bool namesCoalescing(const std::string& op)
{
    return QString::fromStdString(op).endsWith(QLatin1String("coalesced"), Qt::CaseInsensitive);
}

} // namespace

const char* FlightRecorderEntry::stateName(State state)
{
    switch (state) {
    case State::Scheduled:
        return "scheduled";
    case State::Started:
        return "started";
    case State::Completed:
        return "completed";
    case State::Unknown:
        break;
    }
    return "unknown";
}

std::optional<int> FlightRecorderReader::rankFromFileName(const QString& fileName)
{
    static const QRegularExpression suffix(QStringLiteral("^([\\w\\-\\_]*?)(\\d+)$"));
    const QRegularExpressionMatch m = suffix.match(fileName);
    if (!m.hasMatch()) return std::nullopt;
    bool ok = false;
    const int rank = m.captured(2).toInt(&ok);
    if (!ok || rank < 0 || rank > 1'000'000) return std::nullopt;
    return rank;
}

std::vector<int> FlightRecorderDump::groupRanks(const std::string& pgName) const
{
    std::vector<int> out;
    if (!pgConfig.is_object()) return out;
    const auto it = pgConfig.find(pgName);
    if (it == pgConfig.end() || !it->is_object()) return out;
    const auto ranks = it->find("ranks");
    if (ranks == it->end()) return out;
    if (ranks->is_array()) {
        for (const json& r : *ranks)
            if (r.is_number_integer()) out.push_back(r.get<int>());
        return out;
    }
    if (ranks->is_string()) {
        static const QRegularExpression number(QStringLiteral("\\d+"));
        auto m = number.globalMatch(QString::fromStdString(ranks->get<std::string>()));
        while (m.hasNext())
            out.push_back(m.next().captured().toInt());
    }
    return out;
}

// nlohmann's DOM builder, stopped where entry `maxEntries` + 1 of the top-level "entries" array
// would start: what was parsed before (version, pg_config, pg_status come first in torch's dumps)
// and the entries so far stay in the document.
class BudgetedDom {
public:
    BudgetedDom(json& root, std::int64_t maxEntries) : m_dom(root, false), m_max(maxEntries) {}
    bool stopped() const { return m_stopped; }

    bool null() { return m_dom.null(); }
    bool boolean(bool v) { return m_dom.boolean(v); }
    bool number_integer(json::number_integer_t v) { return m_dom.number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { return m_dom.number_unsigned(v); }
    bool number_float(json::number_float_t v, const std::string& s)
    {
        return m_dom.number_float(v, s);
    }
    bool string(std::string& v) { return m_dom.string(v); }
    bool binary(json::binary_t& v) { return m_dom.binary(v); }
    bool key(std::string& k)
    {
        if (m_depth == 1) m_inEntries = k == "entries";
        return m_dom.key(k);
    }
    bool start_object(std::size_t n)
    {
        if (m_depth == 2 && m_inEntries && m_kept >= m_max) {
            m_stopped = true;
            return false; // ends the parse before the first entry past the budget
        }
        ++m_depth;
        return m_dom.start_object(n);
    }
    bool start_array(std::size_t n)
    {
        ++m_depth;
        return m_dom.start_array(n);
    }
    bool end_array()
    {
        --m_depth;
        return m_dom.end_array();
    }
    bool end_object()
    {
        --m_depth;
        if (!m_dom.end_object()) return false;
        if (m_depth == 2 && m_inEntries) ++m_kept;
        return true;
    }
    bool parse_error(std::size_t at, const std::string& token, const nlohmann::detail::exception& e)
    {
        return m_dom.parse_error(at, token, e);
    }

private:
    nlohmann::detail::json_sax_dom_parser<json> m_dom;
    std::int64_t m_max;
    std::int64_t m_kept = 0;
    int m_depth = 0;
    bool m_inEntries = false;
    bool m_stopped = false;
};

std::optional<FlightRecorderDump> FlightRecorderReader::read(const QByteArray& bytes,
                                                             const QString& fileName,
                                                             QString* error, int* skipped, Cut* cut,
                                                             const Budget& budget)
{
    json doc;
    Cut stopped;
    if (bytes.startsWith('\x80')) {
        QString pickleError;
        PickleReader::Limits limits;
        limits.maxEntries = budget.maxEntries;
        limits.maxBytes = budget.maxDecodedBytes;
        // The byte budget bounds the values; the count of values is then no limit of its own.
        limits.maxNodes = std::size_t(std::max<std::int64_t>(budget.maxDecodedBytes, 0) / 16 + 1);
        PickleReader::Outcome outcome;
        std::optional<json> decoded = PickleReader::decode(bytes, &pickleError, limits, &outcome);
        if (!decoded) {
            if (error) *error = pickleError;
            return std::nullopt;
        }
        doc = std::move(*decoded);
        if (outcome.stop == PickleReader::Stop::Entries)
            stopped = {LoadLimit::DumpEntries,
                       QStringLiteral("stopped at the budget of %1 entries a dump (the rest of "
                                      "the file is not read)")
                           .arg(budget.maxEntries)};
        else if (outcome.stop == PickleReader::Stop::Bytes)
            stopped = {LoadLimit::DumpBytes,
                       QStringLiteral("stopped at the budget of %1 MB of decoded values a dump "
                                      "after %2 entries (the rest of the file is not read)")
                           .arg(double(budget.maxDecodedBytes) / 1e6, 0, 'f', 1)
                           .arg(outcome.entries)};
    } else {
        BudgetedDom dom(doc, budget.maxEntries);
        const bool complete =
            json::sax_parse(bytes.constData(), bytes.constData() + bytes.size(), &dom);
        if (dom.stopped()) {
            // Parsing ended at the budget: the rest is not parsed (a 428 MB dump would take a
            // minute), so what it holds past the budget is not known.
            stopped = {LoadLimit::DumpEntries,
                       QStringLiteral("stopped at the budget of %1 entries a dump (the rest of "
                                      "the file is not read)")
                           .arg(budget.maxEntries)};
        } else if (!complete) {
            doc = json(json::value_t::discarded);
        }
        if (doc.is_discarded()) {
            if (error)
                *error =
                    QStringLiteral("not valid JSON (truncated or corrupt Flight Recorder dump)");
            return std::nullopt;
        }
    }
    if (!doc.is_object() || (!doc.contains("entries") && !doc.contains("pg_config"))) {
        if (error) *error = QStringLiteral("no Flight Recorder fields (entries, pg_config)");
        return std::nullopt;
    }
    FlightRecorderDump dump;
    dump.rank = rankFromFileName(fileName);
    dump.version = stringOf(doc, "version");
    dump.commLibVersion = stringOf(doc, "comm_lib_version");
    if (const auto it = doc.find("pg_config"); it != doc.end()) dump.pgConfig = *it;
    if (const auto it = doc.find("pg_status"); it != doc.end()) dump.pgStatus = *it;
    int bad = 0;
    if (const auto entries = doc.find("entries"); entries != doc.end() && entries->is_array()) {
        for (const json& j : *entries) {
            FlightRecorderEntry e;
            if (parseEntry(j, e))
                dump.entries.push_back(std::move(e));
            else
                ++bad;
        }
    }
    if (skipped) *skipped = bad;
    if (cut) *cut = stopped;
    return dump;
}

std::int64_t FlightRecorderReader::numel(const std::vector<std::vector<std::int64_t>>& sizes)
{
    if (sizes.empty()) return -1;
    std::int64_t total = 0;
    for (const auto& shape : sizes) {
        std::int64_t n = 1;
        for (std::int64_t d : shape)
            if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1; // not a real tensor
        if (__builtin_add_overflow(total, n, &total)) return -1;
    }
    return total;
}

std::vector<FlightRecorderUnit>
FlightRecorderReader::collectiveUnits(const FlightRecorderDump& dump)
{
    std::vector<FlightRecorderUnit> units;
    std::map<std::pair<std::string_view, std::int64_t>, std::size_t> unitOf;
    for (const FlightRecorderEntry& e : dump.entries) {
        if (isPointToPoint(e)) continue;
        // Without a sequence number nothing says which entries belong together.
        const auto [it, added] =
            e.collectiveSeqId < 0 ? std::pair{unitOf.end(), true}
                                  : unitOf.try_emplace({e.pgName, e.collectiveSeqId}, units.size());
        if (added) units.emplace_back();
        units[it == unitOf.end() ? units.size() - 1 : it->second].ops.push_back(&e);
    }
    std::map<std::string_view, std::size_t> newestOf; // per group, its last unit to start
    for (std::size_t i = 0; i < units.size(); ++i) {
        FlightRecorderUnit& u = units[i];
        newestOf[u.ops.front()->pgName] = i;
        if (u.ops.size() > 1 && namesCoalescing(u.ops.back()->op)) {
            u.end = u.ops.back();
            u.ops.pop_back();
        }
    }
    // A block is closed by its end entry; only a group's newest block can still be open (the
    // job hung inside it). Entries that share a seq elsewhere are not a block: a writer that
    // does not advance collective_seq_id must not fold unrelated collectives into one.
    std::vector<FlightRecorderUnit> out;
    for (std::size_t i = 0; i < units.size(); ++i) {
        FlightRecorderUnit& u = units[i];
        if (u.end || u.ops.size() == 1 || newestOf[u.ops.front()->pgName] == i) {
            out.push_back(std::move(u));
            continue;
        }
        for (const FlightRecorderEntry* e : u.ops)
            out.push_back({{e}, nullptr});
    }
    return out;
}

bool FlightRecorderReader::isPointToPoint(const FlightRecorderEntry& e)
{
    // A batch's end entry is p2p too; older dumps lack is_p2p but name the peer, or at least
    // the op, which the matcher leaves out by the same test.
    return e.isP2p || e.p2pPeer >= 0 || isPointToPointOp(collectiveOf(e));
}

std::string FlightRecorderReader::collectiveOf(const FlightRecorderEntry& e)
{
    std::string op = normaliseCollectiveName(e.op);
    return op.empty() ? e.op : op;
}

void FlightRecorderReader::appendCollectives(const FlightRecorderDump& dump, EventStore& store)
{
    if (!dump.rank) return; // a record must belong to a rank to be matched
    const auto record = [&](const FlightRecorderEntry& e, const std::string& op) {
        CollectiveRecord c;
        c.rank = *dump.rank;
        c.op = store.strings.intern(op);
        c.processGroupName = store.strings.intern(e.pgName);
        c.processGroupDesc = store.strings.intern(e.pgDesc);
        const std::vector<int> members = dump.groupRanks(e.pgName);
        c.groupRanks = store.rankLists.intern(members);
        c.groupSize = members.empty() ? -1 : int(members.size());
        c.seq = e.isP2p ? e.p2pSeqId : e.collectiveSeqId;
        c.seqFromSource = c.seq >= 0;
        c.inNelems = numel(e.inputSizes);
        c.outNelems = numel(e.outputSizes);
        c.dtype =
            store.strings.intern(e.inputDtypes.empty() ? std::string() : e.inputDtypes.front());
        c.issueStartNs = e.timeCreatedNs;
        c.execStartNs = e.timeStartedNs;
        c.execEndNs = e.timeCompletedNs;
        c.state = stateOf(e);
        c.sourceIndex = dump.sourceIndex;
        return c;
    };
    // Records in dump order. Send and recv are paired by the collective matcher (their peer as
    // the root), not matched as collectives; a batch's end entry moves nothing of its own.
    const std::vector<FlightRecorderUnit> units = collectiveUnits(dump);
    std::map<const FlightRecorderEntry*, const FlightRecorderUnit*> unitStartingAt;
    for (const FlightRecorderUnit& u : units)
        unitStartingAt.emplace(u.ops.front(), &u);
    for (const FlightRecorderEntry& entry : dump.entries) {
        if (isPointToPoint(entry)) {
            const std::string op = collectiveOf(entry);
            if (!isPointToPointOp(op)) continue;
            CollectiveRecord c = record(entry, op);
            c.root = globalPeer(entry.p2pPeer, dump.groupRanks(entry.pgName));
            store.collectives.push_back(std::move(c));
            continue;
        }
        const auto starting = unitStartingAt.find(&entry);
        if (starting == unitStartingAt.end()) continue; // a later op of a block
        const FlightRecorderUnit& u = *starting->second;
        const FlightRecorderEntry& first = *u.ops.front();
        std::string op = collectiveOf(first);
        for (const FlightRecorderEntry* e : u.ops)
            if (collectiveOf(*e) != op) op = "coalesced"; // a block of different kinds
        CollectiveRecord c = record(first, op);
        // The fast path writes a whole block as one entry ("allreduce_coalesced").
        c.coalesced = u.ops.size() > 1 || u.end != nullptr || namesCoalescing(first.op);
        for (std::size_t k = 1; k < u.ops.size(); ++k) {
            const FlightRecorderEntry& e = *u.ops[k];
            const auto add = [](std::int64_t& total, std::int64_t n) {
                if (total < 0 || n < 0 || __builtin_add_overflow(total, n, &total)) total = -1;
            };
            add(c.inNelems, numel(e.inputSizes));
            add(c.outNelems, numel(e.outputSizes));
        }
        // The block is as far as its least advanced entry; its end entry completes last.
        std::vector<const FlightRecorderEntry*> all = u.ops;
        if (u.end) all.push_back(u.end);
        for (const FlightRecorderEntry* e : all) {
            c.state = std::min(c.state, stateOf(*e));
            if (e->timeStartedNs >= 0 && (c.execStartNs < 0 || e->timeStartedNs < c.execStartNs))
                c.execStartNs = e->timeStartedNs;
            c.execEndNs = std::max(c.execEndNs, e->timeCompletedNs);
        }
        if (c.state != CollectiveRecord::State::Completed) c.execEndNs = -1;
        store.collectives.push_back(std::move(c));
    }
}

} // namespace rankscope
