// Mailboxes: RPC over RDMA-WRITE messaging, as an rpc::Caller beside
// SEND/RECV's RpcClient, for a design whose client calls several servers
// (the NAM index's coarse-grained and hybrid RPCs, index.rpc_transport =
// "mailbox"). Each server gets a connection of its own (a request ring in
// the server's memory, a response ring in the client's: messaging.h), set
// up over an RPC the design's server answers with accept_request(). The
// server's handlers are the ones it would register on its RpcServer, so a
// request costs the same work by name on either transport.
//
// A connection that breaks (a request of unknown fate, the server's
// goodbye, a malformed response: MessagingClient::broken) is set up again
// on the next call to that server: reset(), a new exchange naming the old
// connection, which the server retires (its slot would otherwise stay
// taken: a client whose WRITE failed cannot tell its worker), connect().
// Calls to the other servers go on meanwhile. A set-up that fails backs
// off (MailboxOptions): until the wait is over, calls to that server fail
// at once, naming the wait, instead of each paying a set-up's timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/time.h"
#include "core/messaging/messaging.h"
#include "core/messaging/reconnect_backoff.h"
#include "core/rpc/caller.h"
#include "core/rpc/message.h"
#include "core/transport/endpoint.h"
#include "core/transport/env.h"

namespace locus::messaging {

// A mailbox set-up request: the client's ClientInfo (wire.h), then
//   u32 replaces   the connection it set up before to this server and now
//                  gives up (after a call of unknown fate), or kNoConnection
// answered with the new connection's ConnectionInfo.
constexpr uint32_t kNoConnection = UINT32_MAX;
void put_setup_request(const ClientInfo& info, uint32_t replaces, rpc::Writer& w);

// Claims a connection for `client`, whose set-up RPC came from `from`:
// the server writes to that node (wire.h, "Addressing"). It goes live
// with the client's first message (MessagingClient::connect sends it).
StatusOr<ConnectionInfo> accept_from(MessagingServer& server, NodeId from, ClientInfo client);
// The server's side of a set-up request (the whole of `request`): retires
// the connection it replaces if that is still the client's
// (MessagingServer::retire: never another client's) and accepts the new
// one. Errors name `what`.
StatusOr<ConnectionInfo> accept_request(MessagingServer& server, NodeId from, rpc::Reader& request,
                                        const std::string& what);

struct MailboxStats {
  uint64_t calls = 0;
  uint64_t reconnects = 0;          // broken connections set up again
  uint64_t reconnect_failures = 0;  // ... that failed (the call returned why)
  uint64_t reconnects_deferred = 0;  // calls refused while backing off
};

// After a failed set-up to a server, the next attempt waits min, then
// twice as long after each failure up to max (Catfish's client waits the
// same: core/index/catfish/catfish_client.h).
struct MailboxOptions {
  Nanos reconnect_wait_min_ns = 100 * kMicrosecond;
  Nanos reconnect_wait_max_ns = 100 * kMillisecond;
};

class MailboxCaller final : public rpc::Caller {
 public:
  // Sets up a connection to each of `servers` through `exchange`: the
  // design's RPC to server i carrying put_setup_request(info, replaces),
  // which the server answers with accept_request().
  using Exchange =
      std::function<StatusOr<ConnectionInfo>(uint32_t server, const ClientInfo& info, uint32_t replaces)>;
  static StatusOr<std::unique_ptr<MailboxCaller>> connect(Endpoint& endpoint, std::span<const NodeId> servers,
                                                         const MessagingClientOptions& options, Exchange exchange,
                                                         const MailboxOptions& mailbox = {});

  std::span<std::byte> payload_buffer() override { return staging_; }
  // `server` must be one of the servers given to connect().
  StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) override;

  const MailboxStats& stats() const { return stats_; }
  // What connection i's set-up request sends (tests).
  ClientInfo client_info(uint32_t i) const { return clients_.at(i)->client_info(); }
  // Summed over the connections.
  MessagingClientStats client_stats() const;

 private:
  MailboxCaller(Clock& clock, std::span<const NodeId> servers, Exchange exchange, uint32_t max_request_bytes,
                const MailboxOptions& options)
      : clock_(clock),
        options_(options),
        servers_(servers.begin(), servers.end()),
        exchange_(std::move(exchange)),
        staging_(max_request_bytes) {}
  Status connect_to(uint32_t i);
  // Sets connection i up again after it broke, unless backing off.
  Status reconnect(uint32_t i);

  Clock& clock_;
  MailboxOptions options_;
  std::vector<NodeId> servers_;
  Exchange exchange_;
  std::vector<std::unique_ptr<MessagingClient>> clients_;  // one per server
  std::vector<uint32_t> connections_;                      // each one's connection id at its server
  // Per server: when its next set-up may be tried.
  std::vector<ReconnectBackoff> backoff_;
  std::vector<std::byte> staging_;  // copied into the chosen connection's buffer
  MailboxStats stats_;
};

}  // namespace locus::messaging
