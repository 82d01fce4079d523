// Connecting a Catfish client over RPC, for clients in another process
// (verbs) or on another node: the request is the messaging connection's
// ClientInfo, the answer its ConnectionInfo plus the tree's region, which
// offloading clients READ (core/messaging/wire.h has the format of both and
// how the server addresses the client). CatfishServer::serve_connects
// answers it; CatfishClient::connect(endpoint, rpc, bootstrap, ...) sends
// it. Nothing may follow either: leftover bytes are refused.
#pragma once

#include <cstdint>

#include "core/common/status.h"
#include "core/index/catfish/messaging.h"
#include "core/messaging/wire.h"
#include "core/rpc/message.h"

namespace locus::catfish {

// The RPC type on the server's connect node (an RpcServer of its own).
constexpr uint16_t kConnectRpc = 1;
// How errors about a connect request name it.
inline constexpr const char* kConnectRequestName = "catfish connect request";

// The answer: the messaging connection and the tree to offload on.
struct ConnectAnswer {
  ConnectionInfo connection;
  RemoteRegion tree;
};

// The request is messaging::put_client_info's; kInvalidArgument naming the
// first bad field.
StatusOr<ClientInfo> get_client_info(rpc::Reader& r);

void put_connect_answer(const ConnectAnswer& answer, rpc::Writer& w);
// kCorruption naming the first bad field (the server is trusted to be sane,
// not assumed to be).
StatusOr<ConnectAnswer> get_connect_answer(rpc::Reader& r);

}  // namespace locus::catfish
