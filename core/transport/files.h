// Files: the seam through which core code reaches local storage (operation
// logs and their checkpoints, core/log). It is part of the Env so that each
// backend decides what a write costs: loopback and verbs write real files
// (backends/os/posix_files.h), SimGrid charges simulated time for the bytes
// and the syncs (core/log/timed_files.h), and tests use an in-memory file
// system that tears writes, fails syncs and drops unsynced bytes on a crash
// (core/log/mem_files.h). Paths are plain strings; a directory path may
// name shared storage (NFS, a distributed file system).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace locus {

// A file open for appending: bytes go after its end.
class AppendFile {
 public:
  virtual ~AppendFile() = default;
  // Writes every byte (a short write is retried); on error some prefix of
  // the bytes may have reached the file.
  virtual Status append(std::span<const std::byte> bytes) = 0;
  // Makes every appended byte durable (fdatasync).
  virtual Status sync() = 0;
  virtual uint64_t size_bytes() const = 0;
};

// A file open for reading at offsets.
class ReadFile {
 public:
  virtual ~ReadFile() = default;
  // Reads up to out.size() bytes at `offset`; fewer only at the end.
  virtual StatusOr<size_t> read_at(uint64_t offset, std::span<std::byte> out) = 0;
  virtual uint64_t size_bytes() const = 0;
};

class Files {
 public:
  virtual ~Files() = default;
  // Creates the file if absent; appends go after its current end.
  virtual StatusOr<std::unique_ptr<AppendFile>> open_append(const std::string& path) = 0;
  // NotFound if absent.
  virtual StatusOr<std::unique_ptr<ReadFile>> open_read(const std::string& path) = 0;
  // Cuts the file to `size_bytes` (a torn tail found by replay).
  virtual Status truncate(const std::string& path, uint64_t size_bytes) = 0;
  // Atomically replaces `to` by `from` (a finished checkpoint).
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  // NotFound if absent.
  virtual Status remove(const std::string& path) = 0;
  virtual bool exists(const std::string& path) = 0;
  // The names (not paths) of the entries of `dir`; NotFound if absent.
  virtual StatusOr<std::vector<std::string>> list(const std::string& dir) = 0;
  // Creates the directory and its parents if absent.
  virtual Status make_dirs(const std::string& dir) = 0;
  // Makes the directory's entries (creations, renames, removals) durable.
  virtual Status sync_dir(const std::string& dir) = 0;
};

}  // namespace locus
