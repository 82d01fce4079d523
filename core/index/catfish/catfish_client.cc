// CatfishClient: connecting, the two search paths and the writes. See
// catfish_client.h.
#include "core/index/catfish/catfish_client.h"

#include <algorithm>
#include <string>

namespace locus::catfish {

StatusOr<std::unique_ptr<CatfishClient>> CatfishClient::open(Endpoint& endpoint, selector::Selector& selector,
                                                             const CatfishClientOptions& options,
                                                             const Exchange& exchange) {
  if (options.reconnect_wait_min_ns <= 0 || options.reconnect_wait_max_ns < options.reconnect_wait_min_ns) {
    return invalid_argument("catfish client: the reconnect waits must be positive with min <= max");
  }
  std::unique_ptr<CatfishClient> c(new CatfishClient(endpoint, selector, options));
  LOCUS_ASSIGN_OR_RETURN(c->messaging_, MessagingClient::create(endpoint, options.messaging));
  LOCUS_ASSIGN_OR_RETURN(const ConnectAnswer answer, exchange(c->messaging_->client_info()));
  LOCUS_RETURN_IF_ERROR(c->messaging_->connect(answer.connection));
  LOCUS_ASSIGN_OR_RETURN(c->offload_, OffloadClient::connect(endpoint, answer.tree, options.offload));
  selector.attach_server_feedback(answer.connection.server, c->messaging_->heartbeat_slot());
  c->exchange_ = exchange;
  return c;
}

// The tree's region is the server's and stays; the connection (and with
// it the worker, so the node the selector chooses for) may change.
Status CatfishClient::ensure_connected() {
  if (!messaging_->broken()) return Status();
  Clock& clock = *endpoint_.env().clock;
  if (const Nanos wait = reconnect_backoff_.wait_at(clock.now()); wait > 0) clock.sleep_for(wait);
  Status st = messaging_->reset();
  if (st.is_ok()) {
    auto answer = exchange_(messaging_->client_info());
    st = answer.is_ok() ? messaging_->connect(answer->connection) : answer.status();
    if (st.is_ok()) {
      selector_.attach_server_feedback(answer->connection.server, messaging_->heartbeat_slot());
      ++stats_.reconnects;
      reconnect_backoff_.succeeded();
      return Status();
    }
  }
  ++stats_.reconnect_failures;
  reconnect_backoff_.failed(clock.now());
  // connect() may have broken it again (its hello failed); reset() failing
  // leaves it unconnected: either way the next call tries again.
  return Status(st.code(), "catfish: reconnecting to the server: " + st.message());
}

StatusOr<std::unique_ptr<CatfishClient>> CatfishClient::connect(Endpoint& endpoint, CatfishServer& server,
                                                                selector::Selector& selector,
                                                                const CatfishClientOptions& options) {
  return open(endpoint, selector, options, [&server](const ClientInfo& info) -> StatusOr<ConnectAnswer> {
    LOCUS_ASSIGN_OR_RETURN(ConnectionInfo conn, server.accept(info));
    return ConnectAnswer{conn, server.tree_region()};
  });
}

StatusOr<std::unique_ptr<CatfishClient>> CatfishClient::connect(Endpoint& endpoint, rpc::RpcClient& rpc,
                                                                NodeId bootstrap, selector::Selector& selector,
                                                                const CatfishClientOptions& options) {
  return open(endpoint, selector, options, [&rpc, bootstrap](const ClientInfo& info) -> StatusOr<ConnectAnswer> {
    rpc::Writer w(rpc.payload_buffer());
    put_client_info(info, w);
    if (!w.ok()) return internal_error("catfish connect: the request exceeds the RPC message limit");
    auto answer = rpc.call(bootstrap, kConnectRpc, w.size());
    if (!answer.is_ok()) {
      return Status(answer.status().code(),
                    "catfish connect to node " + std::to_string(bootstrap) + ": " + answer.status().message());
    }
    rpc::Reader r(*answer);
    return get_connect_answer(r);
  });
}

Status CatfishClient::search(const Rect& query, std::vector<Hit>* out) {
  // First, since a new connection may be to another worker.
  if (Status st = ensure_connected(); !st.is_ok()) {
    ++stats_.failures;
    out->clear();
    return st;
  }
  const NodeId server = server_node();
  const selector::Path path = selector_.choose(server, endpoint_.env().clock->now());
  return search_by(path, query, out);
}

Status CatfishClient::search_by(selector::Path path, const Rect& query, std::vector<Hit>* out) {
  if (Status st = ensure_connected(); !st.is_ok()) {
    ++stats_.failures;
    out->clear();
    return st;
  }
  const Status st = path == selector::Path::kServer ? search_server(query, out) : search_client(query, out);
  if (!st.is_ok()) ++stats_.failures;
  stats_.hits += out->size();
  return st;
}

Status CatfishClient::search_server(const Rect& query, std::vector<Hit>* out) {
  ++stats_.server_searches;
  return ask_server(query, out);
}

Status CatfishClient::ask_server(const Rect& query, std::vector<Hit>* out) {
  out->clear();
  Clock& clock = *endpoint_.env().clock;
  const Nanos t0 = clock.now();
  rpc::Writer w(messaging_->payload_buffer());
  put_rect(w, query);
  LOCUS_ASSIGN_OR_RETURN(const auto answer, messaging_->call(kSearchRequest, w.size()));
  const Nanos t1 = clock.now();
  selector_.observe(server_node(), selector::Path::kServer, t1 - t0, t1);
  rpc::Reader r(answer);
  uint32_t count = 0;
  if (!r.get(&count) || uint64_t{count} * kHitWireBytes != answer.size() - sizeof(uint32_t)) {
    return corruption("catfish search: malformed answer of " + std::to_string(answer.size()) + " bytes");
  }
  for (uint32_t i = 0; i < count; ++i) {
    Hit h;
    if (!get_rect(r, &h.rect) || !r.get(&h.id)) return corruption("catfish search: malformed hit");
    out->push_back(h);
  }
  return Status();
}

Status CatfishClient::search_client(const Rect& query, std::vector<Hit>* out) {
  ++stats_.client_searches;
  Env& env = endpoint_.env();
  const OffloadStats before = offload_->stats();
  const Nanos t0 = env.clock->now();
  if (Status st = offload_->search(query, out); !st.is_ok()) {
    if (st.code() != StatusCode::kAborted) return st;
    // Contention: the time spent trying counts against the client path.
    const Nanos t1 = env.clock->now();
    selector_.observe(server_node(), selector::Path::kClient, t1 - t0, t1);
    ++stats_.fallbacks;
    return ask_server(query, out);
  }
  const OffloadStats& after = offload_->stats();
  const Nanos t1 = env.clock->now();
  const uint64_t rounds = std::max<uint64_t>(1, after.batches - before.batches);
  selector_.observe(server_node(), selector::Path::kClient, (t1 - t0) / static_cast<Nanos>(rounds), t1);
  selector_.observe_client_step_cost(static_cast<uint32_t>(std::min<uint64_t>(rounds, UINT32_MAX)));
  return Status();
}

Status CatfishClient::write(uint16_t type, const Rect& rect, uint64_t id) {
  LOCUS_RETURN_IF_ERROR(ensure_connected());
  rpc::Writer w(messaging_->payload_buffer());
  put_rect(w, rect);
  w.put(id);
  const auto answer = messaging_->call(type, w.size());
  return answer.status();
}

Status CatfishClient::insert(const Rect& rect, uint64_t id) {
  ++stats_.inserts;
  const Status st = write(kInsertRequest, rect, id);
  if (!st.is_ok()) ++stats_.failures;
  return st;
}

Status CatfishClient::remove(const Rect& rect, uint64_t id) {
  ++stats_.deletes;
  const Status st = write(kDeleteRequest, rect, id);
  if (!st.is_ok() && st.code() != StatusCode::kNotFound) ++stats_.failures;
  return st;
}

}  // namespace locus::catfish
