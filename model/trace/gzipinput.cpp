#include "model/trace/gzipinput.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rankscope {

namespace {

constexpr std::size_t kInputBytes = std::size_t(256) << 10;
// ISA-L counts in 32 bits.
constexpr std::size_t kMaxCall = std::size_t(1) << 30;

std::string inflateError(int code)
{
    switch (code) {
    case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
        return "invalid back-reference distance";
    case ISAL_INVALID_WRAPPER:
        return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
        return "incorrect data check";
    default:
        return "inflate error " + std::to_string(code);
    }
}

bool isGzipMagic(const unsigned char* p)
{
    return p[0] == 0x1f && p[1] == 0x8b;
}

} // namespace

GzipInput::GzipInput(int fd, Descriptor descriptor) : m_fd(fd), m_descriptor(descriptor)
{
    if (m_fd < 0) return;
    struct stat st {};
    if (::fstat(m_fd, &st) == 0) m_size = std::int64_t(st.st_size);
    m_in.resize(kInputBytes);
    // The first bytes say what the file is; a read error here is reported by the first read().
    while (m_inLen < 2 && fillInput()) {
    }
    if (m_inLen >= 2 && isGzipMagic(m_in.data())) {
        m_state = std::make_unique<inflate_state>();
        isal_inflate_init(m_state.get());
        m_state->crc_flag = ISAL_GZIP;
    }
}

GzipInput::~GzipInput()
{
    if (m_fd >= 0 && m_descriptor == Descriptor::Owned) ::close(m_fd);
}

// Appends what the file has next to the unconsumed input (moved to the front); false at the
// end of the file or an error.
bool GzipInput::fillInput()
{
    if (m_inputEnded) return false;
    if (m_inPos > 0) {
        std::memmove(m_in.data(), m_in.data() + m_inPos, m_inLen - m_inPos);
        m_inLen -= m_inPos;
        m_inPos = 0;
    }
    for (;;) {
        const ssize_t got =
            ::pread(m_fd, m_in.data() + m_inLen, m_in.size() - m_inLen, off_t(m_fileOffset));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            m_error = std::string("cannot read: ") + std::strerror(errno);
            m_failed = true;
        }
        if (got <= 0) {
            m_inputEnded = true;
            return false;
        }
        m_inLen += std::size_t(got);
        m_fileOffset += got;
        return true;
    }
}

// After a member's trailer: another member follows, or the stream ends here.
bool GzipInput::nextMember()
{
    while (m_inLen - m_inPos < 2 && fillInput()) {
    }
    if (m_inLen - m_inPos < 2 || !isGzipMagic(m_in.data() + m_inPos)) return false;
    isal_inflate_reset(m_state.get());
    m_state->crc_flag = ISAL_GZIP;
    return true;
}

std::int64_t GzipInput::readPlain(char* buf, std::size_t n)
{
    // What the constructor read first, then straight from the file.
    if (m_inPos < m_inLen) {
        const std::size_t k = std::min(n, m_inLen - m_inPos);
        std::memcpy(buf, m_in.data() + m_inPos, k);
        m_inPos += k;
        return std::int64_t(k);
    }
    for (;;) {
        const ssize_t got = ::pread(m_fd, buf, n, off_t(m_fileOffset));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            m_error = std::string("cannot read: ") + std::strerror(errno);
            m_failed = true;
            return -1;
        }
        m_fileOffset += got;
        return got;
    }
}

std::int64_t GzipInput::checkpointSpacing(std::int64_t inputSize)
{
    return std::max(std::int64_t(8) << 20, inputSize / 16);
}

void GzipInput::recordCheckpoints(std::int64_t spacing)
{
    if (!m_state || spacing <= 0) return;
    m_index = std::make_shared<GzipIndex>();
    m_index->spacing = spacing;
}

std::shared_ptr<const GzipIndex> GzipInput::takeIndex()
{
    return std::move(m_index);
}

bool GzipInput::seek(std::int64_t offset, const GzipIndex* index)
{
    if (m_failed || offset < 0) return false;
    m_produced = 0;
    if (!m_state) {
        // Straight to the offset: what the constructor read first is dropped.
        m_inPos = m_inLen = 0;
        m_fileOffset = offset;
        m_outputOffset = offset;
        return true;
    }
    if (index && offset >= m_outputOffset) {
        const auto& points = index->points;
        auto it = std::upper_bound(
            points.begin(), points.end(), offset,
            [](std::int64_t o, const GzipCheckpoint& c) { return o < c.outputOffset; });
        if (it != points.begin() && (--it)->outputOffset > m_outputOffset) {
            *m_state = *it->state;
            m_fileOffset = it->inputOffset;
            m_inPos = m_inLen = 0;
            m_inputEnded = false;
            m_end = false;
            m_outputOffset = it->outputOffset;
        }
    }
    return offset >= m_outputOffset && skip(offset - m_outputOffset);
}

std::int64_t GzipInput::read(char* buf, std::size_t n)
{
    const std::int64_t got = readMore(buf, n);
    if (got > 0) {
        m_outputOffset += got;
        m_produced += got;
    }
    return got;
}

std::int64_t GzipInput::readMore(char* buf, std::size_t n)
{
    if (m_failed) return -1;
    if (m_end || n == 0) return 0;
    n = std::min(n, kMaxCall);
    if (!m_state) return readPlain(buf, n);
    // Recording: short inflate calls, so that a checkpoint falls soon after its mark.
    const std::size_t perCall = m_index ? std::size_t(kCheckpointCall) : n;
    std::size_t produced = 0;
    while (produced < n) {
        // Without input left, ISA-L may still hold bytes it inflated from input it already took
        // (when the caller's buffers are small): they are drained before the stream may end.
        const bool inputLeft = m_inPos < m_inLen || fillInput();
        if (m_failed) break;
        inflate_state& s = *m_state;
        s.next_in = m_in.data() + m_inPos;
        s.avail_in = std::uint32_t(m_inLen - m_inPos);
        s.next_out = reinterpret_cast<std::uint8_t*>(buf + produced);
        s.avail_out = std::uint32_t(std::min(n - produced, perCall));
        const int rc = isal_inflate(&s);
        const std::size_t used = std::size_t(s.next_in - (m_in.data() + m_inPos));
        const std::size_t out = std::min(n - produced, perCall) - s.avail_out;
        m_inPos += used;
        produced += out;
        if (rc != ISAL_DECOMP_OK) {
            m_error = inflateError(rc);
            m_failed = true;
            break;
        }
        if (m_index && s.block_state != ISAL_BLOCK_FINISH) {
            const std::int64_t at = m_outputOffset + std::int64_t(produced);
            const std::int64_t last =
                m_index->points.empty() ? 0 : m_index->points.back().outputOffset;
            if (at - last >= m_index->spacing)
                m_index->points.push_back(
                    {at, inputOffset(), std::make_shared<const inflate_state>(s)});
        }
        if (s.block_state == ISAL_BLOCK_FINISH) {
            if (!nextMember()) {
                m_end = true;
                break;
            }
        } else if (!inputLeft && out == 0) {
            // A member cut short ends the stream where it is cut, as gzread does.
            m_end = true;
            break;
        } else if (used == 0 && out == 0 && m_inPos < m_inLen) {
            // ISA-L stops only for input, output or an error; anything else would loop here.
            m_error = "inflate made no progress";
            m_failed = true;
            break;
        }
    }
    if (produced > 0) return std::int64_t(produced);
    return m_failed ? -1 : 0;
}

bool GzipInput::skip(std::int64_t n)
{
    std::vector<char> scratch(std::size_t(std::min<std::int64_t>(n, std::int64_t(1) << 20)));
    while (n > 0) {
        const std::int64_t got = read(
            scratch.data(), std::size_t(std::min<std::int64_t>(n, std::int64_t(scratch.size()))));
        if (got <= 0) return false;
        n -= got;
    }
    return true;
}

ReadAhead::ReadAhead(GzipInput& input, std::size_t windowBytes, std::size_t windows)
    : m_input(input)
{
    for (std::size_t i = 0; i < std::max<std::size_t>(windows, 1); ++i) {
        auto w = std::make_unique<Window>();
        w->bytes.resize(windowBytes);
        m_free.push_back(std::move(w));
    }
    m_thread = std::thread([this] { produce(); });
}

ReadAhead::~ReadAhead()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_changed.notify_all();
    m_thread.join();
}

void ReadAhead::produce()
{
    for (;;) {
        std::unique_ptr<Window> w;
        {
            std::unique_lock lock(m_mutex);
            m_changed.wait(lock, [this] { return m_stop || !m_free.empty(); });
            if (m_stop) return;
            w = std::move(m_free.front());
            m_free.pop_front();
        }
        w->size = 0;
        w->after = After::More;
        while (w->size < w->bytes.size()) {
            const std::int64_t got =
                m_input.read(w->bytes.data() + w->size, w->bytes.size() - w->size);
            if (got <= 0) {
                w->after = got == 0 ? After::End : After::Error;
                break;
            }
            w->size += std::size_t(got);
        }
        w->inputOffset = m_input.inputOffset();
        const bool last = w->after != After::More;
        {
            std::lock_guard lock(m_mutex);
            m_ready.push_back(std::move(w));
        }
        m_changed.notify_all();
        if (last) return;
    }
}

std::int64_t ReadAhead::read(char* buf, std::size_t n)
{
    if (!m_front) {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return !m_ready.empty(); });
        m_front = std::move(m_ready.front());
        m_ready.pop_front();
        m_frontPos = 0;
        m_consumedInput = m_front->inputOffset;
    }
    Window& w = *m_front;
    if (m_frontPos == w.size) {
        if (w.after == After::Error) {
            m_error = m_input.error();
            return -1;
        }
        return 0; // After::End: the producer has stopped, this window stays the last
    }
    const std::size_t k = std::min(n, w.size - m_frontPos);
    std::memcpy(buf, w.bytes.data() + m_frontPos, k);
    m_frontPos += k;
    if (m_frontPos == w.size && w.after == After::More) {
        {
            std::lock_guard lock(m_mutex);
            m_free.push_back(std::move(m_front));
        }
        m_changed.notify_all();
    }
    return std::int64_t(k);
}

} // namespace rankscope
