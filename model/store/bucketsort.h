#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rankscope {

namespace detail {

// Sorts [v, v + n), whose keys all lie in [lo, hi], as bucketSortInPlace says.
template <typename T, typename Key, typename Less>
void bucketSortRange(T* v, std::size_t n, const Key& key, std::uint64_t lo, std::uint64_t hi,
                     const Less& less)
{
    if (n <= 32 || lo == hi) {
        std::sort(v, v + n, less);
        return;
    }
    const int bits = std::clamp(int(std::bit_width(n / 8)), 1, 11);
    const std::uint64_t range = hi - lo;
    const int shift = std::max(0, int(std::bit_width(range)) - bits);
    const std::size_t buckets = std::size_t(range >> shift) + 1;
    const auto bucketOf = [&](const T& x) { return std::size_t((key(x) - lo) >> shift); };
    std::vector<std::size_t> begin(buckets + 1, 0);
    for (std::size_t i = 0; i < n; ++i)
        ++begin[bucketOf(v[i]) + 1];
    for (std::size_t b = 0; b < buckets; ++b)
        begin[b + 1] += begin[b];
    // American flag sort: each element is swapped along its cycle until the one that belongs at
    // the bucket's next free slot lands there.
    std::vector<std::size_t> next(begin.begin(), begin.end() - 1);
    for (std::size_t b = 0; b < buckets; ++b)
        while (next[b] < begin[b + 1]) {
            T x = v[next[b]];
            for (std::size_t d = bucketOf(x); d != b; d = bucketOf(x))
                std::swap(x, v[next[d]++]);
            v[next[b]++] = x;
        }
    // Each bucket by the next bits of its keys, in cache now, down to runs small enough for
    // std::sort's insertion sort.
    const std::uint64_t span = (std::uint64_t(1) << shift) - 1; // a bucket's keys past its first
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t m = begin[b + 1] - begin[b];
        if (m <= 1) continue;
        const std::uint64_t first = lo + (std::uint64_t(b) << shift);
        const std::uint64_t last = hi - first < span ? hi : first + span;
        bucketSortRange(v + begin[b], m, key, first, last, less);
    }
}

} // namespace detail

// Sorts `v` in place, with no copy of it (a reader sorts millions of flow points while every
// event column is held, and the copy would set its peak memory): one pass moves each element
// into its bucket by the top bits of `key(element)` (a std::uint64_t in [lo, hi]), then each
// bucket the same way by the next bits, down to a few elements, which are sorted by `less`; it
// must order by the key first. At most 2,048 buckets a pass, so that it writes to few enough
// places at once to stay in cache. Not stable: `less` must be a total order on the values
// (elements it finds equal are then identical), so the result is the same whatever the input
// order.
template <typename T, typename Key, typename Less>
void bucketSortInPlace(std::vector<T>& v, Key key, std::uint64_t lo, std::uint64_t hi, Less less)
{
    detail::bucketSortRange(v.data(), v.size(), key, lo, hi, less);
}

} // namespace rankscope
