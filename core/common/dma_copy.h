// dma_copy and dma_read: copy bytes the way a NIC's DMA engine does, while
// CPUs may be reading or writing the same bytes. The loopback NIC copies
// with them, and a Nessie client reading or writing its own node's data
// entries by CPU (its local shortcut) uses dma_copy, which races with other
// clients exactly as an RDMA READ would: the designs' protocols (valid
// bits, versions, CRCs, expiry) make such races harmless, not memory
// ordering, so ThreadSanitizer is told not to instrument the copies. A
// plain memcpy would not do: TSan intercepts it whatever the caller's
// attributes, and its copy order is unspecified; loop distribution is off
// so the compiler cannot turn the loops into one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace locus {

constexpr uint64_t kDmaLineBytes = 64;

// Out of line (dma_copy.cc): an uninstrumented function inlined into an
// instrumented caller would be instrumented after all.

// Front to back, a word at a time: what a WRITE's placement or a CPU copy
// looks like to a concurrent reader.
void dma_copy(std::byte* dst, const std::byte* src, uint64_t n);

// What an RDMA READ looks like to the CPU writing the source: every
// 64-byte-aligned cache line of it (or the part of one it covers) is read
// atomically with respect to CPU writes, as a PCIe device's read of a
// cache line is; FaRM's and Catfish's per-line versions rely on exactly
// that (catfish-rtree.txt: "both RDMA Read ... and CPU Write ... are
// cache-line atomic"). Software cannot load 64 bytes atomically, so each
// line is loaded until two loads in a row agree. For a line whose last
// word is a version that a writer makes odd before changing the line and
// even after (increasing, so never back to an old value), agreeing loads
// that saw it even saw no write between the first load's version and the
// second's: each word then held what both loads read when the first load
// read the version, and the copy is the line at that instant. (For other
// data a word may change and change back between the loads; such data
// carries its own checks, CRCs or valid bits, and needs no atomic line.)
//
// `after_load`, for tests only, is called after every word load with the
// byte offset of the word and the number of the line's load (0 first), so
// a test can change the source between the loads of one line.
using DmaLoadHook = void (*)(void* ctx, uint64_t offset, uint32_t load);
void dma_read(std::byte* dst, const std::byte* src, uint64_t n, DmaLoadHook after_load = nullptr,
              void* hook_ctx = nullptr);

}  // namespace locus
