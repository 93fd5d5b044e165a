#include "model/trace/kinetoreader.h"

#include "model/store/bucketsort.h"
#include "model/store/columnallocator.h"
#include "model/trace/gzipinput.h"
#include "model/trace/jsonscanner.h"
#include "model/trace/kinetocollectives.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <fcntl.h>
#include <limits>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <numeric>
#include <unordered_map>

namespace rankscope {

namespace {

using json::Scan;

constexpr std::size_t kReadChunk = std::size_t(4) << 20;     // cancel/progress granularity
constexpr std::size_t kReadAheadWindows = 3;                 // of kReadChunk, inflated ahead
constexpr std::size_t kInitialWindow = std::size_t(8) << 20; // grows for larger single values
constexpr std::size_t kMaxValue = std::size_t(512) << 20;    // one JSON value larger: Error

class Stream {
public:
    virtual ~Stream() = default;
    // Bytes read into `buf`, 0 at the end, -1 on error (see error()).
    virtual std::int64_t read(char* buf, std::size_t n) = 0;
    virtual std::int64_t inputOffset() const = 0; // file bytes consumed, for progress
    virtual std::int64_t inputSize() const = 0;
    virtual std::string error() const = 0;
};

// A file, inflated when it is gzip. A compressed file is inflated on a thread of its own, a few
// windows ahead of the parser, so one large .json.gz keeps two cores busy; a plain file is read
// straight into the parser's window.
class FileStream final : public Stream {
public:
    // Takes `fd` (closed with the stream; -1: not open).
    explicit FileStream(int fd) : m_file(fd, GzipInput::Descriptor::Owned)
    {
        if (!m_file.isCompressed()) return;
        m_file.recordCheckpoints(GzipInput::checkpointSpacing(m_file.inputSize()));
        m_ahead.emplace(m_file, kReadChunk, kReadAheadWindows);
    }
    // Stops reading ahead; the checkpoints recorded (null for a plain file).
    std::shared_ptr<const GzipIndex> finish()
    {
        m_ahead.reset();
        return m_file.takeIndex();
    }
    bool isOpen() const { return m_file.isOpen(); }
    bool isCompressed() const { return m_file.isCompressed(); }
    std::int64_t read(char* buf, std::size_t n) override
    {
        return m_ahead ? m_ahead->read(buf, n) : m_file.read(buf, n);
    }
    std::int64_t inputOffset() const override
    {
        return m_ahead ? m_ahead->inputOffset() : m_file.inputOffset();
    }
    std::int64_t inputSize() const override { return m_file.inputSize(); }
    std::string error() const override { return m_ahead ? m_ahead->error() : m_file.error(); }

private:
    GzipInput m_file;
    std::optional<ReadAhead> m_ahead;
};

class MemStream final : public Stream {
public:
    explicit MemStream(std::string_view data) : m_data(data) {}
    std::int64_t read(char* buf, std::size_t n) override
    {
        const std::size_t k = std::min(n, m_data.size() - m_pos);
        std::memcpy(buf, m_data.data() + m_pos, k);
        m_pos += k;
        return std::int64_t(k);
    }
    std::int64_t inputOffset() const override { return std::int64_t(m_pos); }
    std::int64_t inputSize() const override { return std::int64_t(m_data.size()); }
    std::string error() const override { return {}; }

private:
    std::string_view m_data;
    std::size_t m_pos = 0;
};

struct IdValue {
    bool present = false;
    bool isString = false;
    std::int64_t number = 0;
    std::string_view text;
};

// Looks up std::string keys by string_view, without a string made for each look-up.
struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept
    {
        return std::hash<std::string_view>()(s);
    }
};

struct LaneBuild {
    Lane lane;
    std::string label; // the string pid/tid, when the trace used one
    std::vector<std::int64_t> openB;
    std::vector<std::int64_t> unfinished; // pre-sort indices
    bool gpu = false;
};

// 24 bytes: flows can be as many as half the events, and all are held until the end. A lane
// index needs 30 bits: every lane is opened by an event object, and a source holds far fewer
// than 2^30 of them (its inflated bytes are budgeted).
struct FlowPoint {
    std::uint64_t key;
    std::int64_t at; // pre-sort event index when `bound`, else the timestamp in ns
    std::uint32_t lane : 30;
    std::uint32_t isBound : 1;
    std::uint32_t isStart : 1;
    StringId category;
    bool bound() const { return isBound != 0; }
    bool start() const { return isStart != 0; }
};
static_assert(sizeof(FlowPoint) == 24);

// 16 bytes, one for every launch with a correlation id.
struct Launch {
    std::int32_t lane;
    std::uint32_t event; // pre-sort index (a lane's events are counted in uint32, see FlowLink)
    std::int64_t correlation;
};

struct PendingArgs {
    int lane;
    std::int64_t event; // pre-sort index
    CommArgs args;
};

std::string hex(unsigned char c)
{
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

bool ieq(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
        if (x != b[i]) return false;
    }
    return true;
}

bool startsWith(std::string_view s, std::string_view p)
{
    return s.substr(0, p.size()) == p;
}

bool startsWithNoCase(std::string_view s, std::string_view p)
{
    return s.size() >= p.size() && ieq(s.substr(0, p.size()), p);
}

bool endsWithNoCase(std::string_view s, std::string_view p)
{
    return s.size() >= p.size() && ieq(s.substr(s.size() - p.size()), p);
}

// The categories Kineto writes for work that runs on the accelerator, whatever the vendor:
// CUDA, ROCm, XPU and PrivateUse1 backends write kernel / gpu_memcpy / gpu_memset /
// gpu_user_annotation, MTIA its on-device mtia_ccp_events, and other backends their own prefix
// (mlu_memcpy, ...). Host-side runtimes (cuda_runtime, mtia_runtime, xpu_runtime,
// privateuse1_driver, hpu_op) are not here: they run on a CPU thread. Other when not a device
// category.
EventCategory deviceCategory(std::string_view cat)
{
    if (ieq(cat, "kernel") || ieq(cat, "mtia_ccp_events") || endsWithNoCase(cat, "_kernel"))
        return EventCategory::Kernel;
    if (ieq(cat, "memcpy") || endsWithNoCase(cat, "_memcpy")) return EventCategory::Memcpy;
    if (ieq(cat, "memset") || endsWithNoCase(cat, "_memset")) return EventCategory::Memset;
    if (endsWithNoCase(cat, "_user_annotation") && !ieq(cat, "user_annotation"))
        return EventCategory::UserAnnotation;
    return EventCategory::Other;
}

EventCategory hostCategory(std::string_view cat)
{
    if (ieq(cat, "cpu_op") || ieq(cat, "operator")) return EventCategory::CpuOp;
    if (ieq(cat, "user_annotation")) return EventCategory::UserAnnotation;
    if (ieq(cat, "python_function")) return EventCategory::PythonFunction;
    if (ieq(cat, "cuda_sync") || ieq(cat, "runtime") || ieq(cat, "hpu_op") ||
        endsWithNoCase(cat, "_runtime") || endsWithNoCase(cat, "_driver"))
        return EventCategory::Runtime;
    return EventCategory::Other;
}

std::int64_t jsonInt(const nlohmann::json& v)
{
    if (v.is_number_integer() || v.is_number_unsigned()) return v.get<std::int64_t>();
    if (v.is_number_float()) return std::int64_t(v.get<double>());
    if (v.is_string()) {
        std::int64_t out = -1;
        const std::string s = v.get<std::string>();
        if (json::toInt64(s, out)) return out;
    }
    return -1;
}

std::vector<int> jsonRanks(const nlohmann::json& v)
{
    nlohmann::json list = v;
    if (v.is_string()) list = nlohmann::json::parse(v.get<std::string>(), nullptr, false);
    std::vector<int> out;
    if (!list.is_array()) return out;
    for (const auto& r : list)
        if (r.is_number_integer()) out.push_back(r.get<int>());
    return out;
}

CommArgs commArgsFrom(const nlohmann::json& a)
{
    CommArgs c;
    if (!a.is_object()) return c;
    const auto str = [&a](const char* key) {
        const auto it = a.find(key);
        return it != a.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const auto num = [&a](const char* key) {
        const auto it = a.find(key);
        return it != a.end() ? jsonInt(*it) : std::int64_t(-1);
    };
    c.op = str("Collective name");
    c.dtype = str("dtype");
    c.inNelems = num("In msg nelems");
    c.outNelems = num("Out msg nelems");
    c.groupSize = int(num("Group size"));
    c.groupName = str("Process Group Name");
    c.groupDesc = str("Process Group Description");
    if (const auto it = a.find("Process Group Ranks"); it != a.end()) c.groupRanks = jsonRanks(*it);
    c.seq = num("Seq");
    c.correlation = num("correlation");
    const std::int64_t peer = std::max(num("Dst Rank"), num("Src Rank"));
    c.peer = peer >= 0 && peer <= std::numeric_limits<int>::max() ? int(peer) : -1;
    // Older traces (no record_param_comms args): the nccl:* annotation's first input says the
    // element count and type.
    const auto dims = a.find("Input Dims");
    const auto types = a.find("Input type");
    if (c.dtype.empty() && types != a.end() && types->is_array() && !types->empty() &&
        types->front().is_string()) {
        const std::string t = types->front().get<std::string>();
        if (!t.empty() && t != "Scalar" && t != "TensorList") c.dtype = t;
    }
    if (c.inNelems < 0 && !c.dtype.empty() && dims != a.end() && dims->is_array() &&
        !dims->empty() && dims->front().is_array() && !dims->front().empty()) {
        std::int64_t n = 1;
        for (const auto& d : dims->front())
            n *= d.is_number_integer() ? d.get<std::int64_t>() : 0;
        c.inNelems = n;
    }
    return c;
}

// The event members the reader keeps.
enum class EventKey : std::uint8_t { Ph, Name, Cat, Pid, Tid, Ts, Dur, Id, Bp, Args, Other };

// Kineto writes these keys plainly, so they are told apart from the bytes at the opening quote
// (at least 8 readable) without scanning the key as a string: `quotedLength` is the key's
// length with its quotes. Other for any other key, which is then scanned in full.
[[gnu::always_inline]] inline EventKey plainEventKey(const char* p, std::size_t& quotedLength)
{
    const auto is = [p, &quotedLength](std::string_view quoted) {
        if (std::memcmp(p, quoted.data(), quoted.size()) != 0) return false;
        quotedLength = quoted.size();
        return true;
    };
    switch (p[1]) {
    case 'p':
        if (is("\"ph\"")) return EventKey::Ph;
        if (is("\"pid\"")) return EventKey::Pid;
        break;
    case 't':
        if (is("\"ts\"")) return EventKey::Ts;
        if (is("\"tid\"")) return EventKey::Tid;
        break;
    case 'n':
        if (is("\"name\"")) return EventKey::Name;
        break;
    case 'c':
        if (is("\"cat\"")) return EventKey::Cat;
        break;
    case 'd':
        if (is("\"dur\"")) return EventKey::Dur;
        break;
    case 'a':
        if (is("\"args\"")) return EventKey::Args;
        break;
    case 'i':
        if (is("\"id\"")) return EventKey::Id;
        break;
    case 'b':
        if (is("\"bp\"")) return EventKey::Bp;
        break;
    default:
        break;
    }
    return EventKey::Other;
}

// A member key of Kineto's order as words to compare the text with: the key with its quotes
// (`"cat"`), and the key with the separator and colon that writers put around it (`, "cat": `).
struct OrderedKey {
    std::uint64_t quoted = 0;
    std::uint64_t quotedMask = 0;
    std::size_t quotedLength = 0;
    std::uint64_t separatedHead = 0; // the first 8 bytes of `, "cat": `
    std::uint64_t separatedTail = 0; // the rest (at most 8), under separatedTailMask
    std::uint64_t separatedTailMask = 0;
    std::size_t separatedLength = 0;
};

template <std::size_t N> consteval OrderedKey orderedKey(const char (&quoted)[N])
{
    static_assert(N - 1 >= 4 && N - 1 <= 6);
    char separated[16] = {',', ' '};
    std::size_t n = 2;
    for (std::size_t i = 0; i + 1 < N; ++i)
        separated[n++] = quoted[i];
    separated[n++] = ':';
    separated[n++] = ' ';
    OrderedKey k;
    k.quotedLength = N - 1;
    k.separatedLength = n;
    for (std::size_t i = 0; i < N - 1; ++i) {
        k.quoted |= std::uint64_t(static_cast<unsigned char>(quoted[i])) << (8 * i);
        k.quotedMask |= std::uint64_t(0xFF) << (8 * i);
    }
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t byte = static_cast<unsigned char>(separated[i]);
        if (i < 8) {
            k.separatedHead |= byte << (8 * i);
        } else {
            k.separatedTail |= byte << (8 * (i - 8));
            k.separatedTailMask |= std::uint64_t(0xFF) << (8 * (i - 8));
        }
    }
    return k;
}

constexpr OrderedKey kPhKey = orderedKey("\"ph\""), kCatKey = orderedKey("\"cat\""),
                     kNameKey = orderedKey("\"name\""), kPidKey = orderedKey("\"pid\""),
                     kTidKey = orderedKey("\"tid\""), kTsKey = orderedKey("\"ts\""),
                     kDurKey = orderedKey("\"dur\""), kArgsKey = orderedKey("\"args\""),
                     kIdKey = orderedKey("\"id\""), kBpKey = orderedKey("\"bp\"");

[[gnu::always_inline]] inline std::uint64_t word(const char* q)
{
    std::uint64_t w;
    std::memcpy(&w, q, 8);
    return w;
}

// A key scanned in full (no escape in it), through the same table.
EventKey eventKey(std::string_view key)
{
    if (key.size() > 4) return EventKey::Other;
    char quoted[8] = {};
    quoted[0] = '"';
    std::memcpy(quoted + 1, key.data(), key.size());
    quoted[key.size() + 1] = '"';
    std::size_t length = 0;
    const EventKey k = plainEventKey(quoted, length);
    return length == key.size() + 2 ? k : EventKey::Other;
}

std::uint64_t mix(std::int64_t a, std::int64_t b)
{
    std::uint64_t h = std::uint64_t(a) * 0x9E3779B97F4A7C15ull;
    h ^= std::uint64_t(b) + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
    return h;
}

// The parser's window is written by reads before any of it is scanned, so growing it need not
// zero it first (std::vector's value-initialisation of 8 MB for every source).
template <typename T> struct UninitializedAllocator : std::allocator<T> {
    UninitializedAllocator() = default;
    template <typename U> UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
    template <typename U> struct rebind {
        using other = UninitializedAllocator<U>;
    };
    template <typename U> void construct(U* at) noexcept { ::new (static_cast<void*>(at)) U; }
};

class Parser {
public:
    Parser(Stream& in, EventStore& out, const KinetoReader::Options& opts)
        : m_in(in), m_out(out), m_opts(opts)
    {}

    KinetoReadResult run();

private:
    enum class State {
        Top,
        RootFirst,
        RootNext,
        RootKey,
        EventsFirst,
        EventsNext,
        EventsAny,
        Done
    };

    bool refill();
    Scan step(const char*& p, const char* end);
    Scan rootMember(const char*& p, const char* end);
    Scan events(const char*& p, const char* end);
    Scan event(const char*& p, const char* end);
    bool fail(const char* at, std::string what);
    std::int64_t offsetOf(const char* at) const
    {
        return m_bufOffset + std::int64_t(at - m_buf.data());
    }
    bool internName(std::string_view raw, bool escaped, StringId& id, const char* at);
    // Numbers name themselves; strings are numbered by textIdNumber.
    std::int64_t idNumber(const IdValue& v) { return v.isString ? textIdNumber(v.text) : v.number; }
    std::int64_t textIdNumber(std::string_view text);
    [[gnu::always_inline]] int laneOf(const IdValue& pid, const IdValue& tid)
    {
        // A trace alternates between a few lanes (a CPU thread and the streams its kernels run
        // on): the recent ones answer from a small table without a look-up in the map.
        const std::int64_t p = idNumber(pid);
        const std::int64_t t = tid.present ? idNumber(tid) : 0;
        const std::uint64_t key = mix(p, t);
        const RecentLane& r = m_recentLanes[recentLaneSlot(key)];
        return r.lane >= 0 && r.key == key ? r.lane : laneFor(key, p, t, tid);
    }
    int laneFor(std::uint64_t key, std::int64_t p, std::int64_t t, const IdValue& tid);
    // A "cat" seen recently and what it says (bounded: a trace may hold any number of them).
    struct CategorySlot {
        std::string text;
        std::uint64_t serial = 0; // a new one each time the slot is filled; 0: never filled
        EventCategory category = EventCategory::Other;
        bool gpu = false;
        std::size_t hash = 0;       // of the text, for flow keys
        StringId flowCategory = -1; // the text interned, once a flow used it
    };
    // What an event's name and category make of it, kept per name id for the category (slot
    // serial; 1: no "cat" member) it was derived with.
    struct NameKind {
        std::uint64_t categorySerial = 0;
        EventCategory category = EventCategory::Other;
        bool gpu = false;
        bool wantArgs = false; // collective parameters to parse from its args
        bool launch = false;   // the name holds "Launch" (a kernel launch by a runtime)
    };
    CategorySlot& categorySlot(std::string_view cat);
    NameKind kindOf(StringId nameId, const CategorySlot* cat);
    void finish();
    std::size_t projected(std::size_t sofar) const;
    void reserveFor(LaneBuild& b);

    Stream& m_in;
    EventStore& m_out;
    const KinetoReader::Options& m_opts;
    KinetoReadResult m_result;

    std::vector<char, UninitializedAllocator<char>> m_buf;
    std::size_t m_pos = 0;
    std::size_t m_len = 0;
    std::int64_t m_bufOffset = 0;
    bool m_eof = false;
    bool m_failed = false;
    bool m_eventBudgetReached = false;
    std::int64_t m_reportedInput = 0;

    State m_state = State::Top;
    bool m_bareArray = false;
    bool m_sawEvents = false;
    bool m_eventsClosed = false;
    bool m_sawBase = false;
    std::int64_t m_baseNs = 0;
    std::int64_t m_maxEndNs = std::numeric_limits<std::int64_t>::min();
    std::vector<ProcessGroupInfo> m_groups;

    std::vector<LaneBuild> m_lanes;
    std::unordered_map<std::uint64_t, int> m_laneIndex; // hash of (pid, tid) -> lane
    std::unordered_map<std::string, std::int64_t, TextHash, std::equal_to<>> m_stringIds;
    std::int64_t m_nextSyntheticId = -1;
    struct RecentLane {
        std::uint64_t key = 0;
        int lane = -1; // -1: unused
    };
    static constexpr int kRecentLaneBits = 4;
    // mix() leaves the streams of one device apart only in its low bits.
    static std::size_t recentLaneSlot(std::uint64_t key)
    {
        return std::size_t((key * 0x9E3779B97F4A7C15ull) >> (64 - kRecentLaneBits));
    }
    std::array<RecentLane, std::size_t(1) << kRecentLaneBits> m_recentLanes{};
    std::unordered_map<std::int64_t, std::string> m_processNames;
    std::unordered_map<std::int64_t, std::string> m_processLabels; // "GPU 0", "CPU"
    std::unordered_map<std::uint64_t, std::string> m_threadNames;
    std::vector<FlowPoint> m_flows;
    std::vector<PendingArgs> m_args;
    std::vector<Launch> m_launches;
    struct NameCacheEntry {
        std::uint64_t tag = 0;
        StringId id = 0; // 0 (the empty string) marks an unused slot
    };
    static constexpr int kNameCacheBits = 10;
    std::array<NameCacheEntry, std::size_t(1) << kNameCacheBits> m_nameCache{};
    std::string m_scratch;
    std::array<CategorySlot, 32> m_categories;
    std::uint64_t m_nextCategorySerial = 2;
    std::vector<NameKind> m_kinds; // by name id
};

bool Parser::fail(const char* at, std::string what)
{
    m_failed = true;
    m_result.status = SourceStatus::Error;
    m_result.message = std::move(what) + " at byte " + std::to_string(offsetOf(at));
    return false;
}

bool Parser::refill()
{
    if (m_opts.cancel && m_opts.cancel->load(std::memory_order_relaxed)) return false;
    if (m_pos > 0) {
        std::memmove(m_buf.data(), m_buf.data() + m_pos, m_len - m_pos);
        m_bufOffset += std::int64_t(m_pos);
        m_len -= m_pos;
        m_pos = 0;
    }
    if (m_len == m_buf.size()) {
        if (m_buf.size() >= kMaxValue) {
            fail(m_buf.data(), "a single JSON value larger than " +
                                   std::to_string(kMaxValue >> 20) + " MB starts");
            return false;
        }
        m_buf.resize(std::min(kMaxValue, m_buf.size() * 2));
    }
    // Never past the decompressed-bytes budget, so a source stops exactly there.
    const std::int64_t allowed =
        m_opts.budget.maxInflatedBytes - (m_bufOffset + std::int64_t(m_len));
    const std::int64_t got = m_in.read(m_buf.data() + m_len,
                                       std::min({kReadChunk, m_buf.size() - m_len,
                                                 std::size_t(std::max<std::int64_t>(allowed, 0))}));
    if (got < 0) {
        m_failed = true;
        m_result.status = SourceStatus::Error;
        m_result.message = "cannot decompress (" + m_in.error() + ") after byte " +
                           std::to_string(m_bufOffset + std::int64_t(m_len));
        return false;
    }
    if (got == 0) m_eof = true;
    m_len += std::size_t(got);
    if (m_opts.progressBytes) {
        const std::int64_t now = m_in.inputOffset();
        m_opts.progressBytes->fetch_add(now - m_reportedInput, std::memory_order_relaxed);
        m_reportedInput = now;
    }
    return got > 0;
}

KinetoReadResult Parser::run()
{
    // Small inputs (most logs' worth of trace, and every fuzz input) get a window their size.
    const std::int64_t size = m_in.inputSize();
    m_buf.resize(size >= 0 ? std::clamp<std::size_t>(std::size_t(size) + 1, 1 << 16, kInitialWindow)
                           : kInitialWindow);
    bool cancelled = false;
    const KinetoReader::Budget& budget = m_opts.budget;
    std::string overBudget;
    while (m_state != State::Done && !m_failed) {
        const char* begin = m_buf.data() + m_pos;
        const char* p = begin;
        const char* end = m_buf.data() + m_len;
        const Scan s = step(p, end);
        if (s == Scan::Ok) {
            m_pos = std::size_t(p - m_buf.data());
            continue;
        }
        if (s == Scan::Error && m_eventBudgetReached) {
            overBudget = std::to_string(budget.maxEvents) + " events";
            m_result.limit = LoadLimit::TraceEvents;
            break;
        }
        if (s == Scan::Error) {
            // A value that fails to skip at the nesting limit but not without it is too deep.
            const char* limited = p;
            const char* unlimited = p;
            const bool tooDeep =
                p < end && (*p == '{' || *p == '[') &&
                json::skipValue(limited, end) == Scan::Error &&
                json::skipValue(unlimited, end, std::numeric_limits<int>::max()) != Scan::Error;
            if (!m_failed && tooDeep)
                fail(p,
                     "not a valid trace: nesting deeper than " + std::to_string(json::kMaxDepth));
            else if (!m_failed)
                fail(p, "not a valid trace: unexpected " +
                            (p < end ? "byte " + hex(static_cast<unsigned char>(*p))
                                     : std::string("end")));
            break;
        }
        if (!m_eof && m_bufOffset + std::int64_t(m_len) >= budget.maxInflatedBytes) {
            overBudget = std::to_string(budget.maxInflatedBytes) + " decompressed bytes";
            m_result.limit = LoadLimit::DecompressedBytes;
            break;
        }
        // A gzip bomb: stopped early rather than at the other budgets minutes later.
        const std::int64_t inflated = m_bufOffset + std::int64_t(m_len);
        if (!m_eof && budget.maxInflationRatio > 0 && inflated >= budget.inflationRatioFloor &&
            inflated / std::max<std::int64_t>(m_in.inputOffset(), 1) >= budget.maxInflationRatio) {
            overBudget = "an inflation ratio of " + std::to_string(budget.maxInflationRatio) +
                         " (" + std::to_string(inflated) + " bytes inflated from " +
                         std::to_string(m_in.inputOffset()) + ": a gzip bomb?)";
            m_result.limit = LoadLimit::InflationRatio;
            break;
        }
        if (!m_eof && refill()) continue;
        if (m_failed) break;
        if (m_opts.cancel && m_opts.cancel->load()) {
            cancelled = true;
            break;
        }
        // The stream ended inside the document.
        const std::int64_t at = m_bufOffset + std::int64_t(m_pos);
        const bool blank = std::all_of(
            begin, end, [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
        if (at == 0 && blank) {
            m_result.status = SourceStatus::Error;
            m_result.message = m_len == 0 ? "empty file" : "only whitespace";
        } else if (m_state == State::Top) {
            m_result.status = SourceStatus::Error;
            m_result.message = "not a trace: no JSON value";
        } else {
            m_result.status = SourceStatus::Truncated;
            m_result.message = "truncated at byte " +
                               std::to_string(m_bufOffset + std::int64_t(m_len)) +
                               " (last complete event ends at byte " + std::to_string(at) + ")";
        }
        break;
    }
    if (!overBudget.empty()) {
        m_result.status = SourceStatus::Truncated;
        m_result.message = "stopped at the per-file budget of " + overBudget + " (byte " +
                           std::to_string(m_bufOffset + std::int64_t(m_pos)) + ")";
    }
    if (cancelled) {
        m_result.status = SourceStatus::Error;
        m_result.message = "cancelled";
    }
    if (m_state == State::Done && !m_failed && !m_sawEvents) {
        m_result.status = SourceStatus::Error;
        m_result.message = "not a trace: no traceEvents array";
    }
    m_result.bytes = m_bufOffset + std::int64_t(m_pos);
    finish();
    if (m_result.status != SourceStatus::Ok && m_result.events > 0)
        m_result.message +=
            "; the " + std::to_string(m_result.events) + " events before it are kept";
    return m_result;
}

Scan Parser::step(const char*& p, const char* end)
{
    p = json::skipWs(p, end);
    if (p >= end) return Scan::NeedMore;
    switch (m_state) {
    case State::Top:
        if (m_bufOffset == 0 && p == m_buf.data() && static_cast<unsigned char>(*p) == 0xEF) {
            if (end - p < 3) return Scan::NeedMore;
            if (std::memcmp(p, "\xEF\xBB\xBF", 3) != 0) return Scan::Error;
            p += 3;
            return Scan::Ok;
        }
        if (*p == '[') {
            m_bareArray = true;
            m_sawEvents = true;
            m_state = State::EventsFirst;
        } else if (*p == '{') {
            m_state = State::RootFirst;
        } else {
            fail(p, "not JSON: starts with byte " + hex(static_cast<unsigned char>(*p)));
            return Scan::Error;
        }
        ++p;
        return Scan::Ok;
    case State::RootFirst:
        if (*p == '}') {
            ++p;
            m_state = State::Done;
            return Scan::Ok;
        }
        return rootMember(p, end);
    case State::RootNext:
        if (*p == '}') {
            ++p;
            m_state = State::Done;
            return Scan::Ok;
        }
        if (*p != ',') return Scan::Error;
        ++p;
        m_state = State::RootKey;
        return Scan::Ok;
    case State::RootKey:
        return rootMember(p, end);
    case State::EventsFirst:
    case State::EventsAny:
        // EventsAny follows a comma: a trailing comma before ']' is tolerated, as chrome://tracing
        // does.
        if (*p == ']') {
            ++p;
            m_eventsClosed = true;
            m_state = m_bareArray ? State::Done : State::RootNext;
            return Scan::Ok;
        }
        if (*p != '{') {
            fail(p, "traceEvents holds something other than an event object");
            return Scan::Error;
        }
        return events(p, end);
    case State::EventsNext:
        if (*p == ']') {
            ++p;
            m_eventsClosed = true;
            m_state = m_bareArray ? State::Done : State::RootNext;
            return Scan::Ok;
        }
        if (*p != ',') return Scan::Error;
        ++p;
        m_state = State::EventsAny;
        // The comma is consumed either way; the event after it, the common case, is read in the
        // same step.
        m_pos = std::size_t(p - m_buf.data());
        if (const char* next = json::skipWs(p, end); next < end && *next == '{') {
            p = next;
            return events(p, end);
        }
        return Scan::Ok;
    case State::Done:
        return Scan::Ok;
    }
    return Scan::Error;
}

Scan Parser::rootMember(const char*& p, const char* end)
{
    std::string_view key;
    bool esc = false;
    Scan s = json::scanMemberKey(p, end, key, esc);
    if (s != Scan::Ok) return s;
    if (key == "traceEvents") {
        if (*p != '[') {
            fail(p, "traceEvents is not an array");
            return Scan::Error;
        }
        ++p;
        m_sawEvents = true;
        m_state = State::EventsFirst;
        return Scan::Ok;
    }
    const char* valueBegin = p;
    s = json::skipValue(p, end);
    if (s != Scan::Ok) return s;
    if (key == "baseTimeNanoseconds") {
        std::string_view tok(valueBegin, std::size_t(p - valueBegin));
        if (!json::toInt64(tok, m_baseNs)) {
            fail(valueBegin, "baseTimeNanoseconds is not an integer");
            return Scan::Error;
        }
        m_sawBase = true;
    } else if (key == "distributedInfo") {
        const auto info = nlohmann::json::parse(valueBegin, p, nullptr, false);
        // Compressed traces are not sniffed for it, so the world size is taken here too.
        if (info.is_object())
            if (const auto w = info.find("world_size"); w != info.end() && w->is_number_integer())
                m_result.worldSize =
                    int(std::clamp<std::int64_t>(w->get<std::int64_t>(), 0, 1'000'000));
        // Discovery sees only a compressed file's head: the rank is taken here too.
        if (info.is_object())
            if (const auto r = info.find("rank"); r != info.end() && r->is_number_integer())
                m_result.statedRank =
                    r->is_number_unsigned()
                        ? std::int64_t(std::min<std::uint64_t>(r->get<std::uint64_t>(), INT64_MAX))
                        : r->get<std::int64_t>();
        if (info.is_object())
            if (const auto v = info.find("nccl_version"); v != info.end() && v->is_string())
                m_result.ncclVersion = v->get<std::string>();
        if (info.is_object())
            if (const auto b = info.find("backend"); b != info.end() && b->is_string())
                m_result.backend = b->get<std::string>();
        if (info.is_object())
            if (const auto it = info.find("pg_config"); it != info.end() && it->is_array())
                for (const auto& pg : *it) {
                    if (!pg.is_object()) continue;
                    ProcessGroupInfo g;
                    if (const auto n = pg.find("pg_name"); n != pg.end() && n->is_string())
                        g.name = n->get<std::string>();
                    if (const auto d = pg.find("pg_desc"); d != pg.end() && d->is_string())
                        g.desc = d->get<std::string>();
                    if (const auto r = pg.find("ranks"); r != pg.end()) g.ranks = jsonRanks(*r);
                    if (const auto z = pg.find("pg_size"); z != pg.end()) g.size = int(jsonInt(*z));
                    if (!g.name.empty() && g.size >= 0) m_result.processGroupSizes[g.name] = g.size;
                    m_groups.push_back(std::move(g));
                }
    }
    m_state = State::RootNext;
    return Scan::Ok;
}

bool Parser::internName(std::string_view raw, bool escaped, StringId& id, const char* at)
{
    if (escaped) {
        if (!json::unescape(raw, m_scratch)) return fail(at, "invalid string escape or UTF-8");
        raw = m_scratch;
    }
    // A trace repeats a few thousand names millions of times: a small cache keyed by the length
    // and the first and last bytes answers most lookups with one compare, without hashing a
    // 100-byte kernel name. A tag collision only costs the table lookup.
    std::uint64_t head = 0, tail = 0;
    if (!raw.empty()) std::memcpy(&head, raw.data(), std::min<std::size_t>(raw.size(), 8));
    if (raw.size() > 8) std::memcpy(&tail, raw.data() + raw.size() - 8, 8);
    const std::uint64_t tag =
        (head * 0x9E3779B97F4A7C15ull) ^ (tail * 0xC2B2AE3D27D4EB4Full) ^ raw.size();
    NameCacheEntry& slot = m_nameCache[tag >> (64 - kNameCacheBits)];
    if (slot.tag == tag && slot.id > 0) {
        const std::string_view known = m_out.strings.view(slot.id);
        if (known.size() == raw.size() && std::memcmp(known.data(), raw.data(), raw.size()) == 0) {
            id = slot.id;
            return true;
        }
    }
    id = m_out.strings.find(raw);
    if (id < 0) {
        if (!json::isValidUtf8(raw)) return fail(at, "invalid UTF-8 in a string");
        id = m_out.strings.intern(raw);
    }
    slot = {tag, id};
    return true;
}

std::int64_t Parser::textIdNumber(std::string_view text)
{
    // "stream 7" names stream 7; other strings ("CPU functions", "Spans") get ids of their own.
    std::size_t i = text.size();
    while (i > 0 && text[i - 1] >= '0' && text[i - 1] <= '9')
        --i;
    std::int64_t n = 0;
    if (i < text.size() && text.size() - i <= 18 && json::toInt64(text.substr(i), n)) return n;
    if (const auto it = m_stringIds.find(text); it != m_stringIds.end()) return it->second;
    m_stringIds.emplace(std::string(text), m_nextSyntheticId);
    return m_nextSyntheticId--;
}

int Parser::laneFor(std::uint64_t key, std::int64_t p, std::int64_t t, const IdValue& tid)
{
    auto [it, added] = m_laneIndex.try_emplace(key, int(m_lanes.size()));
    if (added) {
        LaneBuild b;
        b.lane.rank = m_opts.rank;
        b.lane.pid = p;
        b.lane.tid = t;
        b.lane.sourceIndex = m_opts.sourceIndex;
        if (tid.isString) b.label = std::string(tid.text);
        m_lanes.push_back(std::move(b));
    }
    m_recentLanes[recentLaneSlot(key)] = {key, it->second};
    return it->second;
}

Parser::CategorySlot& Parser::categorySlot(std::string_view cat)
{
    // A trace alternates between a handful of categories (cpu_op, cuda_runtime, kernel, ...):
    // each is derived once into a slot and found again by its length and end bytes.
    const std::size_t h = cat.empty()
                              ? 0
                              : cat.size() * 31 + static_cast<unsigned char>(cat.front()) * 7 +
                                    static_cast<unsigned char>(cat.back());
    CategorySlot& slot = m_categories[h % m_categories.size()];
    if (slot.serial != 0 && slot.text == cat) return slot;
    slot.text.assign(cat);
    slot.serial = m_nextCategorySerial++;
    slot.category = deviceCategory(cat);
    slot.gpu = slot.category != EventCategory::Other;
    if (!slot.gpu) slot.category = hostCategory(cat);
    slot.hash = std::hash<std::string_view>()(cat);
    slot.flowCategory = -1;
    return slot;
}

Parser::NameKind Parser::kindOf(StringId nameId, const CategorySlot* cat)
{
    if (std::size_t(nameId) >= m_kinds.size()) m_kinds.resize(m_out.strings.size());
    NameKind& k = m_kinds[std::size_t(nameId)];
    const std::uint64_t serial = cat ? cat->serial : 1;
    if (k.categorySerial == serial) return k;
    // Derived again whenever the name comes with another category than last time.
    const std::string_view name = m_out.strings.view(nameId);
    k.categorySerial = serial;
    k.gpu = false;
    k.wantArgs = name == "record_param_comms" || startsWith(name, "nccl:");
    k.launch = name.find("Launch") != std::string_view::npos;
    if (!cat) {
        // Legacy autograd-profiler JSON: no categories, so the name decides.
        if (startsWith(name, "ProfilerStep#"))
            k.category = EventCategory::UserAnnotation;
        else if (startsWith(name, "gloo:"))
            k.category = EventCategory::CommKernel;
        else
            k.category = EventCategory::CpuOp;
        return k;
    }
    k.category = cat->category;
    k.gpu = cat->gpu;
    // gloo runs a collective on its own CPU thread and the profiler records that work as a
    // span named after it, as a user annotation in Kineto traces: it is the collective's
    // execution, as in the legacy format.
    if (!k.gpu && startsWith(name, "gloo:")) k.category = EventCategory::CommKernel;
    if (k.category == EventCategory::Kernel) {
        // HTA's kernel types: collectives by library prefix (NCCL, RCCL keeps NCCL's names,
        // MTIA's HCCL), copies and DMA by name; the rest is computation.
        if (startsWithNoCase(name, "nccl") || startsWithNoCase(name, "rccl") ||
            startsWithNoCase(name, "hccl")) {
            k.category = EventCategory::CommKernel;
            k.wantArgs = true;
        } else if (startsWithNoCase(name, "memcpy") || startsWithNoCase(name, "dma")) {
            k.category = EventCategory::Memcpy;
        } else if (startsWithNoCase(name, "memset")) {
            k.category = EventCategory::Memset;
        }
    }
    return k;
}

std::size_t Parser::projected(std::size_t sofar) const
{
    // The count extrapolated from the (decompressed) input consumed so far to the whole source,
    // 10 % over; 0 when the input's size is unknown.
    const std::int64_t size = m_in.inputSize();
    const std::int64_t read = m_in.inputOffset();
    const std::int64_t done = m_bufOffset + std::int64_t(m_pos);
    if (size <= 0 || read <= 0 || done <= 0) return 0;
    const double total = double(size) * double(m_bufOffset + std::int64_t(m_len)) / double(read);
    const double estimate = double(sofar) * total / double(done) * 1.1;
    return estimate > 4e9 ? 0 : std::size_t(estimate);
}

void Parser::reserveFor(LaneBuild& b)
{
    // Growing by doubling copies every array and faults in fresh pages each time; extrapolating
    // the lane's share of the input so far sizes it about once, on huge pages (reserveColumn).
    // When the estimate falls short the columns grow by half. Capacity that is never touched
    // costs no RSS.
    const std::size_t have = b.lane.startNs.size();
    std::size_t n = projected(have);
    if (have == b.lane.startNs.capacity()) n = std::max(n, have + have / 2);
    reserveColumn(b.lane.startNs, n);
    reserveColumn(b.lane.endNs, n);
    reserveColumn(b.lane.nameId, n);
    reserveColumn(b.lane.category, n);
    reserveColumn(b.lane.sourceOffset, n);
}

Scan Parser::events(const char*& p, const char* end)
{
    // `p` at an event's '{'. The events after it are read here as long as a comma and a '{'
    // follow, as step() would read them, without a step of the state machine for each: the
    // position after each comma is where a refill restarts.
    for (;;) {
        const Scan s = event(p, end);
        if (s != Scan::Ok) return s;
        const char* q = json::skipWs(p, end);
        if (q >= end || *q != ',') return Scan::Ok;
        ++q;
        m_state = State::EventsAny;
        m_pos = std::size_t(q - m_buf.data());
        const char* next = json::skipWs(q, end);
        if (next >= end || *next != '{') {
            p = q;
            return Scan::Ok;
        }
        p = next;
    }
}

Scan Parser::event(const char*& p, const char* end)
{
    const char* objectBegin = p;
    ++p;
    char ph = 0;
    std::string_view name, cat, bp;
    bool nameEsc = false, hasName = false, hasCat = false;
    IdValue pid, tid, id;
    // "ts" and "dur" as written, and their values where the scan already converted them.
    std::string_view tsTok, durTok;
    std::int64_t tsNs = 0, durScanned = 0;
    bool tsIsScanned = false, durIsScanned = false;
    const char* argsBegin = nullptr;
    const char* argsEnd = nullptr;
    const char* keyAt = p;
    const char* valueAt = p;
    // The key as written, for a message (scanned again: only a rejected event needs it).
    const auto keyText = [&keyAt, end] {
        const char* at = keyAt;
        std::string_view raw;
        bool escaped = false;
        json::scanString(at, end, raw, escaped);
        return std::string(raw);
    };
    const auto wantString = [&](std::string_view & out, bool& escOut) __attribute__((always_inline))
    {
        if (*p != '"') {
            fail(valueAt, "event field \"" + keyText() + "\" is not a string");
            return Scan::Error;
        }
        return json::scanString(p, end, out, escOut);
    };
    const auto wantNumber = [&](std::string_view & out) __attribute__((always_inline))
    {
        if (*p == '"' || *p == '{' || *p == '[' || *p == 't' || *p == 'f' || *p == 'n') {
            fail(valueAt, "event field \"" + keyText() + "\" is not a number");
            return Scan::Error;
        }
        return json::scanNumber(p, end, out);
    };
    const auto wantMicros = [&](std::string_view & out, std::int64_t & ns, bool& scanned)
        __attribute__((always_inline))
    {
        scanned = json::scanPlainMicros(p, end, ns);
        if (!scanned) return wantNumber(out);
        out = std::string_view(valueAt, std::size_t(p - valueAt));
        return Scan::Ok;
    };
    const auto wantId = [&](IdValue & out) __attribute__((always_inline))
    {
        out.present = true;
        if (*p == '"') {
            out.isString = true;
            bool e = false;
            return json::scanString(p, end, out.text, e);
        }
        if (json::scanPlainInt(p, end, out.number)) return Scan::Ok;
        std::string_view tok;
        Scan r = wantNumber(tok);
        if (r == Scan::Ok && !json::toInt64(tok, out.number)) {
            fail(valueAt, "event field \"" + keyText() + "\" is out of range");
            return Scan::Error;
        }
        return r;
    };
    // Reads the value of the member `which` (p at the value), as the key says.
    const auto value = [&](EventKey which) __attribute__((always_inline))
    {
        bool dummy = false;
        Scan s = Scan::Ok;
        switch (which) {
        case EventKey::Ph:
            // Almost always one plain letter.
            if (end - p >= 3 && p[0] == '"' && p[2] == '"' && p[1] != '"' && p[1] != '\\') {
                ph = p[1];
                p += 3;
                break;
            }
            {
                std::string_view v;
                s = wantString(v, dummy);
                if (s == Scan::Ok) {
                    if (v.size() != 1) {
                        fail(valueAt, "event field \"ph\" is not one letter");
                        return Scan::Error;
                    }
                    ph = v[0];
                }
            }
            break;
        case EventKey::Name:
            s = wantString(name, nameEsc);
            hasName = true;
            break;
        case EventKey::Cat:
            s = wantString(cat, dummy);
            hasCat = true;
            break;
        case EventKey::Pid:
            s = wantId(pid);
            break;
        case EventKey::Tid:
            s = wantId(tid);
            break;
        case EventKey::Ts:
            s = wantMicros(tsTok, tsNs, tsIsScanned);
            break;
        case EventKey::Dur:
            s = wantMicros(durTok, durScanned, durIsScanned);
            break;
        case EventKey::Id:
            s = wantId(id);
            break;
        case EventKey::Bp:
            s = wantString(bp, dummy);
            break;
        case EventKey::Args:
            argsBegin = p;
            s = json::skipValue(p, end);
            argsEnd = p;
            break;
        case EventKey::Other:
            s = json::skipValue(p, end);
            break;
        }
        return s;
    };
    // Kineto writes the members of an event in one order: "ph", "cat", "name", "pid", "tid",
    // "ts", "dur", "args" (a flow: "ph", "id", "pid", "tid", "ts", "cat", "name", "bp"). They
    // are read in that order first, each key compared where it is expected, so that no member
    // takes the dispatch on its key below: an indirect jump the CPU mispredicts at every member
    // (BENCHMARKS.md). The first member out of that order, and all after it, take the general
    // loop, which reads them the same way.
    Scan s = Scan::Ok;
    bool first = true;
    const auto inOrder = [&](const OrderedKey& key, EventKey which) __attribute__((always_inline))
    {
        const char* q = p;
        if (end - q < 16) return false;
        if (!first && (word(q) == key.separatedHead &&
                       (word(q + 8) & key.separatedTailMask) == key.separatedTail)) {
            // `, "cat": ` in one compare; anything else is taken apart below.
            keyAt = q + 2;
            p = q + key.separatedLength;
            if (static_cast<unsigned char>(*p) <= ' ') {
                p = json::skipWs(p, end);
                if (p >= end) {
                    s = Scan::NeedMore;
                    return false;
                }
            }
        } else {
            if (!first) {
                if (*q != ',') return false;
                ++q;
            }
            q = json::skipWs(q, end);
            if (end - q < 8 || (word(q) & key.quotedMask) != key.quoted) return false;
            keyAt = q;
            p = q + key.quotedLength;
            s = json::scanColon(p, end);
            if (s != Scan::Ok) return false;
        }
        first = false;
        valueAt = p;
        s = value(which);
        return s == Scan::Ok;
    };
    if (inOrder(kPhKey, EventKey::Ph)) {
        if (ph == 's' || ph == 'f')
            inOrder(kIdKey, EventKey::Id) && inOrder(kPidKey, EventKey::Pid) &&
                inOrder(kTidKey, EventKey::Tid) && inOrder(kTsKey, EventKey::Ts) &&
                inOrder(kCatKey, EventKey::Cat) && inOrder(kNameKey, EventKey::Name) &&
                inOrder(kBpKey, EventKey::Bp);
        else
            inOrder(kCatKey, EventKey::Cat) && inOrder(kNameKey, EventKey::Name) &&
                inOrder(kPidKey, EventKey::Pid) && inOrder(kTidKey, EventKey::Tid) &&
                inOrder(kTsKey, EventKey::Ts) && inOrder(kDurKey, EventKey::Dur) &&
                inOrder(kArgsKey, EventKey::Args);
    }
    if (s != Scan::Ok) return s;
    for (;;) {
        if (first || !json::nextMemberPlain(p, end)) {
            p = json::skipWs(p, end);
            if (p >= end) return Scan::NeedMore;
            if (*p == '}') {
                ++p;
                break;
            }
            if (!first) {
                if (*p != ',') return Scan::Error;
                p = json::skipWs(p + 1, end);
                if (p >= end) return Scan::NeedMore;
            }
        }
        first = false;
        keyAt = p;
        std::size_t quotedLength = 0;
        EventKey which = end - p >= 8 ? plainEventKey(p, quotedLength) : EventKey::Other;
        if (which != EventKey::Other) {
            p += quotedLength;
            s = json::scanColon(p, end);
            if (s != Scan::Ok) return s;
        } else {
            std::string_view key;
            bool esc = false;
            s = json::scanMemberKey(p, end, key, esc);
            if (s != Scan::Ok) return s;
            if (!esc) which = eventKey(key);
        }
        valueAt = p;
        s = value(which);
        if (s != Scan::Ok) return s;
    }
    m_state = State::EventsNext;

    // The whole object is in the window: commit it.
    if (!tsTok.empty() && !tsIsScanned && !json::microsToNanos(tsTok, tsNs)) {
        fail(objectBegin, "event \"ts\" is not a valid number");
        return Scan::Error;
    }
    const bool timed = ph == 'X' || ph == 'B' || ph == 'E' || ph == 'i' || ph == 'I' || ph == 's' ||
                       ph == 'f' || ph == 't';
    if (timed && tsTok.empty()) {
        fail(objectBegin, "event without \"ts\"");
        return Scan::Error;
    }
    if (ph == 'M') {
        if (!hasName || !argsBegin) return Scan::Ok;
        const bool proc = name == "process_name", labels = name == "process_labels";
        if (!proc && !labels && name != "thread_name") return Scan::Ok;
        const auto args = nlohmann::json::parse(argsBegin, argsEnd, nullptr, false);
        const auto it = args.is_object() ? args.find(labels ? "labels" : "name") : args.end();
        if (!args.is_object() || it == args.end() || !it->is_string()) return Scan::Ok;
        const std::int64_t pn = pid.present ? idNumber(pid) : 0;
        if (labels)
            m_processLabels[pn] = it->get<std::string>();
        else if (proc)
            m_processNames[pn] = it->get<std::string>();
        else
            m_threadNames[mix(pn, tid.present ? idNumber(tid) : 0)] = it->get<std::string>();
        return Scan::Ok;
    }
    if (ph == 'C') {
        ++m_result.counters;
        return Scan::Ok;
    }
    if (ph == 's' || ph == 'f') {
        if (!id.present) {
            ++m_result.skipped;
            return Scan::Ok;
        }
        const int lane = laneOf(pid, tid);
        CategorySlot& c = categorySlot(cat);
        const std::uint64_t key =
            mix(id.isString ? std::int64_t(std::hash<std::string_view>()(id.text)) : id.number,
                std::int64_t(c.hash));
        if (c.flowCategory < 0 && !internName(cat, false, c.flowCategory, objectBegin))
            return Scan::Error;
        const StringId catId = c.flowCategory;
        // Kineto writes a flow end right after the event it belongs to, so the lane's last event
        // usually binds it without a search.
        const Lane& l = m_lanes[std::size_t(lane)].lane;
        std::int64_t bound = -1;
        if (!l.startNs.empty() && l.startNs.back() <= tsNs && tsNs <= l.endNs.back())
            bound = std::int64_t(l.startNs.size()) - 1;
        if (m_flows.size() == m_flows.capacity() && m_flows.size() >= 4096)
            reserveColumn(m_flows, std::max(projected(m_flows.size()), m_flows.size() * 3 / 2));
        m_flows.push_back(
            {key, bound >= 0 ? bound : tsNs, std::uint32_t(lane), bound >= 0, ph == 's', catId});
        return Scan::Ok;
    }
    if (ph != 'X' && ph != 'B' && ph != 'E' && ph != 'i' && ph != 'I') {
        ++m_result.skipped; // async b/e/n, samples, objects, flow steps: not shown
        return Scan::Ok;
    }
    if (ph != 'E' && m_result.events >= m_opts.budget.maxEvents) {
        m_eventBudgetReached = true; // this event is the first over the budget: not stored
        return Scan::Error;
    }
    const int li = laneOf(pid, tid);
    LaneBuild& b = m_lanes[std::size_t(li)];
    if (ph == 'E') {
        if (b.openB.empty()) {
            ++m_result.skipped;
            return Scan::Ok;
        }
        const std::int64_t i = b.openB.back();
        b.openB.pop_back();
        std::int64_t& e = b.lane.endNs[std::size_t(i)];
        e = std::max(tsNs, b.lane.startNs[std::size_t(i)]);
        m_maxEndNs = std::max(m_maxEndNs, e);
        return Scan::Ok;
    }
    std::int64_t durNs = 0;
    if (ph == 'X' && !durTok.empty()) {
        if (durIsScanned)
            durNs = durScanned;
        else if (!json::microsToNanos(durTok, durNs)) {
            fail(objectBegin, "event \"dur\" is not a valid number");
            return Scan::Error;
        }
    }
    StringId nameId = 0;
    if (hasName && !internName(name, nameEsc, nameId, objectBegin)) return Scan::Error;
    const NameKind kind = kindOf(nameId, hasCat ? &categorySlot(cat) : nullptr);
    const EventCategory category = kind.category;
    const std::int64_t index = std::int64_t(b.lane.startNs.size());
    const std::int64_t endNs = ph == 'B' ? tsNs : tsNs + std::max<std::int64_t>(durNs, 0);
    if (index == 4096 || index == 262144 ||
        (index > 4096 && std::size_t(index) == b.lane.startNs.capacity()))
        reserveFor(b);
    b.lane.startNs.push_back(tsNs);
    b.lane.endNs.push_back(endNs);
    b.lane.nameId.push_back(nameId);
    b.lane.category.push_back(category);
    b.lane.sourceOffset.push_back(offsetOf(objectBegin));
    b.gpu = b.gpu || kind.gpu;
    m_maxEndNs = std::max(m_maxEndNs, endNs);
    if (ph == 'B') b.openB.push_back(index);
    if (category == EventCategory::Runtime && argsBegin && kind.launch) {
        // Traces without ac2g flows still tie a launch to its kernel by correlation id; only the
        // number is picked out, without parsing the args.
        const std::string_view a(argsBegin, std::size_t(argsEnd - argsBegin));
        const std::size_t k = a.find("\"correlation\"");
        if (k != std::string_view::npos) {
            const char* q = json::skipWs(a.data() + k + 13, argsEnd);
            std::string_view tok;
            std::int64_t corr = 0;
            if (q < argsEnd && *q == ':') {
                q = json::skipWs(q + 1, argsEnd);
                if (json::scanNumber(q, argsEnd, tok) == Scan::Ok && json::toInt64(tok, corr))
                    m_launches.push_back({li, std::uint32_t(index), corr});
            }
        }
    }
    if (kind.wantArgs && argsBegin) {
        const auto args = nlohmann::json::parse(argsBegin, argsEnd, nullptr, false);
        if (args.is_object()) m_args.push_back({li, index, commArgsFrom(args)});
    }
    ++m_result.events;
    return Scan::Ok;
}

// Orders flow points by key, starts first, and totally beyond that (see the pairing in finish).
constexpr auto flowPointBefore = [](const FlowPoint& a, const FlowPoint& b) {
    if (a.key != b.key) return a.key < b.key;
    return std::tuple{!a.start(), std::uint32_t(a.lane), a.bound(), a.at, a.category} <
           std::tuple{!b.start(), std::uint32_t(b.lane), b.bound(), b.at, b.category};
};

// Sorts a store's flows by (toLane, toEvent), as flowInto looks them up; several flows into one
// event by where they come from.
void sortFlows(EventStore& store)
{
    std::vector<std::uint64_t> laneBase(store.lanes.size() + 1, 0);
    for (std::size_t l = 0; l < store.lanes.size(); ++l)
        laneBase[l + 1] = laneBase[l] + store.lanes[l].size();
    bucketSortInPlace(
        store.flows,
        [&laneBase](const FlowLink& f) { return laneBase[std::size_t(f.toLane)] + f.toEvent; }, 0,
        laneBase.back(),
        [](const FlowLink& a, const FlowLink& b) {
            return std::tuple{a.toLane, a.toEvent, a.fromLane, a.fromEvent, a.category} <
                   std::tuple{b.toLane, b.toEvent, b.fromLane, b.fromEvent, b.category};
        });
}

void Parser::finish()
{
    // Past the last event the window is not needed: freed before the transients below, which
    // set the read's peak memory (bench/scan_bench).
    decltype(m_buf)().swap(m_buf);
    const std::int64_t base = m_sawBase ? m_baseNs : 0;
    const std::int64_t traceEnd =
        m_maxEndNs == std::numeric_limits<std::int64_t>::min() ? 0 : m_maxEndNs;
    // Only the launches of the few events with collective args are ever looked up (below): the
    // others (one for every kernel launch) are dropped before the flows are paired.
    const bool launches = !m_launches.empty();
    {
        std::vector<std::int64_t> wanted;
        for (const PendingArgs& a : m_args)
            if (a.args.correlation >= 0) wanted.push_back(a.args.correlation);
        std::sort(wanted.begin(), wanted.end());
        std::erase_if(m_launches, [&wanted](const Launch& l) {
            return !std::binary_search(wanted.begin(), wanted.end(), l.correlation);
        });
        m_launches.shrink_to_fit();
    }
    // Flows pair by key (below); sorted in place, before the lanes add their depth column.
    bucketSortInPlace(
        m_flows, [](const FlowPoint& f) { return f.key; }, 0,
        std::numeric_limits<std::uint64_t>::max(), flowPointBefore);
    // Final lane order: CPU threads, then GPU streams, each by (pid, tid).
    std::vector<int> order(m_lanes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [this](int a, int b) {
        const LaneBuild& x = m_lanes[std::size_t(a)];
        const LaneBuild& y = m_lanes[std::size_t(b)];
        return std::tuple{x.gpu, x.lane.pid, x.lane.tid} <
               std::tuple{y.gpu, y.lane.pid, y.lane.tid};
    });
    std::vector<int> finalIndex(m_lanes.size(), -1);
    std::vector<std::vector<std::int64_t>> newIndexOf(m_lanes.size());
    std::vector<bool> needsMap(m_lanes.size(), false);
    for (const PendingArgs& a : m_args)
        needsMap[std::size_t(a.lane)] = true;
    for (const Launch& l : m_launches)
        needsMap[std::size_t(l.lane)] = true;
    for (const FlowPoint& f : m_flows)
        if (f.bound()) needsMap[std::size_t(f.lane)] = true;
    for (int li : order) {
        LaneBuild& b = m_lanes[std::size_t(li)];
        Lane& lane = b.lane;
        if (lane.size() == 0) continue; // a lane that only had flows or unmatched E
        for (std::int64_t i : b.openB) {
            lane.endNs[std::size_t(i)] = std::max(traceEnd, lane.startNs[std::size_t(i)]);
            b.unfinished.push_back(i);
        }
        const std::size_t n = lane.size();
        if (base != 0)
            for (std::size_t i = 0; i < n; ++i) {
                lane.startNs[i] += base;
                lane.endNs[i] += base;
            }
        // Sort by start, longer first on ties, so that a parent precedes its children.
        const auto before = [&lane](std::size_t a, std::size_t b) {
            if (lane.startNs[a] != lane.startNs[b]) return lane.startNs[a] < lane.startNs[b];
            return lane.endNs[a] > lane.endNs[b];
        };
        bool sorted = true;
        for (std::size_t i = 1; i < n && sorted; ++i)
            sorted = !before(i, i - 1);
        if (!sorted) {
            std::vector<std::uint32_t> perm(n);
            std::iota(perm.begin(), perm.end(), 0u);
            std::stable_sort(perm.begin(), perm.end(),
                             [&before](std::uint32_t a, std::uint32_t c) { return before(a, c); });
            const auto apply = [&perm, n](auto& v) {
                std::remove_reference_t<decltype(v)> out(n);
                for (std::size_t i = 0; i < n; ++i)
                    out[i] = v[perm[i]];
                v.swap(out);
            };
            apply(lane.startNs);
            apply(lane.endNs);
            apply(lane.nameId);
            apply(lane.category);
            apply(lane.sourceOffset);
            if (needsMap[std::size_t(li)] || !b.unfinished.empty()) {
                std::vector<std::int64_t>& inv = newIndexOf[std::size_t(li)];
                inv.resize(n);
                for (std::size_t i = 0; i < n; ++i)
                    inv[perm[i]] = std::int64_t(i);
                for (std::int64_t& u : b.unfinished)
                    u = inv[std::size_t(u)];
            }
        }
        std::sort(b.unfinished.begin(), b.unfinished.end());
        lane.unfinished = std::move(b.unfinished);
        // Depth by containment.
        lane.depth.resize(n);
        std::vector<std::int64_t> openEnds;
        for (std::size_t i = 0; i < n; ++i) {
            while (!openEnds.empty() && openEnds.back() <= lane.startNs[i])
                openEnds.pop_back();
            lane.depth[i] = std::uint8_t(std::min<std::size_t>(openEnds.size(), 255));
            lane.maxDepth = std::max(lane.maxDepth, lane.depth[i]);
            openEnds.push_back(lane.endNs[i]);
        }
        lane.kind = b.gpu ? LaneKind::GpuStream : LaneKind::CpuThread;
        const auto tn = m_threadNames.find(mix(lane.pid, lane.tid));
        const auto pn = m_processNames.find(lane.pid);
        if (const auto pl = m_processLabels.find(lane.pid); pl != m_processLabels.end())
            lane.processLabel = pl->second;
        if (tn != m_threadNames.end()) lane.threadName = tn->second;
        if (tn != m_threadNames.end() && !tn->second.empty())
            lane.name = tn->second;
        else if (!b.label.empty())
            lane.name = b.label;
        else
            lane.name = (b.gpu ? "stream " : "thread ") + std::to_string(lane.tid);
        if (pn != m_processNames.end() && !pn->second.empty() &&
            lane.name.find(pn->second) == std::string::npos)
            lane.name = pn->second + " / " + lane.name;
        finalIndex[std::size_t(li)] = int(m_out.lanes.size());
        m_out.lanes.push_back(std::move(lane));
    }

    // Flows: pair s with f by (id, cat), bind each end to the innermost event at its time. Of
    // several points with one key, the first in the order above (a start when there is one)
    // and the last (an end when there is one) make the flow: of duplicate starts the one on
    // the lane opened first, at its earliest event; of duplicate ends the last such.
    reserveColumn(m_out.flows, m_out.flows.size() + m_flows.size() / 2);
    constexpr std::size_t kReleaseStep = (std::size_t(4) << 20) / sizeof(FlowPoint);
    std::size_t released = 0; // the points before it are paired and their pages given back
    for (std::size_t i = 0; i < m_flows.size();) {
        if (i - released >= kReleaseStep) {
            // From the start: a page that straddled the last bound goes now.
            releaseColumnRange(m_flows, 0, i);
            released = i;
        }
        std::size_t j = i;
        while (j < m_flows.size() && m_flows[j].key == m_flows[i].key)
            ++j;
        const FlowPoint& s = m_flows[i];
        const FlowPoint& f = m_flows[j - 1];
        if (s.start() && !f.start()) {
            const int fl = finalIndex[std::size_t(s.lane)];
            const int tl = finalIndex[std::size_t(f.lane)];
            const auto bind = [&](const FlowPoint& p, int finalLane) -> std::int64_t {
                if (finalLane < 0) return -1;
                if (p.bound()) {
                    const auto& inv = newIndexOf[std::size_t(p.lane)];
                    return inv.empty() ? p.at : inv[std::size_t(p.at)];
                }
                return innermostAt(m_out.lanes[std::size_t(finalLane)], p.at + base);
            };
            const std::int64_t fe = bind(s, fl);
            const std::int64_t te = bind(f, tl);
            if (fe >= 0 && te >= 0) {
                m_out.flows.push_back({fl, tl, std::uint32_t(fe), std::uint32_t(te), s.category});
                ++m_result.flows;
            } else {
                ++m_result.skipped;
            }
        } else {
            ++m_result.skipped; // one end of the flow is not in the trace
        }
        i = j;
    }
    std::vector<FlowPoint>().swap(m_flows);
    sortFlows(m_out);

    std::vector<CommEventArgs> args;
    args.reserve(m_args.size());
    for (PendingArgs& a : m_args) {
        const int fl = finalIndex[std::size_t(a.lane)];
        if (fl < 0) continue;
        const auto& inv = newIndexOf[std::size_t(a.lane)];
        args.push_back({fl, inv.empty() ? a.event : inv[std::size_t(a.event)], std::move(a.args)});
    }
    // Comm kernels without an ac2g flow: link them to their launch by correlation id.
    if (launches) {
        std::unordered_map<std::int64_t, std::pair<int, std::int64_t>> launchOf;
        for (const Launch& l : m_launches) {
            const int fl = finalIndex[std::size_t(l.lane)];
            if (fl < 0) continue;
            const auto& inv = newIndexOf[std::size_t(l.lane)];
            launchOf.emplace(l.correlation,
                             std::pair{fl, inv.empty() ? l.event : inv[std::size_t(l.event)]});
        }
        const StringId corrCat = m_out.strings.intern("correlation");
        std::vector<FlowLink> added;
        for (const CommEventArgs& a : args) {
            if (a.args.correlation < 0 ||
                m_out.lanes[std::size_t(a.lane)].kind != LaneKind::GpuStream ||
                m_out.flowInto(a.lane, a.event))
                continue;
            const auto it = launchOf.find(a.args.correlation);
            if (it != launchOf.end())
                added.push_back({it->second.first, a.lane, std::uint32_t(it->second.second),
                                 std::uint32_t(a.event), corrCat});
        }
        if (!added.empty()) {
            m_out.flows.insert(m_out.flows.end(), added.begin(), added.end());
            sortFlows(m_out);
        }
    }
    CollectiveExtractor::extract(m_out, m_opts.rank, std::move(args), m_groups);
    m_result.collectives = std::int64_t(m_out.collectives.size());
}

} // namespace

namespace {

// A read frees its transient columns (flow points, launches, the window) at the end, but glibc
// keeps freed heap pages mapped below its (self-raising) mmap threshold: after a 10 M-event
// trace that is about 15 bytes per stored event of resident memory nobody uses (bench/
// scan_bench). Large reads hand them back; small ones are not worth the walk over the heap.
KinetoReadResult parse(Stream& in, EventStore& out, const KinetoReader::Options& options)
{
    KinetoReadResult r = Parser(in, out, options).run();
#ifdef __GLIBC__
    constexpr std::int64_t kTrimAfterBytes = std::int64_t(64) << 20;
    if (r.bytes >= kTrimAfterBytes) malloc_trim(0);
#endif
    return r;
}

KinetoReadResult readDescriptor(int fd, const std::string& path, EventStore& out,
                                const KinetoReader::Options& options)
{
    FileStream in(fd);
    if (!in.isOpen()) {
        KinetoReadResult r;
        r.status = SourceStatus::Error;
        r.message = "cannot open the file";
        return r;
    }
    KinetoReadResult r = parse(in, out, options);
    r.gzipIndex = in.finish();
    if (r.status == SourceStatus::Error && !in.isCompressed() && path.size() > 3 &&
        path.compare(path.size() - 3, 3, ".gz") == 0)
        r.message = "not gzip-compressed despite the .gz name; read as plain text: " + r.message;
    return r;
}

// O_NONBLOCK: a path that names a FIFO must not block; the reader then fails on it.
int openPath(const std::string& path)
{
    return ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

} // namespace

KinetoReadResult KinetoReader::readFile(const std::string& path, EventStore& out,
                                        const Options& options)
{
    return readDescriptor(openPath(path), path, out, options);
}

KinetoReadResult KinetoReader::readSource(const SourceFile& source, EventStore& out,
                                          const Options& options)
{
    QString error;
    const int fd = source.openForReading(&error);
    if (fd < 0) {
        KinetoReadResult r;
        r.status = SourceStatus::Error;
        r.message = error.toStdString();
        return r;
    }
    return readDescriptor(fd, source.relativePath.toStdString(), out, options);
}

KinetoReadResult KinetoReader::readBytes(std::string_view data, EventStore& out,
                                         const Options& options)
{
    MemStream in(data);
    return parse(in, out, options);
}

namespace {

nlohmann::json eventAt(GzipInput& in, std::int64_t offset, const GzipIndex* index)
{
    if (!in.isOpen() || offset < 0 || !in.seek(offset, index)) return nullptr;
    std::string buf;
    std::size_t have = 0;
    for (std::size_t want = 1 << 16; want <= kMaxValue; want *= 2) {
        buf.resize(want);
        const std::int64_t got = in.read(buf.data() + have, want - have);
        if (got < 0) return nullptr;
        have += std::size_t(got);
        const char* p = buf.data();
        const json::Scan s = json::skipValue(p, buf.data() + have);
        if (s == json::Scan::Ok)
            return nlohmann::json::parse(static_cast<const char*>(buf.data()), p, nullptr, false);
        if (s == json::Scan::Error || got == 0) return nullptr;
    }
    return nullptr;
}

nlohmann::json eventDetails(int fd, std::int64_t offset, const GzipIndex* index,
                            std::int64_t* produced)
{
    GzipInput in(fd, GzipInput::Descriptor::Owned);
    nlohmann::json event = eventAt(in, offset, index);
    if (produced) *produced = in.producedBytes();
    return event;
}

} // namespace

nlohmann::json readEventDetails(const std::string& path, std::int64_t offset,
                                const GzipIndex* index, std::int64_t* produced)
{
    return eventDetails(openPath(path), offset, index, produced);
}

nlohmann::json readEventDetails(const SourceFile& source, std::int64_t offset)
{
    QString error;
    return eventDetails(source.openForReading(&error), offset, source.gzipIndex.get(), nullptr);
}

} // namespace rankscope
