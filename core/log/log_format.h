// The framing of operation logs and checkpoints (core/log): each record is
//   u32 payload_bytes | u64 crc64(payload_bytes, payload) | payload
// in little-endian byte order, appended one after another. The CRC (isa-l's
// CRC-64/XZ, core/common/crc64.h, as Pilaf's entries use) covers the length
// too, so a length torn or flipped on disk is caught, and its all-ones init
// means a run of zeros (a file extended but never written) is no record.
//
// Replay reads records in order and stops at the first one that is not
// whole and intact, saying where and why: a crash tears at most the tail,
// so what comes before it is the log, and the caller truncates the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/transport/files.h"

namespace locus::log {

inline constexpr uint64_t kRecordHeaderBytes = 12;
// Longer lengths are taken for corruption: no record locus writes is near.
inline constexpr uint32_t kMaxRecordBytes = 64u << 20;

// Appends one framed record to `out`.
void frame_record(std::string_view payload, std::string* out);

enum class TailKind {
  kClean,        // the file ends after a whole record (or is empty)
  kTornHeader,   // fewer than kRecordHeaderBytes bytes after the last record
  kTornPayload,  // a header whose payload runs past the end of the file
  kBadLength,    // a length over kMaxRecordBytes
  kBadCrc,       // a whole record whose CRC does not match
};
std::string_view tail_kind_name(TailKind kind);
std::ostream& operator<<(std::ostream& os, TailKind kind);

struct ReplayResult {
  uint64_t records = 0;
  uint64_t valid_bytes = 0;  // where the last good record ends: truncate here
  uint64_t file_bytes = 0;
  TailKind tail = TailKind::kClean;
  // "clean end at 4096" or "torn payload at offset 4096 (record claims
  // 100 bytes, 40 remain); 52 bytes dropped".
  std::string describe() const;
};

// Calls `apply(offset, payload)` for each good record of `path` in order.
// A missing file replays as empty. An error from `apply` or from reading
// stops the replay and is returned; a bad tail is not an error.
using ApplyRecord = std::function<Status(uint64_t offset, std::string_view payload)>;
StatusOr<ReplayResult> replay_file(Files& files, const std::string& path, const ApplyRecord& apply);

}  // namespace locus::log
