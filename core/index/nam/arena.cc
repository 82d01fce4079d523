// A memory server's arena (arena.h).
#include "core/index/nam/arena.h"

#include <string>

namespace locus::nam {

StatusOr<std::unique_ptr<Arena>> Arena::create(Env env, uint32_t server, uint64_t bytes, uint32_t page_bytes,
                                               bool remote, bool split, uint32_t epoch_slots) {
  std::unique_ptr<Arena> a(new Arena(env, server, page_bytes));
  const uint64_t table = (uint64_t{epoch_slots} * 8 + page_bytes - 1) / page_bytes * page_bytes;
  if (epoch_slots > 0 && kFirstPageOffset + table + page_bytes > bytes) {
    return invalid_argument("nam: index.region_bytes = " + std::to_string(bytes) + " holds no page after the " +
                            std::to_string(epoch_slots) + " epoch slots (index.gc_epoch_slots)");
  }
  a->memory_ = AlignedBuffer(bytes);
  if (a->memory_.size() < bytes) {
    return resource_exhausted("nam: cannot reserve index.region_bytes = " + std::to_string(bytes));
  }
  a->first_page_ = kFirstPageOffset + table;
  a->word(kCursorOffset).store(a->first_page_);
  if (epoch_slots > 0) {
    a->word(kEpochOffset).store(1);
    a->word(kSlotTableOffset).store(kFirstPageOffset);
    a->word(kSlotCountOffset).store(epoch_slots);
  }
  if (split) {
    a->leaf_start_ = kFirstPageOffset + (bytes - kFirstPageOffset) / 2 / page_bytes * page_bytes;
    a->word(kLeafCursorOffset).store(a->leaf_start_);
  }
  if (env.transport == nullptr) return a;  // a local arena: the tree's own tests
  const Access access = remote ? static_cast<Access>(kRemoteRead | kRemoteWrite | kRemoteAtomic) : kLocalOnly;
  LOCUS_ASSIGN_OR_RETURN(a->region_, env.transport->register_memory(a->memory_.data(), bytes, access));
  return a;
}

Arena::~Arena() {
  if (env_.transport != nullptr && memory_.size() > 0) (void)env_.transport->deregister_memory(region_);
}

Status Arena::full_error() const {
  return resource_exhausted("nam: memory server " + std::to_string(server_) +
                            "'s arena is full (index.region_bytes = " + std::to_string(memory_.size()) + ")");
}

StatusOr<RemotePtr> Arena::allocate(uint8_t level) {
  const uint64_t cursor = level == 0 ? leaf_cursor() : kCursorOffset;
  const uint64_t end = leaf_start_ != 0 && level != 0 ? leaf_start_ : memory_.size();
  const uint64_t off = word(cursor).fetch_add(page_bytes_);
  if (off + page_bytes_ > end) return full_error();
  return RemotePtr::make(server_, off);
}

uint64_t Arena::used_bytes() {
  const uint64_t inner = word(kCursorOffset).load() - first_page_;
  return leaf_start_ == 0 ? inner : inner + word(kLeafCursorOffset).load() - leaf_start_;
}

}  // namespace locus::nam
