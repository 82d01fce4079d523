// NessieClient: one client worker of client-driven Nessie (paper section
// 4.2), doing every operation with one-sided verbs on all nodes' tables:
// READs of index entries (ITEs) and data entries (DTEs), CAS on ITEs,
// WRITEs of its own new DTEs and of replaced DTEs' recycle words.
//
//  * get: a forward pass over the key's candidate ITEs (empty ones and
//    ones whose filter bits differ are skipped), reading each candidate
//    DTE; a valid DTE of the key is the answer; an invalid one (a put or
//    delete in progress) is answered from its previous version (the DTE
//    its ITE named before, set only by a put or delete that swaps that
//    very ITE) when that is a valid DTE of the key, else the attempt
//    fails (a migration's copy has none).
//    A miss re-reads the ITEs in reverse order and fails if any changed.
//  * put: a forward pass reading every candidate ITE and the key and
//    metadata of each candidate DTE (an invalid DTE of the key aborts: a
//    put is in progress); the candidate is the ITE that holds the key,
//    else the first empty one, else a migration frees one (recursively,
//    section 4.2.3). The value goes to a new invalid DTE of the client's
//    own slice, the candidate is swapped to it by CAS, other ITEs holding
//    the key are cleared by CAS, a reverse pass checks every ITE is as
//    expected, and the DTE is made valid (the put's linearization point).
//    Replaced DTEs are staged for recycling: their recycle word gets the
//    expiry time by WRITE. A failed reverse pass undoes the CASes.
//  * delete: a put of a tombstone that never becomes valid; the last step
//    clears the ITE by CAS. A key absent from every candidate (confirmed
//    by a reverse pass) is NOT_FOUND.
//  * Every attempt fails once an expiry period (less the clock skew) has
//    passed since it started, so it never uses a DTE that was recycled
//    meanwhile (section 4.3.1); failed attempts are retried after an
//    exponential back-off, up to max_attempts.
//
// Failed completions (a lost reply, a broken connection): a CAS whose
// completion failed is resolved by reading its ITE where one side of it
// names a DTE of this client that is not valid (nobody else changes such
// an ITE); a DTE that an ITE may still name is never reused; a failed
// valid-bit WRITE is repeated (it is idempotent); a failed staging WRITE
// leaves its DTE unreclaimed. Nessie has no replication (section 4.3.1):
// a client that dies mid-put leaves its key readable (from the previous
// version) but closed to puts.
//
// Reading all candidates before the put's CAS (the paper swaps the first
// candidate as soon as it is found and checks the rest afterwards) costs
// the same READs and lets a put replace the key in place, so the previous
// version is found by concurrent gets. The migration's destination is the
// first empty candidate other than the source, else the first other one
// that no outer migration of the chain is freeing and that a deeper
// migration frees, trying each in turn (the paper: the first other one),
// which shortens chains, keeps them from going in circles and finds a
// free entry wherever a chain within max_migrate_depth reaches one.
//
// Deployment: a client's "local" data table is a slice of one node's data
// table that the node grants it (node.h). A client placed on its node's
// machine with the node's tables in its process (run.clients_on_servers,
// LocalTables) takes the paper's local shortcuts: it reads that node's
// ITEs and DTEs with memory loads and writes its own DTEs and that node's
// DTE words with CPU stores, but still changes ITEs only by CAS through
// the NIC (CAS is atomic only with respect to the NIC's other
// operations). Any other client reaches every table, its own node's
// included, by RDMA. In NessieSD and NessieHY such a client's requests to
// its own node skip the NIC too: it writes them into its ring there by
// CPU stores and the node's server thread writes the responses back so
// (requests.h, attach_local).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/index/nessie/cache.h"
#include "core/index/nessie/layout.h"
#include "core/rpc/ring_buffer.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"

namespace locus::nessie {

class RequestServer;

struct ClientStats {
  uint64_t gets = 0;
  uint64_t puts = 0;
  uint64_t deletes = 0;
  uint64_t attempts = 0;         // every attempt of every operation
  uint64_t conflicts = 0;        // attempts that failed on a concurrent operation
  uint64_t expired = 0;          // attempts that ran past the expiry period
  uint64_t reverse_changes = 0;  // reverse passes that found an ITE changed
  uint64_t cas_failures = 0;
  uint64_t previous_versions = 0;  // gets answered from an in-progress put's previous version
  uint64_t migrations = 0;         // completed migrations (each level of a chain counts)
  uint64_t migration_aborts = 0;
  uint64_t undone = 0;            // puts and deletes whose CASes were undone
  uint64_t restore_failures = 0;  // undo CASes that found the ITE changed (must stay 0)
  uint64_t staged = 0;            // DTEs staged for recycling
  uint64_t reclaimed = 0;         // own DTEs found expired and reused
  uint64_t slice_waits = 0;       // attempts that found no free DTE in the slice
  uint64_t ite_reads = 0;
  uint64_t dte_reads = 0;
  uint64_t backoff_ns = 0;
  uint64_t cache_hits = 0;       // gets answered from the local DTE cache
  uint64_t cas_resolved = 0;     // CASes whose completion failed, found applied or not by a READ
  uint64_t stage_failures = 0;   // DTEs left unreclaimed because staging them failed
  uint64_t reclaim_scans = 0;    // scans of the client's slice for expired DTEs
  uint64_t server_requests = 0;  // NessieSD/NessieHY: operations sent to a node's server thread
  uint64_t ring_resets = 0;      // NessieSD/NessieHY: request rings started over after a call of unknown fate
  uint64_t rdma_ops = 0;         // one-sided and two-sided work requests the client posted
  uint64_t local_ops = 0;        // loads and stores of its own node's tables in place of one
  uint64_t local_requests = 0;   // NessieSD/NessieHY: requests to its own node by CPU stores, no verb
  uint64_t adopted = 0;          // entries of a slice an earlier client held, still in use when taken over

  ClientStats& operator+=(const ClientStats& o);
};
static_assert(sizeof(ClientStats) == 29 * sizeof(uint64_t), "operator+= must add every counter");

// Who does which operation: Nessie (client: every one by one-sided
// verbs), NessieSD (server: every one by the key's node), NessieHY
// (hybrid: gets by the client, puts and deletes by the node). Paper
// section 5.
enum class Mode : uint8_t { kClient, kServer, kHybrid };

struct ClientOptions {
  Mode mode = Mode::kClient;
  uint32_t max_migrate_depth = 4;
  uint32_t max_attempts = 1000;
  Nanos backoff_base_ns = 1000;
  Nanos backoff_max_ns = 1000000;
  bool multiple_reads = false;
  // Entries of the client's DTE cache (cache.h); 0: none.
  uint32_t cache_entries = 0;
  // Tests: called at named points of an operation, to stall a client
  // there: "get.ite_read" (a get read an ITE and is about to read its
  // DTE), "write.forward_pass_done" (a put or delete chose its candidate),
  // "migrate.start", "migrate.copied" (the copy is written, the
  // destination not yet swapped), "migrate.destination_swapped".
  std::function<void(std::string_view point)> test_hook;
};

// Work names of the local shortcuts' copies (Cpu::charge_work; bytes: the
// bytes copied).
inline constexpr const char* kLocalReadWork = "nessie.client.local_read";
inline constexpr const char* kLocalWriteWork = "nessie.client.local_write";

// The tables of the client's home node, in this process and on this
// machine (run.clients_on_servers): the node's ITE and DTE arrays.
struct LocalTables {
  uint32_t node = 0;  // its data-table id
  uint64_t* index = nullptr;
  std::byte* data = nullptr;
  // NessieSD/NessieHY: the node's server threads, which serve the
  // client's ring there by CPU stores (requests.h, attach_local).
  std::vector<RequestServer*> requests;
};

class NessieClient {
 public:
  // Asks each node (the `servers`, in data-table order) for its layout
  // through `rpc` (which shares `endpoint`), and one node, starting at
  // the client's own node id, for a slice of its data table. With
  // `local`, the slice is asked of that node first and the client takes
  // the local shortcuts on its tables (see above).
  static StatusOr<std::unique_ptr<NessieClient>> connect(Endpoint& endpoint, rpc::RpcClient& rpc,
                                                         std::span<const NodeId> servers, const ClientOptions& options,
                                                         const LocalTables* local = nullptr);
  ~NessieClient();
  NessieClient(const NessieClient&) = delete;
  NessieClient& operator=(const NessieClient&) = delete;

  // The value (valid until the next call), or NOT_FOUND.
  StatusOr<std::string_view> get(std::string_view key);
  Status put(std::string_view key, std::string_view value);
  // OK if the key was there and is gone, NOT_FOUND if it was not there.
  Status remove(std::string_view key);
  // Gives the client's slice and request rings back to their nodes (it
  // makes no more calls), so that a later client, of this run or a later
  // one against the same nodes, can have them: the free entries that were
  // written get a zero state word first (the next client's adopt_slice()
  // takes the others as in use). A client that ends without it keeps its
  // slice and rings until the nodes restart. Once; the first error.
  Status close();

  const ClientStats& stats() const { return stats_; }
  const Geometry& geometry() const { return g_; }

 private:
  // What the forward pass found at a candidate.
  enum class Seen : uint8_t { kEmpty, kOther, kMine, kRepeat };
  struct Pass {
    KeyHash kh;
    uint64_t ite[kMaxWays] = {};
    Seen seen[kMaxWays] = {};
    bool other_valid[kMaxWays] = {};
  };
  enum class Kind : uint8_t { kPut, kDelete };
  // Recycle words one reclaim READ batch carries: the most the client
  // posts at once (connect checks the transport's send queue takes it).
  static constexpr uint32_t kScanBatch = 16;

  NessieClient(Endpoint& endpoint, const ClientOptions& options) : ep_(endpoint), options_(options) {}
  Status init(rpc::RpcClient& rpc, std::span<const NodeId> servers);

  // Coupled modes: a request to node `node`'s server thread (requests.h)
  // and its answer (a get's value, valid until the next call).
  StatusOr<std::string_view> call(uint32_t node, uint16_t type, std::string_view key, std::string_view value);
  Status init_channels();
  // The response to request `request_id` of channel `node`, sent.
  StatusOr<std::string_view> await_call(uint32_t node, uint64_t request_id);
  // Starts channel `node` over after a call of unknown fate (requests.h).
  Status reset_channel(uint32_t node);
  // Serves channel `node` (the local node's) by CPU stores: attaches its
  // ring to the node's server thread that owns it (requests.h).
  Status attach_local(uint32_t node);
  // Waits for the next response notification of channel `node`: a
  // receive (any node's) or, on a local channel, its doorbell moving.
  Status await_response(uint32_t node);

  // One attempt of each operation. kAborted: retry (after a back-off).
  StatusOr<std::string_view> get_once(std::string_view key);
  Status write_once(Kind kind, std::string_view key, std::string_view value);
  // Frees the ITE at `slot` (which names `ite`, a DTE of another key) by
  // moving its entry to another of that key's candidates. On failure,
  // *chain_exhausted says whether it was for want of a chain within
  // max_migrate_depth (nothing changed) rather than an error or conflict.
  Status migrate(Slot slot, uint64_t ite, uint32_t depth, bool* chain_exhausted = nullptr);
  // The retry loop around an attempt: back-off, attempt budget, stats.
  template <typename Attempt>
  auto with_retries(const char* what, Attempt attempt) -> decltype(attempt());

  // One-sided steps (client.cc).
  Status read_ite(Slot slot, uint64_t* out);
  Status read_ite_now(Slot slot, uint64_t* out);  // no deadline check
  // CAS; *old gets the value found (success iff *old == expected).
  Status cas_ite(Slot slot, uint64_t expected, uint64_t desired, uint64_t* old);
  // A CAS whose outcome is known: *applied says whether it swapped. If
  // its completion failed, a READ of the ITE decides; `ours` is the side
  // (expected or desired) that names a DTE of this client not yet valid,
  // which nobody else changes, or 0. An error: the outcome is unknown.
  Status cas_known(Slot slot, uint64_t expected, uint64_t desired, uint64_t ours, bool* applied);
  // Makes the DTE `ite` names valid (retrying a failed WRITE).
  Status make_valid(uint64_t ite);
  Status read_dte(uint64_t ite, uint32_t offset, uint32_t bytes, std::byte* into);
  // Writes `bytes` from `from` at `offset` of entry `entry` of the client's slice.
  Status write_dte(uint64_t entry, uint32_t offset, uint32_t bytes, std::byte* from);
  // Writes one word at `offset` of the DTE `ite` names (a state or recycle word).
  Status write_word(uint64_t ite, uint32_t offset, uint64_t value);
  WorkRequest request(Opcode op, const RemoteAddr& to, void* local, uint32_t bytes);
  std::byte* meta_at(uint32_t level);
  // A failed attempt because of a concurrent operation (counted).
  Status conflict(const char* why);
  // Reads a key's forward pass (every candidate ITE and, for those whose
  // filter matches, the DTE's key and metadata into meta_[level]).
  Status forward_pass(std::string_view key, Pass* p, uint32_t level);
  // Re-reads the ITEs in reverse order: true if each holds expect[w].
  StatusOr<bool> reverse_pass(const Pass& p, const uint64_t* expect);
  // Reads the DTE an ITE names and returns its value if it is a valid DTE
  // of `key`; kNotFound if another key's; kAborted if invalid (and its
  // previous version, if any, is not a valid DTE of the key).
  StatusOr<std::string_view> read_value(std::string_view key, uint64_t ite, bool follow_prev);
  // Whether this attempt has run out of time.
  Status check_deadline();

  // The client's slice of its node's data table.
  // A free entry of the slice for a new DTE (reclaiming expired ones when
  // none is free); kAborted when none has expired yet.
  StatusOr<uint64_t> allocate_dte();
  // The entry was written but never published: it is free again.
  void unpublish(uint64_t entry);
  // The entry is now named by an ITE.
  void publish(uint64_t entry);
  // Writes an expiry time into the recycle word of the DTE `ite` named,
  // whose ITE this client has just cleared or replaced.
  void stage(uint64_t ite);
  Status reclaim();
  // A slice an earlier client held (its entries' state words say which
  // are free): entry_state_ and free_ from them.
  Status adopt_slice();
  // Reads or zeroes one word of each slice entry `want` picks (client_dte.cc).
  template <typename Want, typename Got>
  Status slice_words(Opcode op, uint32_t offset, Want want, Got got);
  uint64_t my_ite(uint64_t entry, uint32_t filter) const { return g_.ite(home_, entry, filter); }
  // Whether data table `node`'s tables are in reach of loads and stores.
  bool local(uint32_t node) const { return local_.index != nullptr && node == local_.node; }
  // Local shortcuts (client_local.cc): a DTE's bytes copied out of and
  // into the home node's data table, charged as the client's CPU work.
  void load_dte(uint64_t at, uint32_t bytes, std::byte* into);
  void store_dte(uint64_t at, uint32_t bytes, const std::byte* from);

  Endpoint& ep_;
  ClientOptions options_;
  Geometry g_;
  std::vector<NodeTables> nodes_;
  uint32_t home_ = 0;         // the node whose data table holds the client's slice
  LocalTables local_;         // index null: no node's tables are local
  uint64_t slice_first_ = 0;  // its first entry
  Nanos attempt_start_ = 0;
  Nanos deadline_ns_ = 0;  // expiry less skew: how long an attempt may run

  // Slice bookkeeping, by entry - slice_first_ (sized once at connect).
  // kFree: its state word is zero; kFreeDirty: free, but written since
  // (close() zeroes the word before the slice goes back).
  enum class EntryState : uint8_t { kFree, kWritten, kPublished, kFreeDirty };
  std::vector<EntryState> entry_state_;
  std::vector<uint32_t> free_;  // stack of free entries (offsets in the slice)
  Nanos next_scan_ns_ = 0;      // no entry of the slice expires before this

  AlignedBuffer buffer_;
  Region region_;
  bool registered_ = false;
  std::byte* words_ = nullptr;  // 8-byte words for ITE reads, CAS results, recycle words
  std::byte* meta_ = nullptr;   // (max_migrate_depth + 2) DTE keys and metadata, one per level
  std::byte* entry_ = nullptr;  // one whole DTE: a read value, a new DTE, a migration's copy
  std::byte* scan_ = nullptr;   // recycle words read while reclaiming

  // Coupled modes: per node, the client's request ring there and its
  // response ring here (in rings_buffer_, ring_bytes each).
  struct Channel {
    RingGrant grant;
    ring::RingWriter writer;
    ring::RingReader reader;
    bool broken = false;  // a call's fate is unknown: the ring starts over before the next
    // A local channel (requests.h, attach_local): the request ring's
    // memory and doorbell in this process, and the response doorbell's
    // value last seen (the doorbell: response_doorbells_[node]).
    std::byte* local_requests = nullptr;
    std::atomic<uint64_t>* local_doorbell = nullptr;
    uint64_t responses_seen = 0;
  };
  std::vector<Channel> channels_;
  rpc::RpcClient* rpc_ = nullptr;  // the layout RPC, for resets and close() (the session's, outlives the client)
  bool closed_ = false;
  std::vector<NodeId> servers_;
  AlignedBuffer rings_buffer_;
  Region rings_region_;    // the response rings, written by the nodes
  Region request_region_;  // request_, read by the NIC only
  bool rings_registered_ = false;
  bool request_registered_ = false;
  std::byte* request_ = nullptr;                                 // a request message, then a wrap word
  std::unique_ptr<std::atomic<uint64_t>[]> response_doorbells_;  // per node, bumped by a local server thread

  std::vector<Slot> chain_;          // the sources of the migrations under way, by depth
  std::unique_ptr<DteCache> cache_;  // null: no cache
  ClientStats stats_;
};

}  // namespace locus::nessie
