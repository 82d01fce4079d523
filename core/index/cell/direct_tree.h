// DirectTree: a Cell tree's operations run to completion in place,
// server-side, outside any actor (a DirectCaller calls the servers'
// handlers directly). For the load phase before a run, which starts from a
// populated, already spread tree, and for single-threaded tests. The
// meganode splits a write causes run in place too, nested through a busy
// parent that waits on a split still queued. The driver (driver.cc) and
// the test Deployment (deployment.h) both load through it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/index/cell/caller.h"
#include "core/index/cell/client.h"
#include "core/index/cell/layout.h"
#include "core/index/cell/protocol.h"
#include "core/index/cell/server.h"
#include "core/index/cell/split_driver.h"

namespace locus::cell {

class DirectTree {
 public:
  // `layout` is the tree's, complete before the first operation; it and
  // the servers must outlive this.
  DirectTree(const Layout& layout, const SplitDriverOptions& split, uint32_t max_message_bytes);

  // Servers in region order; the first's setup Env draws the splits'
  // randomness and waits out their back-offs.
  void add(CellServer* server, Env setup_env);

  // Views in the response stay valid until the next call.
  StatusOr<OpResponse> op(OpKind op, std::string_view key, std::string_view value = {});
  Status put(std::string_view key, std::string_view value) { return op(OpKind::kPut, key, value).status(); }
  StatusOr<uint64_t> range(std::string_view start, std::optional<std::string_view> end, uint32_t limit,
                           RangeSink& sink);

  // The splits run so far.
  const SplitDriverStats& split_stats() const { return splits_; }

 private:
  Status drain_splits(int depth);

  const Layout& layout_;
  SplitDriverOptions split_;
  DirectCaller direct_;
  std::vector<CellServer*> servers_;
  Env setup_env_;
  SplitDriverStats splits_;
};

}  // namespace locus::cell
