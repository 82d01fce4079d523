// What the NAM tree's local tests share (nam_tree_test, nam_gc_test): a
// clock for trees on local arenas, where nothing waits, and the multimap
// they are checked against.
#pragma once

#include <cstdint>
#include <map>

#include "core/transport/env.h"

namespace locus::testing {

class NoClock final : public Clock {
 public:
  Nanos now() const override { return 0; }
  void sleep_for(Nanos) override {}
};

using NamReference = std::multimap<uint64_t, uint64_t>;

}  // namespace locus::testing
