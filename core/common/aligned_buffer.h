// AlignedBuffer: an owned, zero-filled, cache-line aligned byte array, the
// backing store of registered regions (RDMA atomics need 8-byte alignment;
// nodes and entries want cache-line alignment). Buffers of 64 KiB and
// more are anonymous mappings, which the kernel fills with zeros page by
// page as they are first touched: a store sized for growth, or a server's
// pool of posted receives, costs memory, and time to clear it, only for
// the part it uses (clearing them up front was a third of the page faults
// of a 1024-server simulation's set-up; docs/simulator.md, "Scale").
// Buffers of 2 MiB and more are 2 MiB aligned and asked to be backed by
// transparent huge pages: index regions are read at random, and TLB
// misses (the CPU's, and the NIC's address translation on real hardware)
// dominate otherwise. A simulated run models no TLB and asks for no huge
// pages (set_huge_pages): with THP on madvise, each touched 2 MiB of a
// store was then resident whole.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace locus {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kHugePage = 2u << 20;
  static constexpr size_t kPage = 4096;  // mmap and munmap round up further where pages are larger
  static constexpr size_t kMappedFrom = 64u << 10;  // smaller ones come from the heap, cleared

  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : size_(bytes) {
    if (bytes == 0) return;
    if (bytes >= kHugePage) {
      map_huge_aligned(bytes);
    } else if (bytes >= kMappedFrom) {
      map_pages(bytes);
    } else {
      const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
      data_ = static_cast<std::byte*>(std::aligned_alloc(kAlignment, rounded));
      if (data_ != nullptr) std::memset(data_, 0, rounded);
    }
    if (data_ == nullptr) size_ = 0;
  }
  ~AlignedBuffer() { release(); }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        mapped_(std::exchange(o.mapped_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      mapped_ = std::exchange(o.mapped_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  // Whether buffers mapped from now on ask for transparent huge pages
  // (the default). The SimGrid backend turns it off: its hosts' memory
  // lives in one process, where a 2 MiB page for each server's 0.7 MB of
  // records cost 1 GiB at 1024 servers.
  static void set_huge_pages(bool on) { huge_pages().store(on, std::memory_order_relaxed); }

  // False when the allocation failed (or size 0).
  bool valid() const { return data_ != nullptr; }
  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  // Maps `bytes` rounded up to whole pages (page aligned).
  void map_pages(size_t bytes) {
    const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    data_ = static_cast<std::byte*>(p);
    mapped_ = rounded;
  }
  // Maps `bytes` rounded up to huge pages at a huge-page boundary: maps one
  // huge page more than needed and unmaps the unaligned head and the tail.
  void map_huge_aligned(size_t bytes) {
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = mmap(nullptr, rounded + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    auto* raw = static_cast<std::byte*>(p);
    const auto addr = reinterpret_cast<uintptr_t>(raw);
    const size_t head = (kHugePage - addr % kHugePage) % kHugePage;
    if (head > 0) munmap(raw, head);
    const size_t tail = kHugePage - head;
    if (tail > 0) munmap(raw + head + rounded, tail);
    data_ = raw + head;
    mapped_ = rounded;
    if (huge_pages().load(std::memory_order_relaxed)) (void)madvise(data_, rounded, MADV_HUGEPAGE);  // a hint only
  }
  static std::atomic<bool>& huge_pages() {
    static std::atomic<bool> on{true};
    return on;
  }
  void release() {
    if (data_ == nullptr) return;
    if (mapped_ > 0) {
      munmap(data_, mapped_);
    } else {
      std::free(data_);
    }
    data_ = nullptr;
    mapped_ = 0;
  }

  std::byte* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes mapped, if it is a mapping
};

}  // namespace locus
