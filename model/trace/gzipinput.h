#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct inflate_state;

namespace rankscope {

// Where inflating a gzip file can resume (zran-style random access): ISA-L's whole inflate
// state at that point holds the bits not yet decoded, the block's Huffman tables and the last
// 32 KiB inflated, so a resumed input needs only the file from `inputOffset` on. 85 KiB each.
struct GzipCheckpoint {
    std::int64_t outputOffset = 0; // inflated bytes before it (over all members)
    std::int64_t inputOffset = 0;  // file bytes consumed before it
    std::shared_ptr<const inflate_state> state;
};

// A gzip file's checkpoints in output order, recorded while it is read (GzipInput::
// recordCheckpoints) and kept with the source, so that reading an event back inflates from the
// nearest checkpoint instead of the file's start.
struct GzipIndex {
    std::vector<GzipCheckpoint> points;
    std::int64_t spacing = 0; // output bytes between checkpoints (at least)
};

// The bytes of a file, inflated when it is gzip: every member of a multi-member file (what
// `gzip -d` and zlib's gzread give), checksums and lengths checked. A file that does not start
// with gzip's magic bytes passes through unchanged. Streaming: memory is a 256 KB input buffer
// and the inflate state, whatever the file's size. Reads with pread from an offset of its own,
// so the descriptor's offset (shared with its duplicates) is neither used nor moved.
//
// As zlib's gzread, it treats a gzip stream cut short as ending where it is cut (the reader
// above says "truncated"), and ignores what follows the last member when that is not another
// member (padding, garbage).
class GzipInput {
public:
    enum class Descriptor { Borrowed, Owned }; // Owned: closed with the input
    // `fd` < 0: not open.
    GzipInput(int fd, Descriptor descriptor);
    ~GzipInput();
    GzipInput(const GzipInput&) = delete;
    GzipInput& operator=(const GzipInput&) = delete;

    bool isOpen() const { return m_fd >= 0; }
    bool isCompressed() const { return m_state != nullptr; }
    // Up to `n` bytes into `buf`; 0 at the end; -1 on an error (error() says which). Bytes
    // inflated before an error are returned first, the error at the next call.
    std::int64_t read(char* buf, std::size_t n);
    // Reads and drops `n` bytes; false at an error or the end before them.
    bool skip(std::int64_t n);
    // Moves to output byte `offset`: a plain file by seeking, a gzip one by resuming at the last
    // of `index`'s checkpoints before it (or the start) and skipping the rest. `index` must have
    // been recorded from this file. False at an error or the end before `offset`.
    bool seek(std::int64_t offset, const GzipIndex* index);
    // Output bytes produced (read, skipped) since the input was opened or last sought: what a
    // seek and the reads after it cost.
    std::int64_t producedBytes() const { return m_produced; }

    // Before the first read of a gzip file: keeps a checkpoint about every `spacing` output
    // bytes (each inflate call then produces at most kCheckpointCall bytes, so a checkpoint is
    // at most that far past its mark).
    void recordCheckpoints(std::int64_t spacing);
    // The checkpoints recorded so far (null when none were asked for); the input keeps none.
    std::shared_ptr<const GzipIndex> takeIndex();
    static constexpr std::int64_t kCheckpointCall = std::int64_t(1) << 20;
    // The spacing for a file of `inputSize` compressed bytes: 8 MiB, more for files above
    // 128 MiB so that a file keeps about 16 checkpoints per compression ratio unit (a 1 GB file
    // inflating tenfold: 160 checkpoints, 14 MB).
    static std::int64_t checkpointSpacing(std::int64_t inputSize);
    std::int64_t inputOffset() const { return m_fileOffset - std::int64_t(m_inLen - m_inPos); }
    std::int64_t inputSize() const { return m_size; }
    const std::string& error() const { return m_error; }

private:
    bool fillInput();
    bool nextMember();
    std::int64_t readPlain(char* buf, std::size_t n);
    std::int64_t readMore(char* buf, std::size_t n); // read() before the counting

    int m_fd = -1;
    Descriptor m_descriptor;
    std::int64_t m_size = -1;
    std::int64_t m_fileOffset = 0; // of the next pread
    std::vector<unsigned char> m_in;
    std::size_t m_inPos = 0; // unconsumed input is m_in[m_inPos, m_inLen)
    std::size_t m_inLen = 0;
    std::unique_ptr<inflate_state> m_state; // null: plain file
    bool m_inputEnded = false;
    bool m_end = false;
    bool m_failed = false;
    std::string m_error;
    std::int64_t m_outputOffset = 0; // of the next byte read
    std::int64_t m_produced = 0;
    std::shared_ptr<GzipIndex> m_index; // recording, when asked
};

// Reads a GzipInput on a thread of its own, a bounded number of windows ahead of the consumer,
// so a single large compressed file is inflated on one core while it is parsed on another.
// Memory: `windows` buffers of `windowBytes`. The destructor stops the thread within one
// window's read.
class ReadAhead {
public:
    ReadAhead(GzipInput& input, std::size_t windowBytes, std::size_t windows);
    ~ReadAhead();
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    // GzipInput::read's contract, in the same order of bytes and errors.
    std::int64_t read(char* buf, std::size_t n);
    // Input bytes consumed to produce what read() has returned so far (to the window's end).
    std::int64_t inputOffset() const { return m_consumedInput; }
    const std::string& error() const { return m_error; }

private:
    enum class After { More, End, Error };
    struct Window {
        std::vector<char> bytes;
        std::size_t size = 0;
        std::int64_t inputOffset = 0;
        After after = After::More;
    };
    void produce();

    GzipInput& m_input;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<std::unique_ptr<Window>> m_free;  // guarded by m_mutex
    std::deque<std::unique_ptr<Window>> m_ready; // guarded by m_mutex
    bool m_stop = false;                         // guarded by m_mutex
    std::unique_ptr<Window> m_front;             // the consumer's, outside the queues
    std::size_t m_frontPos = 0;
    std::int64_t m_consumedInput = 0;
    std::string m_error;
    std::thread m_thread;
};

} // namespace rankscope
