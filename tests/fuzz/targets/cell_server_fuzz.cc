// Fuzz target: Cell's server-side request decoding and handlers
// (core/index/cell/server.cc and the Store operations behind them: ops,
// ranges, split scan and every split step a peer server may send) through
// CellServer::handle (what a client reaches) and handle_internal (what a
// kInternal request with the tree's key reaches). One server with a tiny
// geometry (256-byte nodes, 32-node meganodes) so fuzzed puts fill
// meganodes and the split steps have something to work on.
//
// Input: requests until the input ends (at most 64), each
//   u8 type: bit 7 set = the internal path; the low bits mod 24 are the
//      request type (Cell's are 1-4 and 10-21; the rest unknown)
//   u16 payload length (mod 1024), payload bytes
#include <string>
#include <vector>

#include "core/index/cell/server.h"
#include "tests/fuzz/support/fake_fabric.h"
#include "tests/fuzz/support/input.h"

using namespace locus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputStream in(data, size);
  fuzz::FakeFabric fabric;
  fabric.add_node(0);
  cell::ServerOptions o;
  o.store.geometry.node_bytes = 256;
  o.store.geometry.key_capacity_bytes = 16;
  o.store.geometry.meganode_nodes = 32;
  o.store.geometry.meganodes_per_server = 8;
  o.store.extents_bytes = 64u << 10;
  o.store.max_kv_bytes = 512;
  o.store.min_extent_block_bytes = 32;
  o.store.split_fill_fraction = 0.5;
  o.max_message_bytes = 4096;
  auto server = cell::CellServer::create(fabric.env(0), 0, o);
  FUZZ_CHECK(server.is_ok(), "%s", server.status().to_string().c_str());
  cell::CellServer& s = **server;
  cell::Layout layout;
  layout.geometry = o.store.geometry;
  layout.max_kv_bytes = o.store.max_kv_bytes;
  layout.regions = {s.node_region(), s.extent_region()};
  s.set_layout(layout);
  FUZZ_CHECK(s.store().init_tree().is_ok(), "init_tree");

  std::vector<std::byte> response(o.max_message_bytes - rpc::kHeaderBytes);
  for (int n = 0; n < 64 && !in.empty(); ++n) {
    const uint8_t tag = in.get<uint8_t>();
    const uint16_t type = (tag & 0x7f) % 24;
    const auto payload = in.bytes(in.get<uint16_t>() % 1024);
    rpc::Reader r(payload);
    rpc::Writer w(response);
    const Status st = (tag & 0x80) != 0 ? s.handle_internal(type, r, w) : s.handle(type, r, w);
    (void)st;
    // Splits the store asked for are what the split worker would take.
    uint32_t meganode = 0;
    while (s.try_take_split(&meganode)) {
    }
  }
  return 0;
}
