// Spatial rectangles for the Catfish workloads; see spatial.h.
#include "core/workload/spatial.h"

#include <cmath>
#include <string>

namespace locus::workload {

std::string_view query_scale_name(QueryScale s) {
  switch (s) {
    case QueryScale::kSmall: return "small";
    case QueryScale::kLarge: return "large";
    case QueryScale::kPowerLaw: return "powerlaw";
  }
  return "?";
}

StatusOr<QueryScale> parse_query_scale(std::string_view name) {
  for (QueryScale s : {QueryScale::kSmall, QueryScale::kLarge, QueryScale::kPowerLaw}) {
    if (name == query_scale_name(s)) return s;
  }
  return invalid_argument("unknown query scale '" + std::string(name) + "' (small, large, powerlaw)");
}

Status SpatialSpec::validate() const {
  for (double e : {data_edge_max, small_edge_max, large_edge_max}) {
    if (!(e > 0 && e <= 1)) return invalid_argument("spatial workload: edge bounds must be in (0, 1]");
  }
  if (!(power_lo > 0 && power_lo < power_hi && power_hi <= 1)) {
    return invalid_argument("spatial workload: power law needs 0 < lo < hi <= 1");
  }
  if (!(power_exponent >= 0 && power_exponent != 1.0)) {
    return invalid_argument("spatial workload: power-law exponent must be >= 0 and not 1");
  }
  return Status();
}

SpatialGenerator::SpatialGenerator(const SpatialSpec& spec)
    : spec_(spec),
      lo_pow_(std::pow(spec.power_lo, 1.0 - spec.power_exponent)),
      hi_pow_(std::pow(spec.power_hi, 1.0 - spec.power_exponent)) {}

// Inverse CDF of f(t) ~ t^-a on [lo, hi]: F(t) = (t^(1-a) - lo^(1-a)) /
// (hi^(1-a) - lo^(1-a)).
double SpatialGenerator::power_edge(Random& rng) const {
  const double u = rng.uniform_double();
  const double t = std::pow(lo_pow_ + u * (hi_pow_ - lo_pow_), 1.0 / (1.0 - spec_.power_exponent));
  return std::fmin(std::fmax(t, spec_.power_lo), spec_.power_hi);
}

SpatialBox SpatialGenerator::query(Random& rng, QueryScale scale) const {
  switch (scale) {
    case QueryScale::kSmall:
      return place(rng, uniform_edge(rng, spec_.small_edge_max), uniform_edge(rng, spec_.small_edge_max));
    case QueryScale::kLarge:
      return place(rng, uniform_edge(rng, spec_.large_edge_max), uniform_edge(rng, spec_.large_edge_max));
    case QueryScale::kPowerLaw: {
      const double w = power_edge(rng);
      return place(rng, w, power_edge(rng));
    }
  }
  return {};
}

SpatialBox SpatialGenerator::place(Random& rng, double w, double h) {
  const double x = rng.uniform_double() * (1.0 - w);
  const double y = rng.uniform_double() * (1.0 - h);
  return {x, y, x + w, y + h};
}

SpatialBox place_at_key(const SpatialBox& box, uint64_t keynum) {
  uint64_t x = keynum + 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  const double u = static_cast<double>(x >> 40) * 0x1p-24;
  const double v = static_cast<double>(x & 0xFFFFFF) * 0x1p-24;
  const double w = box.x_max - box.x_min, h = box.y_max - box.y_min;
  const double x0 = u * (1.0 - w), y0 = v * (1.0 - h);
  return {x0, y0, x0 + w, y0 + h};
}

}  // namespace locus::workload
