// A memory server's arena: one registered region holding the server's
// nodes, a bump allocation cursor and (on server 0) the catalog's root
// pointer. The coarse-grained design reaches it with local atomics from the
// server's RPC handlers; the fine-grained one with RDMA READ, WRITE, CAS and
// FAA from compute servers (the cursor is the paper's RDMA_ALLOC), never
// both at once (the paper, section 4.2: local and remote atomics on one
// word are not atomic with each other). The hybrid design needs both, on
// different pages: its arenas are split in two halves, inner nodes (the
// memory server's, local cursor) below and leaves (the compute servers',
// RDMA FAA on a second cursor) above.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/common/aligned_buffer.h"
#include "core/common/status.h"
#include "core/index/nam/layout.h"
#include "core/transport/env.h"

namespace locus::nam {

inline constexpr uint64_t kCursorOffset = 0;
inline constexpr uint64_t kRootOffset = 8;
inline constexpr uint64_t kLeafCursorOffset = 16;  // split arenas only
// Fine-grained reclamation across compute servers (remote_epochs.h): each
// server's list of freed pages (tag << kFreeTagShift | the first page's
// offset, 0: empty; a page links the next at its byte 8); on server 0 the
// global epoch and the table of epoch slots (its offset, 0: none, and its
// length in slots), which the first pages hold.
inline constexpr uint64_t kFreeListOffset = 24;
inline constexpr uint64_t kEpochOffset = 32;
inline constexpr uint64_t kSlotTableOffset = 40;
inline constexpr uint64_t kSlotCountOffset = 48;
inline constexpr int kFreeTagShift = 40;
inline constexpr uint64_t kFirstPageOffset = 64;

class Arena {
 public:
  // Registers `bytes` on env's transport (remote READ, WRITE and atomics
  // when `remote`); `split`: leaves in a half of their own (hybrid);
  // `epoch_slots`: a catalog's table of that many epoch slots before the
  // first page (fine-grained server 0).
  static StatusOr<std::unique_ptr<Arena>> create(Env env, uint32_t server, uint64_t bytes, uint32_t page_bytes,
                                                 bool remote, bool split = false, uint32_t epoch_slots = 0);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  uint32_t server() const { return server_; }
  uint32_t page_bytes() const { return page_bytes_; }
  uint64_t bytes() const { return memory_.size(); }
  const Region& region() const { return region_; }
  std::byte* at(uint64_t offset) { return memory_.data() + offset; }
  std::atomic_ref<uint64_t> word(uint64_t offset) {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(memory_.data() + offset));
  }
  // A fresh page for a node of `level`, or kResourceExhausted naming the
  // setting.
  StatusOr<RemotePtr> allocate(uint8_t level);
  // The cursor that allocates leaves (kLeafCursorOffset in a split arena).
  uint64_t leaf_cursor() const { return leaf_start_ == 0 ? kCursorOffset : kLeafCursorOffset; }
  // Bytes handed out so far (for the servers' figures).
  uint64_t used_bytes();
  // The error of a cursor past the end (shared with remote allocation).
  Status full_error() const;

 private:
  Arena(Env env, uint32_t server, uint32_t page_bytes) : env_(env), server_(server), page_bytes_(page_bytes) {}
  Env env_;
  uint32_t server_;
  uint32_t page_bytes_;
  uint64_t leaf_start_ = 0;  // split arenas: where the leaves' half starts
  uint64_t first_page_ = kFirstPageOffset;  // after the epoch slots, if any
  AlignedBuffer memory_;
  Region region_;
};

}  // namespace locus::nam
