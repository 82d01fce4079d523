// A small Catfish server on the fake fabric, shared by the Catfish fuzz
// targets: one messaging worker on node kWorker (polling), two connection
// slots with 2 KB request rings, 256-byte response segments, and a tree of
// 384-byte nodes (7 entries each, so a few dozen inserts split and
// reinsert). Sizes are small so that creating one per input is cheap.
#pragma once

#include <memory>

#include "core/index/catfish/catfish_server.h"
#include "tests/fuzz/support/fake_fabric.h"
#include "tests/fuzz/support/input.h"

namespace locus::fuzz {

constexpr NodeId kCatfishConnectNode = 0;
constexpr NodeId kCatfishWorker = 1;

inline catfish::CatfishServerOptions small_catfish_options() {
  catfish::CatfishServerOptions o;
  o.store.geometry.node_bytes = 384;
  o.store.geometry.node_slots = 256;
  o.messaging.mode = catfish::ServerMode::kPolling;
  o.messaging.connections_per_worker = 2;
  o.messaging.request_ring_bytes = 2048;
  o.messaging.segment_bytes = 256;
  o.messaging.max_response_bytes = 4096;
  o.messaging.heartbeat_interval_ns = kMillisecond;
  return o;
}

inline std::unique_ptr<catfish::CatfishServer> make_catfish_server(FakeFabric& fabric) {
  fabric.add_node(kCatfishWorker);
  auto server = catfish::CatfishServer::create({fabric.env(kCatfishWorker)}, small_catfish_options());
  FUZZ_CHECK(server.is_ok(), "%s", server.status().to_string().c_str());
  return std::move(*server);
}

}  // namespace locus::fuzz
