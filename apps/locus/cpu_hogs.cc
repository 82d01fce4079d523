// CpuHogs: see cpu_hogs.h.
#include "apps/locus/cpu_hogs.h"

namespace locus::cli {

CpuHogs::CpuHogs(uint32_t threads) {
  threads_.reserve(threads);
  for (uint32_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      // Pure CPU work, no memory traffic to speak of: counts in a register
      // and publishes the count now and then.
      uint64_t local = 0;
      while (!stop_.load(std::memory_order_relaxed)) {
        for (int k = 0; k < 4096; ++k) {
          local = local * 6364136223846793005ULL + 1442695040888963407ULL;
        }
        spins_.fetch_add(4096, std::memory_order_relaxed);
      }
      if (local == 42) spins_.fetch_add(1, std::memory_order_relaxed);  // keeps `local` live
    });
  }
}

CpuHogs::~CpuHogs() {
  stop_.store(true, std::memory_order_relaxed);
  for (std::thread& t : threads_) t.join();
}

}  // namespace locus::cli
