// Pilaf table vs libcuckoo: see micro_cuckoo.h. Both sides copy the found
// value into a reused std::string, so they do the same work per lookup.
#include "apps/locus/micro_cuckoo.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <libcuckoo/cuckoohash_map.hh>

#include "core/common/random.h"
#include "core/design/memory_math.h"
#include "core/memory/buddy_allocator.h"
#include "core/index/pilaf/store.h"
#include "core/workload/keys.h"

namespace locus::cli {
namespace {

// libcuckoo looks keys up by string_view (heterogeneous lookup), so neither
// side builds a std::string per lookup.
struct ViewHash {
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
struct ViewEqual {
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Keys in one arena with a fixed stride, so fetching the key to look up
// costs both tables the same single cache miss.
constexpr size_t kStride = 32;
using Baseline = libcuckoo::cuckoohash_map<std::string, std::string, ViewHash, ViewEqual>;

pilaf::StoreOptions store_options(const MicroCuckooConfig& config) {
  pilaf::StoreOptions so;
  so.initial_buckets = design::saturating_mul(config.records, 2);  // final load between 0.25 and 0.5, no growth
  so.initial_extent_bytes = design::saturating_mul(design::saturating_mul(config.records, config.value_bytes + 64), 2);
  return so;
}

}  // namespace

uint64_t micro_cuckoo_bytes(const MicroCuckooConfig& config) {
  using design::saturating_add;
  using design::saturating_mul;
  const pilaf::StoreOptions so = store_options(config);
  const uint64_t buckets = design::saturating_bit_ceil(so.initial_buckets);
  const uint64_t extents = design::saturating_bit_ceil(std::max<uint64_t>(so.initial_extent_bytes, so.max_kv_bytes));
  uint64_t bytes = saturating_mul(config.records, kStride + sizeof(uint8_t));
  bytes = saturating_add(bytes, saturating_mul(buckets, pilaf::kEntryBytes + sizeof(pilaf::Hash128)));
  bytes = saturating_add(bytes, saturating_add(extents, memory::BuddyAllocator::bookkeeping_bytes(
                                                            extents, so.min_extent_block_bytes)));
  bytes = saturating_add(bytes, saturating_mul(config.records, sizeof(Baseline::value_type) + config.value_bytes));
  return saturating_add(bytes, saturating_mul(config.lookups, sizeof(uint32_t)));
}

Status run_micro_cuckoo(const MicroCuckooConfig& config) {
  if (config.records == 0 || config.lookups == 0 || config.rounds == 0) {
    return invalid_argument("--records, --ops and rounds must be positive");
  }
  if (config.records > UINT32_MAX) return invalid_argument("--records: at most 2^32 keys (lookups index them in 32 bits)");
  Random rng(config.seed);
  std::vector<char> arena(config.records * kStride);
  std::vector<uint8_t> key_len(config.records);
  char buf[64];
  for (uint64_t i = 0; i < config.records; ++i) {
    const size_t n = workload::build_key(i, /*hashed=*/true, /*zeropadding=*/1, buf, sizeof buf);
    if (n == 0 || n > kStride) return internal_error("micro cuckoo: key does not fit the arena stride");
    std::memcpy(&arena[i * kStride], buf, n);
    key_len[i] = static_cast<uint8_t>(n);
  }
  auto key = [&](uint64_t i) { return std::string_view(&arena[i * kStride], key_len[i]); };
  const std::string value(config.value_bytes, 'v');

  LOCUS_ASSIGN_OR_RETURN(auto store, pilaf::Store::create(store_options(config)));
  Baseline baseline;
  baseline.reserve(config.records);
  for (uint64_t i = 0; i < config.records; ++i) {
    LOCUS_RETURN_IF_ERROR(store->put(key(i), value));
    baseline.insert(std::string(key(i)), value);
  }
  std::vector<uint32_t> order(config.lookups);
  for (auto& o : order) o = static_cast<uint32_t>(rng.uniform(config.records));

  std::string out;
  out.reserve(config.value_bytes);
  double best_pilaf = 0, best_cuckoo = 0;
  uint64_t misses = 0;
  for (uint32_t round = 0; round < config.rounds; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) {
      std::string_view v;
      if (store->find(key(i), &v)) out.assign(v); else ++misses;
    }
    best_pilaf = std::max(best_pilaf, static_cast<double>(config.lookups) / seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    for (uint32_t i : order) {
      if (!baseline.find(key(i), out)) ++misses;
    }
    best_cuckoo = std::max(best_cuckoo, static_cast<double>(config.lookups) / seconds_since(t0));
  }
  if (misses != 0) return internal_error(fmt::format("micro cuckoo: {} lookups missed", misses));

  fmt::print("micro cuckoo: {} records, {}-byte values, {} uniform lookups, best of {} rounds, seed {}\n",
             config.records, config.value_bytes, config.lookups, config.rounds, config.seed);
  fmt::print("{:<28} {:>16}\n", "table", "lookups/s");
  fmt::print("{:<28} {:>16.0f}\n", "pilaf Store::find", best_pilaf);
  fmt::print("{:<28} {:>16.0f}\n", "libcuckoo find", best_cuckoo);
  fmt::print("ratio pilaf/libcuckoo: {:.2f} (goal >= 1.0)\n", best_pilaf / best_cuckoo);
  return Status();
}

}  // namespace locus::cli
