// Server-to-client feedback: a record a server RDMA-WRITEs into a fixed
// 16-byte slot in each client's registered memory, so the client's selector
// learns how loaded the server is without asking it (Catfish's heartbeats,
// paper section IV-A: the server's CPU utilisation every Inv). It lives
// below the selectors and the designs because both ends use it: a design's
// server writes it, any selector may read it (Selector::attach_server_feedback).
#pragma once

#include <cstddef>
#include <cstdint>

namespace locus::selector {

// The slot's content. The sequence comes last on purpose: a NIC writes
// front to back, so a reader that loads the sequence first and sees it new
// also sees that heartbeat's utilisation (or a newer one).
struct HeartbeatRecord {
  double utilisation = 0;  // server CPU busy fraction over the last interval, 0..1
  uint64_t sequence = 0;   // 0: no heartbeat yet
};
static_assert(sizeof(HeartbeatRecord) == 16);
constexpr size_t kHeartbeatSlotBytes = sizeof(HeartbeatRecord);

// Reads a slot a remote NIC may be writing (8-byte aligned).
HeartbeatRecord read_heartbeat(const std::byte* slot);
// Encodes a record as the server sends it.
void write_heartbeat(std::byte* slot, const HeartbeatRecord& record);

}  // namespace locus::selector
