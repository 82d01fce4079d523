// RateCurve interpolation.
#include "core/scenario/platform.h"

#include <algorithm>
#include <cmath>

namespace locus::scenario {

Nanos RateCurve::service_ns(uint32_t bytes) const {
  if (points.empty()) return 0;
  auto ns_of = [](const RatePoint& p) { return 1e9 / p.ops_per_s; };
  if (bytes <= points.front().bytes) return static_cast<Nanos>(std::llround(ns_of(points.front())));
  for (size_t i = 1; i < points.size(); ++i) {
    if (bytes <= points[i].bytes) {
      const RatePoint& a = points[i - 1];
      const RatePoint& b = points[i];
      const double f = static_cast<double>(bytes - a.bytes) / static_cast<double>(b.bytes - a.bytes);
      return static_cast<Nanos>(std::llround(ns_of(a) + f * (ns_of(b) - ns_of(a))));
    }
  }
  const RatePoint& last = points.back();
  return static_cast<Nanos>(
      std::llround(ns_of(last) * static_cast<double>(bytes) / static_cast<double>(std::max<uint32_t>(last.bytes, 1))));
}

}  // namespace locus::scenario
