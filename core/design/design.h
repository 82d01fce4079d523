// A design is a plug-in: one folder core/index/<name>/ that brings its node
// layout, server and client paths, and this glue: the reader of its own
// [index] keys (scenario::IndexType) and the factory of its IndexDriver
// (servers, load, daemons, client sessions). The folder registers itself
// in one place, its design.cc, with a function `register_design` in the
// design's namespace; the list of design folders in
// core/index/CMakeLists.txt generates the calls (core/designs). The runner
// (core/runner) and the command line know no design by name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/design/index_driver.h"
#include "core/design/model_profile.h"
#include "core/scenario/scenario.h"

namespace locus::design {

using DriverFactory =
    std::function<StatusOr<std::unique_ptr<IndexDriver>>(const scenario::Scenario&, const Placement&)>;

struct Design {
  scenario::IndexType type;  // name, summary, whether it takes a selector, its key reader
  DriverFactory make_driver;
  // Its analytic model (model_profile.h); empty for a design without one,
  // which `locus model` and `locus plan` then refuse by name.
  ModelProfiler model;
};

// The designs built in, by name. Filled once at start-up
// (designs::registry()), read-only after.
class Registry final : public scenario::IndexTypes {
 public:
  // Fails on a duplicate name or a design without a reader or factory.
  Status add(Design design);
  const Design* find(std::string_view name) const;
  const std::vector<Design>& designs() const { return designs_; }

  const scenario::IndexType* find_type(std::string_view name) const override;
  std::vector<std::string> type_names() const override;

 private:
  std::vector<Design> designs_;
};

}  // namespace locus::design
