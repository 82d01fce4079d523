// Server-to-client feedback records: see server_feedback.h.
#include "core/selector/server_feedback.h"

#include <bit>
#include <cstring>

namespace locus::selector {

HeartbeatRecord read_heartbeat(const std::byte* slot) {
  HeartbeatRecord r;
  const auto* words = reinterpret_cast<const uint64_t*>(slot);
  r.sequence = __atomic_load_n(&words[1], __ATOMIC_ACQUIRE);
  r.utilisation = std::bit_cast<double>(__atomic_load_n(&words[0], __ATOMIC_ACQUIRE));
  return r;
}

void write_heartbeat(std::byte* slot, const HeartbeatRecord& record) {
  std::memcpy(slot, &record, sizeof(record));
}

}  // namespace locus::selector
