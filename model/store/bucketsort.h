#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rankscope {

// Sorts `v` in place, with no copy of it (a reader sorts millions of flow points while every
// event column is held, and the copy would set its peak memory): one pass moves each element
// into its bucket by the top bits of `key(element)` (a std::uint64_t in [lo, hi]), then each
// bucket is sorted by `less`, which must order by the key first. At most 2,048 buckets, so
// that the pass writes to few enough places at once to stay in cache, and a bucket of spread
// keys (hashes, event indices) is small enough to sort in cache. Not stable: `less` must be a
// total order on the values (elements it finds equal are then identical), so the result is the
// same whatever the input order.
template <typename T, typename Key, typename Less>
void bucketSortInPlace(std::vector<T>& v, Key key, std::uint64_t lo, std::uint64_t hi, Less less)
{
    const std::size_t n = v.size();
    if (n <= 64) {
        std::sort(v.begin(), v.end(), less);
        return;
    }
    const int bits = std::clamp(int(std::bit_width(n / 256)), 1, 11);
    const std::uint64_t range = hi - lo;
    const int shift = std::max(0, int(std::bit_width(range)) - bits);
    const std::size_t buckets = std::size_t(range >> shift) + 1;
    const auto bucketOf = [&](const T& x) { return std::size_t((key(x) - lo) >> shift); };
    std::vector<std::size_t> begin(buckets + 1, 0);
    for (const T& x : v)
        ++begin[bucketOf(x) + 1];
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
    for (std::size_t b = 0; b < buckets; ++b)
        if (begin[b + 1] - begin[b] > 1)
            std::sort(v.begin() + std::ptrdiff_t(begin[b]),
                      v.begin() + std::ptrdiff_t(begin[b + 1]), less);
}

} // namespace rankscope
