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

double CostCurve::us_at(uint64_t bytes) const {
  if (points.empty()) return 0;
  if (points.size() == 1 || bytes <= points.front().first) return points.front().second;
  size_t i = 1;
  while (i + 1 < points.size() && bytes > points[i].first) ++i;
  const auto& [b0, c0] = points[i - 1];
  const auto& [b1, c1] = points[i];
  const double f = (static_cast<double>(bytes) - static_cast<double>(b0)) / static_cast<double>(b1 - b0);
  return std::max(0.0, c0 + f * (c1 - c0));
}

}  // namespace locus::scenario
