// Fuzz target: Catfish's ring buffer reader (core/index/catfish/
// ring_buffer.cc, RingReader::poll/consume), the decoder a messaging
// worker runs on request rings any client may write anything into, and a
// client on its response ring. Two halves, picked by the first byte:
//  * hostile: the ring holds the fuzzer's bytes; the reader polls and
//    consumes until it finds nothing, a partial message or bad bytes. Every
//    message it hands out lies inside the ring, and it never reads outside
//    the ring (ASan; the ring is its own allocation of exactly its size).
//  * round trip: a RingWriter places messages of fuzzed sizes and types,
//    the reader takes them back in order, with the fuzzer choosing how much
//    to consume before each write; and it then flips one fuzzed byte of the
//    ring (a torn or hostile write) and polls again.
#include <vector>

#include "core/rpc/ring_buffer.h"
#include "tests/fuzz/support/input.h"

using namespace locus;
using namespace locus::ring;

namespace {

// Exactly capacity bytes, 8-byte aligned, so ASan flags a read one past the end.
class Ring {
 public:
  explicit Ring(uint32_t capacity) : words_(capacity / 8) {}
  std::byte* data() { return reinterpret_cast<std::byte*>(words_.data()); }

 private:
  std::vector<uint64_t> words_;
};

void check_view(const RingReader& reader, const RingReader::View& v, const std::byte* ring, uint32_t capacity) {
  FUZZ_CHECK(v.payload.data() >= ring && v.payload.data() + v.payload.size() <= ring + capacity,
             "payload outside the ring");
  FUZZ_CHECK(v.header.size_bytes == message_bytes(v.header.payload_bytes), "size field");
  FUZZ_CHECK(reader.read_offset() + v.header.size_bytes <= capacity, "message past the end of the ring");
  uint64_t sum = 0;
  for (std::byte b : v.payload) sum += static_cast<uint8_t>(b);
  (void)sum;
}

void hostile(fuzz::InputStream& in) {
  const uint32_t capacity = 64 + 8 * (in.get<uint16_t>() % 512);
  Ring ring(capacity);
  const auto bytes = in.bytes(capacity);
  std::memcpy(ring.data(), bytes.data(), bytes.size());
  RingReader reader;
  reader.reset(ring.data(), capacity);
  for (int i = 0; i < 1024; ++i) {
    RingReader::View v;
    Status problem;
    const RingReader::Poll p = reader.poll(&v, &problem);
    if (p != RingReader::Poll::kMessage) {
      FUZZ_CHECK(p != RingReader::Poll::kBad || !problem.is_ok(), "kBad without a reason");
      return;
    }
    check_view(reader, v, ring.data(), capacity);
    reader.consume(v);
  }
}

void round_trip(fuzz::InputStream& in) {
  const uint32_t capacity = 2 * kMessageOverheadBytes + 8 * (in.get<uint16_t>() % 512);
  Ring ring(capacity);
  RingWriter writer;
  writer.reset(capacity);
  RingReader reader;
  reader.reset(ring.data(), capacity);
  uint64_t written = 0, read = 0;
  std::vector<std::byte> payload(capacity);
  for (int i = 0; i < 256 && !in.empty(); ++i) {
    const auto op = in.get<uint8_t>();
    if ((op & 1) != 0) {
      // Consume up to op >> 1 messages.
      for (int k = 0; k < (op >> 1); ++k) {
        RingReader::View v;
        Status problem;
        const RingReader::Poll p = reader.poll(&v, &problem);
        FUZZ_CHECK(p != RingReader::Poll::kBad, "writer's own output is bad: %s", problem.to_string().c_str());
        if (p != RingReader::Poll::kMessage) {
          FUZZ_CHECK(read == written, "%llu messages written, %llu read, but the ring looks empty",
                     static_cast<unsigned long long>(written), static_cast<unsigned long long>(read));
          break;
        }
        FUZZ_CHECK(v.header.request_id == read, "message %llu came back as %llu",
                   static_cast<unsigned long long>(read), static_cast<unsigned long long>(v.header.request_id));
        check_view(reader, v, ring.data(), capacity);
        reader.consume(v);
        ++read;
      }
      continue;
    }
    MessageHeader h;
    h.type = in.get<uint16_t>();
    h.kind = static_cast<MessageKind>(1 + op % 5);
    h.status = op >> 4;
    h.payload_bytes = in.get<uint16_t>() % (capacity - kMessageOverheadBytes + 1);
    h.request_id = written;
    const uint32_t size_bytes = message_bytes(h.payload_bytes);
    if (size_bytes > capacity) continue;
    const auto p = writer.place(size_bytes, reader.consumed_bytes());
    if (!p) continue;  // full: the fuzzer must consume first
    if (p->wrap) {
      const uint64_t w = wrap_word(p->wrap_seq, p->wrap_bytes);
      std::memcpy(ring.data() + p->wrap_offset, &w, 8);
    }
    h.seq = p->seq;
    const auto body = in.bytes(h.payload_bytes);
    std::memset(ring.data() + p->offset + kMessageHeaderBytes, 0, h.payload_bytes);
    std::memcpy(ring.data() + p->offset + kMessageHeaderBytes, body.data(), body.size());
    encode_message(ring.data() + p->offset, h);
    writer.commit(*p, size_bytes);
    ++written;
  }
  // A hostile byte anywhere: the reader may refuse, but stays in bounds.
  const uint32_t at = in.get<uint32_t>() % capacity;
  ring.data()[at] ^= static_cast<std::byte>(in.get<uint8_t>() | 1);
  for (int i = 0; i < 512; ++i) {
    RingReader::View v;
    Status problem;
    if (reader.poll(&v, &problem) != RingReader::Poll::kMessage) break;
    check_view(reader, v, ring.data(), capacity);
    reader.consume(v);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputStream in(data, size);
  if ((in.get<uint8_t>() & 1) == 0) {
    hostile(in);
  } else {
    round_trip(in);
  }
  return 0;
}
