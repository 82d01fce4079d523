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

double NicSpec::atc_miss_fraction(uint64_t registered_bytes) const {
  if (atc_reach_bytes == 0 || registered_bytes <= atc_reach_bytes) return 0;
  return 1.0 - static_cast<double>(atc_reach_bytes) / static_cast<double>(registered_bytes);
}

double NicSpec::atc_extra_ns(uint64_t registered_bytes) const {
  if (atc_reach_bytes == 0) return 0;
  return atc_miss_ns * (atc_miss_fraction(registered_bytes) - atc_miss_fraction(read_region_bytes));
}

double NicSpec::qp_extra_ns(uint64_t qps) const {
  if (qp_cache_entries == 0 || qps <= qp_cache_entries) return 0;
  return qp_miss_ns * (1.0 - static_cast<double>(qp_cache_entries) / static_cast<double>(qps));
}

Nanos NicSpec::retry_exceeded_after() const {
  RcRetry rc;
  rc.ack_timeout = ack_timeout;
  rc.retry_count = retry_count;
  return rc.retry_exceeded_after();
}

Status NicSpec::fit_atc() {
  atc_miss_ns = 0;
  if (atc_reach_bytes == 0) return Status();
  if (read_by_region.size() < 2) {
    return invalid_argument("atc_reach_bytes needs read_by_region: READ rates over at least two region sizes");
  }
  // Least squares of 1/rate = t0 + miss(S) * P over the points.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [bytes, rate] : read_by_region) {
    const double x = atc_miss_fraction(bytes), y = 1e9 / rate;
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double det = n * sxx - sx * sx;
  if (det <= 0) {
    return invalid_argument("read_by_region: the region sizes must differ in how much of them the cache of "
                            "atc_reach_bytes misses (all fit in it, or all miss alike)");
  }
  atc_miss_ns = (n * sxy - sx * sy) / det;
  if (atc_miss_ns < 0) {
    return invalid_argument("read_by_region: READs over larger regions must not be faster");
  }
  if (read_region_bytes == 0) read_region_bytes = atc_reach_bytes;
  return Status();
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
