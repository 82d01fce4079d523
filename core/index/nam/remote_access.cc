// One-sided node access with leased CAS locks (remote_access.h).
#include "core/index/nam/remote_access.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/common/torn_read.h"
#include "core/index/nam/arena.h"
#include "core/index/nam/protocol.h"

namespace locus::nam {
namespace {
// Torn copies in a row before a read gives up: a consistent state is
// restored by every unlock (or lock break), so this many means corruption.
constexpr uint32_t kMaxTornCopies = 1u << 16;
// Leases an unlocked node may stay torn before a read gives up: writers
// write under the lock, so an unlocked torn copy is a READ that raced an
// install (gone at the next copy) or a body no writer will mend (a server
// that came back mid-install). Without this bound the reader spun through
// all kMaxTornCopies at the pause cap, about 80 s with a 20 ms lease (the
// fault campaign's server-outage mix on nam-fine took ~100 s a run).
constexpr int64_t kTornLeases = 4;  // a count of leases
// Pauses between copies of a locked or torn node: doubling from 1 us to a
// cap well under the lease, so a lease's end is noticed promptly.
constexpr Nanos kPauseBaseNs = 1 * kMicrosecond;
}  // namespace

StatusOr<std::unique_ptr<RemoteAccess>> RemoteAccess::create(Endpoint& ep, rpc::RpcClient& rpc,
                                                             std::vector<RemoteRegion> regions, uint32_t page_bytes,
                                                             Nanos lease_ns, uint64_t leaf_cursor) {
  if (regions.empty() || regions.size() > RemotePtr::kMaxServers) {
    return invalid_argument("nam: 1 to 128 memory servers, not " + std::to_string(regions.size()));
  }
  if (ep.node_id() >= kMaxHolder) {
    return invalid_argument("nam: node id " + std::to_string(ep.node_id()) + " does not fit a lock word's holder field (below " +
                            std::to_string(kMaxHolder) + ")");
  }
  std::unique_ptr<RemoteAccess> a(new RemoteAccess(ep, rpc, std::move(regions), page_bytes, lease_ns, leaf_cursor));
  a->mine_ = holder_bits(ep.node_id() + 1);
  a->buffer_ = AlignedBuffer(2 * size_t{page_bytes} + 64);
  LOCUS_ASSIGN_OR_RETURN(a->local_, ep.transport().register_memory(a->buffer_.data(), a->buffer_.size(), kLocalOnly));
  a->next_server_.assign(64, ep.node_id());  // compute servers start their round robin apart
  return a;
}

RemoteAccess::~RemoteAccess() {
  (void)ep_.transport().deregister_memory(local_);
  if (prefetch_pages_ > 0) (void)ep_.transport().deregister_memory(prefetch_region_);
}

Status RemoteAccess::enable_prefetch(uint32_t pages) {
  if (prefetch_pages_ > 0 || pages == 0) return Status();
  // Every READ of a batch is outstanding at once.
  const uint32_t max_wr = ep_.transport().limits().max_send_wr;
  if (max_wr > 0 && pages > max_wr) pages = max_wr;
  prefetch_ = AlignedBuffer(size_t{pages} * page_bytes_);
  LOCUS_ASSIGN_OR_RETURN(prefetch_region_,
                         ep_.transport().register_memory(prefetch_.data(), prefetch_.size(), kLocalOnly));
  prefetch_pages_ = pages;
  batch_.reserve(pages);
  signalled_.assign(regions_.size(), 0);
  return Status();
}

Status RemoteAccess::read_batch(std::span<const RemotePtr> at, std::byte* pages, std::vector<uint8_t>* usable) {
  if (at.size() > prefetch_pages_) return NodeAccess::read_batch(at, pages, usable);
  batch_.clear();
  for (const RemotePtr p : at) {
    LOCUS_ASSIGN_OR_RETURN(RemoteAddr remote, address(p, page_bytes_));
    WorkRequest wr;
    wr.wr_id = ep_.next_wr_id();
    wr.op = Opcode::kRead;
    wr.remote = remote;
    wr.local = {prefetch_.data() + batch_.size() * size_t{page_bytes_}, page_bytes_, prefetch_region_.lkey};
    wr.signaled = false;
    batch_.push_back(wr);
  }
  // A page a failed unsignalled READ never filled must not pass for a
  // node (it may hold a consistent copy from an earlier batch): marked
  // locked until a READ overwrites it.
  for (size_t i = 0; i < batch_.size(); ++i) {
    std::memcpy(prefetch_.data() + i * size_t{page_bytes_}, &kLockBit, sizeof kLockBit);
  }
  // Selective signalling: only the last READ to each memory server.
  std::fill(signalled_.begin(), signalled_.end(), 0);
  for (size_t i = batch_.size(); i-- > 0;) {
    if (std::exchange(signalled_[at[i].server()], 1) == 0) batch_[i].signaled = true;
  }
  ++stats_.read_batches;
  stats_.batched_reads += batch_.size();
  stats_.reads += batch_.size();
  LOCUS_RETURN_IF_ERROR(ep_.transport().post(batch_));
  for (const WorkRequest& wr : batch_) {
    if (!wr.signaled) continue;
    auto c = ep_.await(wr.wr_id, wr.remote.node);
    if (!c.is_ok()) return c.status();
    if (!c->ok()) return after_failure(wr.remote.node, completion_error(*c));
  }
  usable->assign(at.size(), 0);
  for (size_t i = 0; i < at.size(); ++i) {
    std::byte* page = pages + i * size_t{page_bytes_};
    std::memcpy(page, prefetch_.data() + i * size_t{page_bytes_}, page_bytes_);
    (*usable)[i] = Node(page, page_bytes_).consistent() ? 1 : 0;
  }
  return Status();
}

StatusOr<RemoteAddr> RemoteAccess::address(RemotePtr p, uint64_t bytes) const {
  if (p.null() || p.server() >= regions_.size() || p.offset() + bytes > regions_[p.server()].length) {
    return corruption("nam: remote pointer " + std::to_string(p.raw) + " outside every memory server's arena");
  }
  return remote_at(regions_[p.server()], p.offset());
}

Status RemoteAccess::read_page(RemotePtr p) {
  LOCUS_ASSIGN_OR_RETURN(RemoteAddr at, address(p, page_bytes_));
  WorkRequest wr;
  wr.wr_id = ep_.next_wr_id();
  wr.op = Opcode::kRead;
  wr.remote = at;
  wr.local = {buffer_.data(), page_bytes_, local_.lkey};
  ++stats_.reads;
  return after_failure(at.node, ep_.execute(wr));
}

Status RemoteAccess::after_failure(NodeId server, Status s) {
  if (s.is_ok() || !ep_.transport().rejoin(server)) return s;
  ++stats_.fenced;
  // Locks taken there before the fence may have been broken: nothing is
  // installed under them any more (install refuses), only released.
  for (Held& h : held_) {
    if (regions_[h.server].node == server) h.revoked = true;
  }
  return Status(StatusCode::kAborted, "nam: memory server node " + std::to_string(server) +
                                          " fenced this client off (a lock lease of it ran out): " + s.message());
}

Status RemoteAccess::fence(uint32_t server, NodeId holder) {
  rpc::Writer w(rpc_.payload_buffer());
  w.put<uint32_t>(holder);
  const NodeId node = regions_[server].node;
  Status s = after_failure(node, rpc_.call(node, kFenceRpc, w.size()).status());
  if (s.is_ok()) ++stats_.fences;
  if (s.is_ok() || s.code() == StatusCode::kAborted) return s;
  return Status(s.code(), "nam: memory server " + std::to_string(server) + " did not fence lock holder node " +
                              std::to_string(holder) + ": " + s.message());
}

bool RemoteAccess::release_held(RemotePtr p) {
  for (size_t i = 0; i < held_.size(); ++i) {
    if (held_[i].node == p.raw) {
      const bool installed = held_[i].installed;
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
      return installed;
    }
  }
  return false;
}

StatusOr<uint64_t> RemoteAccess::atomic(Opcode op, RemoteAddr at, uint64_t compare_add, uint64_t swap) {
  std::byte* result = buffer_.data() + 2 * size_t{page_bytes_};
  WorkRequest wr;
  wr.wr_id = ep_.next_wr_id();
  wr.op = op;
  wr.remote = at;
  wr.local = {result, 8, local_.lkey};
  wr.compare_add = compare_add;
  wr.swap = swap;
  LOCUS_RETURN_IF_ERROR(after_failure(at.node, ep_.execute(wr)));
  uint64_t old;
  std::memcpy(&old, result, 8);
  return old;
}

Status RemoteAccess::write(RemoteAddr at, const std::byte* from, uint32_t bytes) {
  std::byte* staging = buffer_.data() + page_bytes_;
  std::memcpy(staging, from, bytes);
  WorkRequest wr;
  wr.wr_id = ep_.next_wr_id();
  wr.op = Opcode::kWrite;
  wr.remote = at;
  wr.local = {staging, bytes, local_.lkey};
  return after_failure(at.node, ep_.execute(wr));
}

Status RemoteAccess::read(RemotePtr p, Node& out) {
  Env& env = ep_.env();
  const Nanos pause_max = std::max<Nanos>(kPauseBaseNs, lease_ns_ / 16);
  uint64_t seen_locked = 0;
  Nanos seen_since = 0;
  Nanos torn_since = -1;
  for (uint32_t misses = 0; misses < kMaxTornCopies; ++misses) {
    LOCUS_RETURN_IF_ERROR(read_page(p));
    Node copy(buffer_.data(), page_bytes_);
    if (copy.consistent()) {
      std::memcpy(out.data(), copy.data(), page_bytes_);
      return Status();
    }
    const uint64_t w = copy.word();
    if ((w & kLockBit) != 0) {
      ++stats_.locked_copies;
      const Nanos now = env.clock->now();
      if (w != seen_locked) {
        seen_locked = w;
        seen_since = now;
      } else if (now - seen_since >= lease_ns_) {
        LOCUS_ASSIGN_OR_RETURN(bool took, take_over(p, w));
        if (took) ++stats_.broken_locks;
        seen_locked = 0;
        continue;
      }
      torn_since = -1;
    } else {
      ++stats_.torn_copies;
      const Nanos now = env.clock->now();
      if (torn_since < 0) torn_since = now;
      if (now - torn_since >= std::max<Nanos>(kTornLeases * lease_ns_, kMillisecond)) {
        return corruption("nam: node " + std::to_string(p.raw) + " stayed torn and unlocked for " +
                          std::to_string(kTornLeases) + " leases (at least 1 ms)");
      }
    }
    env.clock->sleep_for(doubling_backoff(misses, kPauseBaseNs, pause_max));
  }
  return corruption("nam: node " + std::to_string(p.raw) + " stayed inconsistent for " +
                    std::to_string(kMaxTornCopies) + " copies");
}

StatusOr<bool> RemoteAccess::take_over(RemotePtr p, uint64_t held) {
  LOCUS_ASSIGN_OR_RETURN(RemoteAddr at, address(p, page_bytes_));
  // Someone else's lock: fenced off the memory first, so that nothing it
  // still posts lands after our repair (remote_access.h).
  const uint32_t holder = holder_of(held);
  if (holder != 0 && holder_bits(holder) != mine_) LOCUS_RETURN_IF_ERROR(fence(p.server(), holder - 1));
  const uint64_t base = without_holder(held);
  const uint64_t ours = (base + 2) | mine_;
  LOCUS_ASSIGN_OR_RETURN(uint64_t old, atomic(Opcode::kCas, at, held, ours));
  if (old != held) return false;  // released or broken by someone else meanwhile
  // Ours now (base + 2, still locked). The body is the holder's old or new
  // one, whole (remote_access.h): seal it for the word we leave.
  LOCUS_RETURN_IF_ERROR(read_page(p));
  Node copy(buffer_.data(), page_bytes_);
  copy.set_word(base + 3);
  copy.seal(base + 3);
  if (!copy.consistent()) {
    return corruption("nam: node " + std::to_string(p.raw) + " of a dead lock holder is torn");
  }
  LOCUS_RETURN_IF_ERROR(write(remote_at(regions_[p.server()], p.offset() + 8), copy.data() + 8, page_bytes_ - 8));
  LOCUS_ASSIGN_OR_RETURN(old, atomic(Opcode::kCas, at, ours, base + 3));
  return true;
}

Status RemoteAccess::lock(RemotePtr p, uint64_t version) {
  LOCUS_ASSIGN_OR_RETURN(RemoteAddr at, address(p, page_bytes_));
  lock_started_ns_ = ep_.env().clock->now();
  LOCUS_ASSIGN_OR_RETURN(uint64_t old, atomic(Opcode::kCas, at, version, version | kLockBit | mine_));
  if (old != version) return Status(StatusCode::kAborted, "nam: node changed before its lock");
  // A lock abandoned (an operation that restarted without releasing it)
  // is the lease's business; its entry goes.
  (void)release_held(p);
  if (held_.size() >= kMaxHeld) held_.erase(held_.begin());
  held_.push_back({p.raw, p.server(), false, false});
  return Status();
}

Status RemoteAccess::install(RemotePtr p, const Node& n) {
  Held* h = nullptr;
  for (Held& x : held_) {
    if (x.node == p.raw) h = &x;
  }
  if (h == nullptr) return internal_error("nam: install into node " + std::to_string(p.raw) + " without its lock");
  if (h->revoked) return Status(StatusCode::kAborted, "nam: the lock was taken before this client was fenced");
  if (ep_.env().clock->now() - lock_started_ns_ >= lease_ns_ / 2) {
    ++stats_.lease_give_ups;
    return Status(StatusCode::kAborted, "nam: lock lease half gone before the install");
  }
  LOCUS_ASSIGN_OR_RETURN(RemoteAddr at, address(p, page_bytes_));
  at.offset += 8;
  Status w = write(at, n.data() + 8, page_bytes_ - 8);
  if (w.code() == StatusCode::kAborted) {
    // Fenced: refused, or it landed before the fence and the breaker
    // sealed it in, and a failed WRITE does not say which (a NIC's retries
    // may run out after it was applied). Not restarted, which could apply
    // it twice: the operation fails, its outcome unknown.
    return unavailable(w.message() + "; whether the install landed is unknown");
  }
  LOCUS_RETURN_IF_ERROR(w);
  h->installed = true;
  return Status();
}

Status RemoteAccess::create(RemotePtr p, const Node& n) {
  LOCUS_ASSIGN_OR_RETURN(RemoteAddr at, address(p, page_bytes_));
  return write(at, n.data(), page_bytes_);
}

Status RemoteAccess::unlock(RemotePtr p, uint64_t held) {
  const uint64_t word = held | mine_;
  const bool installed = release_held(p);
  LOCUS_ASSIGN_OR_RETURN(RemoteAddr at, address(p, page_bytes_));
  Status s;
  // A fence fails the first try (after_failure rejoined): once more, for a
  // lock of ours there that was not broken.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (installed) {
      s = atomic(Opcode::kCas, at, word, held + 1).status();
    } else {
      // Nothing installed: the body is still the one sealed for the word
      // before the lock, so held + 1 would leave it torn for every reader.
      // If the lock is still ours, take it over as a breaker would (a
      // fresh lease from that CAS), re-seal the body and release it.
      s = take_over(p, word).status();
    }
    if (s.code() != StatusCode::kAborted) break;
  }
  // What was installed stays (a breaker re-seals the body it finds): the
  // operation is done and must not restart.
  if (installed && s.code() == StatusCode::kAborted) return Status();
  return s;
}

Status RemoteAccess::fence_everywhere(NodeId holder) {
  for (uint32_t server = 0; server < regions_.size(); ++server) LOCUS_RETURN_IF_ERROR(fence(server, holder));
  return Status();
}

Status RemoteAccess::check_words(uint32_t server, uint64_t offset, size_t words) const {
  if (server < regions_.size() && offset + words * 8 <= regions_[server].length) return Status();
  return invalid_argument("nam: " + std::to_string(words) + " words at " + std::to_string(offset) +
                          " outside memory server " + std::to_string(server) + "'s arena");
}

StatusOr<uint64_t> RemoteAccess::word_atomic(uint32_t server, uint64_t offset, Opcode op, uint64_t compare_add,
                                             uint64_t swap) {
  LOCUS_RETURN_IF_ERROR(check_words(server, offset, 1));
  return atomic(op, remote_at(regions_[server], offset), compare_add, swap);
}

Status RemoteAccess::read_words(uint32_t server, uint64_t offset, std::span<uint64_t> out) {
  LOCUS_RETURN_IF_ERROR(check_words(server, offset, out.size()));
  std::byte* into = buffer_.data();  // the READ page: free between node reads
  for (size_t done = 0; done < out.size();) {
    const size_t n = std::min<size_t>(out.size() - done, page_bytes_ / 8);
    WorkRequest wr;
    wr.wr_id = ep_.next_wr_id();
    wr.op = Opcode::kRead;
    wr.remote = remote_at(regions_[server], offset + done * 8);
    wr.local = {into, static_cast<uint32_t>(n * 8), local_.lkey};
    LOCUS_RETURN_IF_ERROR(after_failure(wr.remote.node, ep_.execute(wr)));
    std::memcpy(out.data() + done, into, n * 8);
    done += n;
  }
  return Status();
}

Status RemoteAccess::write_word(uint32_t server, uint64_t offset, uint64_t value) {
  LOCUS_RETURN_IF_ERROR(check_words(server, offset, 1));
  std::byte bytes[8];
  std::memcpy(bytes, &value, 8);
  return write(remote_at(regions_[server], offset), bytes, 8);
}

StatusOr<RemotePtr> RemoteAccess::allocate(uint8_t level) {
  if (level >= next_server_.size()) return internal_error("nam: tree deeper than 64 levels");
  const uint32_t server = next_server_[level]++ % regions_.size();
  const uint64_t cursor = level == 0 ? leaf_cursor_ : kCursorOffset;
  LOCUS_ASSIGN_OR_RETURN(uint64_t off, atomic(Opcode::kFaa, remote_at(regions_[server], cursor), page_bytes_, 0));
  if (off + page_bytes_ > regions_[server].length) {
    return resource_exhausted("nam: memory server " + std::to_string(server) + "'s arena is full (index.region_bytes)");
  }
  return RemotePtr::make(server, off);
}

StatusOr<RemotePtr> RemoteAccess::root() {
  if (!root_.null()) return root_;
  std::byte* result = buffer_.data() + 2 * size_t{page_bytes_};
  WorkRequest wr;
  wr.wr_id = ep_.next_wr_id();
  wr.op = Opcode::kRead;
  wr.remote = remote_at(regions_[0], kRootOffset);
  wr.local = {result, 8, local_.lkey};
  LOCUS_RETURN_IF_ERROR(ep_.execute(wr));
  std::memcpy(&root_.raw, result, 8);
  return root_;
}

StatusOr<bool> RemoteAccess::swap_root(RemotePtr old_root, RemotePtr new_root) {
  LOCUS_ASSIGN_OR_RETURN(uint64_t old,
                         atomic(Opcode::kCas, remote_at(regions_[0], kRootOffset), old_root.raw, new_root.raw));
  root_ = old == old_root.raw ? new_root : RemotePtr{};
  return old == old_root.raw;
}

}  // namespace locus::nam
