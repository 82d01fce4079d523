// Mailboxes: see mailbox.h.
#include "core/messaging/mailbox.h"

#include <algorithm>
#include <cstring>

#include "core/messaging/wire.h"

namespace locus::messaging {

void put_setup_request(const ClientInfo& info, uint32_t replaces, rpc::Writer& w) {
  put_client_info(info, w);
  w.put(replaces);
}

StatusOr<ConnectionInfo> accept_from(MessagingServer& server, NodeId from, ClientInfo client) {
  // Written to under the name this server gives the client (wire.h).
  client.node = from;
  client.response_ring.node = from;
  // The slot stays claimed; a client that never sends its first message
  // loses it after first_message_timeout_ns.
  return server.accept(client, /*await_first_message=*/true);
}

StatusOr<ConnectionInfo> accept_request(MessagingServer& server, NodeId from, rpc::Reader& request,
                                        const std::string& what) {
  LOCUS_ASSIGN_OR_RETURN(ClientInfo client, get_client_info(request, what));
  uint32_t replaces = kNoConnection;
  if (!request.get(&replaces)) return invalid_argument(what + ": truncated before the connection it replaces");
  if (!request.at_end()) return invalid_argument(what + ": trailing bytes after the connection it replaces");
  // Not retired if it is no longer this client's: its worker dropped it
  // already (a WRITE to the client failed), or the slot went to another
  // client since; a request naming another client's connection retires
  // nothing either. The new connection is accepted all the same.
  if (replaces != kNoConnection) (void)server.retire(replaces, from, client.response_ring.base_addr);
  return accept_from(server, from, client);
}

StatusOr<std::unique_ptr<MailboxCaller>> MailboxCaller::connect(Endpoint& endpoint, std::span<const NodeId> servers,
                                                                const MessagingClientOptions& options,
                                                                Exchange exchange, const MailboxOptions& mailbox) {
  if (mailbox.reconnect_wait_min_ns <= 0 || mailbox.reconnect_wait_max_ns < mailbox.reconnect_wait_min_ns) {
    return invalid_argument("mailbox: the reconnect waits must be positive with min <= max");
  }
  std::unique_ptr<MailboxCaller> m(
      new MailboxCaller(*endpoint.env().clock, servers, std::move(exchange), options.max_request_bytes, mailbox));
  for (uint32_t i = 0; i < servers.size(); ++i) {
    LOCUS_ASSIGN_OR_RETURN(auto client, MessagingClient::create(endpoint, options));
    m->clients_.push_back(std::move(client));
    m->connections_.push_back(kNoConnection);
    m->backoff_.emplace_back(mailbox.reconnect_wait_min_ns, mailbox.reconnect_wait_max_ns);
    LOCUS_RETURN_IF_ERROR(m->connect_to(i));
  }
  return m;
}

Status MailboxCaller::connect_to(uint32_t i) {
  MessagingClient& c = *clients_[i];
  LOCUS_ASSIGN_OR_RETURN(const ConnectionInfo conn, exchange_(i, c.client_info(), connections_[i]));
  // The old connection is retired (or never was): not named again.
  connections_[i] = conn.connection_id;
  return c.connect(conn);
}

StatusOr<std::span<const std::byte>> MailboxCaller::call(NodeId server, uint16_t type, size_t payload_bytes) {
  const auto it = std::find(servers_.begin(), servers_.end(), server);
  if (it == servers_.end()) {
    return invalid_argument("mailbox: node " + std::to_string(server) + " is not one of this client's servers");
  }
  if (payload_bytes > staging_.size()) {
    return invalid_argument("mailbox: a request of " + std::to_string(payload_bytes) + " bytes exceeds the " +
                            std::to_string(staging_.size()) + "-byte limit");
  }
  const auto i = static_cast<uint32_t>(it - servers_.begin());
  MessagingClient& c = *clients_[i];
  ++stats_.calls;
  if (c.broken()) LOCUS_RETURN_IF_ERROR(reconnect(i));
  if (payload_bytes > 0) std::memcpy(c.payload_buffer().data(), staging_.data(), payload_bytes);
  return c.call(type, payload_bytes);
}

Status MailboxCaller::reconnect(uint32_t i) {
  const std::string node = std::to_string(servers_[i]);
  if (const Nanos wait = backoff_[i].wait_at(clock_.now()); wait > 0) {
    ++stats_.reconnects_deferred;
    return unavailable("mailbox: node " + node + " is unreachable (its last set-up failed); next attempt in " +
                       std::to_string(wait / kMicrosecond) + " us");
  }
  Status st = clients_[i]->reset();
  if (st.is_ok()) st = connect_to(i);
  if (st.is_ok()) {
    ++stats_.reconnects;
    backoff_[i].succeeded();
    return Status();
  }
  ++stats_.reconnect_failures;
  backoff_[i].failed(clock_.now());
  return Status(st.code(), "mailbox: reconnecting to node " + node + ": " + st.message());
}

MessagingClientStats MailboxCaller::client_stats() const {
  MessagingClientStats sum;
  for (const auto& c : clients_) {
    const MessagingClientStats& s = c->stats();
    sum.calls += s.calls;
    sum.error_responses += s.error_responses;
    sum.segments += s.segments;
    sum.stale_responses += s.stale_responses;
    sum.space_waits += s.space_waits;
    sum.wraps += s.wraps;
  }
  return sum;
}

}  // namespace locus::messaging
