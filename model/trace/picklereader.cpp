#include "model/trace/picklereader.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
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
    std::string s;
    std::vector<std::uint32_t> items; // Dict: key, value, key, value, ...
};

struct DecodeError : std::runtime_error {
    DecodeError(std::size_t at, const std::string& what) : std::runtime_error(what), offset(at) {}
    std::size_t offset;
};

class Decoder {
public:
    Decoder(const QByteArray& bytes, const PickleReader::Limits& limits)
        : m_data(reinterpret_cast<const unsigned char*>(bytes.constData())),
          m_size(std::size_t(bytes.size())), m_limits(limits)
    {}

    nlohmann::json run()
    {
        while (true) {
            if (m_pos >= m_size) fail("ends before the STOP opcode (truncated)");
            m_opAt = m_pos;
            const unsigned char op = m_data[m_pos++];
            if (op == '.') break;
            step(op);
        }
        if (m_stack.size() != 1 || isMark(m_stack.back()))
            fail("STOP with " + std::to_string(m_stack.size()) + " values on the stack");
        m_emitted = 0;
        return toJson(m_stack.back(), 0);
    }

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
        if (m_nodes.size() >= m_limits.maxNodes) fail("more values than the decoder allows");
        m_nodes.push_back(std::move(node));
        return std::uint32_t(m_nodes.size() - 1);
    }
    void push(Node node) { m_stack.push_back(make(std::move(node))); }
    bool isMark(std::uint32_t id) const { return m_nodes[id].kind == Node::Kind::Mark; }

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
        std::size_t k = m_stack.size();
        while (k > 0 && !isMark(m_stack[k - 1]))
            --k;
        if (k == 0) fail("no MARK on the stack");
        std::vector<std::uint32_t> items(m_stack.begin() + std::ptrdiff_t(k), m_stack.end());
        m_stack.resize(k - 1);
        return items;
    }

    void pushString(std::size_t n, Node::Kind kind)
    {
        const unsigned char* p = take(n);
        Node node;
        node.kind = kind;
        node.s.assign(reinterpret_cast<const char*>(p), n);
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
    }
    void setItems(std::uint32_t dict, const std::vector<std::uint32_t>& kv)
    {
        if (kv.size() % 2) fail("SETITEMS with an odd number of values");
        Node& n = m_nodes[dict];
        if (n.kind != Node::Kind::Dict) fail("SETITEM on something that is not a dict");
        n.items.insert(n.items.end(), kv.begin(), kv.end());
    }
    void memoPut(std::uint64_t index)
    {
        if (m_stack.empty()) fail("memo put with an empty stack");
        m_memo[index] = m_stack.back();
    }
    void memoGet(std::uint64_t index)
    {
        const auto it = m_memo.find(index);
        if (it == m_memo.end()) fail("memo get of an unknown index " + std::to_string(index));
        m_stack.push_back(it->second);
    }
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
            return memoPut(m_memo.size());
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

    nlohmann::json keyText(std::uint32_t id, std::size_t depth)
    {
        const Node& n = m_nodes[id];
        if (n.kind == Node::Kind::String) return n.s;
        return toJson(id, depth).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }

    nlohmann::json toJson(std::uint32_t id, std::size_t depth)
    {
        if (depth > m_limits.maxDepth)
            fail("nesting deeper than " + std::to_string(m_limits.maxDepth));
        if (++m_emitted > m_limits.maxNodes)
            fail("shared values expand beyond the decoder's limit");
        const Node& n = m_nodes[id];
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
            return n.s;
        case Node::Kind::Bytes:
            return nlohmann::json::binary(std::vector<std::uint8_t>(n.s.begin(), n.s.end()));
        case Node::Kind::List:
        case Node::Kind::Tuple: {
            nlohmann::json arr = nlohmann::json::array();
            const std::vector<std::uint32_t> items = n.items; // n may move as toJson recurses
            for (std::uint32_t child : items)
                arr.push_back(toJson(child, depth + 1));
            return arr;
        }
        case Node::Kind::Dict: {
            nlohmann::json obj = nlohmann::json::object();
            const std::vector<std::uint32_t> items = n.items;
            for (std::size_t k = 0; k + 1 < items.size(); k += 2) {
                const std::string key = keyText(items[k], depth + 1);
                obj[key] = toJson(items[k + 1], depth + 1);
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
    PickleReader::Limits m_limits;
    std::vector<Node> m_nodes;
    std::vector<std::uint32_t> m_stack;
    std::unordered_map<std::uint64_t, std::uint32_t> m_memo;
};

} // namespace

std::optional<nlohmann::json> PickleReader::decode(const QByteArray& bytes, QString* error)
{
    return decode(bytes, error, Limits{});
}

std::optional<nlohmann::json> PickleReader::decode(const QByteArray& bytes, QString* error,
                                                   const Limits& limits)
{
    try {
        Decoder decoder(bytes, limits);
        return decoder.run();
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
