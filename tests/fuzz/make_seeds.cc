// Writes the binary seed corpora of the fuzz targets with the project's own
// encoders, so seeds are real messages (then the fuzzer mutates them):
//   fuzz_make_seeds tests/fuzz/corpus
// Text seeds (scenario files, cluster files) are copied by ci/fuzz.sh
// --seeds from scenarios/ and config/. Run again when a wire format changes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/index/catfish/catfish_server.h"
#include "core/index/catfish/connect_rpc.h"
#include "core/messaging/mailbox.h"
#include "core/index/catfish/layout.h"
#include "core/rpc/ring_buffer.h"
#include "core/index/cell/protocol.h"
#include "core/index/pilaf/protocol.h"
#include "core/rpc/message.h"

using namespace locus;

namespace {

// Little-endian bytes built field by field.
struct Bytes {
  std::vector<std::byte> b;
  template <typename T>
  Bytes& put(T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
    return *this;
  }
  Bytes& raw(std::span<const std::byte> s) {
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& blob(std::string_view s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    raw({reinterpret_cast<const std::byte*>(s.data()), s.size()});
    return *this;
  }
};

// Encodes with an rpc::Writer into a fresh buffer.
template <typename F>
std::vector<std::byte> encoded(F&& f) {
  std::vector<std::byte> buf(8192);
  rpc::Writer w(buf);
  f(w);
  buf.resize(w.size());
  return buf;
}

std::filesystem::path root;

void save(const std::string& target, const std::string& name, const std::vector<std::byte>& bytes) {
  const auto dir = root / target;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::byte> frame(uint16_t type, const std::vector<std::byte>& payload) {
  rpc::MessageHeader h;
  h.type = type;
  h.payload_bytes = static_cast<uint32_t>(payload.size());
  h.request_id = 1;
  std::vector<std::byte> out(rpc::kHeaderBytes);
  rpc::write_header(out.data(), h);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// A request as pilaf_server_fuzz / cell_server_fuzz read it: u8 type, u16 length, payload.
void typed(Bytes& in, uint8_t type, const std::vector<std::byte>& payload) {
  in.put<uint8_t>(type).put<uint16_t>(static_cast<uint16_t>(payload.size())).raw(payload);
}

RemoteRegion region(NodeId node, RegionId id, uint64_t length) { return {node, id, 0x1234, 0x10000, length}; }

void rpc_seeds() {
  const auto echo = encoded([](rpc::Writer& w) { w.blob("hello"); w.blob("world"); });
  Bytes a;
  const auto f = frame(1, echo);
  a.put<uint8_t>(0).put<uint16_t>(static_cast<uint16_t>(f.size())).raw(f);  // as is
  a.put<uint8_t>(1 | (1 << 4)).put<uint16_t>(static_cast<uint16_t>(f.size())).raw(f);
  const auto fill = frame(3, encoded([](rpc::Writer& w) { w.put<uint16_t>(40); }));
  a.put<uint8_t>(1 | (3 << 4)).put<uint16_t>(static_cast<uint16_t>(fill.size())).raw(fill);
  a.put<uint8_t>(1 | (2 << 4)).put<uint16_t>(24).raw(frame(2, {}));
  save("rpc_server", "echo-fill-fail", a.b);
  Bytes t;
  t.put<uint8_t>(0).put<uint16_t>(10).raw(std::vector<std::byte>(10));  // truncated
  save("rpc_server", "truncated", t.b);

  // rpc_client: a call answered by one good and one stale response.
  Bytes c;
  c.put<uint8_t>(7).put<uint8_t>(5).raw(encoded([](rpc::Writer& w) { w.put<uint8_t>(1); w.put<uint32_t>(2); }));
  c.put<uint8_t>(2);
  const auto body = encoded([](rpc::Writer& w) { w.blob("value"); });
  const auto good = frame(7, body);
  c.put<uint8_t>(2 | 1).put<uint16_t>(static_cast<uint16_t>(good.size())).raw(good);  // a stranger's
  c.put<uint8_t>(1).put<uint16_t>(static_cast<uint16_t>(good.size())).raw(good);
  c.put<uint8_t>(9).put<uint8_t>(0).put<uint8_t>(1).put<uint8_t>(1 | (5 << 4)).put<uint16_t>(30).raw(frame(9, std::vector<std::byte>(6)));
  save("rpc_client", "good-stale-error", c.b);
}

void pilaf_seeds() {
  pilaf::Layout l;
  l.epoch = 3;
  l.bucket_count = 8;
  l.max_kv_bytes = 1024;
  l.table = region(0, 1, 8 * pilaf::kEntryBytes);
  l.extents = region(0, 2, 4096);
  l.meta = region(0, 3, pilaf::kMetaBytes);
  save("pilaf_layout", "layout", encoded([&](rpc::Writer& w) { pilaf::encode_layout(l, w); }));
  save("pilaf_layout", "get-reply", encoded([](rpc::Writer& w) { w.blob("a value"); }));

  Bytes s;
  typed(s, pilaf::kGetLayout, {});
  for (int i = 0; i < 12; ++i) {
    const std::string k = "key" + std::to_string(i);
    typed(s, pilaf::kPut, encoded([&](rpc::Writer& w) { w.blob(k); w.blob("value-" + k); }));
  }
  typed(s, pilaf::kGet, encoded([](rpc::Writer& w) { w.blob("key3"); }));
  typed(s, pilaf::kDelete, encoded([](rpc::Writer& w) { w.blob("key4"); }));
  typed(s, pilaf::kDelete, encoded([](rpc::Writer& w) { w.blob("missing"); }));
  typed(s, pilaf::kPut, encoded([](rpc::Writer& w) { w.blob("big"); w.blob(std::string(900, 'v')); }));
  save("pilaf_server", "puts-get-delete", s.b);
}

void cell_seeds() {
  using namespace cell;
  Geometry g;
  g.node_bytes = 256;
  g.key_capacity_bytes = 16;
  g.meganode_nodes = 32;  // as cell_server_fuzz's server
  g.meganodes_per_server = 8;
  Layout l;
  l.geometry = g;
  l.max_kv_bytes = 512;
  l.regions = {{RegionKind::kNodes, 0, region(0, 0, g.region_bytes())}, {RegionKind::kExtents, 0, region(0, 1, 65536)},
               {RegionKind::kNodes, 1, region(1, 2, g.region_bytes())}};
  auto with = [](uint8_t selector, const std::vector<std::byte>& b) {
    Bytes out;
    out.put(selector).raw(b);
    return out.b;
  };
  save("cell_replies", "layout", with(0, encoded([&](rpc::Writer& w) { encode_layout(l, w); })));
  OpResult res;
  res.outcome = Outcome::kDone;
  res.found = true;
  res.value = "value";
  res.meganode.root = make_ptr(0, 256);
  res.meganode.min = Bound{"a", false};
  res.meganode.max = Bound{"", true};
  res.nodes_visited = 3;
  save("cell_replies", "op-response", with(1, encoded([&](rpc::Writer& w) { encode_op_response(res, w); })));
  RangeResult rr;
  rr.outcome = Outcome::kRedirect;
  rr.next = make_ptr(2, 512);
  rr.resume = "k5";
  rr.returned = 2;
  save("cell_replies", "range-header", with(2, encoded([&](rpc::Writer& w) {
                                              encode_range_header(rr, w);
                                              w.blob("k1");
                                              w.blob("v1");
                                              w.blob("k2");
                                              w.blob("v2");
                                            })));
  SplitPlan p;
  p.meganode = 1;
  p.root = make_ptr(0, 2304);
  p.split_key = "m";
  p.min_inf = true;
  p.max_key = "z";
  save("cell_replies", "plan", with(3, encoded([&](rpc::Writer& w) { encode_plan(p, w); })));
  OpRequest q;
  q.op = OpKind::kPut;
  q.key = "key";
  q.value = "value";
  save("cell_replies", "op-request", with(4, encoded([&](rpc::Writer& w) { encode_op_request(q, w); })));
  RangeRequest rq;
  rq.query.start = "a";
  rq.query.has_end = true;
  rq.query.end = "q";
  rq.query.limit = 10;
  save("cell_replies", "range-request", with(5, encoded([&](rpc::Writer& w) { encode_range_request(rq, w); })));

  // cell_server: puts enough to split, reads, a range, split steps.
  Bytes s;
  for (int i = 0; i < 40; ++i) {
    OpRequest put;
    put.op = OpKind::kPut;
    const std::string k = "k" + std::to_string(100 + i * 7 % 40);
    const std::string v = "v" + k;
    put.key = k;
    put.value = v;
    typed(s, kOp, encoded([&](rpc::Writer& w) { encode_op_request(put, w); }));
  }
  OpRequest get;
  get.op = OpKind::kGet;
  get.key = "k107";
  typed(s, kOp, encoded([&](rpc::Writer& w) { encode_op_request(get, w); }));
  get.op = OpKind::kDelete;
  typed(s, kOp, encoded([&](rpc::Writer& w) { encode_op_request(get, w); }));
  typed(s, kRange, encoded([&](rpc::Writer& w) { encode_range_request(rq, w); }));
  typed(s, kGetLayout, {});
  typed(s, kGetRoot, {});
  // The split steps as a peer sends them (cell_server_fuzz's internal bit),
  // each naming split 1 of node 0 (protocol.h).
  constexpr uint8_t kPeer = 0x80;
  constexpr uint64_t kSplitId = 1;
  const uint64_t built = make_ptr(0, g.meganode_base(1));
  typed(s, kPeer | kMeganodeCount, {});
  typed(s, kPeer | kSplitBegin, encoded([](rpc::Writer& w) {
          w.put<uint32_t>(0);
          w.put(kSplitId);
        }));
  typed(s, kPeer | kSplitScan, encoded([](rpc::Writer& w) {
          w.put<uint32_t>(0);
          w.blob("k120");
          w.put<uint8_t>(0);
          w.put<uint32_t>(512);
        }));
  typed(s, kPeer | kMeganodeCreate, encoded([](rpc::Writer& w) {
          w.put(kSplitId);
          w.put<uint8_t>(0);
          put_bound(w, Bound{"k120", false});
          put_bound(w, Bound{"", true});
          w.put<uint64_t>(kNullPtr);
        }));
  typed(s, kPeer | kMeganodeAppend, encoded([&](rpc::Writer& w) {
          w.put(built);
          w.put(kSplitId);
          w.put<uint32_t>(0);  // chunk
          w.blob("k121");
          w.blob("v121");
          w.blob("k122");
          w.blob("v122");
        }));
  for (uint16_t step : {kMeganodeSeal, kMeganodeLive, kMeganodeAbandon}) {
    typed(s, static_cast<uint8_t>(kPeer | step), encoded([&](rpc::Writer& w) {
            w.put(built);
            w.put(kSplitId);
          }));
  }
  typed(s, kPeer | kSplitFinish, encoded([&](rpc::Writer& w) {
          w.put<uint32_t>(0);
          w.put(built);
          w.put(kSplitId);
        }));
  typed(s, kPeer | kSplitAbort, encoded([](rpc::Writer& w) {
          w.put<uint32_t>(0);
          w.put(kSplitId);
        }));
  typed(s, kPeer | kSetRoot, encoded([&](rpc::Writer& w) {
          w.put<uint64_t>(0);
          w.put(built);
          w.put<uint32_t>(1);
        }));
  // A client trying the same (refused).
  typed(s, kSetRoot, encoded([&](rpc::Writer& w) {
          w.put<uint64_t>(0);
          w.put(built);
          w.put<uint32_t>(1);
        }));
  save("cell_server", "puts-splits", s.b);
}

void catfish_seeds() {
  using namespace catfish;
  using namespace ring;
  // catfish_ring, hostile half: a ring holding two messages and a wrap.
  {
    constexpr uint32_t kCap = 256;
    std::vector<std::byte> ring(kCap);
    MessageHeader h;
    h.seq = 1;
    h.type = 1;
    h.payload_bytes = 32;
    h.request_id = 9;
    encode_message(ring.data(), h);
    MessageHeader h2;
    h2.seq = 2;
    h2.type = 2;
    h2.kind = MessageKind::kEnd;
    h2.payload_bytes = 5;
    encode_message(ring.data() + h.size_bytes, h2);
    const uint32_t used = h.size_bytes + h2.size_bytes;
    const uint64_t w = wrap_word(3, kCap - used);
    std::memcpy(ring.data() + used, &w, 8);
    Bytes in;
    in.put<uint8_t>(0).put<uint16_t>((kCap - 64) / 8).raw(ring);
    save("catfish_ring", "hostile-two-and-wrap", in.b);
  }
  {
    Bytes in;  // round trip: writes, consumes, writes that wrap
    in.put<uint8_t>(1).put<uint16_t>(24);
    for (int i = 0; i < 6; ++i) {
      in.put<uint8_t>(0).put<uint16_t>(static_cast<uint16_t>(i)).put<uint16_t>(static_cast<uint16_t>(16 + 8 * i));
      in.raw(std::vector<std::byte>(16 + 8 * i, std::byte{0x5a}));
      if (i % 2 == 1) in.put<uint8_t>(1 | (2 << 1));
    }
    in.put<uint32_t>(100).put<uint8_t>(0x10);
    save("catfish_ring", "round-trip", in.b);
  }
  // catfish_node: a leaf of three rectangles and a header.
  {
    Geometry g;
    g.node_bytes = 384;
    NodeData node;
    node.level = 0;
    node.count = 3;
    for (uint32_t i = 0; i < 3; ++i) node.entries[i] = {{1.0 * i, 2.0 * i, 1.0 * i + 1, 2.0 * i + 3}, 100 + i};
    std::vector<uint64_t> img(g.node_bytes / 8);
    encode_node(reinterpret_cast<std::byte*>(img.data()), g, node);
    Bytes in;
    in.put<uint8_t>(0).raw({reinterpret_cast<const std::byte*>(img.data()), g.node_bytes});
    save("catfish_node", "leaf", in.b);
    std::vector<uint64_t> hdr(g.node_bytes / 8);
    encode_header(reinterpret_cast<std::byte*>(hdr.data()), HeaderInfo{384, 2, 1, 384});
    Bytes h;
    h.put<uint8_t>(0).raw({reinterpret_cast<const std::byte*>(hdr.data()), g.node_bytes});
    save("catfish_node", "header", h.b);
  }
  // catfish_connect: a request, an answer, and a request to the served handler.
  ClientInfo info;
  info.node = 5;
  info.response_ring = region(5, 7, 4096 + kControlBytes);
  info.response_ring_bytes = 4096;
  const auto request = encoded([&](rpc::Writer& w) { put_client_info(info, w); });
  Bytes rq;
  rq.put<uint8_t>(0).raw(request);
  save("catfish_connect", "request", rq.b);
  ConnectAnswer a;
  a.connection.server = 1;
  a.connection.connection_id = 3;
  a.connection.request_ring = region(1, 4, 2048 + kControlBytes);
  a.connection.request_ring_bytes = 2048;
  a.connection.heartbeat_interval_ns = kMillisecond;
  a.tree = region(1, 2, 1 << 20);
  Bytes an;
  an.put<uint8_t>(1).raw(encoded([&](rpc::Writer& w) { put_connect_answer(a, w); }));
  save("catfish_connect", "answer", an.b);
  Bytes served;
  served.put<uint8_t>(2).put<uint16_t>(static_cast<uint16_t>(request.size())).raw(request);
  ClientInfo small = info;
  small.response_ring_bytes = 64;  // too small for a 256-byte segment: refused
  const auto refused = encoded([&](rpc::Writer& w) { put_client_info(small, w); });
  served.put<uint16_t>(static_cast<uint16_t>(refused.size())).raw(refused);
  save("catfish_connect", "served", served.b);
  // mailbox_setup: a set-up, one replacing it (retired), one naming a
  // connection that is not the client's, and one with trailing bytes.
  {
    ClientInfo mine;
    mine.node = 5;
    mine.response_ring = region(5, 9, 1024 + kControlBytes);
    mine.response_ring_bytes = 1024;
    Bytes setups;
    for (const uint32_t replaces : {messaging::kNoConnection, 0u, 2u}) {
      const auto req = encoded([&](rpc::Writer& w) { messaging::put_setup_request(mine, replaces, w); });
      setups.put<uint16_t>(static_cast<uint16_t>(req.size())).raw(req);
    }
    const auto trailing = encoded([&](rpc::Writer& w) {
      messaging::put_setup_request(mine, messaging::kNoConnection, w);
      w.put<uint32_t>(7);
    });
    setups.put<uint16_t>(static_cast<uint16_t>(trailing.size())).raw(trailing);
    save("mailbox_setup", "setups", setups.b);
  }

  // catfish_messaging: inserts, a search, serve, consume, then a raw write.
  Bytes m;
  auto message = [&](uint8_t type, const std::vector<std::byte>& payload) {
    m.put<uint8_t>(0).put<uint8_t>(type).put<uint8_t>(0).put<uint16_t>(static_cast<uint16_t>(payload.size())).raw(payload);
  };
  for (int i = 0; i < 10; ++i) {
    message(static_cast<uint8_t>(kInsertRequest), encoded([&](rpc::Writer& w) {
              put_rect(w, Rect{1.0 * i, 1.0 * i, 1.0 * i + 2, 1.0 * i + 2});
              w.put<uint64_t>(static_cast<uint64_t>(i));
            }));
    if (i % 3 == 2) m.put<uint8_t>(2).put<uint8_t>(3);
  }
  message(static_cast<uint8_t>(kSearchRequest), encoded([](rpc::Writer& w) { put_rect(w, Rect{0, 0, 20, 20}); }));
  message(static_cast<uint8_t>(kDeleteRequest), encoded([](rpc::Writer& w) {
            put_rect(w, Rect{1, 1, 3, 3});
            w.put<uint64_t>(1);
          }));
  m.put<uint8_t>(2).put<uint8_t>(3).put<uint8_t>(2).put<uint8_t>(3);
  m.put<uint8_t>(1).put<uint16_t>(200).put<uint8_t>(8).put<uint64_t>(0x0000002000000007ull);
  m.put<uint8_t>(2);
  save("catfish_messaging", "insert-search-delete-garble", m.b);
}

// nessie_requests: two clients put, get and delete keys (enough of them
// to migrate and fill the small node), serving and reading in between;
// then a reset and a raw write that names another client's ring.
void nessie_seeds() {
  Bytes n;
  auto request = [&](uint8_t client, uint8_t type, uint8_t key, uint8_t value_bytes) {
    n.put<uint8_t>(0).put<uint8_t>(client).put<uint8_t>(type).put<uint8_t>(1).put<uint8_t>(key);
    n.put<uint8_t>(value_bytes);
    for (uint8_t i = 0; i < value_bytes; ++i) n.put<uint8_t>(static_cast<uint8_t>('a' + (key + i) % 26));
  };
  auto serve_and_read = [&](uint8_t client) { n.put<uint8_t>(2).put<uint8_t>(0).put<uint8_t>(3).put<uint8_t>(client); };
  for (uint8_t k = 0; k < 20; ++k) {
    request(k % 2, 2, k, 8 + k);  // put
    serve_and_read(k % 2);
  }
  for (uint8_t k = 0; k < 20; k += 3) {
    request(k % 2, 1, k, 0);  // get
    serve_and_read(k % 2);
  }
  request(0, 3, 4, 0);  // delete
  serve_and_read(0);
  request(1, 1, 4, 0);
  serve_and_read(1);
  n.put<uint8_t>(4).put<uint8_t>(1);  // start over
  serve_and_read(1);
  n.put<uint8_t>(1).put<uint8_t>(0).put<uint16_t>(0).put<uint8_t>(8).put<uint64_t>(0x0000004000000001ull);
  n.put<uint8_t>(0x03);  // notify, naming ring 1
  serve_and_read(0);
  save("nessie_requests", "put-get-delete-reset-garble", n.b);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  root = argv[1];
  rpc_seeds();
  pilaf_seeds();
  cell_seeds();
  catfish_seeds();
  nessie_seeds();
  std::printf("seeds written under %s\n", argv[1]);
  return 0;
}
