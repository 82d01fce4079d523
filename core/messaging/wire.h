// The wire format of a messaging connection's set-up, for a client in
// another process or on another node: what the client sends (ClientInfo)
// and what the server answers (ConnectionInfo). The designs carry them in
// RPCs of their own (Catfish's connect RPC, the NAM index's mailbox RPC),
// with whatever else their clients need after them.
//
// ClientInfo, little-endian:
//   u32 kWireVersion
//   u32 client node        (the client's own id)
//   region response ring   (rpc::put_region: node, id, rkey, base, length)
//   u32 response_ring_bytes
// ConnectionInfo:
//   u32 kWireVersion
//   u32 worker node, u32 connection id, u8 mode (0 polling, 1 event),
//   u8 awaits_first_message (0/1), region request ring,
//   u32 request_ring_bytes, i64 heartbeat_interval_ns
//
// Every field is checked on decode (version, node ids, the ring region
// covering its ring and control words without wrapping the address space,
// the ring size, enum and flag values); a request that fails is refused
// naming the field. What follows either is the caller's (who checks that
// nothing is left over).
//
// Addressing: a server WRITEs responses and heartbeats to the node the
// set-up RPC came from (its own name for the client), not to the id the
// request claims: on verbs a server process may know a client by another
// id than the client's own when two client processes claim the same one,
// and all server endpoints of that process share that name
// (verbs::Directory::name_client). The claimed id must still be the
// response ring's node (one consistent view of the client's own memory).
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.h"
#include "core/messaging/messaging.h"
#include "core/rpc/message.h"

namespace locus::messaging {

constexpr uint32_t kWireVersion = 1;

void put_client_info(const ClientInfo& info, rpc::Writer& w);
// kInvalidArgument naming the first bad field, its text starting `what`.
StatusOr<ClientInfo> get_client_info(rpc::Reader& r, const std::string& what);

void put_connection_info(const ConnectionInfo& c, rpc::Writer& w);
// kCorruption naming the first bad field, its text starting `what` (the
// server is trusted to be sane, not assumed to be).
StatusOr<ConnectionInfo> get_connection_info(rpc::Reader& r, const std::string& what);

// Why `r` cannot be a region of `bytes` or more (empty if it can).
std::string region_problem(const char* what, const RemoteRegion& r, uint64_t bytes);

}  // namespace locus::messaging
