// The oracle of the Catfish tests: Boost.Geometry's R*-tree (bgi::rstar)
// holding the same (rectangle, id) pairs as the tree under test, answering
// which ids intersect a query. Also the conversions and the sorted id list
// the comparisons need.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include <boost/geometry.hpp>
#include <boost/geometry/index/rtree.hpp>

#include "core/index/catfish/store.h"
#include "core/workload/spatial.h"

namespace locus::testing {

class RtreeOracle {
 public:
  void insert(const catfish::Rect& r, uint64_t id) { tree_.insert({box_of(r), id}); }
  // True if exactly this rectangle with this id was there.
  bool remove(const catfish::Rect& r, uint64_t id) { return tree_.remove({box_of(r), id}) == 1; }
  size_t size() const { return tree_.size(); }

  // The ids of every rectangle intersecting `q`, ascending.
  std::vector<uint64_t> ids_intersecting(const catfish::Rect& q) const {
    std::vector<Value> found;
    tree_.query(boost::geometry::index::intersects(box_of(q)), std::back_inserter(found));
    std::vector<uint64_t> ids;
    ids.reserve(found.size());
    for (const Value& v : found) ids.push_back(v.second);
    std::sort(ids.begin(), ids.end());
    return ids;
  }

 private:
  using Point = boost::geometry::model::point<double, 2, boost::geometry::cs::cartesian>;
  using Box = boost::geometry::model::box<Point>;
  using Value = std::pair<Box, uint64_t>;
  static Box box_of(const catfish::Rect& r) { return Box(Point(r.x_min, r.y_min), Point(r.x_max, r.y_max)); }

  boost::geometry::index::rtree<Value, boost::geometry::index::rstar<16>> tree_;
};

inline catfish::Rect rect_of(const workload::SpatialBox& b) { return {b.x_min, b.y_min, b.x_max, b.y_max}; }

// The ids of `hits`, ascending.
inline std::vector<uint64_t> sorted_ids(const std::vector<catfish::Hit>& hits) {
  std::vector<uint64_t> ids;
  ids.reserve(hits.size());
  for (const catfish::Hit& h : hits) ids.push_back(h.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace locus::testing
