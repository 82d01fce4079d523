// The NAM node layout's operations on one page (layout.h): search, insert,
// split, and the seal a one-sided reader checks.
#include "core/index/nam/layout.h"

#include "core/common/crc64.h"

namespace locus::nam {

uint32_t leaf_capacity(uint32_t page_bytes) {
  const uint32_t room = page_bytes - kHeaderBytes - kFooterBytes;
  uint32_t c = room / 16;
  while (c > 0 && c * 16 + (c + 7) / 8 > room) --c;
  return c;
}

uint32_t inner_capacity(uint32_t page_bytes) { return (page_bytes - kHeaderBytes - kFooterBytes) / 24; }

void Node::init(uint8_t level) {
  std::memset(p_, 0, bytes_);
  p_[8] = static_cast<std::byte>(level);
  p_[9] = std::byte{1};
  const uint32_t magic = kMagic;
  std::memcpy(p_ + 12, &magic, 4);
}

void Node::set_head(const RemotePtr* leaves, uint32_t n) {
  p_[9] = static_cast<std::byte>(static_cast<uint8_t>(p_[9]) | kHead);
  for (uint32_t i = 0; i < n; ++i) {
    put64(entry(i), leaves[i].raw);
    put64(entry(i) + 8, 0);
  }
  set_count(n);
}

void Node::set_high(bool inf, Pair h) {
  p_[9] = static_cast<std::byte>((static_cast<uint8_t>(p_[9]) & (kHead | kDead)) | (inf ? kHighInf : 0));
  put64(16, h.key);
  put64(24, h.payload);
}

void Node::set_dead(RemotePtr into) {
  put64(entry(count()), sibling().raw);
  p_[9] = static_cast<std::byte>(static_cast<uint8_t>(p_[9]) | kDead);
  set_sibling(into);
}

void Node::revive() {
  p_[9] = static_cast<std::byte>(static_cast<uint8_t>(p_[9]) & ~kDead);
  set_sibling(sibling_before_merge());
}

void Node::absorb(const Node& right) {
  uint32_t n = count();
  for (uint32_t i = 0; i < right.count(); ++i) {
    if (leaf() && right.deleted(i)) continue;
    std::memcpy(p_ + entry(n), right.p_ + right.entry(i), entry_bytes());
    if (leaf()) set_deleted(n, false);
    ++n;
  }
  set_count(n);
  set_high(right.high_inf(), right.high());
  set_sibling(right.sibling());
}

uint32_t Node::live() const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < count(); ++i) n += deleted(i) ? 0 : 1;
  return n;
}

bool Node::deleted(uint32_t i) const { return (static_cast<uint8_t>(p_[bitmap_at() + i / 8]) >> (i % 8) & 1) != 0; }

void Node::set_deleted(uint32_t i, bool d) {
  auto& b = p_[bitmap_at() + i / 8];
  const auto bit = static_cast<std::byte>(1u << (i % 8));
  b = d ? (b | bit) : (b & ~bit);
}

uint32_t Node::lower_bound(Pair x) const {
  uint32_t lo = 0, hi = count();
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (pair(mid) < x) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint32_t Node::child_index(Pair x) const {
  const uint32_t n = count();
  const uint32_t i = lower_bound(x);
  return i < n ? i : n - 1;
}

void Node::insert_at(uint32_t i, Pair x, RemotePtr c) {
  const uint32_t n = count();
  const uint32_t eb = entry_bytes();
  std::memmove(p_ + entry(i + 1), p_ + entry(i), (n - i) * eb);
  if (leaf()) {
    for (uint32_t j = n; j > i; --j) set_deleted(j, deleted(j - 1));
    set_deleted(i, false);
  }
  put64(entry(i), x.key);
  put64(entry(i) + 8, x.payload);
  if (!leaf()) set_child(i, c);
  set_count(n + 1);
}

void Node::erase_at(uint32_t i) {
  const uint32_t n = count();
  std::memmove(p_ + entry(i), p_ + entry(i + 1), (n - i - 1) * entry_bytes());
  if (leaf()) {
    for (uint32_t j = i; j + 1 < n; ++j) set_deleted(j, deleted(j + 1));
    set_deleted(n - 1, false);
  }
  set_count(n - 1);
}

void Node::split_into(uint32_t from, Node& right, RemotePtr right_ptr) {
  const uint32_t n = count();
  right.init(level());
  std::memcpy(right.p_ + kHeaderBytes, p_ + entry(from), (n - from) * entry_bytes());
  if (leaf()) {
    for (uint32_t j = from; j < n; ++j) {
      right.set_deleted(j - from, deleted(j));
      set_deleted(j, false);
    }
  }
  right.set_count(n - from);
  right.set_high(high_inf(), high());
  right.set_sibling(sibling());
  const Pair last = pair(from - 1);
  const bool between_keys = leaf() && last.key != right.pair(0).key;
  set_count(from);
  set_high(false, between_keys ? Pair{last.key, kMaxPayload} : last);
  set_sibling(right_ptr);
}

uint32_t Node::compact() {
  const uint32_t n = count();
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (deleted(i)) continue;
    if (kept != i) {
      std::memmove(p_ + entry(kept), p_ + entry(i), entry_bytes());
      set_deleted(kept, false);
    }
    ++kept;
  }
  for (uint32_t i = kept; i < n; ++i) set_deleted(i, false);
  set_count(kept);
  return n - kept;
}

uint32_t Node::split_point() const {
  const uint32_t n = count();
  // The boundary nearest the middle (n/2 + d, then n/2 - d) within `reach`
  // of it where `differ(i - 1, i)`; 0 if none.
  auto nearest = [&](uint32_t reach, auto differ) -> uint32_t {
    for (uint32_t d = 0; d <= reach; ++d) {
      for (const int64_t at : {int64_t{n / 2} + d, int64_t{n / 2} - d}) {
        if (at >= 1 && at < n && differ(static_cast<uint32_t>(at) - 1, static_cast<uint32_t>(at))) {
          return static_cast<uint32_t>(at);
        }
      }
    }
    return 0;
  };
  if (leaf()) {
    const uint32_t at = nearest(n / 4, [&](uint32_t a, uint32_t b) { return get64(entry(a)) != get64(entry(b)); });
    if (at != 0) return at;
  }
  return nearest(n, [&](uint32_t a, uint32_t b) { return pair(a) != pair(b); });
}

void Node::seal(uint64_t w) {
  put64(bytes_ - 8, w);
  put64(bytes_ - 16, crc64(p_ + 8, bytes_ - 8 - kFooterBytes));
}

bool Node::consistent() const {
  const uint64_t w = word();
  return (w & kLockBit) == 0 && get64(bytes_ - 8) == w && magic() == kMagic &&
         get64(bytes_ - 16) == crc64(p_ + 8, bytes_ - 8 - kFooterBytes) && count() <= capacity() &&
         (leaf() || count() > 0);
}

}  // namespace locus::nam
