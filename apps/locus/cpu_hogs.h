// CpuHogs: `locus bench --cpu-hogs N`, CPU-bound background work on a real
// backend's machine for as long as a benchmark runs: N threads that spin
// until destroyed, competing with the run's server and client threads for
// the cores (the Nessie paper's shared-CPU case; on SimGrid the same is
// [platform] background_load).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace locus::cli {

class CpuHogs {
 public:
  explicit CpuHogs(uint32_t threads);
  ~CpuHogs();
  CpuHogs(const CpuHogs&) = delete;
  CpuHogs& operator=(const CpuHogs&) = delete;
  // Loop iterations the hogs ran (proof they ran; read after the run).
  uint64_t spins() const { return spins_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> spins_{0};
  std::vector<std::thread> threads_;
};

}  // namespace locus::cli
