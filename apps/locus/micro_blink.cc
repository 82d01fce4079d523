// Cell Store search vs absl::btree_map: see micro_blink.h. Every lookup
// hits (the keys were all inserted), and each side folds what it found into
// a checksum that is checked afterwards, so no loop can be optimised away
// and both sides are shown to have found the same values.
#include "apps/locus/micro_blink.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/btree_map.h>
#include <absl/strings/string_view.h>
#include <fmt/format.h>

#include "core/common/random.h"
#include "core/index/cell/store.h"

namespace locus::cli {
namespace {

constexpr uint32_t kKeyBytes = 8;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void put_big_endian(uint64_t x, char* out) {
  for (int i = kKeyBytes - 1; i >= 0; --i, x >>= 8) out[i] = static_cast<char>(x & 0xff);
}

uint64_t load_u64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

struct Rates {
  double cell_search = 0, absl_search = 0, cell_get = 0, absl_get = 0;
  double absl_string_search = 0;  // absl::btree_map<std::string, ...>: Cell's own key type
  uint32_t local_levels = 0;
};

// One size: builds both trees from the same keys, then times each side on
// the same lookup order, best of config.rounds.
StatusOr<Rates> measure(const MicroBlinkConfig& config, uint64_t records) {
  Random rng(config.seed ^ records);
  std::vector<uint64_t> ints(records);
  for (auto& k : ints) k = rng.next_u64();
  std::sort(ints.begin(), ints.end());
  ints.erase(std::unique(ints.begin(), ints.end()), ints.end());
  // Insert in random order (Fisher-Yates), as a loaded tree would be.
  for (size_t i = ints.size(); i > 1; --i) std::swap(ints[i - 1], ints[rng.uniform(i)]);
  const uint64_t n = ints.size();
  std::vector<char> arena(n * kKeyBytes);
  for (uint64_t i = 0; i < n; ++i) put_big_endian(ints[i], &arena[i * kKeyBytes]);
  auto key = [&](uint64_t i) { return std::string_view(&arena[i * kKeyBytes], kKeyBytes); };

  cell::StoreOptions so;
  so.geometry.node_bytes = config.node_bytes;
  so.geometry.key_capacity_bytes = kKeyBytes;
  so.geometry.meganodes_per_server = 1;
  // One meganode for the whole tree: leaves hold capacity * ~0.7 keys after
  // random inserts; room for 1.5 times half-full leaves, so the meganode
  // never fills (with no split worker, a full meganode would answer busy).
  const uint64_t leaves = n / std::max<uint32_t>(1, so.geometry.capacity(true) / 2) + 64;
  so.geometry.meganode_nodes = static_cast<uint32_t>(std::bit_ceil(leaves + leaves / 2));
  so.extents_bytes = std::bit_ceil(std::max<uint64_t>(n * 64, 1 << 20));
  LOCUS_ASSIGN_OR_RETURN(auto store, cell::Store::create(0, 1, so));
  LOCUS_RETURN_IF_ERROR(store->init_tree());
  absl::btree_map<uint64_t, uint64_t> baseline;
  absl::btree_map<std::string, uint64_t> by_string;  // looked up by absl::string_view: no allocation
  for (uint64_t i = 0; i < n; ++i) {
    // The value is the key's own bytes, so both sides can fold it the same way.
    LOCUS_ASSIGN_OR_RETURN(cell::OpResult r, store->put(key(i), key(i), cell::kNullPtr));
    if (r.outcome != cell::Outcome::kDone) {
      return internal_error(fmt::format("micro blink: put {} of {} ended with outcome {}", i, n,
                                        static_cast<int>(r.outcome)));
    }
    baseline.emplace(ints[i], load_u64(key(i).data()));
    by_string.emplace(std::string(key(i)), ints[i]);
  }
  std::vector<uint32_t> order(config.lookups);
  for (auto& o : order) o = static_cast<uint32_t>(rng.uniform(n));

  Rates rates;
  rates.local_levels = store->contains(key(0), cell::kNullPtr).meganode.height;
  const double lookups = static_cast<double>(config.lookups);
  uint64_t cell_sum = 0, absl_sum = 0, cell_found = 0, absl_found = 0;
  for (uint32_t round = 0; round < config.rounds; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) cell_found += store->contains(key(i), cell::kNullPtr).found ? 1 : 0;
    rates.cell_search = std::max(rates.cell_search, lookups / seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) absl_found += baseline.contains(ints[i]) ? 1 : 0;
    rates.absl_search = std::max(rates.absl_search, lookups / seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) cell_sum += load_u64(store->get(key(i), cell::kNullPtr).value.data());
    rates.cell_get = std::max(rates.cell_get, lookups / seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) absl_sum += baseline.find(ints[i])->second;
    rates.absl_get = std::max(rates.absl_get, lookups / seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) absl_found += by_string.contains(absl::string_view(key(i).data(), kKeyBytes)) ? 1 : 0;
    rates.absl_string_search = std::max(rates.absl_string_search, lookups / seconds_since(t0));
  }
  absl_found /= 2;  // counted by both absl maps
  if (cell_found != absl_found || cell_found != uint64_t{config.lookups} * config.rounds || cell_sum != absl_sum) {
    return internal_error(fmt::format("micro blink: the trees disagree (found {} vs {}, checksums {:x} vs {:x})",
                                      cell_found, absl_found, cell_sum, absl_sum));
  }
  return rates;
}

}  // namespace

StatusOr<LocalSearchRate> cell_local_search_rate(const MicroBlinkConfig& config) {
  if (config.records == 0 || config.records > UINT32_MAX || config.lookups == 0 || config.rounds == 0) {
    return invalid_argument("cell_local_search_rate: records in [1, 2^32), lookups and rounds positive");
  }
  LOCUS_ASSIGN_OR_RETURN(Rates r, measure(config, config.records));
  return LocalSearchRate{r.cell_search, r.local_levels};
}

Status run_micro_blink(const MicroBlinkConfig& config) {
  if (config.records == 0 || config.small_records == 0 || config.lookups == 0 || config.rounds == 0) {
    return invalid_argument("--records, --ops and rounds must be positive");
  }
  if (std::max(config.records, config.small_records) > UINT32_MAX) {
    return invalid_argument("--records: at most 2^32 keys");
  }
  fmt::print("micro blink: Cell Store (one meganode, {}-byte nodes, {}-byte keys) vs absl::btree_map<uint64_t, "
             "uint64_t>, {} uniform lookups, best of {} rounds, seed {}\n",
             config.node_bytes, kKeyBytes, config.lookups, config.rounds, config.seed);
  fmt::print("{:>10} {:>7} {:<8} {:>16} {:>16} {:>12}\n", "keys", "levels", "op", "locus/s", "absl/s",
             "locus/absl");
  for (uint64_t records : {config.records, config.small_records}) {
    LOCUS_ASSIGN_OR_RETURN(Rates r, measure(config, records));
    fmt::print("{:>10} {:>7} {:<8} {:>16.0f} {:>16.0f} {:>12.2f}\n", records, r.local_levels, "search",
               r.cell_search, r.absl_search, r.cell_search / r.absl_search);
    fmt::print("{:>10} {:>7} {:<8} {:>16.0f} {:>16.0f} {:>12.2f}\n", records, r.local_levels, "get", r.cell_get,
               r.absl_get, r.cell_get / r.absl_get);
    fmt::print("{:>10} {:>7} {:<8} {:>16.0f} {:>16.0f} {:>12.2f}   (absl with std::string keys)\n", records,
               r.local_levels, "search", r.cell_search, r.absl_string_search, r.cell_search / r.absl_string_search);
    // One line for scripts.
    fmt::print("result: keys={} search_ratio={:.3f} get_ratio={:.3f} string_search_ratio={:.3f}\n", records,
               r.cell_search / r.absl_search, r.cell_get / r.absl_get, r.cell_search / r.absl_string_search);
  }
  fmt::print("goal: locus/absl >= 1.0\n");
  return Status();
}

}  // namespace locus::cli
