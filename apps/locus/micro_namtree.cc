// NAM local tree search vs absl::btree_map: see micro_namtree.h. Every
// lookup hits (each key was inserted once, its payload a mix of the key),
// and both sides fold what they found into a checksum that is compared
// afterwards, so no loop can be optimised away and both are shown to find
// the same payloads.
#include "apps/locus/micro_namtree.h"

#include <absl/container/btree_map.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "backends/os/os_env.h"
#include "core/common/random.h"
#include "core/index/nam/arena.h"
#include "core/index/nam/epoch.h"
#include "core/index/nam/local_access.h"
#include "core/index/nam/tree.h"

namespace locus::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

uint64_t payload_of(uint64_t key) { return key * 0x9E3779B97F4A7C15ull + 1; }

struct Rates {
  double locus = 0, absl = 0;
  double served = 0;  // with the coarse-grained server's epoch announcement per lookup
  uint64_t tree_bytes = 0;
};

StatusOr<Rates> measure(const MicroNamtreeConfig& c, uint64_t records) {
  Random rng(c.seed ^ records);
  std::vector<uint64_t> keys(records);
  for (auto& k : keys) k = rng.next_u64() >> 1;  // below the layout's reserved top key
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (size_t i = keys.size(); i > 1; --i) std::swap(keys[i - 1], keys[rng.uniform(i)]);  // random insert order
  const uint64_t n = keys.size();

  // Leaves end about 70% full after random inserts; room for them at half
  // full, inner levels and slack.
  const uint64_t pairs_per_page = c.page_bytes / 16;
  const uint64_t arena_bytes = std::max<uint64_t>(4 * (n / pairs_per_page + 64) * c.page_bytes, 1 << 20);
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<nam::Arena> arena,
                         nam::Arena::create(Env{}, 0, arena_bytes, c.page_bytes, /*remote=*/false));
  os::SteadyClock clock;
  nam::LocalAccess access(*arena, clock);
  LOCUS_RETURN_IF_ERROR(nam::BlinkTree::create_empty(access));
  nam::BlinkTree tree(access);
  absl::btree_map<uint64_t, uint64_t> baseline;
  for (uint64_t k : keys) {
    LOCUS_RETURN_IF_ERROR(tree.insert({k, payload_of(k)}));
    baseline.emplace(k, payload_of(k));
  }
  // The same tree as a coarse-grained memory server's request tree reads
  // it: each lookup announces the reclamation epoch first (epoch.h).
  nam::LocalReclaimer reclaimer(1);
  nam::BlinkTree served(access);
  LOCUS_RETURN_IF_ERROR(served.set_reclaimer(&reclaimer));
  std::vector<uint32_t> order(c.lookups);
  for (auto& o : order) o = static_cast<uint32_t>(rng.uniform(n));

  Rates r;
  r.tree_bytes = arena->used_bytes();
  const double lookups = static_cast<double>(c.lookups);
  uint64_t locus_sum = 0, absl_sum = 0, served_sum = 0;
  std::vector<uint64_t> payloads;
  payloads.reserve(16);
  for (uint32_t round = 0; round < c.rounds; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) {
      payloads.clear();
      LOCUS_RETURN_IF_ERROR(tree.lookup(keys[i], &payloads));
      for (uint64_t p : payloads) locus_sum += p;
    }
    r.locus = std::max(r.locus, lookups / seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) {
      auto it = baseline.find(keys[i]);
      if (it != baseline.end()) absl_sum += it->second;
    }
    r.absl = std::max(r.absl, lookups / seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) {
      payloads.clear();
      LOCUS_RETURN_IF_ERROR(served.lookup(keys[i], &payloads));
      for (uint64_t p : payloads) served_sum += p;
    }
    r.served = std::max(r.served, lookups / seconds_since(t0));
  }
  if (locus_sum != absl_sum || served_sum != absl_sum) {
    return internal_error(
        fmt::format("micro namtree: the trees disagree (checksums: locus {:x}, server path {:x}, absl {:x})",
                    locus_sum, served_sum, absl_sum));
  }
  return r;
}

}  // namespace

Status run_micro_namtree(const MicroNamtreeConfig& c) {
  if (c.records == 0 || c.small_records == 0 || c.lookups == 0 || c.rounds == 0) {
    return invalid_argument("--records, --ops and rounds must be positive");
  }
  if (std::max(c.records, c.small_records) > UINT32_MAX) return invalid_argument("--records: at most 2^32 keys");
  fmt::print(
      "micro namtree: NAM local B-link tree ({}-byte pages, 8-byte keys and payloads, the coarse-grained "
      "server's lookup) vs absl::btree_map<uint64_t, uint64_t>, {} uniform lookups, best of {} rounds, "
      "seed {}\n",
      c.page_bytes, c.lookups, c.rounds, c.seed);
  fmt::print("{:>10} {:>10} {:>16} {:>16} {:>12} {:>16} {:>13}\n", "keys", "tree MiB", "locus/s", "absl/s",
             "locus/absl", "server/s", "server/absl");
  for (uint64_t records : {c.records, c.small_records}) {
    LOCUS_ASSIGN_OR_RETURN(Rates r, measure(c, records));
    fmt::print("{:>10} {:>10.1f} {:>16.0f} {:>16.0f} {:>12.2f} {:>16.0f} {:>13.2f}\n", records,
               r.tree_bytes / 1048576.0, r.locus, r.absl, r.locus / r.absl, r.served, r.served / r.absl);
    fmt::print("result: keys={} lookup_ratio={:.3f} server_ratio={:.3f}\n", records, r.locus / r.absl,
               r.served / r.absl);
  }
  fmt::print("server/s: the same lookups as a coarse-grained memory server's request tree makes them, each "
             "announcing the reclamation epoch first (a store and a fence)\n");
  fmt::print("goal: locus/absl >= 1.0\n");
  return Status();
}

}  // namespace locus::cli
