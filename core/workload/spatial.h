// Spatial workloads of the Catfish evaluation: data rectangles with edges
// uniform in (0, 0.0001] inside the unit square, and query rectangles at
// three scales: edges uniform in (0, 0.00001] (server-CPU bound), uniform
// in (0, 0.01] (bandwidth bound), and a power law f(t) ~ t^-0.99 over
// (0.00001, 0.01]. Each edge is drawn independently; a rectangle is placed
// uniformly so that it lies inside the unit square. Every draw takes the
// caller's Random, so a client's stream alone decides it.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/common/random.h"
#include "core/common/status.h"

namespace locus::workload {

struct SpatialBox {
  double x_min = 0, y_min = 0, x_max = 0, y_max = 0;
};

enum class QueryScale {
  kSmall,     // edges uniform in (0, 1e-5]
  kLarge,     // edges uniform in (0, 1e-2]
  kPowerLaw,  // edges ~ t^-0.99 over (1e-5, 1e-2]
};
std::string_view query_scale_name(QueryScale s);  // "small", "large", "powerlaw"
StatusOr<QueryScale> parse_query_scale(std::string_view name);

struct SpatialSpec {
  double data_edge_max = 1e-4;
  double small_edge_max = 1e-5;
  double large_edge_max = 1e-2;
  double power_lo = 1e-5;
  double power_hi = 1e-2;
  double power_exponent = 0.99;  // f(t) ~ t^-exponent

  Status validate() const;
};

class SpatialGenerator {
 public:
  explicit SpatialGenerator(const SpatialSpec& spec = {});

  SpatialBox data(Random& rng) const {
    const double w = uniform_edge(rng, spec_.data_edge_max);
    return place(rng, w, uniform_edge(rng, spec_.data_edge_max));
  }
  SpatialBox query(Random& rng, QueryScale scale) const;
  // One edge length of each kind (exposed for distribution tests).
  static double uniform_edge(Random& rng, double max) { return (1.0 - rng.uniform_double()) * max; }
  double power_edge(Random& rng) const;

 private:
  static SpatialBox place(Random& rng, double w, double h);
  SpatialSpec spec_;
  double lo_pow_;  // power_lo^(1 - exponent)
  double hi_pow_;  // power_hi^(1 - exponent)
};

// YCSB keys as places (the Catfish client session): the
// splitmix64 hash of key number `keynum` picks an anchor in the unit
// square, and `box`'s extent is moved there (kept inside the square, as
// the generator places rectangles). So a workload's requestdistribution
// decides the spatial skew: zipfian keys are hot places.
SpatialBox place_at_key(const SpatialBox& box, uint64_t keynum);

}  // namespace locus::workload
