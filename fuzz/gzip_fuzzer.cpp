// libFuzzer harness for the gzip input every trace is read through (ISA-L's igzip, members,
// checksums, cut streams): any file must read to an end or a one-line error, the same bytes
// whether read in large or in tiny pieces, and skip() must land where reading would.
#include "model/trace/gzipinput.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace rankscope;

namespace {

// An inflated stream may be a bomb: what the harness compares stops here.
constexpr std::size_t kMaxOut = std::size_t(8) << 20;

struct Whole {
    std::string bytes;
    bool failed = false;
    std::string error;
};

int fileOf(const std::uint8_t* data, std::size_t size)
{
    const int fd = ::memfd_create("gzip_fuzzer", MFD_CLOEXEC);
    if (fd < 0) std::abort();
    for (std::size_t done = 0; done < size;) {
        const ssize_t n = ::write(fd, data + done, size - done);
        if (n <= 0) std::abort();
        done += std::size_t(n);
    }
    return fd;
}

Whole readAll(int fd, std::size_t piece, std::int64_t skipFirst)
{
    GzipInput in(fd, GzipInput::Descriptor::Borrowed);
    Whole w;
    w.failed = skipFirst > 0 && !in.skip(skipFirst);
    std::string buf(piece, '\0');
    while (w.bytes.size() < kMaxOut) {
        const std::int64_t n = in.read(buf.data(), std::min(piece, kMaxOut - w.bytes.size()));
        if (n < 0) {
            w.failed = true;
            w.error = in.error();
            if (w.error.empty() || w.error.find('\n') != std::string::npos) std::abort();
            break;
        }
        if (n == 0) break;
        if (std::size_t(n) > piece) std::abort();
        w.bytes.append(buf.data(), std::size_t(n));
    }
    if (in.inputOffset() < 0 || (in.inputSize() >= 0 && in.inputOffset() > in.inputSize()))
        std::abort();
    return w;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const int fd = fileOf(data, size);
    const Whole big = readAll(fd, 1 << 16, 0);
    const Whole tiny = readAll(fd, 7, 0);
    // The same bytes up to where both stopped, and an error in one is an error in the other;
    // without an error, the same bytes. (Before an error, how much comes out depends on the
    // buffers: ISA-L keeps what it inflated into its own buffer when the caller's are small.)
    const std::size_t common = std::min(big.bytes.size(), tiny.bytes.size());
    if (std::memcmp(big.bytes.data(), tiny.bytes.data(), common) != 0) std::abort();
    if (big.bytes.size() < kMaxOut && tiny.bytes.size() < kMaxOut &&
        (big.failed != tiny.failed || (!big.failed && big.bytes != tiny.bytes)))
        std::abort();
    // Skipping the first third, then reading, gives the rest of what a plain read gave.
    if (!big.failed && big.bytes.size() < kMaxOut && big.bytes.size() >= 3) {
        const std::size_t third = big.bytes.size() / 3;
        const Whole rest = readAll(fd, 4096, std::int64_t(third));
        if (rest.failed || rest.bytes != big.bytes.substr(third)) std::abort();
    }
    ::close(fd);
    return 0;
}
