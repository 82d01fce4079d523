// Key mapping and partitioning of the NAM index (protocol.h).
#include "core/index/nam/protocol.h"

#include <algorithm>
#include <charconv>
#include <cmath>
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

StatusOr<std::vector<double>> parse_shares(std::string_view text) {
  std::vector<double> shares;
  double sum = 0;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    std::string_view item = text.substr(at, comma - at);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    double v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || !(v > 0 && v <= 1)) {
      return invalid_argument("\"" + std::string(item) + "\" is not a share in (0, 1] (write shares as \"0.8,0.12,0.05,0.03\")");
    }
    shares.push_back(v);
    sum += v;
    at = comma + 1;
  }
  if (std::abs(sum - 1) > 1e-6) {
    return invalid_argument("the shares sum to " + std::to_string(sum) + ", not 1");
  }
  return shares;
}

Partitioner::Partitioner(Partitioning how, uint32_t servers, const workload::WorkloadSpec& spec,
                         std::vector<double> key_skew)
    : how_(how), servers_(servers) {
  if (!key_skew.empty()) {
    cumulative_.push_back(0);
    for (double share : key_skew) cumulative_.push_back(cumulative_.back() + share);
    cumulative_.back() = 1;
  }
  if (spec.insertorder == workload::InsertOrder::kHashed) {
    // YCSB's hashed key numbers are FNV-1a made non-negative as a Java
    // long (workload/keys.h): [0, 2^63].
    span_ = (1ull << 63) / servers + 1;
  } else {
    span_ = std::max<uint64_t>(1, (spec.recordcount + servers - 1) / servers);
  }
}

uint64_t Partitioner::key_of(uint64_t number) const {
  if (cumulative_.empty()) return number;
  // The numbers' domain is the servers' ranges end to end; numbers past it
  // (ordered inserts beyond the load) stay at its end, as they would.
  const long double domain = static_cast<long double>(span_) * servers_;
  const long double u = std::min<long double>(static_cast<long double>(number) / domain, 1.0L);
  const size_t segments = cumulative_.size() - 1;
  size_t i = 0;
  while (i + 1 < segments && u >= cumulative_[i + 1]) ++i;
  const long double within = (u - cumulative_[i]) / (cumulative_[i + 1] - cumulative_[i]);
  const long double key = (static_cast<long double>(i) + std::min<long double>(within, 1.0L)) * span_;
  return static_cast<uint64_t>(std::min<long double>(key, domain - 1));
}

StatusOr<std::string> Partitioner::history_key(std::string_view key) const {
  if (!skewed()) return std::string(key);
  LOCUS_ASSIGN_OR_RETURN(uint64_t number, key_number(key));
  return index_key_name(key_of(number));
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
