#include "model/trace/picklereader.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rankscope {

namespace {

// Values live in an arena and are referred to by index, so that the memo and the stack can share
// a container that later opcodes (APPENDS, SETITEMS) still fill, exactly as Python's unpickler.
struct Node {
    enum class Kind : std::uint8_t {
        None,
        Bool,
        Int,
        Float,
        String,
        Bytes,
        List,
        Tuple,
        Dict,
        Mark
    };
    Kind kind = Kind::None;
    bool b = false;
    std::int64_t i = 0;
    double d = 0;
    std::string_view s; // String, Bytes: their bytes in the pickle, which outlives the decoder
    std::vector<std::uint32_t> items; // Dict: key, value, key, value, ...
};

struct DecodeError : std::runtime_error {
    DecodeError(std::size_t at, const std::string& what) : std::runtime_error(what), offset(at) {}
    std::size_t offset;
};

// A dump's budget was reached while decoding: decoding ends there.
struct BudgetReached {
    PickleReader::Stop stop;
};
// The output would hold more values or bytes than the limits allow.
struct EmitLimit {};

constexpr std::uint32_t kNone = ~std::uint32_t(0);

class Decoder {
public:
    Decoder(const QByteArray& bytes, const PickleReader::Limits& limits)
        : m_data(reinterpret_cast<const unsigned char*>(bytes.constData())),
          m_size(std::size_t(bytes.size())), m_limits(limits)
    {}

    nlohmann::json run()
    {
        try {
            while (true) {
                if (m_pos >= m_size) fail("ends before the STOP opcode (truncated)");
                m_opAt = m_pos;
                const unsigned char op = m_data[m_pos++];
                if (op == '.') break;
                step(op);
                checkBudgets();
            }
        } catch (const BudgetReached& reached) {
            m_outcome.stop = reached.stop;
            cutAtBudget(reached.stop);
        }
        if (m_stack.size() != 1 || isMark(m_stack.back()))
            fail("STOP with " + std::to_string(m_stack.size()) + " values on the stack");
        m_outcome.bytes = std::int64_t(m_bytes);
        m_emitted = 0;
        try {
            return toJson(m_stack.back(), 0);
        } catch (const EmitLimit&) {
            fail("shared values expand beyond the decoder's limit");
        }
    }

    const PickleReader::Outcome& outcome() const { return m_outcome; }

private:
    [[noreturn]] void fail(const std::string& what) const { throw DecodeError(m_opAt, what); }

    const unsigned char* take(std::size_t n)
    {
        if (n > m_size - m_pos) fail("truncated operand");
        const unsigned char* p = m_data + m_pos;
        m_pos += n;
        return p;
    }
    std::uint64_t le(std::size_t n)
    {
        const unsigned char* p = take(n);
        std::uint64_t v = 0;
        for (std::size_t k = 0; k < n; ++k)
            v |= std::uint64_t(p[k]) << (8 * k);
        return v;
    }

    std::uint32_t make(Node node)
    {
        if (m_nodes.size() >= m_limits.maxNodes) {
            if (m_entries != kNone) throw BudgetReached{PickleReader::Stop::Bytes};
            fail("more values than the decoder allows");
        }
        m_bytes += sizeof(Node) + node.s.size() + sizeof(std::uint32_t) * node.items.size();
        m_nodes.push_back(std::move(node));
        return std::uint32_t(m_nodes.size() - 1);
    }
    void push(Node node)
    {
        const bool mark = node.kind == Node::Kind::Mark;
        const Node::Kind kind = node.kind;
        m_stack.push_back(make(std::move(node)));
        if (mark) m_marks.push_back(m_stack.size() - 1);
        if (kind == Node::Kind::List && m_entries == kNone && isEntriesKey(m_stack.size() - 2))
            noteEntries();
    }
    bool isMark(std::uint32_t id) const { return m_nodes[id].kind == Node::Kind::Mark; }

    // Whether stack[k] is the key "entries" of the top-level dict (stack[0]), in the pairs above
    // its MARK (SETITEMS) or alone above it (SETITEM).
    bool isEntriesKey(std::size_t k) const
    {
        if (k == 0 || k >= m_stack.size() || m_nodes[m_stack[0]].kind != Node::Kind::Dict)
            return false;
        const Node& key = m_nodes[m_stack[k]];
        if (key.kind != Node::Kind::String || key.s != "entries") return false;
        if (m_marks.empty()) return k == 1;
        return m_marks.size() == 1 && m_marks[0] == 1 && k >= 2 && (k - 2) % 2 == 0;
    }
    // The list just pushed is the dump's entries: the budgets count its items from here.
    void noteEntries()
    {
        m_entriesPos = m_stack.size() - 1;
        m_entries = m_stack.back();
        m_entriesMarks = m_marks.size();
    }
    bool entriesOnStack() const
    {
        return m_entries != kNone && m_entriesPos < m_stack.size() &&
               m_stack[m_entriesPos] == m_entries;
    }
    // Whether the MARK of the entries' APPENDS is on the stack, right above the list.
    bool entriesMarkOnStack() const
    {
        return entriesOnStack() && m_marks.size() > m_entriesMarks &&
               m_marks[m_entriesMarks] == m_entriesPos + 1;
    }
    // Entries appended, and those on the stack waiting for their APPENDS (the last of them may
    // still be filling).
    std::int64_t entriesSoFar() const
    {
        std::int64_t n = std::int64_t(m_nodes[m_entries].items.size());
        if (entriesMarkOnStack()) {
            const std::size_t end =
                m_marks.size() > m_entriesMarks + 1 ? m_marks[m_entriesMarks + 1] : m_stack.size();
            n += std::int64_t(end - (m_entriesPos + 2));
        }
        return n;
    }
    void checkBudgets() const
    {
        if (m_entries != kNone && m_limits.maxEntries >= 0 && entriesSoFar() > m_limits.maxEntries)
            throw BudgetReached{PickleReader::Stop::Entries};
        if (m_limits.maxBytes >= 0 && m_bytes > std::size_t(m_limits.maxBytes)) {
            if (m_entries == kNone)
                fail("decoded values exceed the budget of " + std::to_string(m_limits.maxBytes) +
                     " bytes before any Flight Recorder entry");
            throw BudgetReached{PickleReader::Stop::Bytes};
        }
    }
    // The values of the stack level above m_marks[markIndex], less the last one when it may be
    // incomplete: when a deeper MARK is still open (it is being filled), or `dropLast` (a byte
    // budget stops anywhere, even right after an empty container was pushed).
    std::vector<std::uint32_t> levelValues(std::size_t markIndex, bool dropLast) const
    {
        const std::size_t begin = m_marks[markIndex] + 1;
        const bool deeper = markIndex + 1 < m_marks.size();
        std::size_t end = deeper ? m_marks[markIndex + 1] : m_stack.size();
        if ((deeper || dropLast) && end > begin) --end;
        return {m_stack.begin() + std::ptrdiff_t(begin), m_stack.begin() + std::ptrdiff_t(end)};
    }
    // Ends decoding at a budget: the entries complete so far go into the entries list (at most
    // maxEntries), the list and the pairs before it into the top-level dict; the rest is dropped.
    void cutAtBudget(PickleReader::Stop stop)
    {
        const bool anywhere = stop == PickleReader::Stop::Bytes;
        Node& list = m_nodes[m_entries];
        if (entriesOnStack()) {
            if (entriesMarkOnStack()) {
                const std::vector<std::uint32_t> done = levelValues(m_entriesMarks, anywhere);
                list.items.insert(list.items.end(), done.begin(), done.end());
            }
            m_stack.resize(m_entriesPos + 1);
            m_marks.resize(m_entriesMarks);
        }
        if (m_limits.maxEntries >= 0 && list.items.size() > std::size_t(m_limits.maxEntries))
            list.items.resize(std::size_t(m_limits.maxEntries));
        std::vector<std::uint32_t> pairs;
        if (m_marks.empty()) {
            // SETITEM form: [dict, "entries", list] (or a dict that already holds the list).
            if (m_stack.size() >= 3 && m_stack[2] == m_entries) pairs = {m_stack[1], m_stack[2]};
        } else if (m_marks.front() == 1) {
            pairs =
                entriesOnStack()
                    ? std::vector<std::uint32_t>(m_stack.begin() + 2,
                                                 m_stack.begin() + std::ptrdiff_t(m_entriesPos + 1))
                    : levelValues(0, true);
            if (pairs.size() % 2) pairs.pop_back();
        }
        if (m_stack.empty() || m_nodes[m_stack[0]].kind != Node::Kind::Dict)
            fail("a budget was reached outside the dump's top-level dict");
        m_stack.resize(1);
        m_marks.clear();
        setItems(m_stack[0], pairs);
    }

    std::uint32_t pop()
    {
        if (m_stack.empty() || isMark(m_stack.back())) fail("stack underflow");
        const std::uint32_t v = m_stack.back();
        m_stack.pop_back();
        return v;
    }
    std::uint32_t top() const
    {
        if (m_stack.empty() || isMark(m_stack.back())) fail("stack underflow");
        return m_stack.back();
    }
    // The values above the topmost MARK, which is removed.
    std::vector<std::uint32_t> popToMark()
    {
        if (m_marks.empty()) fail("no MARK on the stack");
        const std::size_t k = m_marks.back() + 1;
        m_marks.pop_back();
        std::vector<std::uint32_t> items(m_stack.begin() + std::ptrdiff_t(k), m_stack.end());
        m_stack.resize(k - 1);
        return items;
    }

    void pushString(std::size_t n, Node::Kind kind)
    {
        const unsigned char* p = take(n);
        Node node;
        node.kind = kind;
        node.s = std::string_view(reinterpret_cast<const char*>(p), n);
        push(std::move(node));
    }
    void pushInt(std::int64_t v)
    {
        Node node;
        node.kind = Node::Kind::Int;
        node.i = v;
        push(std::move(node));
    }
    // LONG1/LONG4: little-endian two's complement of n bytes.
    void pushLong(std::size_t n)
    {
        const unsigned char* p = take(n);
        if (n == 0) return pushInt(0);
        if (n <= 8) {
            std::uint64_t v = 0;
            for (std::size_t k = 0; k < n; ++k)
                v |= std::uint64_t(p[k]) << (8 * k);
            if (n < 8 && (p[n - 1] & 0x80)) v |= ~std::uint64_t(0) << (8 * n);
            return pushInt(std::int64_t(v));
        }
        double d = 0;
        const bool negative = p[n - 1] & 0x80;
        for (std::size_t k = n; k-- > 0;)
            d = d * 256.0 + double(negative ? (~p[k] & 0xff) : p[k]);
        Node node;
        node.kind = Node::Kind::Float;
        node.d = negative ? -(d + 1.0) : d;
        push(std::move(node));
    }

    void appendTo(std::uint32_t list, const std::vector<std::uint32_t>& values)
    {
        Node& n = m_nodes[list];
        if (n.kind != Node::Kind::List) fail("APPEND to something that is not a list");
        n.items.insert(n.items.end(), values.begin(), values.end());
        m_bytes += sizeof(std::uint32_t) * values.size();
    }
    void setItems(std::uint32_t dict, const std::vector<std::uint32_t>& kv)
    {
        if (kv.size() % 2) fail("SETITEMS with an odd number of values");
        Node& n = m_nodes[dict];
        if (n.kind != Node::Kind::Dict) fail("SETITEM on something that is not a dict");
        n.items.insert(n.items.end(), kv.begin(), kv.end());
        m_bytes += sizeof(std::uint32_t) * kv.size();
    }
    // Pickles number their memo 0, 1, 2, ... (MEMOIZE always does): those indices go into a
    // vector, any other into a map.
    void memoPut(std::uint64_t index)
    {
        if (m_stack.empty() || isMark(m_stack.back())) fail("memo put with an empty stack");
        if (index < m_memoDense.size())
            m_memoDense[index] = m_stack.back();
        else if (index == m_memoDense.size() && m_memoSparse.empty())
            m_memoDense.push_back(m_stack.back());
        else
            m_memoSparse[index] = m_stack.back();
        m_bytes += 4 * sizeof(std::uint64_t); // a hash node
    }
    void memoGet(std::uint64_t index)
    {
        if (index < m_memoDense.size()) {
            m_stack.push_back(m_memoDense[index]);
            return;
        }
        const auto it = m_memoSparse.find(index);
        if (it == m_memoSparse.end()) fail("memo get of an unknown index " + std::to_string(index));
        m_stack.push_back(it->second);
    }
    std::size_t memoSize() const { return m_memoDense.size() + m_memoSparse.size(); }
    void pushContainer(Node::Kind kind, std::vector<std::uint32_t> items)
    {
        Node node;
        node.kind = kind;
        node.items = std::move(items);
        push(std::move(node));
    }

    void step(unsigned char op)
    {
        switch (op) {
        case 0x80: // PROTO
            if (const auto v = le(1); v < 2 || v > 5)
                fail("pickle protocol " + std::to_string(v) + " is not supported (2-5 are)");
            return;
        case 0x95: // FRAME: a length hint only
            le(8);
            return;
        case 'N':
            return push(Node{});
        case 0x88:
        case 0x89: {
            Node node;
            node.kind = Node::Kind::Bool;
            node.b = op == 0x88;
            return push(std::move(node));
        }
        case 'J':
            return pushInt(std::int32_t(std::uint32_t(le(4))));
        case 'K':
            return pushInt(std::int64_t(le(1)));
        case 'M':
            return pushInt(std::int64_t(le(2)));
        case 0x8a:
            return pushLong(std::size_t(le(1)));
        case 0x8b: {
            const std::uint64_t n = le(4);
            if (n > 64) fail("LONG4 of " + std::to_string(n) + " bytes");
            return pushLong(std::size_t(n));
        }
        case 'G': {
            const unsigned char* p = take(8);
            std::uint64_t bits = 0;
            for (int k = 0; k < 8; ++k)
                bits = (bits << 8) | p[k];
            Node node;
            node.kind = Node::Kind::Float;
            std::memcpy(&node.d, &bits, sizeof node.d);
            return push(std::move(node));
        }
        case 'X':
            return pushString(std::size_t(le(4)), Node::Kind::String);
        case 0x8c:
            return pushString(std::size_t(le(1)), Node::Kind::String);
        case 0x8d:
            return pushString(std::size_t(le(8)), Node::Kind::String);
        case 'U': // SHORT_BINSTRING, BINSTRING: Python 2 str, read as text
            return pushString(std::size_t(le(1)), Node::Kind::String);
        case 'T':
            return pushString(std::size_t(le(4)), Node::Kind::String);
        case 'C':
            return pushString(std::size_t(le(1)), Node::Kind::Bytes);
        case 'B':
            return pushString(std::size_t(le(4)), Node::Kind::Bytes);
        case 0x8e:
        case 0x96: // BYTEARRAY8
            return pushString(std::size_t(le(8)), Node::Kind::Bytes);
        case '}':
            return pushContainer(Node::Kind::Dict, {});
        case ']':
            return pushContainer(Node::Kind::List, {});
        case ')':
            return pushContainer(Node::Kind::Tuple, {});
        case '(': {
            Node node;
            node.kind = Node::Kind::Mark;
            return push(std::move(node));
        }
        case 't':
            return pushContainer(Node::Kind::Tuple, popToMark());
        case 'l':
            return pushContainer(Node::Kind::List, popToMark());
        case 'd': {
            std::vector<std::uint32_t> kv = popToMark();
            if (kv.size() % 2) fail("DICT with an odd number of values");
            return pushContainer(Node::Kind::Dict, std::move(kv));
        }
        case 0x85:
        case 0x86:
        case 0x87: {
            std::vector<std::uint32_t> items(std::size_t(op - 0x84));
            for (std::size_t k = items.size(); k-- > 0;)
                items[k] = pop();
            return pushContainer(Node::Kind::Tuple, std::move(items));
        }
        case 'a': {
            const std::uint32_t v = pop();
            return appendTo(top(), {v});
        }
        case 'e': {
            std::vector<std::uint32_t> values = popToMark();
            return appendTo(top(), values);
        }
        case 's': {
            const std::uint32_t v = pop();
            const std::uint32_t k = pop();
            return setItems(top(), {k, v});
        }
        case 'u': {
            std::vector<std::uint32_t> kv = popToMark();
            return setItems(top(), kv);
        }
        case 'q':
            return memoPut(le(1));
        case 'r':
            return memoPut(le(4));
        case 0x94:
            return memoPut(memoSize());
        case 'h':
            return memoGet(le(1));
        case 'j':
            return memoGet(le(4));
        case '0':
            pop();
            return;
        case '1':
            popToMark();
            return;
        case '2':
            m_stack.push_back(top());
            return;
        default:
            break;
        }
        fail(forbiddenName(op));
    }

    static std::string forbiddenName(unsigned char op)
    {
        static const std::unordered_map<unsigned char, const char*> names = {
            {'c', "GLOBAL"},
            {0x93, "STACK_GLOBAL"},
            {'R', "REDUCE"},
            {'b', "BUILD"},
            {'i', "INST"},
            {'o', "OBJ"},
            {0x81, "NEWOBJ"},
            {0x92, "NEWOBJ_EX"},
            {0x82, "EXT1"},
            {0x83, "EXT2"},
            {0x84, "EXT4"},
            {'P', "PERSID"},
            {'Q', "BINPERSID"},
            {0x97, "NEXT_BUFFER"},
            {0x98, "READONLY_BUFFER"},
            {0x8f, "EMPTY_SET"},
            {0x90, "ADDITEMS"},
            {0x91, "FROZENSET"},
            {'I', "INT (protocol 0)"},
            {'L', "LONG (protocol 0)"},
            {'F', "FLOAT (protocol 0)"},
            {'S', "STRING (protocol 0)"},
            {'V', "UNICODE (protocol 0)"},
            {'p', "PUT (protocol 0)"},
            {'g', "GET (protocol 0)"},
        };
        const auto it = names.find(op);
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        if (it == names.end()) return std::string("unknown opcode ") + hex;
        return std::string("refused opcode ") + it->second + " (" + hex +
               "): only plain data is decoded, nothing is executed";
    }

    std::string keyText(std::uint32_t id, std::size_t depth)
    {
        const Node& n = m_nodes[id];
        if (n.kind == Node::Kind::String) return std::string(n.s);
        return toJson(id, depth).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }

    // Counts a value of the output: past maxNodes values or maxBytes bytes, EmitLimit.
    void charge(std::size_t bytes)
    {
        m_emitBytes += bytes;
        if (++m_emitted > m_limits.maxNodes ||
            (m_limits.maxBytes >= 0 && m_emitBytes > std::size_t(m_limits.maxBytes)))
            throw EmitLimit{};
    }

    nlohmann::json toJson(std::uint32_t id, std::size_t depth)
    {
        if (depth > m_limits.maxDepth)
            fail("nesting deeper than " + std::to_string(m_limits.maxDepth));
        const Node& n = m_nodes[id];
        charge(sizeof(nlohmann::json) + n.s.size());
        switch (n.kind) {
        case Node::Kind::None:
        case Node::Kind::Mark:
            return nullptr;
        case Node::Kind::Bool:
            return n.b;
        case Node::Kind::Int:
            return n.i;
        case Node::Kind::Float:
            return n.d;
        case Node::Kind::String:
            return std::string(n.s);
        case Node::Kind::Bytes:
            return nlohmann::json::binary(std::vector<std::uint8_t>(n.s.begin(), n.s.end()));
        case Node::Kind::List:
        case Node::Kind::Tuple: {
            nlohmann::json arr = nlohmann::json::array();
            // m_nodes is not changed while the output is built: `n` stays where it is.
            const std::vector<std::uint32_t>& items = n.items;
            arr.get_ref<nlohmann::json::array_t&>().reserve(items.size());
            if (id != m_entries) {
                for (std::uint32_t child : items)
                    arr.push_back(toJson(child, depth + 1));
                return arr;
            }
            // The entries: those that fit the output's limits are kept, whole.
            for (std::uint32_t child : items) {
                try {
                    arr.push_back(toJson(child, depth + 1));
                } catch (const EmitLimit&) {
                    m_outcome.stop = PickleReader::Stop::Bytes;
                    break;
                }
            }
            m_outcome.entries = std::int64_t(arr.size());
            return arr;
        }
        case Node::Kind::Dict: {
            nlohmann::json obj = nlohmann::json::object();
            nlohmann::json::object_t& members = obj.get_ref<nlohmann::json::object_t&>();
            const std::vector<std::uint32_t>& items = n.items;
            for (std::size_t k = 0; k + 1 < items.size(); k += 2) {
                // Past a cut of the entries, nothing more of the dump is built.
                if (m_outcome.stop != PickleReader::Stop::None && m_entriesEmitted) break;
                std::string key = keyText(items[k], depth + 1);
                charge(64 + key.size()); // the map node
                // A repeated key keeps its last value, as in Python.
                members.insert_or_assign(std::move(key), toJson(items[k + 1], depth + 1));
                m_entriesEmitted = m_entriesEmitted || items[k + 1] == m_entries;
            }
            return obj;
        }
        }
        return nullptr;
    }

    const unsigned char* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
    std::size_t m_opAt = 0;
    std::size_t m_emitted = 0;
    std::size_t m_emitBytes = 0;
    std::size_t m_bytes = 0; // the decoded values' memory, estimated
    PickleReader::Limits m_limits;
    PickleReader::Outcome m_outcome;
    std::vector<Node> m_nodes;
    std::vector<std::uint32_t> m_stack;
    std::vector<std::size_t> m_marks; // stack positions of the MARKs, bottom first
    std::uint32_t m_entries = kNone;  // the top-level dict's "entries" list, once pushed
    std::size_t m_entriesPos = 0;     // its stack position then
    std::size_t m_entriesMarks = 0;   // MARKs below it
    bool m_entriesEmitted = false;
    std::vector<std::uint32_t> m_memoDense;                        // indices 0 .. size - 1
    std::unordered_map<std::uint64_t, std::uint32_t> m_memoSparse; // once one is out of order
};

} // namespace

std::optional<nlohmann::json> PickleReader::decode(const QByteArray& bytes, QString* error)
{
    return decode(bytes, error, Limits{});
}

std::optional<nlohmann::json> PickleReader::decode(const QByteArray& bytes, QString* error,
                                                   const Limits& limits, Outcome* outcome)
{
    try {
        Decoder decoder(bytes, limits);
        nlohmann::json value = decoder.run();
        if (outcome) *outcome = decoder.outcome();
        return value;
    } catch (const DecodeError& e) {
        if (error)
            *error = QStringLiteral("pickle at byte %1: %2")
                         .arg(e.offset)
                         .arg(QString::fromUtf8(e.what()));
    } catch (const std::bad_alloc&) {
        if (error) *error = QStringLiteral("pickle: out of memory while decoding");
    }
    return std::nullopt;
}

} // namespace rankscope
