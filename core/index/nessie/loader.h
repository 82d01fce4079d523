// Loader: puts the workload's records into the nodes' tables before any
// client runs, by plain memory writes (nothing else touches the tables
// yet, so no CAS is needed). Each record's data entry goes to the next
// node in turn (to the key's owner with coupled tables: NessieSD, NessieHY) (entries 1 .. load_entries of its data
// table), valid, with no previous version; its ITE to an empty candidate, displacing occupants cuckoo-style (a bounded
// random walk) when all of them are taken.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/common/random.h"
#include "core/common/status.h"
#include "core/index/nessie/node.h"

namespace locus::nessie {

struct LoadStats {
  uint64_t records = 0;
  uint64_t kicks = 0;  // occupants moved to another of their candidates
};

class Loader {
 public:
  explicit Loader(std::span<const std::unique_ptr<NessieNode>> nodes);
  Status insert(std::string_view key, std::string_view value);
  const LoadStats& stats() const { return stats_; }

 private:
  // The key of the entry an occupied ITE names.
  std::string_view key_of(uint64_t ite);

  std::span<const std::unique_ptr<NessieNode>> nodes_;
  Geometry g_;
  std::vector<uint64_t> loaded_;  // per node: entries filled
  uint32_t next_node_ = 0;
  Random walk_{1};  // the cuckoo walk's choices: a fixed seed, so a load is the same every time
  LoadStats stats_;
};

}  // namespace locus::nessie
