// RPC wire format: a fixed 24-byte header, then the payload. Requests and
// responses share it; a response echoes the request's type and id and
// carries a status code (an error response's payload is the message).
// Payloads are built and parsed with the bounds-checked Writer and Reader,
// so a truncated or hostile message can never make a handler read past
// what arrived.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "core/common/status.h"
#include "core/transport/types.h"

namespace locus::rpc {

constexpr uint32_t kMagic = 0x4C525043;  // "LRPC"
constexpr uint8_t kKindRequest = 1;
constexpr uint8_t kKindResponse = 2;

struct MessageHeader {
  uint32_t magic = kMagic;
  uint16_t type = 0;
  uint8_t kind = kKindRequest;
  uint8_t status = 0;  // StatusCode, responses only
  uint32_t payload_bytes = 0;
  uint32_t reserved = 0;
  uint64_t request_id = 0;
};
static_assert(sizeof(MessageHeader) == 24);
constexpr uint32_t kHeaderBytes = sizeof(MessageHeader);

inline void write_header(std::byte* buf, const MessageHeader& h) { std::memcpy(buf, &h, kHeaderBytes); }
inline MessageHeader read_header(const std::byte* buf) {
  MessageHeader h;
  std::memcpy(&h, buf, kHeaderBytes);
  return h;
}

// Appends little-endian fields to a fixed buffer; overflow is sticky.
class Writer {
 public:
  explicit Writer(std::span<std::byte> out) : out_(out) {}
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof(T));
  }
  void bytes(const void* p, size_t n) {
    if (overflow_ || n > out_.size() - pos_) {
      overflow_ = true;
      return;
    }
    if (n > 0) std::memcpy(out_.data() + pos_, p, n);
    pos_ += n;
  }
  // u32 length then the bytes.
  void blob(std::string_view s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  bool ok() const { return !overflow_; }
  size_t size() const { return pos_; }

 private:
  std::span<std::byte> out_;
  size_t pos_ = 0;
  bool overflow_ = false;
};

// Reads fields back; any read past the end fails and stays failed.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <typename T>
  bool get(T* v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (failed_ || sizeof(T) > in_.size() - pos_) return fail();
    std::memcpy(v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  // A u32-length-prefixed byte string, viewed in place.
  bool blob(std::string_view* out) {
    uint32_t n = 0;
    if (!get(&n)) return false;
    if (n > in_.size() - pos_) return fail();
    *out = std::string_view(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return true;
  }
  bool ok() const { return !failed_; }
  bool at_end() const { return pos_ == in_.size(); }
  size_t size() const { return in_.size(); }  // of the whole message
  // The bytes not read yet (a server logs a request as it came).
  std::span<const std::byte> rest() const { return in_.subspan(pos_); }

 private:
  bool fail() {
    failed_ = true;
    return false;
  }
  std::span<const std::byte> in_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// A registered region as peers learn it (node, region id, rkey, base,
// length): what every index's layout message carries.
inline void put_region(const RemoteRegion& r, Writer& w) {
  w.put(r.node);
  w.put(r.region);
  w.put(r.rkey);
  w.put(r.base_addr);
  w.put(r.length);
}

inline bool get_region(Reader& r, RemoteRegion* out) {
  return r.get(&out->node) && r.get(&out->region) && r.get(&out->rkey) && r.get(&out->base_addr) &&
         r.get(&out->length);
}

}  // namespace locus::rpc
