// Nessie's tables as the model sees them: see model_tables.h.
#include "core/index/nessie/model_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/common/random.h"
#include "core/index/nessie/driver.h"
#include "core/index/nessie/layout.h"
#include "core/workload/workload.h"

namespace locus::nessie {
namespace {

// Records the model places (an ITE slot and a filter each, 12 B a record
// plus the index tables' 4 B a slot): beyond this, refused by name.
constexpr uint64_t kMaxModelRecords = 4'000'000;
// Loader's bound on one record's cuckoo walk (loader.cc).
constexpr uint32_t kMaxLoadKicks = 500;
constexpr uint32_t kEmpty = UINT32_MAX;
constexpr double kCasPayloadBytes = 24;  // 16 B of operands out, 8 B of result back

struct Counter {
  const scenario::NicSpec& nic;
  OpCounts c;
  void read(double weight, uint32_t bytes) {
    c.ops += weight, c.payload_bytes += weight * bytes, c.out_bytes += weight * bytes;
    c.service_us += weight * static_cast<double>(nic.read.service_ns(bytes)) * 1e-3;
  }
  void write(double weight, uint32_t bytes) {
    c.ops += weight, c.payload_bytes += weight * bytes, c.in_bytes += weight * bytes;
    c.service_us += weight * static_cast<double>(nic.write.service_ns(bytes)) * 1e-3;
  }
  void cas(double weight) {
    c.ops += weight, c.payload_bytes += weight * kCasPayloadBytes, c.out_bytes += weight * 8;
    c.in_bytes += weight * 16;
    c.service_us += weight * static_cast<double>(nic.atomic.service_ns(8)) * 1e-3;
  }
};

OpCounts divided(OpCounts c, double n) {
  c.ops /= n, c.payload_bytes /= n, c.service_us /= n, c.out_bytes /= n, c.in_bytes /= n;
  return c;
}

}  // namespace

OpCounts mix(const OpCounts& a, const OpCounts& b, double share) {
  auto m = [&](double x, double y) { return (1 - share) * x + share * y; };
  return {m(a.ops, b.ops), m(a.payload_bytes, b.payload_bytes), m(a.service_us, b.service_us),
          m(a.out_bytes, b.out_bytes), m(a.in_bytes, b.in_bytes)};
}

OpCounts weighted(std::span<const OpCounts> counts, std::span<const double> weights) {
  OpCounts out;
  double total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double w = weights[i];
    total += w;
    out.ops += w * counts[i].ops, out.payload_bytes += w * counts[i].payload_bytes;
    out.service_us += w * counts[i].service_us, out.out_bytes += w * counts[i].out_bytes;
    out.in_bytes += w * counts[i].in_bytes;
  }
  return divided(out, total);
}

StatusOr<TableCosts> table_costs(const scenario::Scenario& s, const NessieConfig& config) {
  const workload::WorkloadSpec& w = s.workload;
  const uint64_t records = w.effective_insertcount();
  if (records == 0) return invalid_argument("workload.recordcount: the nessie model needs records");
  if (records > kMaxModelRecords) {
    return invalid_argument(fmt::format("workload.recordcount: the nessie model places at most {} records, not {}",
                                        kMaxModelRecords, records));
  }
  const uint32_t record_bytes = w.fieldcount * w.fieldlength;
  const uint32_t value_bytes = config.value_bytes != 0 ? config.value_bytes : record_bytes;
  std::string bad_key;
  auto geometry = make_geometry(config, s.platform.servers, w.recordcount, s.run.clients, value_bytes, &bad_key);
  if (!geometry.is_ok()) return invalid_argument("index." + bad_key + ": " + geometry.status().message());
  const Geometry& g = *geometry;
  LOCUS_ASSIGN_OR_RETURN(auto wl, workload::Workload::create(w));
  std::vector<std::string> keys(records);
  std::string buf(wl.max_key_bytes(), '\0');
  double key_sum = 0;
  for (uint64_t n = 0; n < records; ++n) {
    keys[n].assign(buf.data(), wl.build_key(w.insertstart + n, buf.data(), buf.size()));
    key_sum += static_cast<double>(keys[n].size());
  }

  // Loader::insert's placement of the ITEs, record by record.
  const uint64_t slots = g.global_entries();
  std::vector<uint32_t> at(slots, kEmpty);  // the record whose ITE a global slot holds
  std::vector<uint32_t> filter(records);
  auto global = [&](const Slot& sl) { return uint64_t{sl.node} * g.index_entries + sl.index; };
  Random walk(1);  // Loader's walk_: a fixed seed
  uint64_t kicks = 0;
  for (uint32_t n = 0; n < records; ++n) {
    filter[n] = hash_key(keys[n], g).filter;
    uint32_t carried = n;
    uint64_t came_from = UINT64_MAX;
    bool placed = false;
    for (uint32_t kick = 0; kick <= kMaxLoadKicks && !placed; ++kick) {
      const KeyHash kh = hash_key(keys[carried], g);
      for (uint32_t way = 0; way < g.ways && !placed; ++way) {
        if (at[global(kh.slot[way])] == kEmpty) at[global(kh.slot[way])] = carried, placed = true;
      }
      if (placed) break;
      uint32_t way = static_cast<uint32_t>(walk.uniform(g.ways));
      for (uint32_t tries = 0; tries < g.ways && global(kh.slot[way]) == came_from; ++tries) way = (way + 1) % g.ways;
      came_from = global(kh.slot[way]);
      std::swap(carried, at[came_from]);
      ++kicks;
    }
    if (!placed) return invalid_argument("index.load_factor: the load would fail (no free index entry)");
  }

  // Each record's get and put, walked as NessieClient does.
  // A reverse pass: every distinct candidate ITE read again.
  auto reverse_pass = [&](Counter& c, const KeyHash& kh) {
    for (uint32_t way = 0; way < g.ways; ++way) {
      if (!kh.repeat[way]) c.read(1, 8);
    }
  };
  const uint32_t nodes = std::max<uint32_t>(1, g.nodes);
  const double cache_entries = std::ceil(config.cache_fraction * static_cast<double>(w.recordcount) / nodes);
  const double hit = std::min(1.0, cache_entries / static_cast<double>(records));  // LRU under uniform requests
  Counter get{s.platform.nic, {}}, put{s.platform.nic, {}}, del{s.platform.nic, {}};
  Counter get_miss{s.platform.nic, {}}, del_miss{s.platform.nic, {}};
  double candidates = 0, false_matches = 0, ites = 0;
  for (uint32_t n = 0; n < records; ++n) {
    const KeyHash kh = hash_key(keys[n], g);
    bool found = false;
    for (uint32_t way = 0; way < g.ways; ++way) {
      if (kh.repeat[way]) continue;
      const uint32_t holder = at[global(kh.slot[way])];
      ++ites;
      // Forward pass of the put and the delete (write_once): every ITE, the
      // metadata of filter matches.
      for (Counter* c : {&put, &del}) {
        c->read(1, 8);
        if (holder != kEmpty && filter[holder] == kh.filter) c->read(1, g.meta_bytes());
      }
      // The same key deleted before: its own ITE reads empty, every other
      // candidate is read (no match ends the get's pass), filter matches
      // of other keys cost their DTE (the get) or metadata (the delete).
      get_miss.read(1, 8);
      del_miss.read(1, 8);
      if (holder != kEmpty && holder != n && filter[holder] == kh.filter) {
        get_miss.read(1, config.multiple_reads ? g.meta_bytes() : g.dte_bytes());
        del_miss.read(1, g.meta_bytes());
      }
      if (found) continue;
      get.read(1, 8);
      candidates += 1;
      if (holder == kEmpty || filter[holder] != kh.filter) continue;
      if (holder != n) {
        // Another key's DTE behind matching filter bits: read, then skipped.
        false_matches += 1;
        get.read(1, config.multiple_reads ? g.meta_bytes() : g.dte_bytes());
        continue;
      }
      found = true;
      if (config.multiple_reads) {
        get.read(1 - hit, g.meta_bytes());
        if (record_bytes > 0) get.read(1 - hit, record_bytes);
      } else {
        get.read(1 - hit, g.dte_bytes());
      }
    }
    if (!found) return internal_error("nessie model: a loaded record's index entry is not among its candidates");
    // The new DTE, the CAS, the reverse pass, the valid bit, the old DTE's recycle word.
    put.write(1, g.meta_bytes() + record_bytes);
    put.cas(1);
    reverse_pass(put, kh);
    put.write(1, 8);
    put.write(1, 8);
    reverse_pass(get_miss, kh);
    reverse_pass(del_miss, kh);
    // The delete: a tombstone (key and metadata, no value), the CAS, the
    // reverse pass, the CAS that clears the ITE, and the recycle words of
    // the tombstone and the deleted DTE.
    del.write(1, g.meta_bytes());
    del.cas(1);
    reverse_pass(del, kh);
    del.cas(1);
    del.write(1, 8);
    del.write(1, 8);
  }

  // Inserts: new keys (the numbers after the loaded ones) among the loaded
  // records, as write_once puts them: the forward pass, then into the first
  // empty candidate the DTE, the CAS, the reverse pass and the valid bit
  // (nothing replaced, nothing staged). A sample of up to 20,000 keys.
  Counter ins{s.platform.nic, {}};
  const uint64_t samples = std::min<uint64_t>(records, 20'000);
  uint64_t migrating = 0;
  for (uint64_t n = 0; n < samples; ++n) {
    const std::string_view key(buf.data(), wl.build_key(w.insertstart + records + n, buf.data(), buf.size()));
    const KeyHash kh = hash_key(key, g);
    bool empty = false;
    for (uint32_t way = 0; way < g.ways; ++way) {
      if (kh.repeat[way]) continue;
      const uint32_t holder = at[global(kh.slot[way])];
      ins.read(1, 8);
      if (holder == kEmpty) {
        empty = true;
      } else if (filter[holder] == kh.filter) {
        ins.read(1, g.meta_bytes());
      }
    }
    if (!empty) ++migrating;
    ins.write(1, g.meta_bytes() + record_bytes);
    ins.cas(1);
    reverse_pass(ins, kh);
    ins.write(1, 8);
  }
  const double r = static_cast<double>(records);
  TableCosts t;
  t.get = divided(get.c, r);
  t.put = divided(put.c, r);
  t.remove = divided(del.c, r);
  t.get_miss = divided(get_miss.c, r);
  t.remove_miss = divided(del_miss.c, r);
  const double sampled = static_cast<double>(samples);
  t.insert = divided(ins.c, sampled);
  t.inserts_migrating = static_cast<double>(migrating) / sampled;
  t.value_bytes = record_bytes;
  t.mean_key_bytes = key_sum / r;
  t.derivation = {
      fmt::format("tables ({}): {} records ({:.1f} B keys, {} B values) placed as the loader does on {} nodes x {} "
                  "index entries, {} ways ({} kicks); DTE {} B, key and metadata {} B",
                  g.coupled != 0 ? "coupled: every candidate on the key's owner" : "decoupled", records,
                  t.mean_key_bytes, record_bytes, g.nodes, g.index_entries, g.ways, kicks, g.dte_bytes(),
                  g.meta_bytes()),
      fmt::format("get: {:.3f} ITE READs (candidates up to the key's), {:.4f} other keys' DTEs read on {} filter "
                  "bits, the key's DTE ({}) unless the {:.0f}-entry cache hits ({:.4f}): {:.3f} one-sided ops",
                  candidates / r, false_matches / r, g.filter_bits,
                  config.multiple_reads ? "metadata, then the value" : "whole", cache_entries, hit, t.get.ops),
      fmt::format("put: {:.3f} distinct candidates read twice (forward and reverse pass), metadata of filter "
                  "matches, a {} B DTE WRITE, a CAS, the valid-bit and recycle-word WRITEs: {:.3f} one-sided ops",
                  ites / r, g.meta_bytes() + record_bytes, t.put.ops),
      fmt::format("delete: the put's forward pass, a {} B tombstone WRITE, two CASes (install, clear), the reverse "
                  "pass, two recycle-word WRITEs: {:.3f} one-sided ops",
                  g.meta_bytes(), t.remove.ops),
      fmt::format("a get or delete of a key deleted before: every candidate ITE and the reverse pass, {:.3f} and "
                  "{:.3f} one-sided ops",
                  t.get_miss.ops, t.remove_miss.ops),
      fmt::format("insert: {} new keys among the loaded ones: the forward pass, the DTE WRITE, a CAS, the reverse "
                  "pass, the valid bit: {:.3f} one-sided ops; {:.4f} of them find every candidate taken (their "
                  "migrations are not counted)",
                  samples, t.insert.ops, t.inserts_migrating)};
  return t;
}

}  // namespace locus::nessie
