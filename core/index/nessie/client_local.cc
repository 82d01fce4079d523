// NessieClient's local shortcuts (paper section 4.2: a client worker reads
// its own node's tables from memory and writes its local DTEs by CPU
// stores, sparing the NIC and the network): the copies of a DTE's bytes
// out of and into the home node's data table. They are the client's CPU
// work, charged by name with their measured native time, so a simulator
// costs them as its scenario says (CpuSpec::handler_cost_us). The copies
// race with other clients' as RDMA READs do (core/common/dma_copy.h).
#include "core/common/dma_copy.h"
#include "core/index/nessie/client.h"

namespace locus::nessie {
void NessieClient::load_dte(uint64_t at, uint32_t bytes, std::byte* into) {
  ++stats_.local_ops;
  const WorkTimer timer(ep_.env());
  // After the load of the ITE that named the DTE, as a READ would be.
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  dma_copy(into, local_.data + at, bytes);
  ep_.env().cpu->charge_work(kLocalReadWork, timer.elapsed(), bytes);
}

void NessieClient::store_dte(uint64_t at, uint32_t bytes, const std::byte* from) {
  ++stats_.local_ops;
  const WorkTimer timer(ep_.env());
  dma_copy(local_.data + at, from, bytes);
  // Before the CAS that publishes it: the NIC's later READs see it.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  ep_.env().cpu->charge_work(kLocalWriteWork, timer.elapsed(), bytes);
}

}  // namespace locus::nessie
