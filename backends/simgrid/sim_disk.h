// A node's disk on the simulator: the files core code writes (operation
// logs and checkpoints, core/log) live in memory (log::MemFiles, so a
// restarted server replays them), and this decorator charges the simulated
// time a disk would take, from the scenario's [platform.disk] figures
// (measured by `locus bench --micro log`):
//   - an append costs no disk time: write(2) copies into the page cache,
//     and that CPU time is part of the calibrated handler that logs;
//   - a sync (fdatasync) costs sync_us plus the bytes appended to the file
//     since its last sync at write_mb_per_s;
//   - a read costs its bytes at read_mb_per_s (recovery reads a log that
//     is no longer cached: the bench measures it so).
// Each node has one disk serving these first come, first served: a caller
// waits for the disk's earlier work, then its own. Calls made outside any
// actor (records loaded before the run starts) cost nothing.
// A wait longer than a slice is slept in slices, and a run that ends
// during it (a restarted server replaying from a slow disk past the run's
// end) makes the call fail with kAborted, so the waiting actor returns on
// its own before the runtime winds down rather than being killed mid-sleep
// (killing unwinds a swapped stack, which AddressSanitizer cannot follow).
// Not modelled: background writeback under the `never` policy (the page
// cache absorbs every write), and directory syncs (metadata only).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/scenario/platform.h"
#include "core/transport/env.h"
#include "core/transport/files.h"

namespace locus::simgrid_backend {

class SimDisk {
 public:
  // `stop`: the run's stop flag (may be null: waits are then never cut short).
  SimDisk(const scenario::DiskSpec& spec, Clock* clock, const std::atomic<bool>* stop)
      : spec_(spec), clock_(clock), stop_(stop) {}
  // Waits (simulated) until the disk has done `service_s` of work queued
  // behind what it already has; kAborted if the run ends first.
  Status serve(double service_s);
  double sync_s(uint64_t dirty_bytes) const;
  double read_s(uint64_t bytes) const;

 private:
  scenario::DiskSpec spec_;
  Clock* clock_;
  const std::atomic<bool>* stop_;
  double busy_until_s_ = 0;
};

// One node's view of the shared in-memory files, with its disk's costs.
class SimDiskFiles final : public Files {
 public:
  SimDiskFiles(Files* inner, const scenario::DiskSpec& spec, Clock* clock, const std::atomic<bool>* stop)
      : inner_(inner), disk_(spec, clock, stop) {}

  StatusOr<std::unique_ptr<AppendFile>> open_append(const std::string& path) override;
  StatusOr<std::unique_ptr<ReadFile>> open_read(const std::string& path) override;
  Status truncate(const std::string& path, uint64_t size_bytes) override { return inner_->truncate(path, size_bytes); }
  Status rename(const std::string& from, const std::string& to) override { return inner_->rename(from, to); }
  Status remove(const std::string& path) override { return inner_->remove(path); }
  bool exists(const std::string& path) override { return inner_->exists(path); }
  StatusOr<std::vector<std::string>> list(const std::string& dir) override { return inner_->list(dir); }
  Status make_dirs(const std::string& dir) override { return inner_->make_dirs(dir); }
  Status sync_dir(const std::string& dir) override { return inner_->sync_dir(dir); }

 private:
  Files* inner_;
  SimDisk disk_;
};

}  // namespace locus::simgrid_backend
