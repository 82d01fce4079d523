// Message rings written by RDMA WRITE: the wire format of one message and
// the bookkeeping of each side. Below the designs because more than one
// uses it: Catfish's fast messaging (its paper's section III-A, Fig. 5)
// and NessieSD/NessieHY's request regions (HERD-style, Nessie paper
// section 5).
//
// A ring lives in the receiver's registered memory and is written only by
// one sender, with RDMA WRITE. Each message is 8-byte aligned:
//   word0    seq:u32 | size_bytes:u32   (size_bytes: the whole message)
//   word1    type:u16 | kind:u8 | status:u8 | payload_bytes:u32
//   word2    request_id:u64
//   payload  padded to 8 bytes
//   trailer  kTrailerMagic:u32 | seq:u32
// The receiver knows a message has begun when word0 at its read position
// turns non-zero, and that it is complete when the trailer (the last word
// a front-to-back DMA writes) carries the same sequence number, so no
// separate doorbell is needed. A message that does not fit before the end
// of the ring is preceded by a wrap marker: word0 alone, with kWrapFlag in
// size_bytes, covering the rest of the ring. Consumed bytes are zeroed
// before the receiver publishes its head (bytes consumed) to the sender,
// so stale bytes can never pass for a new message, and sequence numbers
// make that doubly sure. Anything else at the read position is hostile or
// corrupt input: the reader reports it with a Status and never reads
// outside [read position, end of ring).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/common/status.h"

namespace locus::ring {

enum class MessageKind : uint8_t {
  kRequest = 1,
  kCont = 2,    // a response segment; more follow
  kEnd = 3,     // the last (or only) segment of a response
  kError = 4,   // an error response; status carries the StatusCode, payload the message
  kOneWay = 5,  // a request that wants no response
};
constexpr MessageKind kLastMessageKind = MessageKind::kOneWay;

struct MessageHeader {
  uint32_t seq = 0;
  uint32_t size_bytes = 0;
  uint16_t type = 0;
  MessageKind kind = MessageKind::kRequest;
  uint8_t status = 0;
  uint32_t payload_bytes = 0;
  uint64_t request_id = 0;
};

constexpr uint32_t kMessageHeaderBytes = 24;
constexpr uint32_t kMessageTrailerBytes = 8;
constexpr uint32_t kMessageOverheadBytes = kMessageHeaderBytes + kMessageTrailerBytes;
constexpr uint32_t kMessageAlignBytes = 8;
constexpr uint32_t kWrapFlag = 1u << 31;
constexpr uint32_t kTrailerMagic = 0xCA7F1500u;
constexpr uint32_t kMaxRingBytes = 1u << 30;  // sizes stay clear of kWrapFlag

constexpr uint32_t round_up8(uint32_t n) { return (n + 7u) & ~7u; }
// Ring bytes a message with payload_bytes of payload occupies.
constexpr uint32_t message_bytes(uint32_t payload_bytes) {
  return kMessageHeaderBytes + round_up8(payload_bytes) + kMessageTrailerBytes;
}
// The sequence number after seq; 0 never occurs, it means "nothing here".
constexpr uint32_t next_seq(uint32_t seq) { return seq + 1 == 0 ? 1 : seq + 1; }

// Writes the header at `at` and the trailer after the payload (which the
// caller has already placed at at + kMessageHeaderBytes). h.size_bytes is
// set from h.payload_bytes.
void encode_message(std::byte* at, MessageHeader& h);
// word0 of a wrap marker covering `bytes` (the rest of the ring).
uint64_t wrap_word(uint32_t seq, uint32_t bytes);

// The sending side's view of a remote ring: where the next message goes,
// and whether the receiver's published head leaves room for it. It never
// plans a write over bytes the receiver has not consumed.
class RingWriter {
 public:
  struct Placement {
    uint32_t offset = 0;       // where the message goes
    uint32_t seq = 0;          // its sequence number
    bool wrap = false;         // a wrap marker goes first...
    uint32_t wrap_offset = 0;  // ... here,
    uint32_t wrap_bytes = 0;   // ... covering this many bytes,
    uint32_t wrap_seq = 0;     // ... with this sequence number
  };

  void reset(uint32_t capacity_bytes);
  // A head is believable if it never moves back and never passes the tail.
  bool head_valid(uint64_t head_bytes) const { return head_bytes >= last_head_bytes_ && head_bytes <= tail_bytes_; }
  // Where a message of size_bytes goes, or nullopt while the receiver has
  // not consumed enough (head_bytes: bytes it consumed; must be valid).
  std::optional<Placement> place(uint32_t size_bytes, uint64_t head_bytes);
  void commit(const Placement& p, uint32_t size_bytes);

  uint32_t capacity_bytes() const { return capacity_bytes_; }
  uint64_t tail_bytes() const { return tail_bytes_; }

 private:
  uint32_t capacity_bytes_ = 0;
  uint64_t tail_bytes_ = 0;       // bytes produced, wrap padding included
  uint64_t last_head_bytes_ = 0;  // the last head seen
  uint32_t next_seq_ = 1;
};

// For a ring this process stores into itself (a co-located peer's, no
// NIC): the message is at ring + p.offset already; writes the wrap marker
// if p needs one, commits p and moves the doorbell (release: the reader
// reads the ring after it sees the doorbell move, with acquire).
void publish_local(RingWriter& writer, const RingWriter::Placement& p, uint32_t size_bytes, std::byte* ring,
                   std::atomic<uint64_t>& doorbell);

// The receiving side: finds complete messages at the read position,
// validates them, and zeroes them once consumed.
class RingReader {
 public:
  enum class Poll {
    kEmpty,    // nothing at the read position
    kPartial,  // a message has begun but its trailer has not landed
    kMessage,  // *out describes a complete, validated message
    kBad,      // hostile or corrupt bytes; *problem says what
  };
  struct View {
    MessageHeader header;
    std::span<const std::byte> payload;
  };

  void reset(std::byte* ring, uint32_t capacity_bytes);
  // Looks at the read position; wrap markers are consumed on the way.
  // Never reads outside the ring, whatever the ring holds.
  Poll poll(View* out, Status* problem);
  // Zeroes the message poll() returned and moves past it.
  void consume(const View& v);

  uint64_t consumed_bytes() const { return consumed_bytes_; }
  uint32_t read_offset() const { return read_offset_; }
  uint32_t expected_seq() const { return expected_seq_; }

 private:
  Poll reject(Status* problem, const char* what, uint32_t seq, uint32_t size);

  std::byte* ring_ = nullptr;
  uint32_t capacity_bytes_ = 0;
  uint32_t read_offset_ = 0;
  uint64_t consumed_bytes_ = 0;
  uint32_t expected_seq_ = 1;
};

}  // namespace locus::ring
