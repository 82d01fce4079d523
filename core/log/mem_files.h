// MemFiles: an in-memory file system behind the Files seam, for tests and
// the simulator, that can fail the way disks and kernels do:
//   - tear_next_append(n): the next append writes only its first n bytes and
//     fails, as a process killed mid-write() leaves a partial record;
//   - fail_syncs(n): the next n syncs fail (EIO from fsync), and the bytes
//     they would have made durable stay volatile;
//   - fail_dir_syncs(n): the next n directory syncs fail (EIO from fsync on
//     the directory), and the names they would have made durable (files
//     created or renamed since the last good one) stay volatile;
//   - crash(): every file loses what was appended since its last good sync
//     (the page cache gone with the machine), and a file created or renamed
//     since its directory was last synced is gone (under both names: the
//     strictest outcome a journaling file system allows);
//   - corrupt(path, offset): flips a byte, as a bad sector would.
// A test that must crash at every step of a multi-step protocol (a
// checkpoint) sets on_change, which runs after each change to a file or a
// directory, and takes crashed_copy() there: what a crash at that moment
// would leave.
// Every file remembers which prefix of it is durable.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/common/short_mutex.h"
#include "core/transport/files.h"

namespace locus::log {

class MemFiles final : public Files {
 public:
  StatusOr<std::unique_ptr<AppendFile>> open_append(const std::string& path) override;
  StatusOr<std::unique_ptr<ReadFile>> open_read(const std::string& path) override;
  Status truncate(const std::string& path, uint64_t size_bytes) override;
  Status rename(const std::string& from, const std::string& to) override;
  Status remove(const std::string& path) override;
  bool exists(const std::string& path) override;
  StatusOr<std::vector<std::string>> list(const std::string& dir) override;
  Status make_dirs(const std::string& dir) override;
  Status sync_dir(const std::string& dir) override;

  void tear_next_append(uint64_t keep_bytes);
  void fail_syncs(uint32_t count);
  void fail_dir_syncs(uint32_t count);
  void crash();
  // A new file system holding what crash() would leave of this one now.
  std::unique_ptr<MemFiles> crashed_copy() const;
  // Runs after every append, sync, create, truncate, rename, remove and
  // directory sync (op names those, path the file or directory), outside
  // the lock; set it before the files are used, from one thread.
  void changed(std::string_view op, const std::string& path) const {
    if (on_change_) on_change_(op, path);
  }
  void on_change(std::function<void(std::string_view op, const std::string& path)> fn) { on_change_ = std::move(fn); }
  Status corrupt(const std::string& path, uint64_t offset);
  // The file's bytes (written, synced or not); empty if absent.
  std::string contents(const std::string& path);
  uint64_t syncs() const;

  struct File {
    std::string data;
    uint64_t durable_bytes = 0;
    bool entry_durable = false;  // its name survives a crash
  };

 private:
  friend class MemAppendFile;
  Status append(const std::string& path, std::string_view bytes);
  Status sync(const std::string& path);
  uint64_t size_of(const std::string& path);

  mutable ShortMutex mu_;  // held only for in-memory copies: never across a wait
  std::map<std::string, std::shared_ptr<File>> files_;
  int64_t tear_at_ = -1;
  uint32_t failing_syncs_ = 0;
  uint32_t failing_dir_syncs_ = 0;
  uint64_t syncs_ = 0;
  std::function<void(std::string_view, const std::string&)> on_change_;
};

}  // namespace locus::log
