// A node's disk on the simulator; see sim_disk.h.
#include "backends/simgrid/sim_disk.h"

#include <algorithm>
#include <cmath>

#include "backends/simgrid/sim_world.h"

namespace locus::simgrid_backend {
namespace {

constexpr double kBytesPerMb = 1e6;
// Longest single sleep of a disk wait: well inside the simulated second the
// runtime's wind-down gives daemons to return once the run stops.
constexpr Nanos kWaitSliceNs = 10 * kMillisecond;

class TimedAppendFile final : public AppendFile {
 public:
  TimedAppendFile(std::unique_ptr<AppendFile> inner, SimDisk* disk) : inner_(std::move(inner)), disk_(disk) {}
  Status append(std::span<const std::byte> bytes) override {
    Status st = inner_->append(bytes);
    dirty_bytes_ += bytes.size();  // a failed append may still have left a prefix
    return st;
  }
  Status sync() override {
    LOCUS_RETURN_IF_ERROR(disk_->serve(disk_->sync_s(dirty_bytes_)));
    Status st = inner_->sync();
    if (st.is_ok()) dirty_bytes_ = 0;
    return st;
  }
  uint64_t size_bytes() const override { return inner_->size_bytes(); }

 private:
  std::unique_ptr<AppendFile> inner_;
  SimDisk* disk_;
  uint64_t dirty_bytes_ = 0;
};

class TimedReadFile final : public ReadFile {
 public:
  TimedReadFile(std::unique_ptr<ReadFile> inner, SimDisk* disk) : inner_(std::move(inner)), disk_(disk) {}
  StatusOr<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
    StatusOr<size_t> n = inner_->read_at(offset, out);
    if (n.is_ok()) LOCUS_RETURN_IF_ERROR(disk_->serve(disk_->read_s(*n)));
    return n;
  }
  uint64_t size_bytes() const override { return inner_->size_bytes(); }

 private:
  std::unique_ptr<ReadFile> inner_;
  SimDisk* disk_;
};

}  // namespace

double SimDisk::sync_s(uint64_t dirty_bytes) const {
  return spec_.sync_us * 1e-6 + static_cast<double>(dirty_bytes) / (spec_.write_mb_per_s * kBytesPerMb);
}

double SimDisk::read_s(uint64_t bytes) const {
  return static_cast<double>(bytes) / (spec_.read_mb_per_s * kBytesPerMb);
}

Status SimDisk::serve(double service_s) {
  // Only the run's actors wait: nothing can before the run (records
  // loaded), nor in the engine's own context (timers, clean-up).
  if (current_actor() == nullptr || service_s <= 0) return Status();
  const Nanos now_ns = clock_->now();
  const double now_s = static_cast<double>(now_ns) * 1e-9;
  busy_until_s_ = std::max(busy_until_s_, now_s) + service_s;
  const Nanos wait_ns = static_cast<Nanos>(std::llround((busy_until_s_ - now_s) * 1e9));
  for (Nanos slept_ns = 0; slept_ns < wait_ns;) {
    if (stop_ != nullptr && stop_->load(std::memory_order_acquire)) {
      return aborted_error("the run ended while this node waited for its disk");
    }
    const Nanos slice_ns = std::min(wait_ns - slept_ns, kWaitSliceNs);
    clock_->sleep_for(slice_ns);
    slept_ns += slice_ns;
  }
  return Status();
}

StatusOr<std::unique_ptr<AppendFile>> SimDiskFiles::open_append(const std::string& path) {
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<AppendFile> f, inner_->open_append(path));
  return std::unique_ptr<AppendFile>(std::make_unique<TimedAppendFile>(std::move(f), &disk_));
}

StatusOr<std::unique_ptr<ReadFile>> SimDiskFiles::open_read(const std::string& path) {
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<ReadFile> f, inner_->open_read(path));
  return std::unique_ptr<ReadFile>(std::make_unique<TimedReadFile>(std::move(f), &disk_));
}

}  // namespace locus::simgrid_backend
