// CatfishServer: set-up, the three handlers and stats. See catfish_server.h.
#include "core/index/catfish/catfish_server.h"

#include <string>

#include "core/index/catfish/connect_rpc.h"
#include "core/messaging/mailbox.h"

namespace locus::catfish {

void put_rect(rpc::Writer& w, const Rect& r) {
  w.put(r.x_min);
  w.put(r.y_min);
  w.put(r.x_max);
  w.put(r.y_max);
}

bool get_rect(rpc::Reader& r, Rect* out) {
  return r.get(&out->x_min) && r.get(&out->y_min) && r.get(&out->x_max) && r.get(&out->y_max) &&
         out->x_min <= out->x_max && out->y_min <= out->y_max;
}

CatfishServer::CatfishServer(const CatfishServerOptions& options, Env setup_env)
    : options_(options), setup_env_(setup_env) {}

CatfishServer::~CatfishServer() {
  // Reverse order of init: the messaging layer first, then the tree's region.
  messaging_.reset();
  if (registered_) (void)setup_env_.transport->deregister_memory(tree_region_);
}

StatusOr<std::unique_ptr<CatfishServer>> CatfishServer::create(std::vector<Env> worker_envs,
                                                               const CatfishServerOptions& options) {
  if (worker_envs.empty()) return invalid_argument("catfish server: needs at least one worker");
  if (options.result_ns < 0) return invalid_argument("catfish server: result_ns must not be negative");
  std::unique_ptr<CatfishServer> s(new CatfishServer(options, worker_envs.front()));
  LOCUS_RETURN_IF_ERROR(s->init(std::move(worker_envs)));
  return s;
}

Status CatfishServer::init(std::vector<Env> worker_envs) {
  LOCUS_ASSIGN_OR_RETURN(store_, Store::create(options_.store));
  LOCUS_ASSIGN_OR_RETURN(tree_region_, setup_env_.transport->register_memory(store_->region(), store_->region_bytes(),
                                                                             kRemoteRead));
  registered_ = true;
  tree_remote_ = tree_region_.remote();
  scratch_.resize(worker_envs.size());
  for (auto& v : scratch_) v.reserve(1024);
  worker_envs_ = worker_envs;
  LOCUS_ASSIGN_OR_RETURN(messaging_, MessagingServer::create(std::move(worker_envs), options_.messaging));
  return register_handlers();
}

Status CatfishServer::register_handlers() {
  LOCUS_RETURN_IF_ERROR(messaging_->handle(kSearchRequest, "catfish.search",
                                           [this](const MessageContext& ctx, rpc::Reader& rq, rpc::Writer& rs) {
                                             return search(ctx, rq, rs);
                                           }));
  // Writes answer with an empty payload (or the Store's error).
  LOCUS_RETURN_IF_ERROR(messaging_->handle(kInsertRequest, "catfish.insert",
                                           [this](const MessageContext&, rpc::Reader& rq, rpc::Writer&) {
                                             return mutate(kInsertRequest, rq);
                                           }));
  return messaging_->handle(kDeleteRequest, "catfish.delete",
                            [this](const MessageContext&, rpc::Reader& rq, rpc::Writer&) {
                              return mutate(kDeleteRequest, rq);
                            });
}

Status CatfishServer::serve_connects(rpc::RpcServer& rpc) {
  return rpc.handle(kConnectRpc, "catfish.connect",
                    [this](const rpc::RequestContext& ctx, rpc::Reader& rq, rpc::Writer& rs) {
                      Status st = connect(ctx, rq, rs);
                      (st.is_ok() ? counters_.connects : counters_.connects_refused)
                          .fetch_add(1, std::memory_order_relaxed);
                      return st;
                    });
}

Status CatfishServer::connect(const rpc::RequestContext& ctx, rpc::Reader& request, rpc::Writer& response) {
  LOCUS_ASSIGN_OR_RETURN(ClientInfo client, get_client_info(request));
  LOCUS_ASSIGN_OR_RETURN(const ConnectionInfo conn, messaging::accept_from(*messaging_, ctx.client, client));
  put_connect_answer({conn, tree_remote_}, response);
  if (!response.ok()) return internal_error("catfish.connect: the answer exceeds the RPC message limit");
  return Status();
}

Status CatfishServer::load(const Rect& rect, uint64_t id) {
  std::unique_lock lock(tree_mu_);
  return store_->insert(rect, id);
}

Status CatfishServer::search(const MessageContext& ctx, rpc::Reader& request, rpc::Writer& response) {
  Rect q;
  if (!get_rect(request, &q) || !request.at_end()) return invalid_argument("catfish.search: malformed request");
  // Connections are laid out worker by worker (messaging.h), so this is
  // the worker running us: its scratch is ours alone.
  const uint32_t worker = ctx.connection_id / options_.messaging.connections_per_worker;
  std::vector<Hit>& hits = scratch_.at(worker);
  {
    std::shared_lock lock(tree_mu_);
    store_->search(q, &hits);
  }
  counters_.searches.fetch_add(1, std::memory_order_relaxed);
  counters_.hits.fetch_add(hits.size(), std::memory_order_relaxed);
  if (options_.result_ns > 0 && !hits.empty()) {
    worker_envs_[worker].cpu->charge(options_.result_ns * static_cast<Nanos>(hits.size()));
  }
  response.put(static_cast<uint32_t>(hits.size()));
  for (const Hit& h : hits) {
    put_rect(response, h.rect);
    response.put(h.id);
  }
  if (!response.ok()) {
    counters_.truncated.fetch_add(1, std::memory_order_relaxed);
    return out_of_range("catfish.search: " + std::to_string(hits.size()) + " hits exceed the " +
                        std::to_string(options_.messaging.max_response_bytes) + "-byte response limit");
  }
  return Status();
}

Status CatfishServer::mutate(uint16_t type, rpc::Reader& request) {
  const bool is_insert = type == kInsertRequest;
  Rect r;
  uint64_t id = 0;
  if (!get_rect(request, &r) || !request.get(&id) || !request.at_end()) {
    return invalid_argument(std::string(is_insert ? "catfish.insert" : "catfish.delete") + ": malformed request");
  }
  Status st;
  {
    std::unique_lock lock(tree_mu_);
    st = is_insert ? store_->insert(r, id) : store_->remove(r, id);
  }
  if (st.is_ok()) (is_insert ? counters_.inserts : counters_.deletes).fetch_add(1, std::memory_order_relaxed);
  if (!is_insert && st.code() == StatusCode::kNotFound) counters_.delete_misses.fetch_add(1, std::memory_order_relaxed);
  return st;
}

CatfishServerStats CatfishServer::stats() const {
  auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  CatfishServerStats s;
  s.searches = get(counters_.searches);
  s.hits_returned = get(counters_.hits);
  s.inserts = get(counters_.inserts);
  s.deletes = get(counters_.deletes);
  s.delete_misses = get(counters_.delete_misses);
  s.truncated = get(counters_.truncated);
  s.connects = get(counters_.connects);
  s.connects_refused = get(counters_.connects_refused);
  return s;
}

StoreStats CatfishServer::store_stats() const {
  std::shared_lock lock(tree_mu_);
  return store_->stats();
}

Status CatfishServer::check_invariants() const {
  std::unique_lock lock(tree_mu_);
  return store_->check_invariants();
}

}  // namespace locus::catfish
