// The NAM tree index's [index] keys (read in design.cc). Memory servers
// are the scenario's servers, compute servers the clients' machines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/scenario/index_config.h"

namespace locus::nam {

enum class Distribution { kCoarse, kFine, kHybrid };
enum class Partitioning { kRange, kHash };
enum class RpcTransport { kSendRecv, kMailbox };

struct NamConfig final : scenario::IndexConfig {
  // "coarse": one tree per memory server, keys partitioned, operations by
  // RPC (section 3); "fine": one global tree, nodes round-robin over the
  // memory servers per level, operations by one-sided RDMA (section 4);
  // "hybrid": inner levels as coarse, leaves as fine (section 5).
  Distribution distribution = Distribution::kCoarse;
  Partitioning partitioning = Partitioning::kRange;  // coarse and hybrid
  // How the coarse-grained and hybrid RPCs (range, insert, remove; leaf,
  // separator) travel. "send_recv": SEND/RECV, the memory server's RPC
  // workers sharing one receive queue (the paper's section 3.2).
  // "mailbox": RDMA WRITE into a request ring per client in the memory
  // server's memory, served by mailbox workers, one per core
  // (core/messaging; the paper's first author's rewrite,
  // github.com/toziegler/rdma_tree, replaced the shared receive queue with
  // such mailboxes). Layout and fence RPCs stay SEND/RECV.
  RpcTransport rpc_transport = RpcTransport::kSendRecv;
  // Mailbox workers: "event" sleeps until a request's WRITE_WITH_IMM
  // wakes it; "polling" scans its rings (core/messaging/messaging.h).
  bool mailbox_polling = false;
  // Mailbox workers per memory server, each an endpoint and a thread of
  // its own serving a share of the clients' rings; 0: one per core
  // (platform.cores_per_server).
  uint32_t mailbox_workers = 0;
  uint32_t page_bytes = 1024;                        // the paper's 1 KB pages
  // Each memory server's arena; untouched pages cost no memory.
  uint64_t region_bytes = 64ull << 20;
  // Fine-grained and hybrid leaf locks: a waiter breaks a lock it saw unchanged this long
  // (a compute server died holding it); a holder installs only within half
  // of it (remote_access.h has the argument).
  double lease_ms = 50;
  // Fine-grained and hybrid leaf levels: a head node after every this
  // many leaves, naming them, for range scans to prefetch in one batch of
  // READs (section 4.1); 0 turns head nodes off. The paper gives no
  // value: 8 is chosen so that one batch of 1 KB pages (8 KB) stays far
  // under a queue pair's outstanding READs and a scan of the paper's
  // smallest selectivity (0.001) over a 1 KB-page tree of 10^5..10^6
  // keys spans about one group; scenarios sweep it.
  uint32_t head_node_interval = 8;
  // Periodic garbage collection (the paper's epoch-based pass, gc.cc)
  // every this many milliseconds of the run's clock (Env's: simulated on
  // SimGrid); 0 turns it off. Coarse-grained: a daemon on each memory
  // server collects its own tree (section 3.2). Fine-grained: one compute
  // server collects the global tree with the same one-sided locks as its
  // clients (section 4.2). Hybrid: refused (its leaves are one-sided, its
  // inner levels the memory servers': no collector is built for both).
  double gc_interval_ms = 0;
  // Fine-grained: memory server 0's table of epoch slots, one per client
  // (a compute-server thread) connected at once; 0 keeps none and frees no
  // merged page (remote_epochs.h). A client finding every slot taken is
  // refused. 8 bytes a slot.
  uint32_t gc_epoch_slots = 1024;
  // Fine-grained: a client READs the epoch, and announces it if it moved,
  // once every this many operations (remote_epochs.h): more holds freed
  // pages back longer, fewer costs more READs of memory server 0.
  uint32_t gc_epoch_every_ops = 64;
  // Fine-grained: a client's epoch slot that holds back a freed page and
  // has not changed for this long is broken: the collector has every
  // memory server fence the client off, then frees the slot (a dead
  // compute server no longer stops reclamation; a live one idle this long
  // pays one restart). remote_epochs.h has the argument.
  double gc_epoch_lease_ms = 1000;
  // Attribute-value skew (section 2.3; the calibration's NAM testbed: "80%
  // / 12% / 5% / 3% of keys on the four memory servers"): the share of the
  // workload's keys whose index key falls in each memory server's range,
  // one share per server, summing to 1; empty: none. Written
  // "0.8,0.12,0.05,0.03". Keys are mapped monotonically (Partitioner::
  // key_of), so ranges stay ranges; a share above 1/servers packs several
  // workload keys on one index key, as a dominant attribute value does.
  // Range partitioning only. The fine-grained tree places nodes
  // round-robin, so the same keys load its servers evenly.
  std::vector<double> key_skew;
  // Ranges as one atomic double collect (tree.h), so that a history
  // checker can hold each to one instant; costs every leaf of a range a
  // second READ. Set by tests, not a scenario key.
  bool atomic_ranges = false;
};

std::string distribution_name(Distribution d);

}  // namespace locus::nam
