// NessieNode: see node.h.
#include "core/index/nessie/node.h"

#include <string>

#include "core/index/nessie/requests.h"

namespace locus::nessie {

StatusOr<std::unique_ptr<NessieNode>> NessieNode::create(Env env, uint32_t dti, const Geometry& g) {
  if (!geometry_ok(g)) return invalid_argument("nessie: inconsistent table geometry for node " + std::to_string(dti));
  std::unique_ptr<NessieNode> n(new NessieNode(env, dti, g));
  const uint64_t index_bytes = g.index_entries * sizeof(uint64_t);
  const uint64_t data_bytes = g.data_entries * g.dte_bytes();
  n->index_ = AlignedBuffer(index_bytes);
  n->data_ = AlignedBuffer(data_bytes);
  if (!n->index_.valid() || !n->data_.valid()) {
    return resource_exhausted("nessie: cannot allocate node " + std::to_string(dti) + "'s tables (" +
                              std::to_string(index_bytes) + " + " + std::to_string(data_bytes) + " bytes)");
  }
  for (uint64_t i = 0; i < g.index_entries; ++i) *n->ite(i) = kIteNeverUsed;
  LOCUS_ASSIGN_OR_RETURN(n->index_region_,
                         env.transport->register_memory(n->index_.data(), index_bytes, kRemoteRead | kRemoteAtomic));
  n->index_registered_ = true;
  LOCUS_ASSIGN_OR_RETURN(n->data_region_,
                         env.transport->register_memory(n->data_.data(), data_bytes, kRemoteRead | kRemoteWrite));
  n->data_registered_ = true;
  return n;
}

NessieNode::~NessieNode() {
  if (data_registered_) (void)env_.transport->deregister_memory(data_region_);
  if (index_registered_) (void)env_.transport->deregister_memory(index_region_);
}

uint32_t NessieNode::slices_granted() const {
  std::lock_guard<ShortMutex> lock(slices_mu_);
  uint32_t n = 0;
  for (uint8_t u : slice_used_) n += u;
  return n;
}

uint32_t NessieNode::grant_slice(NodeId client, bool* used) {
  std::lock_guard<ShortMutex> lock(slices_mu_);
  uint32_t pick = geometry_.slices;
  for (uint32_t k = 0; k < geometry_.slices; ++k) {
    if (slice_owner_[k] != kInvalidNode) continue;
    if (slice_used_[k] == 0) {
      pick = k;  // never held: nothing to learn about its entries
      break;
    }
    if (pick == geometry_.slices) pick = k;
  }
  if (pick == geometry_.slices) return pick;
  *used = slice_used_[pick] != 0;
  slice_owner_[pick] = client;
  slice_used_[pick] = 1;
  return pick;
}

Status NessieNode::release(NodeId client, rpc::Reader& in) {
  uint64_t first = 0;
  uint32_t ring = kNoRing;
  if (!in.get(&first) || !in.get(&ring) || !in.at_end()) return invalid_argument("nessie.layout: malformed release");
  if (first != 0) {
    std::lock_guard<ShortMutex> lock(slices_mu_);
    // Slices are slice_entries apart from slice_first(0).
    const uint64_t base = geometry_.slice_first(0), step = geometry_.slice_entries;
    const bool starts_slice =
        first >= base && step > 0 && (first - base) % step == 0 && (first - base) / step < geometry_.slices;
    if (!starts_slice || slice_owner_[(first - base) / step] != client) {
      return invalid_argument("nessie.layout: the slice at entry " + std::to_string(first) +
                              " is not this client's to give back");
    }
    slice_owner_[(first - base) / step] = kInvalidNode;
  }
  return ring == kNoRing ? Status() : ring_request(ring, client, /*release=*/true);
}

Status NessieNode::ring_request(uint32_t ring, NodeId client, bool release) {
  for (RequestServer* r : requests_) {
    if (r->owns(ring)) return release ? r->release(ring, client) : r->reset(ring, client);
  }
  return invalid_argument("nessie.layout: ring " + std::to_string(ring) + " is not this client's");
}

Status NessieNode::attach(rpc::RpcServer& rpc) {
  return rpc.handle(
      kLayoutRpcType, kLayoutWork, [this](const rpc::RequestContext& ctx, rpc::Reader& in, rpc::Writer& out) {
        uint8_t want_slice = 0;
        if (!in.get(&want_slice)) return invalid_argument("nessie.layout: malformed request");
        if (want_slice == kLayoutRelease) return release(ctx.client, in);
        if (want_slice != kLayoutOnly && want_slice != kLayoutAndSlice) {
          return invalid_argument("nessie.layout: malformed request");
        }
        RingGrant ring;
        if (!in.at_end()) {
          // A ring request: the client's response ring for this node (1), or
          // a ring of its own to start over (2).
          uint8_t want_ring = 0;
          if (!in.get(&want_ring) || (want_ring != 1 && want_ring != 2)) {
            return invalid_argument("nessie.layout: malformed request");
          }
          if (requests_.empty()) return invalid_argument("nessie.layout: this node has no request rings (index.mode)");
          if (want_ring == 2) {
            uint32_t id = 0;
            if (!in.get(&id) || !in.at_end()) return invalid_argument("nessie.layout: malformed request");
            LOCUS_RETURN_IF_ERROR(ring_request(id, ctx.client, /*release=*/false));
            ring.ring = id;
            put_layout(geometry_, {dti_, index_region_.remote(), data_region_.remote()}, 0, false, ring, out);
            return Status();
          }
          RemoteRegion responses;
          uint64_t offset = 0;
          if (!rpc::get_region(in, &responses) || !in.get(&offset) || !in.at_end()) {
            return invalid_argument("nessie.layout: malformed request");
          }
          if (offset > responses.length || responses.length - offset < geometry_.ring_bytes) {
            return invalid_argument("nessie.layout: the response ring lies outside its region");
          }
          // Responses go to the caller as this node knows it, whatever node
          // its region names: a transport may have renamed a client whose
          // claimed id clashed with another's (two `locus run`s against the
          // same servers), and a client's region can name any node.
          responses.node = ctx.client;
          // In turn over the threads; one whose rings are all granted passes.
          const uint32_t first = next_thread_.fetch_add(1, std::memory_order_relaxed);
          for (size_t k = 0; k < requests_.size() && ring.ring == kNoRing; ++k) {
            ring = requests_[(first + k) % requests_.size()]->grant(remote_at(responses, offset));
          }
        }
        uint64_t first = 0;
        bool used = false;
        if (want_slice == kLayoutAndSlice && geometry_.coupled == 0) {
          const uint32_t slice = grant_slice(ctx.client, &used);
          if (slice < geometry_.slices) first = geometry_.slice_first(slice);
        }
        put_layout(geometry_, {dti_, index_region_.remote(), data_region_.remote()}, first, used, ring, out);
        return Status();
      });
}

}  // namespace locus::nessie
