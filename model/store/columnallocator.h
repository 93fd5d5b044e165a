#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace rankscope {

// For large columns an analysis writes once in parallel (CollectiveGroup's time columns):
// - the elements a resize adds are left uninitialised, so the tasks that fill the cells are
//   also the first to touch their pages, spread over the cores instead of one serial fill;
// - a column of kHugeBytes or more is asked to live on huge pages (Linux, where transparent
//   huge pages are on "madvise"), so its first touch costs one page fault per 2 MB instead of
//   one per 4 KB: faulting in fresh pages is a large share of analysing a big job.
template <typename T> struct ColumnAllocator : std::allocator<T> {
    static constexpr std::size_t kHugeBytes = std::size_t(8) << 20;
    static constexpr std::size_t kHugePage = std::size_t(2) << 20;

    ColumnAllocator() = default;
    template <typename U> ColumnAllocator(const ColumnAllocator<U>&) noexcept {}
    template <typename U> struct rebind {
        using other = ColumnAllocator<U>;
    };

    T* allocate(std::size_t n)
    {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHugeBytes) return std::allocator<T>::allocate(n);
        const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
        void* p = std::aligned_alloc(kHugePage, rounded);
        if (!p) throw std::bad_alloc();
#ifdef __linux__
        madvise(p, rounded, MADV_HUGEPAGE); // advice only: without it the column still works
#endif
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept
    {
        if (n * sizeof(T) < kHugeBytes)
            std::allocator<T>::deallocate(p, n);
        else
            std::free(p);
    }

    template <typename U> void construct(U* p) noexcept
    {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args> void construct(U* p, Args&&... args)
    {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

// For a plain std::vector column that a reader fills (a lane's start, end, name, ... columns):
// reserves `n` elements and, when that is kHugeBytes or more, asks for huge pages over the
// 2 MB-aligned part of the new buffer that is not written yet, so filling it faults once per
// 2 MB instead of once per 4 KB (on this project's VM a page fault costs about as much as parsing
// an event). The elements already there were copied on 4 KB pages; untouched capacity costs no
// resident memory either way.
template <typename T> void reserveColumn(std::vector<T>& v, std::size_t n)
{
    if (n <= v.capacity()) return;
    v.reserve(n);
#ifdef __linux__
    constexpr std::size_t kHugeBytes = ColumnAllocator<T>::kHugeBytes;
    constexpr std::size_t kHugePage = ColumnAllocator<T>::kHugePage;
    if (v.capacity() * sizeof(T) < kHugeBytes) return;
    const auto from = reinterpret_cast<std::uintptr_t>(v.data() + v.size());
    const auto to = reinterpret_cast<std::uintptr_t>(v.data() + v.capacity());
    const std::uintptr_t first = (from + kHugePage - 1) / kHugePage * kHugePage;
    const std::uintptr_t last = to / kHugePage * kHugePage;
    if (last > first) // advice only: without it the column still works
        madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

// For a large column consumed from the front while what is built from it grows (a reader's flow
// points, paired into links): hands the pages wholly inside elements [from, to) back to the
// kernel, so the two are not held whole at once. Those elements must not be read again (they
// read as zero bytes); the column stays valid to append to and to free.
template <typename T> void releaseColumnRange(std::vector<T>& v, std::size_t from, std::size_t to)
{
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
#ifdef __linux__
    constexpr std::size_t kHugePage = ColumnAllocator<T>::kHugePage;
    const auto begin = reinterpret_cast<std::uintptr_t>(v.data() + from);
    const auto end = reinterpret_cast<std::uintptr_t>(v.data() + to);
    const std::uintptr_t first = (begin + kHugePage - 1) / kHugePage * kHugePage;
    const std::uintptr_t last = end / kHugePage * kHugePage;
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
#else
    (void)v, (void)from, (void)to;
#endif
}

template <typename T, typename U>
bool operator==(const ColumnAllocator<T>&, const ColumnAllocator<U>&) noexcept
{
    return true;
}

} // namespace rankscope
