// A NAM memory server's RPCs (server.h).
#include "core/index/nam/server.h"

#include "core/index/nam/protocol.h"
#include "core/messaging/mailbox.h"
#include "core/messaging/wire.h"

namespace locus::nam {
namespace {
// A leaf pointer a client sends: not null, past the arena's catalog.
bool leaf_pointer(RemotePtr p) { return !p.null() && p.offset() >= kFirstPageOffset; }
}  // namespace

StatusOr<std::unique_ptr<MemoryServer>> MemoryServer::create(Env env, uint32_t server, const NamConfig& config) {
  std::unique_ptr<MemoryServer> m(new MemoryServer(env, config));
  const bool fine = config.distribution == Distribution::kFine;
  const bool hybrid = config.distribution == Distribution::kHybrid;
  LOCUS_ASSIGN_OR_RETURN(m->arena_,
                         Arena::create(env, server, config.region_bytes, config.page_bytes, fine || hybrid, hybrid,
                                       (fine || hybrid) && server == 0 ? config.gc_epoch_slots : 0));
  if (!fine) {
    // A hybrid tree's root starts above its first leaf, so that the
    // server's traversals always end on an inner node.
    m->access_ = std::make_unique<LocalAccess>(*m->arena_, *env.clock);
    LOCUS_RETURN_IF_ERROR(BlinkTree::create_empty(*m->access_, hybrid));
    m->gc_ = std::make_unique<BlinkTree>(*m->access_);
    LOCUS_RETURN_IF_ERROR(m->gc_->set_reclaimer(m->reclaimer_.get()));
  }
  return m;
}

StatusOr<RemotePtr> MemoryServer::find_leaf(Pair x) {
  BlinkTree* t = acquire();
  auto leaf = t->find_child(x, 1);
  release(t);
  return leaf;
}

Status MemoryServer::add_separator(Pair sep, RemotePtr right) {
  BlinkTree* t = acquire();
  Status s = t->add_separator(1, sep, right);
  release(t);
  return s;
}

StatusOr<bool> MemoryServer::join_leaves(Pair high, RemotePtr left, RemotePtr right) {
  BlinkTree* t = acquire();
  auto joined = t->join_children(1, high, left, right);
  release(t);
  return joined;
}

BlinkTree* MemoryServer::acquire() {
  std::lock_guard<ShortMutex> lock(mu_);
  if (free_.empty()) {
    trees_.push_back(std::make_unique<BlinkTree>(*access_));
    // Without a slot (all taken) the reclaimer stops freeing: still safe.
    (void)trees_.back()->set_reclaimer(reclaimer_.get());
    trees_.back()->set_atomic_ranges(config_.atomic_ranges);
    return trees_.back().get();
  }
  BlinkTree* t = free_.back();
  free_.pop_back();
  return t;
}

void MemoryServer::release(BlinkTree* t) {
  std::lock_guard<ShortMutex> lock(mu_);
  free_.push_back(t);
}

Status MemoryServer::collect_garbage() {
  if (config_.distribution == Distribution::kFine) {
    return unimplemented("nam: fine-grained memory servers keep no tree of their own; a compute server collects");
  }
  std::lock_guard<ShortMutex> lock(gc_mu_);
  return config_.distribution == Distribution::kHybrid ? gc_->collect_inner_garbage() : gc_->collect_garbage();
}

TreeStats MemoryServer::tree_stats() const {
  std::lock_guard<ShortMutex> lock(mu_);
  TreeStats sum;
  for (const auto& t : trees_) {
    sum.restarts += t->stats().restarts;
    sum.splits += t->stats().splits;
    sum.root_splits += t->stats().root_splits;
    sum.moved_right += t->stats().moved_right;
    sum.range_rereads += t->stats().range_rereads;
  }
  return sum;
}

Status MemoryServer::attach(rpc::RpcServer& rpc, uint32_t message_bytes) {
  Arena* arena = arena_.get();
  const RemoteRegion region = arena->region().remote();
  LOCUS_RETURN_IF_ERROR(
      rpc.handle(kLayoutRpc, kLayoutWork, [arena, region](const rpc::RequestContext&, rpc::Reader&, rpc::Writer& w) {
        w.put<uint32_t>(arena->server());
        w.put<uint32_t>(arena->page_bytes());
        rpc::put_region(region, w);
        return Status();
      }));
  // Leases are one-sided locks' (fine-grained and hybrid leaves); a
  // coarse-grained tree has none, and the fence is harmless there.
  Transport* transport = env_.transport;
  LOCUS_RETURN_IF_ERROR(rpc.handle(
      kFenceRpc, kFenceWork, [transport](const rpc::RequestContext& ctx, rpc::Reader& r, rpc::Writer&) -> Status {
        uint32_t holder = kInvalidNode;
        if (!r.get(&holder)) return invalid_argument("nam.fence: truncated request");
        if (holder == ctx.client) return invalid_argument("nam.fence: a client cannot fence itself");
        return transport->fence_peer(holder);
      }));
  if (config_.distribution == Distribution::kFine) return Status();
  if (config_.rpc_transport == RpcTransport::kMailbox) {
    return rpc.handle(kMailboxRpc, kMailboxWork,
                      [this](const rpc::RequestContext& ctx, rpc::Reader& r, rpc::Writer& w) -> Status {
                        messaging::MessagingServer* mailbox = mailbox_.load(std::memory_order_acquire);
                        if (mailbox == nullptr) return unavailable("nam.mailbox: the mailboxes are not set up yet");
                        LOCUS_ASSIGN_OR_RETURN(const messaging::ConnectionInfo conn,
                                               messaging::accept_request(*mailbox, ctx.client, r, "nam.mailbox request"));
                        messaging::put_connection_info(conn, w);
                        if (!w.ok()) return internal_error("nam.mailbox: the answer exceeds the RPC message limit");
                        return Status();
                      });
  }
  return attach_index([&rpc](uint16_t type, const char* work, rpc::Handler h) { return rpc.handle(type, work, std::move(h)); },
                      message_bytes);
}

Status MemoryServer::attach_mailbox(std::unique_ptr<messaging::MessagingServer> mailbox, uint32_t message_bytes) {
  messaging::MessagingServer* m = mailbox.get();
  LOCUS_RETURN_IF_ERROR(attach_index(
      [m](uint16_t type, const char* work, rpc::Handler h) {
        return m->handle(type, work,
                         [h = std::move(h)](const messaging::MessageContext& c, rpc::Reader& r, rpc::Writer& w) {
                           const rpc::RequestContext ctx{c.client, c.type, c.request_id};
                           return h(ctx, r, w);
                         });
      },
      message_bytes));
  mailbox_owned_ = std::move(mailbox);
  mailbox_.store(m, std::memory_order_release);
  return Status();
}

messaging::MessagingServerStats MemoryServer::mailbox_stats() const {
  const messaging::MessagingServer* m = mailbox_.load(std::memory_order_acquire);
  return m == nullptr ? messaging::MessagingServerStats{} : m->stats();
}

Status MemoryServer::attach_index(const Register& add, uint32_t message_bytes) {
  if (config_.distribution == Distribution::kHybrid) return attach_hybrid(add);
  const uint32_t max_pairs = pairs_per_response(message_bytes);
  LOCUS_RETURN_IF_ERROR(
      add(kRangeRpc, kRangeWork, [this, max_pairs](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) {
        Pair from;
        uint64_t to_key = 0;
        uint32_t limit = 0;
        if (!r.get(&from.key) || !r.get(&from.payload) || !r.get(&to_key) || !r.get(&limit)) {
          return invalid_argument("nam.range: truncated request");
        }
        // One pair more than fits says whether the range goes on.
        const uint32_t want = limit == 0 ? max_pairs + 1 : std::min(limit, max_pairs + 1);
        std::vector<Pair> pairs;
        BlinkTree* t = acquire();
        Status s = t->range(from, to_key, want, &pairs);
        release(t);
        LOCUS_RETURN_IF_ERROR(s);
        const bool more = pairs.size() > max_pairs;
        if (more) pairs.resize(max_pairs);
        w.put<uint32_t>(more ? 1 : 0);
        w.put<uint32_t>(static_cast<uint32_t>(pairs.size()));
        for (const Pair& x : pairs) {
          w.put(x.key);
          w.put(x.payload);
        }
        return Status();
      }));
  auto pair_handler = [this](bool insert) {
    return [this, insert](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) -> Status {
      Pair x;
      if (!r.get(&x.key) || !r.get(&x.payload)) return invalid_argument("nam: truncated insert or remove");
      BlinkTree* t = acquire();
      Status s;
      if (insert) {
        s = t->insert(x);
      } else {
        auto found = t->remove(x);
        s = found.status();
        if (found.is_ok()) w.put<uint8_t>(*found ? 1 : 0);
      }
      release(t);
      return s;
    };
  };
  LOCUS_RETURN_IF_ERROR(add(kInsertRpc, kInsertWork, pair_handler(true)));
  return add(kRemoveRpc, kRemoveWork, pair_handler(false));
}

Status MemoryServer::attach_hybrid(const Register& add) {
  LOCUS_RETURN_IF_ERROR(
      add(kLeafRpc, kLeafWork, [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) -> Status {
        Pair x;
        if (!r.get(&x.key) || !r.get(&x.payload)) return invalid_argument("nam.leaf: truncated request");
        LOCUS_ASSIGN_OR_RETURN(RemotePtr leaf, find_leaf(x));
        w.put(leaf.raw);
        return Status();
      }));
  LOCUS_RETURN_IF_ERROR(
      add(kJoinRpc, kJoinWork, [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer& w) -> Status {
        Pair high;
        RemotePtr left, right;
        if (!r.get(&high.key) || !r.get(&high.payload) || !r.get(&left.raw) || !r.get(&right.raw)) {
          return invalid_argument("nam.join: truncated request");
        }
        if (!leaf_pointer(left) || !leaf_pointer(right)) {
          return invalid_argument("nam.join: a leaf pointer is null or in no arena");
        }
        LOCUS_ASSIGN_OR_RETURN(bool joined, join_leaves(high, left, right));
        w.put<uint8_t>(joined ? 1 : 0);
        return Status();
      }));
  return add(kSeparatorRpc, kSeparatorWork,
                    [this](const rpc::RequestContext&, rpc::Reader& r, rpc::Writer&) -> Status {
                      Pair sep;
                      RemotePtr right;
                      if (!r.get(&sep.key) || !r.get(&sep.payload) || !r.get(&right.raw)) {
                        return invalid_argument("nam.separator: truncated request");
                      }
                      if (!leaf_pointer(right)) {
                        return invalid_argument("nam.separator: the new leaf's pointer is null or in no arena");
                      }
                      return add_separator(sep, right);
                    });
}

}  // namespace locus::nam
