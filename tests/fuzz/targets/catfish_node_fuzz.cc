// Fuzz target: Catfish's node and header decoders (core/index/catfish/
// layout.cc: decode_node, decode_header), which an offloading client runs
// on node images it fetched with RDMA READs from a server it does not
// trust to be consistent. Input: u8 node size selector, then the image.
// An accepted node must lie within its geometry (count within capacity,
// level below kMaxLevels) and re-encode to an image that decodes the same.
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/index/catfish/layout.h"
#include "tests/fuzz/support/input.h"

using namespace locus;
using namespace locus::catfish;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Geometry g;
  g.node_bytes = kLineBytes * (6 + data[0] % 59);  // [384, 4096]
  g.node_slots = 2;
  FUZZ_CHECK(g.validate().is_ok(), "geometry");
  // The copy buffer a client READs into: 8-byte aligned, node_bytes long.
  AlignedBuffer copy(g.node_bytes);
  FUZZ_CHECK(copy.valid(), "alloc");
  std::memset(copy.data(), 0, g.node_bytes);
  std::memcpy(copy.data(), data + 1, std::min<size_t>(size - 1, g.node_bytes));

  HeaderInfo h;
  (void)decode_header(copy.data(), &h);

  static NodeData node;
  const Status st = decode_node(copy.data(), g, &node);
  if (!st.is_ok()) return 0;
  FUZZ_CHECK(node.count <= g.capacity() && node.level < kMaxLevels, "node out of its geometry");
  if (node.count > 0) (void)node.mbr();
  AlignedBuffer again(g.node_bytes);
  std::memset(again.data(), 0, g.node_bytes);
  encode_node(again.data(), g, node);
  static NodeData twice;
  FUZZ_CHECK(decode_node(again.data(), g, &twice).is_ok(), "re-encoded node does not decode");
  FUZZ_CHECK(twice.count == node.count && twice.level == node.level, "re-encoded node differs");
  for (uint32_t i = 0; i < node.count; ++i) {
    FUZZ_CHECK(std::memcmp(&twice.entries[i], &node.entries[i], sizeof(Entry)) == 0, "entry %u differs", i);
  }
  return 0;
}
