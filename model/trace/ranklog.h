#pragma once

#include "model/trace/logtext.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rankscope {

enum class LogFactKind : std::uint8_t {
    NcclInit,         // "comm 0x.. rank R nranks N cudaDev D busId B commId C - Init COMPLETE"
    NcclNetInterface, // "NET/Socket : Using [0]eth0:10.0.0.1<0>", "NCCL_SOCKET_IFNAME set to"
    NcclVersion,      // "NCCL version 2.18.1+cuda12.1"
    NcclWarn,         // any "NCCL WARN" line
    NcclColl,         // "AllReduce: opCount 0 sendbuff .. count N datatype T op O root R comm C"
    Watchdog,         // "WorkNCCL(SeqNum=.., OpType=.., ..) ran for N milliseconds"
    Fingerprint,      // "CollectiveFingerPrint(OpType=.., TensorShape=[..], ..)"
    Environment,      // key=value pairs of a start-up line, MASTER_ADDR/PORT, WORLD_SIZE, RANK...
    Version,          // torch / CUDA versions as printed
    Signal,           // "received signal 15 (SIGTERM)", "Signal 9 (SIGKILL) received by PID"
};
QString logFactKindName(LogFactKind kind);

// A structured fact read from one line; its fields keep the names and order the line used.
// The fields are packed into bytes (per field: key size, value size as LEB128, key bytes, value
// bytes) that the facts of one read share in large blocks: a log of a million NCCL collective
// lines holds a million facts, and one allocation each cost more than reading their lines.
struct LogFact {
    using Fields = std::vector<std::pair<std::string, std::string>>;

    LogFactKind kind = LogFactKind::Environment;
    int line = -1; // index into the stream's lines

    LogFact() = default;
    LogFact(LogFactKind kind, int line, const Fields& fields = {}); // bytes of its own
    // Over `size` packed bytes (packField) at `packed`, which keeps their block alive.
    LogFact(LogFactKind kind, int line, std::shared_ptr<const char> packed, std::uint32_t size);

    // Packing: a field takes packedSize() bytes, written at `out` by packField (which returns the
    // end of what it wrote).
    static std::size_t packedSize(std::string_view key, std::string_view value)
    {
        return sizeBytes(key.size()) + sizeBytes(value.size()) + key.size() + value.size();
    }
    static char* packField(char* out, std::string_view key, std::string_view value)
    {
        out = putSize(out, key.size());
        out = putSize(out, value.size());
        if (!key.empty()) std::memcpy(out, key.data(), key.size());
        if (!value.empty()) std::memcpy(out + key.size(), value.data(), value.size());
        return out + key.size() + value.size();
    }

    Fields fields() const;
    std::string value(std::string_view key) const; // "" when absent; the first of that name
    bool has(std::string_view key) const;

private:
    static std::size_t sizeBytes(std::size_t n) // LEB128
    {
        std::size_t bytes = 1;
        for (; n >= 0x80; n >>= 7)
            ++bytes;
        return bytes;
    }
    static char* putSize(char* out, std::size_t n)
    {
        for (; n >= 0x80; n >>= 7)
            *out++ = static_cast<char>((n & 0x7f) | 0x80);
        *out++ = static_cast<char>(n);
        return out;
    }
    // Calls fn(key, value) per field until it returns true.
    template <typename Fn> bool forEach(Fn&& fn) const;
    std::shared_ptr<const char> m_packed;
    std::uint32_t m_size = 0;
};

struct LogException {
    struct Frame {
        std::string file;
        int line = -1;
        std::string function;
    };
    int firstLine = -1; // the "Traceback (most recent call last):" line (stream index)
    int lastLine = -1;  // the last line of the exception message
    std::string type;   // RuntimeError, torch.distributed.DistBackendError, ...
    std::string message;
    std::vector<Frame> frames; // outermost first, as Python prints them

    std::string text() const { return message.empty() ? type : type + ": " + message; }
};

// A stretch of a line that the log's ANSI escapes coloured (bytes of lineBytes()).
struct LogColourSpan {
    qsizetype start = 0;
    qsizetype length = 0;
    std::uint32_t rgb = 0; // 0xRRGGBB with bit 24 set; 0: the default colour
    bool bold = false;
};

struct LogStep {
    int step = -1;
    int line = -1;
};

// The lines one rank wrote, from one source file or from the rank's tagged lines of a combined
// launcher log. The bytes of the file are shared, not copied; a line is kept as its start offset
// alone (4 bytes, 8 in a split stream), so a line's end, timestamp and text are produced only when
// asked for: a 50 M-line log costs its bytes plus 200 MB.
class RankLog {
public:
    std::optional<int> rank;        // empty: the launcher's own lines, or a log of unknown rank
    int sourceIndex = -1;           // the SourceFile in the folder
    QString sourcePath;             // relative path of that file
    bool splitFromCombined = false; // lines picked out of a combined log by their rank tag
    std::string host;               // from NCCL line prefixes or host=/hostname= when printed
    std::optional<int> worldSize;   // world_size=, WORLD_SIZE=, nranks when printed
    // Lines longer than the parse limit are indexed whole but only their head is parsed.
    int longLines = 0;

    int lineCount() const { return int(m_startLow.size()); }
    // 1-based, in the source.
    int lineNumber(int i) const { return m_number.empty() ? i + 1 : m_number[std::size_t(i)]; }
    qint64 lineOffset(int i) const; // byte offset in the source
    // The line without its "\n" or "\r\n": O(length), found from its start.
    QByteArrayView lineBytes(int i) const;
    // Lines [first, first + count) as they lie one after the other in the source, '\n' between
    // them (from the first's start to the last's end); null when they do not lie so (the streams
    // of a combined log split by rank tag).
    QByteArrayView linesBytes(int first, int count) const;
    QString lineText(int i) const;
    // The colours line i was written in, from the ANSI escapes removed from the text (in order,
    // covering the line); empty when the log had none.
    std::vector<LogColourSpan> lineColours(int i) const;
    // Stream index of the line with source line number `number`, or -1.
    int indexOfLineNumber(int number) const;

    // ns since the Unix epoch (log clocks read as UTC) when the line's date is known; when only
    // the time of day is, ns since midnight and timestampHasDate() is false. -1: no timestamp.
    // Read from the line's head when asked (glog stamps without a year take the year of the
    // stream's last dated line before it).
    std::int64_t timestampNs(int i) const;
    bool timestampHasDate(int i) const;

    const std::vector<LogFact>& facts() const { return m_facts; }
    std::vector<const LogFact*> factsOfKind(LogFactKind kind) const;
    const std::vector<LogException>& exceptions() const { return m_exceptions; }
    const std::vector<LogStep>& steps() const { return m_steps; }
    // The step number of the last step line, i.e. the last step this rank reported.
    std::optional<int> lastStep() const;
    int lastLine() const { return lineCount() - 1; }

private:
    friend class LogReader;
    friend class RankLogBuilder; // logreader.cpp fills the index
    QByteArrayView lineHead(int i, qsizetype maxBytes) const;
    int yearBefore(int i) const;

    std::shared_ptr<const QByteArray> m_bytes;
    // Where the escapes of a coloured log changed the colour (offsets in m_bytes); null: none.
    std::shared_ptr<const std::vector<LogColourChange>> m_colours;
    // Line i starts at m_startLow[i] + 2^32 * (entries of m_startHigh <= i): the offsets of a file
    // over 4 GB cross a multiple of 2^32 a handful of times, each crossing one entry.
    std::vector<std::uint32_t> m_startLow;
    std::vector<std::int32_t> m_startHigh;
    std::vector<std::int32_t> m_number; // split streams only; empty: line i is line i + 1
    // (line, year): from that line on, the year of the stream's dated lines, where it changed.
    std::vector<std::pair<std::int32_t, std::int32_t>> m_years;
    std::vector<LogFact> m_facts;
    std::vector<LogException> m_exceptions;
    std::vector<LogStep> m_steps;
};

} // namespace rankscope
