// Record framing and replay: see log_format.h.
#include "core/log/log_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <vector>

#include "core/common/crc64.h"

namespace locus::log {
namespace {

void put_le(uint64_t v, int bytes, char* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>(v >> (8 * i));
}
uint64_t get_le(const std::byte* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{std::to_integer<uint8_t>(in[i])} << (8 * i);
  return v;
}
uint64_t record_crc(const char* length_le, const void* payload, size_t bytes) {
  return crc64(payload, bytes, crc64(length_le, 4));
}

// A window over the file so that small records cost no read call each.
class Window {
 public:
  explicit Window(ReadFile& file) : file_(file), buf_(1 << 20) {}
  // The `bytes` at `offset` (which the caller checked lie inside the file).
  StatusOr<const std::byte*> at(uint64_t offset, uint64_t bytes) {
    if (offset < from_ || offset + bytes > from_ + have_) {
      if (bytes > buf_.size()) buf_.resize(bytes);
      LOCUS_ASSIGN_OR_RETURN(size_t n, file_.read_at(offset, buf_));
      from_ = offset;
      have_ = n;
      if (n < bytes) return corruption(fmt::format("log shrank while being read at offset {}", offset));
    }
    return buf_.data() + (offset - from_);
  }

 private:
  ReadFile& file_;
  std::vector<std::byte> buf_;
  uint64_t from_ = 0;
  uint64_t have_ = 0;
};

}  // namespace

void frame_record(std::string_view payload, std::string* out) {
  char header[kRecordHeaderBytes];
  put_le(payload.size(), 4, header);
  put_le(record_crc(header, payload.data(), payload.size()), 8, header + 4);
  out->append(header, kRecordHeaderBytes);
  out->append(payload);
}

std::string_view tail_kind_name(TailKind kind) {
  switch (kind) {
    case TailKind::kClean:
      return "clean end";
    case TailKind::kTornHeader:
      return "torn header";
    case TailKind::kTornPayload:
      return "torn payload";
    case TailKind::kBadLength:
      return "bad length";
    case TailKind::kBadCrc:
      return "CRC mismatch";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, TailKind kind) { return os << tail_kind_name(kind); }

std::string ReplayResult::describe() const {
  if (tail == TailKind::kClean) return fmt::format("{} records, clean end at offset {}", records, valid_bytes);
  return fmt::format("{} records, then {} at offset {}; {} bytes after it dropped", records, tail_kind_name(tail),
                     valid_bytes, file_bytes - valid_bytes);
}

StatusOr<ReplayResult> replay_file(Files& files, const std::string& path, const ApplyRecord& apply) {
  ReplayResult r;
  auto opened = files.open_read(path);
  if (!opened.is_ok()) {
    if (opened.status().code() == StatusCode::kNotFound) return r;
    return opened.status();
  }
  ReadFile& file = **opened;
  Window window(file);
  r.file_bytes = file.size_bytes();
  uint64_t at = 0;
  while (at < r.file_bytes) {
    if (r.file_bytes - at < kRecordHeaderBytes) {
      r.tail = TailKind::kTornHeader;
      break;
    }
    LOCUS_ASSIGN_OR_RETURN(const std::byte* header, window.at(at, kRecordHeaderBytes));
    const uint64_t length = get_le(header, 4);
    const uint64_t crc = get_le(header + 4, 8);
    if (length > kMaxRecordBytes) {
      r.tail = TailKind::kBadLength;
      break;
    }
    if (r.file_bytes - at - kRecordHeaderBytes < length) {
      r.tail = TailKind::kTornPayload;
      break;
    }
    LOCUS_ASSIGN_OR_RETURN(const std::byte* record, window.at(at, kRecordHeaderBytes + length));
    const std::byte* payload = record + kRecordHeaderBytes;
    if (record_crc(reinterpret_cast<const char*>(record), payload, length) != crc) {
      r.tail = TailKind::kBadCrc;
      break;
    }
    LOCUS_RETURN_IF_ERROR(apply(at, std::string_view(reinterpret_cast<const char*>(payload), length)));
    at += kRecordHeaderBytes + length;
    ++r.records;
  }
  r.valid_bytes = at;
  return r;
}

}  // namespace locus::log
