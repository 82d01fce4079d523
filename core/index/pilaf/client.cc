// PilafClient: see client.h. Scratch layout of the client's registered
// buffer: one entry, three entries for miss confirmation, two meta copies,
// then room for the largest extent.
#include "core/index/pilaf/client.h"

#include <cstring>
#include <string>

#include "core/index/pilaf/protocol.h"

namespace locus::pilaf {
namespace {
constexpr uint32_t kEntryAt = 0;
constexpr uint32_t kProbeAt = 32;
constexpr uint32_t kMetaBeforeAt = 128;
constexpr uint32_t kMetaAfterAt = 144;
constexpr uint32_t kExtentAt = kReadScratchBytes;
static_assert(kProbeAt + kWays * kEntryBytes <= kMetaBeforeAt);
static_assert(kMetaAfterAt + sizeof(Meta) <= kExtentAt);

Status retry_status() { return Status(StatusCode::kAborted, "retry"); }
}  // namespace

ClientContext::~ClientContext() {
  if (registered) (void)endpoint.transport().deregister_memory(region);
}

Status ClientContext::ensure_buffer(uint64_t need) {
  if (registered && buffer.size() >= need) return Status();
  if (registered) {
    LOCUS_RETURN_IF_ERROR(endpoint.transport().deregister_memory(region));
    registered = false;
  }
  buffer = AlignedBuffer(need);
  if (!buffer.valid()) return resource_exhausted("pilaf client: cannot allocate read buffer");
  LOCUS_ASSIGN_OR_RETURN(region, endpoint.transport().register_memory(buffer.data(), need, kLocalOnly));
  registered = true;
  return Status();
}

StatusOr<std::unique_ptr<PilafClient>> PilafClient::connect(Endpoint& endpoint, rpc::RpcClient& rpc, NodeId server,
                                                            const ClientOptions& options) {
  auto owned = std::make_unique<ClientContext>(endpoint, rpc, options);
  ClientContext& context = *owned;
  std::unique_ptr<PilafClient> c(new PilafClient(context, std::move(owned), server));
  LOCUS_RETURN_IF_ERROR(c->refresh_layout());
  return c;
}

StatusOr<std::unique_ptr<PilafClient>> PilafClient::connect(ClientContext& context, NodeId server) {
  std::unique_ptr<PilafClient> c(new PilafClient(context, nullptr, server));
  LOCUS_RETURN_IF_ERROR(c->refresh_layout());
  return c;
}

PilafClient::PilafClient(ClientContext& context, std::unique_ptr<ClientContext> owned, NodeId server)
    : owned_(std::move(owned)), ctx_(context), server_(server) {}

PilafClient::~PilafClient() = default;

Status PilafClient::refresh_layout() {
  LOCUS_ASSIGN_OR_RETURN(auto body, ctx_.rpc.call(server_, kGetLayout, 0));
  rpc::Reader r(body);
  Layout fresh;
  if (!decode_layout(r, &fresh)) {
    return corruption("pilaf: server " + std::to_string(server_) + " sent an invalid layout");
  }
  layout_ = fresh;
  ++ctx_.stats.layout_refreshes;
  return ctx_.ensure_buffer(kExtentAt + uint64_t{layout_.max_kv_bytes});
}

WorkRequest PilafClient::read_request(const RemoteAddr& from, void* into, uint32_t bytes) {
  WorkRequest wr;
  wr.wr_id = ctx_.endpoint.next_wr_id();
  wr.op = Opcode::kRead;
  wr.remote = from;
  wr.local = {into, bytes, ctx_.region.lkey};
  return wr;
}

bool PilafClient::crc_matches(const void* data, uint32_t bytes, uint64_t want) {
  Env& env = ctx_.endpoint.env();
  const WorkTimer checking(env);
  const bool match = crc64(data, bytes) == want;
  env.cpu->charge_work(kClientCrcWork, checking.elapsed(), bytes);
  return match;
}

Status PilafClient::read_entry(uint64_t slot, Entry* out) {
  std::byte* into = ctx_.buffer.data() + kEntryAt;
  ++ctx_.stats.entry_reads;
  LOCUS_RETURN_IF_ERROR(
      ctx_.endpoint.execute(read_request(remote_at(layout_.table, slot * kEntryBytes), into, kEntryBytes)));
  std::memcpy(out, into, kEntryBytes);
  if (!crc_matches(out, kEntryCrcBytes, out->entry_crc)) {
    ++ctx_.stats.entry_retries;
    return retry_status();
  }
  return Status();
}

StatusOr<std::string_view> PilafClient::rdma_get_once(std::string_view key, const KeyHash& kh) {
  Entry seen[kWays];
  const Entry* other_keys[kWays] = {nullptr, nullptr, nullptr};
  for (int w = 0; w < kWays; ++w) {
    if (repeats_earlier_way(kh, w)) continue;
    const uint64_t slot = kh.slot[w];
    Entry& e = seen[w];
    LOCUS_RETURN_IF_ERROR(read_entry(slot, &e));
    if (e.empty() || e.key_tag != kh.tag) continue;
    if (e.kv_length > layout_.max_kv_bytes) return retry_status();
    std::byte* extent = ctx_.buffer.data() + kExtentAt;
    ++ctx_.stats.extent_reads;
    LOCUS_RETURN_IF_ERROR(
        ctx_.endpoint.execute(read_request(remote_at(layout_.extents, e.kv_offset), extent, e.kv_length)));
    if (!crc_matches(extent, e.kv_length, e.kv_crc)) {
      ++ctx_.stats.extent_retries;
      return retry_status();
    }
    std::string_view k, v;
    if (!parse_extent(extent, e.kv_length, &k, &v)) {
      return corruption("pilaf: extent with a valid checksum but a bad header at offset " +
                        std::to_string(e.kv_offset));
    }
    if (k == key) return v;
    other_keys[w] = &e;  // an intact entry of another key with our tag
  }
  // Ways that share a slot share what was found there.
  for (int w = 1; w < kWays; ++w) {
    for (int v = 0; v < w; ++v) {
      if (kh.slot[w] == kh.slot[v] && other_keys[w] == nullptr) other_keys[w] = other_keys[v];
    }
  }
  LOCUS_ASSIGN_OR_RETURN(bool absent, confirm_miss(kh, other_keys));
  if (!absent) {
    ++ctx_.stats.miss_rechecks;
    return retry_status();
  }
  return not_found("pilaf get: no such key");
}

StatusOr<bool> PilafClient::confirm_miss(const KeyHash& kh, const Entry* const* other_keys) {
  // One batch: meta, the three slots, meta again. An unchanged, even move
  // sequence means no kick chain ran while the slots were read, so a key
  // absent from all three is absent; but only if the slots were read after
  // the first meta and before the second, which nothing promises of a
  // batch's READs (issue 16, defect 6): the first slot READ and the second
  // meta READ are fenced (IBV_SEND_FENCE), so each starts only once every
  // READ before it has completed.
  std::byte* buf = ctx_.buffer.data();
  const RemoteAddr meta = remote_at(layout_.meta, 0);
  WorkRequest batch[kWays + 2];
  batch[0] = read_request(meta, buf + kMetaBeforeAt, sizeof(Meta));
  for (int w = 0; w < kWays; ++w) {
    batch[w + 1] =
        read_request(remote_at(layout_.table, kh.slot[w] * kEntryBytes), buf + kProbeAt + w * kEntryBytes, kEntryBytes);
  }
  batch[kWays + 1] = read_request(meta, buf + kMetaAfterAt, sizeof(Meta));
  batch[1].fence = true;
  batch[kWays + 1].fence = true;
  ctx_.stats.entry_reads += kWays;
  LOCUS_RETURN_IF_ERROR(ctx_.endpoint.execute(batch));
  Meta before, after;
  std::memcpy(&before, buf + kMetaBeforeAt, sizeof(Meta));
  std::memcpy(&after, buf + kMetaAfterAt, sizeof(Meta));
  if (before.epoch != layout_.epoch || after.epoch != layout_.epoch) {
    return Status(StatusCode::kRemoteAccessError, "pilaf: layout epoch changed");
  }
  if (before.move_seq != after.move_seq || (before.move_seq & 1) != 0) return false;
  for (int w = 0; w < kWays; ++w) {
    Entry e;
    std::memcpy(&e, buf + kProbeAt + w * kEntryBytes, kEntryBytes);
    if (!crc_matches(&e, kEntryCrcBytes, e.entry_crc)) return false;
    if (e.empty() || e.key_tag != kh.tag) continue;
    // Our tag: doubtful unless it is the very entry the first pass read
    // and found to hold another key (its CRC covers the extent's, so the
    // same entry still names that key). Issue 16, defect 8: a collision
    // used to be rechecked until the retry budget ran out, then asked of
    // the server.
    if (other_keys[w] == nullptr || std::memcmp(&e, other_keys[w], kEntryBytes) != 0) return false;
  }
  return true;
}

StatusOr<std::string_view> PilafClient::rpc_get(std::string_view key) {
  rpc::Writer w(ctx_.rpc.payload_buffer());
  w.blob(key);
  if (!w.ok()) return invalid_argument("pilaf get: key too long for one message");
  LOCUS_ASSIGN_OR_RETURN(auto body, ctx_.rpc.call(server_, kGet, w.size()));
  rpc::Reader r(body);
  std::string_view value;
  if (!r.blob(&value) || !r.at_end()) {
    return corruption("pilaf get: malformed response from server " + std::to_string(server_));
  }
  return value;
}

StatusOr<std::string_view> PilafClient::get(std::string_view key) {
  ++ctx_.stats.gets;
  if (ctx_.options.mode == GetMode::kVerbsOnly) return rpc_get(key);
  ++ctx_.stats.rdma_gets;
  KeyHash kh = hash_key(key, layout_.bucket_count - 1);
  TornRetry retry(ctx_.options.torn, *ctx_.endpoint.env().clock);
  // Layout refreshes share the budget without pausing (the new layout is
  // read at once), so a server replacing regions faster than this client
  // can follow them also ends at the server rather than looping.
  uint32_t refreshes = 0;
  for (;;) {
    auto r = rdma_get_once(key, kh);
    if (r.is_ok()) return r;
    const StatusCode code = r.status().code();
    if (code == StatusCode::kAborted) {
      if (retry.again()) continue;
      break;
    }
    if (code != StatusCode::kRemoteAccessError) return r;
    // A region was replaced (or the epoch moved): fetch the layout again.
    LOCUS_RETURN_IF_ERROR(refresh_layout());
    kh = hash_key(key, layout_.bucket_count - 1);
    if (!ctx_.options.torn.allows_another(++refreshes)) break;
  }
  // No consistent copy within the budget: contention, which the server,
  // reading its own memory, does not see.
  ++ctx_.stats.fallbacks;
  return rpc_get(key);
}

StatusOr<bool> PilafClient::contains(std::string_view key) {
  auto r = get(key);
  if (r.is_ok()) return true;
  if (r.status().code() == StatusCode::kNotFound) return false;
  return r.status();
}

Status PilafClient::put(std::string_view key, std::string_view value) {
  rpc::Writer w(ctx_.rpc.payload_buffer());
  w.blob(key);
  w.blob(value);
  if (!w.ok()) return invalid_argument("pilaf put: key and value exceed one message");
  return ctx_.rpc.call(server_, kPut, w.size()).status();
}

Status PilafClient::remove(std::string_view key) {
  rpc::Writer w(ctx_.rpc.payload_buffer());
  w.blob(key);
  if (!w.ok()) return invalid_argument("pilaf delete: key too long for one message");
  return ctx_.rpc.call(server_, kDelete, w.size()).status();
}

}  // namespace locus::pilaf
