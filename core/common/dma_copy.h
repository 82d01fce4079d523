// dma_copy: copies bytes the way a NIC's DMA engine does, front to back a
// word at a time, while CPUs may be reading or writing the same bytes.
// The loopback NIC copies with it, and so does a Nessie client reading or
// writing its own node's data entries by CPU (its local shortcut), which
// races with other clients exactly as an RDMA READ would: the designs'
// protocols (valid bits, versions, CRCs, expiry) make such races
// harmless, not memory ordering, so ThreadSanitizer is told not to
// instrument the copy. A plain memcpy would not do: TSan intercepts it
// whatever the caller's attributes, and its copy order is unspecified;
// loop distribution is off so the compiler cannot turn the loop into one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace locus {

// Out of line (dma_copy.cc): an uninstrumented function inlined into an
// instrumented caller would be instrumented after all.
void dma_copy(std::byte* dst, const std::byte* src, uint64_t n);

}  // namespace locus
