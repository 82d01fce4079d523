// Key mapping and partitioning of the NAM index (protocol.h).
#include "core/index/nam/protocol.h"

#include <charconv>
#include <string>

namespace locus::nam {

StatusOr<uint64_t> key_number(std::string_view key) {
  uint64_t n = 0;
  if (key.size() > 4 && key.substr(0, 4) == "user") {
    const char* end = key.data() + key.size();
    auto [at, ec] = std::from_chars(key.data() + 4, end, n);
    if (ec == std::errc() && at == end) return n;
  }
  return invalid_argument("nam: key \"" + std::string(key) + "\" is not user<number> (8-byte keys)");
}

Partitioner::Partitioner(Partitioning how, uint32_t servers, const workload::WorkloadSpec& spec)
    : how_(how), servers_(servers) {
  if (spec.insertorder == workload::InsertOrder::kHashed) {
    // YCSB's hashed key numbers are FNV-1a made non-negative as a Java
    // long (workload/keys.h): [0, 2^63].
    span_ = (1ull << 63) / servers + 1;
  } else {
    span_ = std::max<uint64_t>(1, (spec.recordcount + servers - 1) / servers);
  }
}

uint32_t Partitioner::server_of(uint64_t key) const {
  if (how_ == Partitioning::kHash) {
    // splitmix64's finalizer: neighbouring keys land on different servers.
    uint64_t z = key + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return static_cast<uint32_t>((z ^ (z >> 31)) % servers_);
  }
  return static_cast<uint32_t>(std::min<uint64_t>(key / span_, servers_ - 1));
}

std::vector<uint32_t> Partitioner::servers_from(uint64_t from) const {
  std::vector<uint32_t> out;
  const uint32_t first = how_ == Partitioning::kHash ? 0 : server_of(from);
  for (uint32_t s = first; s < servers_; ++s) out.push_back(s);
  return out;
}

}  // namespace locus::nam
