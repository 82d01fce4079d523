// NessieClient's local shortcuts (paper section 4.2: a client worker reads
// its own node's tables from memory and writes its local DTEs by CPU
// stores, sparing the NIC and the network): the copies of a DTE's bytes
// out of and into the home node's data table. They are the client's CPU
// work, charged by name with their measured native time, so a simulator
// costs them as its scenario says (CpuSpec::handler_cost_us).
#include <cstring>

#include "core/index/nessie/client.h"

namespace locus::nessie {
namespace {

// The copy races with the NIC's copies of the same bytes (another
// client's READ of a DTE being recycled, say) exactly as an RDMA READ
// would: Nessie's valid bits and expiry periods make that harmless, not
// memory ordering, so ThreadSanitizer is told not to instrument it.
__attribute__((no_sanitize("thread"))) void copy_bytes(std::byte* dst, const std::byte* src, uint32_t n) {
  std::memcpy(dst, src, n);
}

}  // namespace

void NessieClient::load_dte(uint64_t at, uint32_t bytes, std::byte* into) {
  ++stats_.local_ops;
  const WorkTimer timer(ep_.env());
  // After the load of the ITE that named the DTE, as a READ would be.
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  copy_bytes(into, local_.data + at, bytes);
  ep_.env().cpu->charge_work(kLocalReadWork, timer.elapsed(), bytes);
}

void NessieClient::store_dte(uint64_t at, uint32_t bytes, const std::byte* from) {
  ++stats_.local_ops;
  const WorkTimer timer(ep_.env());
  copy_bytes(local_.data + at, from, bytes);
  // Before the CAS that publishes it: the NIC's later READs see it.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  ep_.env().cpu->charge_work(kLocalWriteWork, timer.elapsed(), bytes);
}

}  // namespace locus::nessie
