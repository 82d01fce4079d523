// Ring buffers: see ring_buffer.h.
#include "core/rpc/ring_buffer.h"

#include <cstring>
#include <string>

#include "core/common/check.h"

namespace locus::ring {
namespace {

// The words a remote NIC may be writing are loaded atomically, in the
// order that matters: word0 first, the trailer before the body.
uint64_t load_word(const std::byte* p) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
}
uint64_t trailer_word(uint32_t seq) { return (uint64_t{kTrailerMagic} << 32) | seq; }
uint64_t word0(uint32_t seq, uint32_t size_bytes) { return (uint64_t{size_bytes} << 32) | seq; }

}  // namespace

void encode_message(std::byte* at, MessageHeader& h) {
  h.size_bytes = message_bytes(h.payload_bytes);
  const uint64_t w0 = word0(h.seq, h.size_bytes);
  const uint64_t w1 = uint64_t{h.type} | (uint64_t{static_cast<uint8_t>(h.kind)} << 16) | (uint64_t{h.status} << 24) |
                      (uint64_t{h.payload_bytes} << 32);
  std::memcpy(at, &w0, 8);
  std::memcpy(at + 8, &w1, 8);
  std::memcpy(at + 16, &h.request_id, 8);
  // Padding is zeroed so that the sent bytes do not depend on stale memory.
  const uint32_t pad_from = kMessageHeaderBytes + h.payload_bytes;
  const uint32_t trailer_at = h.size_bytes - kMessageTrailerBytes;
  if (trailer_at > pad_from) std::memset(at + pad_from, 0, trailer_at - pad_from);
  const uint64_t t = trailer_word(h.seq);
  std::memcpy(at + trailer_at, &t, 8);
}

uint64_t wrap_word(uint32_t seq, uint32_t bytes) { return word0(seq, bytes | kWrapFlag); }

void publish_local(RingWriter& writer, const RingWriter::Placement& p, uint32_t size_bytes, std::byte* ring,
                   std::atomic<uint64_t>& doorbell) {
  if (p.wrap) {
    const uint64_t word = wrap_word(p.wrap_seq, p.wrap_bytes);
    std::memcpy(ring + p.wrap_offset, &word, 8);
  }
  writer.commit(p, size_bytes);
  doorbell.fetch_add(1, std::memory_order_release);
}

void RingWriter::reset(uint32_t capacity_bytes) {
  LOCUS_CHECK(capacity_bytes % kMessageAlignBytes == 0 && capacity_bytes <= kMaxRingBytes);
  capacity_bytes_ = capacity_bytes;
  tail_bytes_ = last_head_bytes_ = 0;
  next_seq_ = 1;
}

std::optional<RingWriter::Placement> RingWriter::place(uint32_t size_bytes, uint64_t head_bytes) {
  LOCUS_CHECK(head_valid(head_bytes) && size_bytes % kMessageAlignBytes == 0 && size_bytes <= capacity_bytes_);
  last_head_bytes_ = head_bytes;
  const uint64_t free_bytes = capacity_bytes_ - (tail_bytes_ - head_bytes);
  const uint32_t offset = static_cast<uint32_t>(tail_bytes_ % capacity_bytes_);
  Placement p;
  uint64_t need = size_bytes;
  if (offset + uint64_t{size_bytes} > capacity_bytes_) {
    p.wrap = true;
    p.wrap_offset = offset;
    p.wrap_bytes = capacity_bytes_ - offset;
    p.wrap_seq = next_seq_;
    need += p.wrap_bytes;
  }
  if (need > free_bytes) return std::nullopt;
  p.offset = p.wrap ? 0 : offset;
  p.seq = p.wrap ? next_seq(next_seq_) : next_seq_;
  return p;
}

void RingWriter::commit(const Placement& p, uint32_t size_bytes) {
  tail_bytes_ += size_bytes + (p.wrap ? p.wrap_bytes : 0);
  next_seq_ = next_seq(p.seq);
}

void RingReader::reset(std::byte* ring, uint32_t capacity_bytes) {
  LOCUS_CHECK(capacity_bytes % kMessageAlignBytes == 0 && capacity_bytes <= kMaxRingBytes);
  ring_ = ring;
  capacity_bytes_ = capacity_bytes;
  read_offset_ = 0;
  consumed_bytes_ = 0;
  expected_seq_ = 1;
}

RingReader::Poll RingReader::reject(Status* problem, const char* what, uint32_t seq, uint32_t size) {
  *problem = invalid_argument(std::string("bad message at ring offset ") + std::to_string(read_offset_) + " (seq " +
                              std::to_string(seq) + ", expected " + std::to_string(expected_seq_) + ", size field " +
                              std::to_string(size) + "): " + what);
  return Poll::kBad;
}

RingReader::Poll RingReader::poll(View* out, Status* problem) {
  // At most one wrap marker precedes a message.
  for (int hop = 0; hop < 2; ++hop) {
    const uint64_t w0 = load_word(ring_ + read_offset_);
    if (w0 == 0) return Poll::kEmpty;
    const auto seq = static_cast<uint32_t>(w0);
    const auto size_field = static_cast<uint32_t>(w0 >> 32);
    if (seq != expected_seq_) return reject(problem, "out-of-sequence header", seq, size_field);
    const uint32_t room = capacity_bytes_ - read_offset_;
    if (size_field & kWrapFlag) {
      if ((size_field & ~kWrapFlag) != room) {
        return reject(problem, "wrap marker does not cover the rest of the ring", seq, size_field);
      }
      std::memset(ring_ + read_offset_, 0, 8);
      consumed_bytes_ += room;
      read_offset_ = 0;
      expected_seq_ = next_seq(expected_seq_);
      continue;
    }
    if (size_field == 0) return reject(problem, "zero size", seq, size_field);
    if (size_field % kMessageAlignBytes != 0) return reject(problem, "size not 8-byte aligned", seq, size_field);
    if (size_field < kMessageOverheadBytes)
      return reject(problem, "size below the header and trailer", seq, size_field);
    if (size_field > capacity_bytes_) return reject(problem, "size larger than the ring", seq, size_field);
    if (size_field > room) return reject(problem, "message runs past the end of the ring", seq, size_field);
    const uint64_t t = load_word(ring_ + read_offset_ + size_field - kMessageTrailerBytes);
    if (t == 0) return Poll::kPartial;
    if (t != trailer_word(seq)) return reject(problem, "trailer does not match the header", seq, size_field);
    const std::byte* at = ring_ + read_offset_;
    uint64_t w1 = 0;
    MessageHeader h;
    std::memcpy(&w1, at + 8, 8);
    std::memcpy(&h.request_id, at + 16, 8);
    h.seq = seq;
    h.size_bytes = size_field;
    h.type = static_cast<uint16_t>(w1);
    h.kind = static_cast<MessageKind>(static_cast<uint8_t>(w1 >> 16));
    h.status = static_cast<uint8_t>(w1 >> 24);
    h.payload_bytes = static_cast<uint32_t>(w1 >> 32);
    if (h.payload_bytes > size_field - kMessageOverheadBytes || message_bytes(h.payload_bytes) != size_field) {
      return reject(problem, "payload length disagrees with the size field", seq, size_field);
    }
    if (h.kind < MessageKind::kRequest || h.kind > kLastMessageKind) {
      return reject(problem, "unknown message kind", seq, size_field);
    }
    out->header = h;
    out->payload = std::span<const std::byte>(at + kMessageHeaderBytes, h.payload_bytes);
    return Poll::kMessage;
  }
  return reject(problem, "wrap marker at the start of the ring", expected_seq_, 0);
}

void RingReader::consume(const View& v) {
  LOCUS_CHECK(v.header.seq == expected_seq_ && v.header.size_bytes <= capacity_bytes_ - read_offset_);
  std::memset(ring_ + read_offset_, 0, v.header.size_bytes);
  consumed_bytes_ += v.header.size_bytes;
  read_offset_ += v.header.size_bytes;
  if (read_offset_ == capacity_bytes_) read_offset_ = 0;
  expected_seq_ = next_seq(expected_seq_);
}

}  // namespace locus::ring
