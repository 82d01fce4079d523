// NessieClient: connecting, its registered buffer, and the one-sided steps
// every operation is made of (see client.h). Buffer layout: kWords 8-byte
// words (ITE reads, CAS results, words to WRITE), the keys and metadata of
// one DTE per migration level, one whole DTE, and the recycle words a
// reclaim scan reads.
#include "core/index/nessie/client.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace locus::nessie {
namespace {
constexpr uint32_t kWords = 4;  // [0] READ, [1] CAS result, [2] WRITE source, [3] spare
constexpr uint64_t round8(uint64_t n) { return (n + 7) / 8 * 8; }
}  // namespace

ClientStats& ClientStats::operator+=(const ClientStats& o) {
  gets += o.gets;
  puts += o.puts;
  deletes += o.deletes;
  attempts += o.attempts;
  conflicts += o.conflicts;
  expired += o.expired;
  reverse_changes += o.reverse_changes;
  cas_failures += o.cas_failures;
  previous_versions += o.previous_versions;
  migrations += o.migrations;
  migration_aborts += o.migration_aborts;
  undone += o.undone;
  restore_failures += o.restore_failures;
  staged += o.staged;
  reclaimed += o.reclaimed;
  slice_waits += o.slice_waits;
  ite_reads += o.ite_reads;
  dte_reads += o.dte_reads;
  backoff_ns += o.backoff_ns;
  cache_hits += o.cache_hits;
  cas_resolved += o.cas_resolved;
  stage_failures += o.stage_failures;
  reclaim_scans += o.reclaim_scans;
  server_requests += o.server_requests;
  ring_resets += o.ring_resets;
  rdma_ops += o.rdma_ops;
  local_ops += o.local_ops;
  local_requests += o.local_requests;
  adopted += o.adopted;
  return *this;
}

StatusOr<std::unique_ptr<NessieClient>> NessieClient::connect(Endpoint& endpoint, rpc::RpcClient& rpc,
                                                              std::span<const NodeId> servers,
                                                              const ClientOptions& options, const LocalTables* local) {
  if (servers.empty()) return invalid_argument("nessie: a client needs at least one node");
  if (local != nullptr && (local->node >= servers.size() || local->index == nullptr || local->data == nullptr)) {
    return invalid_argument("nessie: a client's local tables name no node of the " + std::to_string(servers.size()));
  }
  std::unique_ptr<NessieClient> c(new NessieClient(endpoint, options));
  if (local != nullptr) c->local_ = *local;
  LOCUS_RETURN_IF_ERROR(c->init(rpc, servers));
  return c;
}

NessieClient::~NessieClient() {
  if (registered_) (void)ep_.transport().deregister_memory(region_);
  if (request_registered_) (void)ep_.transport().deregister_memory(request_region_);
  if (rings_registered_) (void)ep_.transport().deregister_memory(rings_region_);
}

Status NessieClient::init(rpc::RpcClient& rpc, std::span<const NodeId> servers) {
  if (ep_.transport().limits().max_send_wr < kScanBatch) {
    return resource_exhausted("nessie client: the transport takes " +
                              std::to_string(ep_.transport().limits().max_send_wr) +
                              " outstanding requests, fewer than a reclaim batch of " + std::to_string(kScanBatch));
  }
  const size_t n = servers.size();
  nodes_.resize(n);
  const bool coupled = options_.mode != Mode::kClient;
  // Every node's layout; the slice from the first node, from the client's
  // own id (or its local node) on, that still has one to grant.
  const size_t first_home = local_.index != nullptr ? local_.node : ep_.node_id() % n;
  bool have_slice = false;
  bool slice_used = false;
  rpc_ = &rpc;
  servers_.assign(servers.begin(), servers.end());
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (first_home + k) % n;
    rpc::Writer w(rpc.payload_buffer());
    w.put<uint8_t>(have_slice ? kLayoutOnly : kLayoutAndSlice);
    LOCUS_ASSIGN_OR_RETURN(auto body, rpc.call(servers[i], kLayoutRpcType, w.size()));
    rpc::Reader r(body);
    Geometry g;
    uint64_t first = 0;
    RingGrant none;
    bool used = false;
    if (!get_layout(r, &g, &nodes_[i], &first, &used, &none) || !geometry_ok(g) || g.nodes != n || nodes_[i].dti != i ||
        (g.coupled != 0) != coupled) {
      return corruption("nessie: node " + std::to_string(servers[i]) + " sent an invalid layout" +
                        ((g.coupled != 0) != coupled ? " (it serves another index.mode)" : ""));
    }
    if (k > 0 && g != g_) {
      return corruption("nessie: node " + std::to_string(servers[i]) + "'s table geometry differs from node " +
                        std::to_string(servers[first_home]) + "'s");
    }
    g_ = g;
    if (first != 0 && !have_slice) {
      home_ = static_cast<uint32_t>(i);
      slice_first_ = first;
      slice_used = used;
      have_slice = true;
    }
  }
  if (coupled) {
    // No slice: the nodes write every DTE. A request ring on each node.
    have_slice = true;
    LOCUS_RETURN_IF_ERROR(init_channels());
    for (size_t i = 0; i < n; ++i) {
      rpc::Writer w(rpc.payload_buffer());
      w.put<uint8_t>(kLayoutOnly);
      w.put<uint8_t>(1);
      rpc::put_region(rings_region_.remote(), w);
      w.put<uint64_t>(uint64_t{i} * g_.ring_bytes);
      LOCUS_ASSIGN_OR_RETURN(auto body, rpc.call(servers[i], kLayoutRpcType, w.size()));
      rpc::Reader r(body);
      Geometry g;
      NodeTables t;
      uint64_t first = 0;
      bool used = false;
      if (!get_layout(r, &g, &t, &first, &used, &channels_[i].grant) || g != g_) {
        return corruption("nessie: node " + std::to_string(servers[i]) + " sent an invalid layout");
      }
      if (channels_[i].grant.ring == kNoRing || channels_[i].grant.requests.length != g_.ring_bytes) {
        return resource_exhausted("nessie: node " + std::to_string(servers[i]) +
                                  " has no request ring left for another client (sized for run.clients)");
      }
      if (local(static_cast<uint32_t>(i)) && !local_.requests.empty()) {
        LOCUS_RETURN_IF_ERROR(attach_local(static_cast<uint32_t>(i)));
      }
    }
  }
  if (!have_slice) {
    return resource_exhausted("nessie: no node has a data-table slice left for another client (sized for run.clients)");
  }
  deadline_ns_ = static_cast<Nanos>(g_.expiry_ns - g_.clock_skew_ns);
  entry_state_.assign(g_.slice_entries, EntryState::kFree);
  free_.reserve(g_.slice_entries);
  for (uint32_t i = g_.slice_entries; i > 0; --i) free_.push_back(i - 1);

  chain_.resize(uint64_t{options_.max_migrate_depth} + 1);
  if (options_.cache_entries > 0) {
    cache_ = std::make_unique<DteCache>(options_.cache_entries, g_.key_bytes, g_.value_bytes);
  }
  const uint64_t meta_stride = round8(g_.meta_bytes());
  const uint64_t levels = uint64_t{options_.max_migrate_depth} + 2;
  const uint64_t words_bytes = kWords * sizeof(uint64_t);
  const uint64_t bytes = words_bytes + levels * meta_stride + g_.dte_bytes() + kScanBatch * sizeof(uint64_t);
  buffer_ = AlignedBuffer(bytes);
  if (!buffer_.valid()) return resource_exhausted("nessie client: cannot allocate " + std::to_string(bytes) + " bytes");
  LOCUS_ASSIGN_OR_RETURN(region_, ep_.transport().register_memory(buffer_.data(), bytes, kLocalOnly));
  registered_ = true;
  words_ = buffer_.data();
  meta_ = words_ + words_bytes;
  entry_ = meta_ + levels * meta_stride;
  scan_ = entry_ + g_.dte_bytes();
  if (slice_used) LOCUS_RETURN_IF_ERROR(adopt_slice());
  return Status();
}

std::byte* NessieClient::meta_at(uint32_t level) { return meta_ + level * round8(g_.meta_bytes()); }

WorkRequest NessieClient::request(Opcode op, const RemoteAddr& to, void* local, uint32_t bytes) {
  WorkRequest wr;
  wr.wr_id = ep_.next_wr_id();
  wr.op = op;
  wr.remote = to;
  wr.local = {local, bytes, region_.lkey};
  return wr;
}

Status NessieClient::read_ite_now(Slot slot, uint64_t* out) {
  ++stats_.ite_reads;
  if (local(slot.node)) {
    // A load of the word the NIC's CASes change atomically.
    ++stats_.local_ops;
    *out = __atomic_load_n(local_.index + slot.index, __ATOMIC_ACQUIRE);
    return Status();
  }
  ++stats_.rdma_ops;
  std::byte* into = words_;
  LOCUS_RETURN_IF_ERROR(
      ep_.execute(request(Opcode::kRead, remote_at(nodes_[slot.node].index, slot.index * sizeof(uint64_t)), into, 8)));
  std::memcpy(out, into, sizeof *out);
  return Status();
}

Status NessieClient::read_ite(Slot slot, uint64_t* out) {
  LOCUS_RETURN_IF_ERROR(read_ite_now(slot, out));
  // Every decision on what was read (an ITE compared, a DTE used) is void
  // once the attempt has run past its deadline: check after each READ.
  return check_deadline();
}

Status NessieClient::cas_ite(Slot slot, uint64_t expected, uint64_t desired, uint64_t* old) {
  std::byte* into = words_ + 8;
  WorkRequest wr = request(Opcode::kCas, remote_at(nodes_[slot.node].index, slot.index * sizeof(uint64_t)), into, 8);
  wr.compare_add = expected;
  wr.swap = desired;
  // Through the NIC even on the client's own node: CAS is atomic only
  // with respect to the NIC's other operations.
  ++stats_.rdma_ops;
  LOCUS_RETURN_IF_ERROR(ep_.execute(wr));
  std::memcpy(old, into, sizeof *old);
  if (*old != expected) ++stats_.cas_failures;
  return Status();
}

Status NessieClient::cas_known(Slot slot, uint64_t expected, uint64_t desired, uint64_t ours, bool* applied) {
  uint64_t old = 0;
  const Status cas = cas_ite(slot, expected, desired, &old);
  if (cas.is_ok()) {
    *applied = old == expected;
    return Status();
  }
  // The completion failed (a lost reply, a broken connection): the CAS
  // may or may not have been applied. The ITE as it is now tells when it
  // holds a value only this client changes (one naming a DTE of its own
  // that is not valid), or either side of the CAS.
  uint64_t now = 0;
  if (!read_ite_now(slot, &now).is_ok()) return cas;
  if (ours == desired) {
    *applied = now == desired;
  } else if (ours == expected) {
    *applied = now != expected;
  } else if (now == desired || now == expected) {
    *applied = now == desired;
  } else {
    return cas;  // unknown
  }
  ++stats_.cas_resolved;
  return Status();
}

Status NessieClient::make_valid(uint64_t ite) {
  // A WRITE whose completion failed may have landed or not; writing the
  // same word again is harmless, so it is retried, within the attempt's
  // expiry period: a dead node fails every WRITE only after its queue
  // pair's retries (0.54 s by default), and max_attempts of those held
  // the call (and the run's end) for minutes.
  Status s;
  for (uint32_t i = 0; i < options_.max_attempts; ++i) {
    s = write_word(ite, kStateOffset, kDteValid | kDteWatermark);
    if (s.is_ok()) return s;
    if (!check_deadline().is_ok()) break;
  }
  return s;
}

Status NessieClient::read_dte(uint64_t ite, uint32_t offset, uint32_t bytes, std::byte* into) {
  if (!g_.names_entry(ite)) {
    return corruption("nessie: an index entry (" + std::to_string(ite) + ") names no data-table entry");
  }
  ++stats_.dte_reads;
  const uint64_t at = g_.dte_of(ite) * g_.dte_bytes() + offset;
  if (local(g_.dti_of(ite))) {
    load_dte(at, bytes, into);
    return check_deadline();
  }
  ++stats_.rdma_ops;
  LOCUS_RETURN_IF_ERROR(ep_.execute(request(Opcode::kRead, remote_at(nodes_[g_.dti_of(ite)].data, at), into, bytes)));
  return check_deadline();
}

Status NessieClient::write_dte(uint64_t entry, uint32_t offset, uint32_t bytes, std::byte* from) {
  const uint64_t at = entry * g_.dte_bytes() + offset;
  if (local(home_)) {
    store_dte(at, bytes, from);
    return Status();
  }
  ++stats_.rdma_ops;
  return ep_.execute(request(Opcode::kWrite, remote_at(nodes_[home_].data, at), from, bytes));
}

Status NessieClient::write_word(uint64_t ite, uint32_t offset, uint64_t value) {
  const uint64_t at = g_.dte_of(ite) * g_.dte_bytes() + offset;
  if (local(g_.dti_of(ite))) {
    // A state or recycle word: a release store, after the DTE's bytes.
    ++stats_.local_ops;
    __atomic_store_n(reinterpret_cast<uint64_t*>(local_.data + at), value, __ATOMIC_RELEASE);
    return Status();
  }
  ++stats_.rdma_ops;
  std::byte* from = words_ + 16;
  std::memcpy(from, &value, sizeof value);
  return ep_.execute(request(Opcode::kWrite, remote_at(nodes_[g_.dti_of(ite)].data, at), from, 8));
}

Status NessieClient::check_deadline() {
  if (ep_.env().clock->now() - attempt_start_ < deadline_ns_) return Status();
  ++stats_.expired;
  return Status(StatusCode::kAborted, "the attempt ran past the expiry period (index.expiry_ms)");
}

Status NessieClient::conflict(const char* why) {
  ++stats_.conflicts;
  return Status(StatusCode::kAborted, why);
}

}  // namespace locus::nessie
