// Fuzz target: Cell's reply decoders, which clients and split drivers run
// on whatever a server sends (core/index/cell/protocol.cc): the layout
// (geometry + region table), op responses, range response headers and
// split plans, plus the request decoders' bound and range parsing. The
// first byte picks the decoder; what a decoder accepts must re-encode to
// the same bytes (the encodings are canonical), and a layout it accepts
// must be usable (valid geometry, node regions big enough).
#include <string>
#include <vector>

#include "core/index/cell/protocol.h"
#include "tests/fuzz/support/input.h"

using namespace locus;
using namespace locus::cell;

namespace {

bool encodes_back(const std::vector<std::byte>& out, const rpc::Writer& w, std::span<const std::byte> in) {
  return w.ok() && w.size() == in.size() && std::memcmp(out.data(), in.data(), in.size()) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto in = fuzz::as_bytes(data + 1, size - 1);
  std::vector<std::byte> out(size + 256);
  rpc::Reader r(in);
  rpc::Writer w(out);
  switch (data[0] % 6) {
    case 0: {
      Layout l;
      if (!decode_layout(r, &l)) break;
      FUZZ_CHECK(l.geometry.validate().is_ok() && !l.regions.empty() && l.regions[0].kind == RegionKind::kNodes,
                 "accepted an unusable layout");
      for (const RegionInfo& info : l.regions) {
        FUZZ_CHECK(info.kind != RegionKind::kNodes || info.remote.length >= l.geometry.region_bytes(),
                   "node region too small");
      }
      // Lookups a client makes with pointers it is sent.
      (void)l.server_of(kNullPtr);
      (void)l.server_of(~uint64_t{0});
      (void)l.servers();
      encode_layout(l, w);
      FUZZ_CHECK(encodes_back(out, w, in), "layout does not encode back");
      break;
    }
    case 1: {
      OpResponse resp;
      if (!decode_op_response(r, &resp)) break;
      OpResult res;
      res.outcome = resp.outcome;
      res.next = resp.next;
      res.found = resp.found;
      res.value = resp.value;
      res.meganode = resp.meganode;
      res.nodes_visited = resp.nodes_visited;
      encode_op_response(res, w);
      // found is any non-zero byte and an infinite bound's key is dropped:
      // compare lengths only.
      FUZZ_CHECK(w.ok() && w.size() <= in.size(), "op response grows when re-encoded");
      break;
    }
    case 2: {
      RangeResult head;
      if (!decode_range_header(r, &head)) break;
      // The entries after the header: (blob key, blob value)* as the client reads them.
      std::string_view k, v;
      uint32_t entries = 0;
      while (!r.at_end() && r.blob(&k) && r.blob(&v)) ++entries;
      (void)entries;
      break;
    }
    case 3: {
      SplitPlan p;
      if (!decode_plan(r, &p)) break;
      encode_plan(p, w);
      FUZZ_CHECK(w.ok() && w.size() <= in.size(), "plan grows when re-encoded");
      break;
    }
    case 4: {
      OpRequest q;
      if (!decode_op_request(r, &q)) break;
      encode_op_request(q, w);
      FUZZ_CHECK(encodes_back(out, w, in), "op request does not encode back");
      break;
    }
    case 5: {
      RangeRequest q;
      if (!decode_range_request(r, &q)) break;
      encode_range_request(q, w);
      FUZZ_CHECK(w.ok() && w.size() <= in.size(), "range request grows when re-encoded");
      break;
    }
  }
  return 0;
}
