// PilafClient: one client's view of one Pilaf server.
//
// RDMA mode: get and contains read the table entry at each of the key's
// three slots and then the extent it points to, with one-sided READs;
// both are verified by CRC64 and re-read when a concurrent server write
// tore them (each retry is counted, with the shared torn-read policy's
// pauses between them). A miss is confirmed against the meta move sequence,
// so a key in the middle of a cuckoo move is not reported absent. A remote
// access error means the server replaced a region: the client fetches the
// layout again and retries. A get that finds no consistent copy within the
// policy's budget is contention (a hot key rewritten continuously), so it
// is asked of the server as in VO mode (counted in `fallbacks`). VO mode
// sends every get to the server as an RPC. Put and delete are always RPCs.
//
// What does not depend on the server lives in a ClientContext, which the
// clients of one session share (a client with no session owns its own):
// with a client per server at a thousand servers, a read buffer per
// (client, server) pair cost more memory than everything else together.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "core/common/aligned_buffer.h"
#include "core/common/torn_read.h"
#include "core/index/pilaf/layout.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/endpoint.h"

namespace locus::pilaf {

enum class GetMode { kRdma, kVerbsOnly };

struct ClientStats {
  uint64_t gets = 0;
  uint64_t rdma_gets = 0;  // gets that read the server's memory (not verbs-only)
  uint64_t entry_reads = 0;
  uint64_t extent_reads = 0;
  uint64_t entry_retries = 0;   // entry CRC mismatch: torn by a concurrent write
  uint64_t extent_retries = 0;  // extent CRC mismatch: freed or rewritten meanwhile
  uint64_t miss_rechecks = 0;   // misses re-probed because entries were moving
  uint64_t layout_refreshes = 0;
  uint64_t fallbacks = 0;  // gets asked of the server after torn.max_attempts inconsistent reads

  uint64_t retries() const { return entry_retries + extent_retries + miss_rechecks; }
  ClientStats& operator+=(const ClientStats& o) {
    gets += o.gets;
    rdma_gets += o.rdma_gets;
    entry_reads += o.entry_reads;
    extent_reads += o.extent_reads;
    entry_retries += o.entry_retries;
    extent_retries += o.extent_retries;
    miss_rechecks += o.miss_rechecks;
    layout_refreshes += o.layout_refreshes;
    fallbacks += o.fallbacks;
    return *this;
  }
};
static_assert(sizeof(ClientStats) == 9 * sizeof(uint64_t), "operator+= must add every counter");

// The read buffer's room for entries and meta copies, before one extent
// (client.cc lays it out).
inline constexpr uint32_t kReadScratchBytes = 192;

// The client's CRC64 checks, as Cpu::charge_work names them.
inline constexpr const char* kClientCrcWork = "pilaf.client_crc";

struct ClientOptions {
  GetMode mode = GetMode::kRdma;
  // RDMA attempts of one get that may all fail verification (or all need a
  // fresh layout), and the pauses between torn ones; then the server answers.
  TornReadPolicy torn;
};

// What one client's PilafClients (one per server) share: the endpoint and
// RPC client they all use, their options, their counters, and one
// registered read buffer. A get uses the buffer from its first READ until
// it returns, and a client runs one operation at a time, so one buffer,
// sized for the largest extent of any server, serves them all.
class ClientContext {
 public:
  ClientContext(Endpoint& endpoint, rpc::RpcClient& rpc, const ClientOptions& options)
      : endpoint(endpoint), rpc(rpc), options(options) {}
  ~ClientContext();
  ClientContext(const ClientContext&) = delete;
  ClientContext& operator=(const ClientContext&) = delete;

  // A registered buffer of at least `bytes` (kept if it already is).
  Status ensure_buffer(uint64_t bytes);

  Endpoint& endpoint;
  rpc::RpcClient& rpc;
  const ClientOptions options;
  ClientStats stats;
  AlignedBuffer buffer;  // entries, meta copies, one extent
  Region region;
  bool registered = false;
};

class PilafClient {
 public:
  // Connects to `server` through `rpc` (which shares `endpoint`), with a
  // context of its own.
  static StatusOr<std::unique_ptr<PilafClient>> connect(Endpoint& endpoint, rpc::RpcClient& rpc, NodeId server,
                                                        const ClientOptions& options = {});
  // Connects to `server` sharing `context` (its buffer and counters) with
  // the context's other clients; the context must outlive the client.
  static StatusOr<std::unique_ptr<PilafClient>> connect(ClientContext& context, NodeId server);
  ~PilafClient();

  // The value, valid until the next call on this client; NOT_FOUND if absent.
  StatusOr<std::string_view> get(std::string_view key);
  StatusOr<bool> contains(std::string_view key);
  Status put(std::string_view key, std::string_view value);
  Status remove(std::string_view key);

  // The context's counters: this client's alone unless it shares one.
  const ClientStats& stats() const { return ctx_.stats; }
  const Layout& layout() const { return layout_; }

 private:
  PilafClient(ClientContext& context, std::unique_ptr<ClientContext> owned, NodeId server);
  Status refresh_layout();
  // One verified attempt; kAborted means "retry", kRemoteAccessError "refresh".
  StatusOr<std::string_view> rdma_get_once(std::string_view key, const KeyHash& kh);
  Status read_entry(uint64_t slot, Entry* out);
  // `other_keys[w]`: the entry of way w when the first pass found it holds
  // another key with the same tag (a tag collision), else null. Such an
  // entry, unchanged, does not make the miss doubtful.
  StatusOr<bool> confirm_miss(const KeyHash& kh, const Entry* const* other_keys);
  StatusOr<std::string_view> rpc_get(std::string_view key);
  WorkRequest read_request(const RemoteAddr& from, void* into, uint32_t bytes);
  // Whether the CRC64 of `bytes` at `data` (a READ's copy) is `want`. The
  // check is timed and charged as named work (kClientCrcWork) by the
  // bytes checked: the Pilaf paper's clients spend about a dozen CPU
  // cycles a checksummed byte, which the simulator costs from the
  // scenario; here isa-l does it in a fraction of that.
  bool crc_matches(const void* data, uint32_t bytes, uint64_t want);

  std::unique_ptr<ClientContext> owned_;  // null when the context is shared
  ClientContext& ctx_;
  NodeId server_;
  Layout layout_;  // what this server last said
};

}  // namespace locus::pilaf
