// Connecting a Catfish client over RPC, for clients in another process
// (verbs) or on another node: the wire format of the connect request
// (ClientInfo) and of its answer (ConnectionInfo plus the tree's region,
// which offloading clients READ). CatfishServer::serve_connects answers it;
// CatfishClient::connect(endpoint, rpc, bootstrap, ...) sends it.
//
// Request (kConnectRpc), little-endian:
//   u32 kConnectWireVersion
//   u32 client node        (the client's own id; see below)
//   region response ring   (rpc::put_region: node, id, rkey, base, length)
//   u32 response_ring_bytes
// Answer:
//   u32 kConnectWireVersion
//   u32 worker node, u32 connection id, u8 mode (0 polling, 1 event),
//   u8 awaits_first_message (0/1), region request ring,
//   u32 request_ring_bytes, i64 heartbeat_interval_ns, region tree
//
// Every field is checked on decode (version, node ids, the ring region
// covering its ring and control words without wrapping the address space,
// the ring size, enum and flag values, nothing left over); a request that
// fails gets an error answer naming the field and the server goes on.
//
// Addressing: the server WRITEs responses and heartbeats to the node the
// connect RPC came from (its own name for the client), not to the id the
// request claims: on verbs a server process may know a client by another
// id than the client's own when two client processes claim the same one,
// and all server endpoints of that process share that name
// (verbs::Directory::name_client). The claimed id must still be the
// response ring's node (one consistent view of the client's own memory).
#pragma once

#include <cstdint>

#include "core/common/status.h"
#include "core/index/catfish/messaging.h"
#include "core/rpc/message.h"

namespace locus::catfish {

// The RPC type on the server's connect node (an RpcServer of its own).
constexpr uint16_t kConnectRpc = 1;
constexpr uint32_t kConnectWireVersion = 1;

// The answer: the messaging connection and the tree to offload on.
struct ConnectAnswer {
  ConnectionInfo connection;
  RemoteRegion tree;
};

void put_client_info(const ClientInfo& info, rpc::Writer& w);
// kInvalidArgument naming the first bad field.
StatusOr<ClientInfo> get_client_info(rpc::Reader& r);

void put_connect_answer(const ConnectAnswer& answer, rpc::Writer& w);
// kCorruption naming the first bad field (the server is trusted to be sane,
// not assumed to be).
StatusOr<ConnectAnswer> get_connect_answer(rpc::Reader& r);

}  // namespace locus::catfish
