// NessieNode: the tables one Nessie node holds (paper section 4.1): its
// index table, registered for remote READ and CAS, and its data table,
// registered for remote READ and WRITE. Nothing on the node's CPU touches
// them after the load: clients reach every node's tables, their own
// node's included, only through the NIC (CAS is atomic only with respect
// to the NIC's other operations). The node answers one RPC,
// "nessie.layout", which tells a client where the tables are and grants
// it a slice of the data table for its own puts (a control-path call made
// once per client, never on the data path); in NessieSD and NessieHY it
// grants a request ring instead (requests.h), and the node's server
// thread changes the tables (node_store.h). A client that ends gives its
// slice and rings back by the same RPC (layout.h, kLayoutRelease), so a
// node serves one `locus run` after another: slices never held go first,
// in order, then those given back, whose state words tell the next client
// which of their entries still hold data (the old client zeroed the free
// ones' before giving the slice back).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/short_mutex.h"
#include "core/index/nessie/layout.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/env.h"

namespace locus::nessie {

class RequestServer;

class NessieNode {
 public:
  // Allocates, initialises (every ITE never used) and registers the
  // tables of data table `dti`.
  static StatusOr<std::unique_ptr<NessieNode>> create(Env env, uint32_t dti, const Geometry& g);
  ~NessieNode();
  NessieNode(const NessieNode&) = delete;
  NessieNode& operator=(const NessieNode&) = delete;

  Status attach(rpc::RpcServer& rpc);
  // NessieSD/NessieHY: the node's server threads' request rings, granted
  // by the layout RPC in turn over the threads (set before any client
  // connects).
  void set_requests(std::vector<RequestServer*> requests) { requests_ = std::move(requests); }
  const std::vector<RequestServer*>& requests() const { return requests_; }

  // Direct access for the load, before any client runs.
  uint64_t* ite(uint64_t index) { return reinterpret_cast<uint64_t*>(index_.data()) + index; }
  std::byte* dte(uint64_t entry) { return data_.data() + entry * geometry_.dte_bytes(); }
  const Geometry& geometry() const { return geometry_; }
  uint32_t dti() const { return dti_; }
  // Slices granted at least once.
  uint32_t slices_granted() const;

 private:
  NessieNode(Env env, uint32_t dti, const Geometry& g)
      : env_(env), dti_(dti), geometry_(g), slice_owner_(g.slices, kInvalidNode), slice_used_(g.slices, 0) {}

  // A free slice for `client` (a never-used one first): its number, or
  // geometry_.slices if none is left. *used: an earlier client held it.
  uint32_t grant_slice(NodeId client, bool* used);
  // The layout RPC's kLayoutRelease (layout.h) from `client`.
  Status release(NodeId client, rpc::Reader& in);
  // Starts over (reset) or gives back (release) ring `ring` of `client`
  // on the server thread that owns it (requests.h), or says it is not
  // the client's.
  Status ring_request(uint32_t ring, NodeId client, bool release);

  Env env_;
  uint32_t dti_;
  Geometry geometry_;
  AlignedBuffer index_;
  AlignedBuffer data_;
  Region index_region_;
  Region data_region_;
  bool index_registered_ = false;
  bool data_registered_ = false;
  std::vector<RequestServer*> requests_;
  std::atomic<uint32_t> next_thread_{0};  // whose rings the next grant takes first
  // Who holds each slice (kInvalidNode: nobody) and whether one ever did;
  // RPC workers may grant and release at once.
  mutable ShortMutex slices_mu_;
  std::vector<NodeId> slice_owner_;
  std::vector<uint8_t> slice_used_;
};

}  // namespace locus::nessie
