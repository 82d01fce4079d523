// Pilaf's analytic model. The figures come from a real store: the model
// loads a Store sized as the driver sizes each server's (sizing.h) with the
// keys the driver loads into server 0 (pilaf_shard_of) and walks, for every
// key, the probe PilafClient::rdma_get_once makes: an entry READ per
// candidate slot in order until the key's extent is found, an extent READ
// for each entry whose tag matches. So entry READs per get (the paper's
// 3-way cuckoo averages 1.6 probes at 75% fill; the driver fills to under
// half), their bytes and the CRC64 bytes the client checks are counted,
// not assumed. Gets go by READs (index.mode = "rdma") or by "pilaf.get"
// RPCs ("vo"); puts (updates, inserts) and deletes always by RPC, so the
// server's operations mix gets' and writes' costs and message sizes.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/common/random.h"
#include "core/design/model_profile.h"
#include "core/index/pilaf/client.h"
#include "core/index/pilaf/config.h"
#include "core/index/pilaf/session.h"
#include "core/index/pilaf/sizing.h"
#include "core/index/pilaf/store.h"
#include "core/rpc/message.h"
#include "core/workload/workload.h"

namespace locus::pilaf {
namespace {

// At most this many keys are loaded to count probes. A larger share is
// scaled down by a power of two together with its table, which keeps the
// load factor the probe count depends on.
constexpr uint64_t kModelKeys = uint64_t{1} << 18;

// What the walk counts, summed over the keys walked.
struct Probes {
  double keys = 0, entry_reads = 0, extent_reads = 0, extent_bytes = 0, key_bytes = 0, value_bytes = 0;
};

// PilafClient::rdma_get_once over the local table: candidate slots in
// order (a slot shared with an earlier way is read once), an extent READ
// per entry with the key's tag, done at the key's own extent.
void walk(const Store& store, std::string_view key, Probes* p) {
  const KeyHash kh = hash_key(key, store.bucket_count() - 1);
  const auto* table = reinterpret_cast<const Entry*>(store.table_memory());
  const std::byte* extents = store.extents_memory();
  for (int w = 0; w < kWays; ++w) {
    if (repeats_earlier_way(kh, w)) continue;
    const uint64_t slot = kh.slot[w];
    p->entry_reads += 1;
    const Entry& e = table[slot];
    if (e.empty() || e.key_tag != kh.tag) continue;
    p->extent_reads += 1;
    p->extent_bytes += e.kv_length;
    std::string_view k, v;
    if (parse_extent(extents + e.kv_offset, e.kv_length, &k, &v) && k == key) {
      p->value_bytes += static_cast<double>(v.size());
      break;
    }
  }
  p->keys += 1;
  p->key_bytes += static_cast<double>(key.size());
}

// Server 0's share of the load (or a sample of it with a table as much
// smaller), walked key by key.
StatusOr<Probes> count_probes(const scenario::Scenario& s, const PilafConfig& c, uint32_t* shift_out,
                              uint64_t* buckets_out) {
  StoreOptions o = store_options_for(s, c);
  const uint64_t per_server = s.workload.effective_insertcount() / s.platform.servers + 1;
  uint32_t shift = 0;
  while ((per_server >> shift) > kModelKeys) ++shift;
  o.initial_buckets = std::max<uint64_t>(o.initial_buckets >> shift, 8);
  o.initial_extent_bytes = std::max<uint64_t>(o.initial_extent_bytes >> shift, o.max_kv_bytes);
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::create(o));
  LOCUS_ASSIGN_OR_RETURN(auto loader, workload::Workload::create(s.workload));
  Random rng(s.run.seed * 0x9E3779B97F4A7C15ULL + 0x9117AF);
  std::string key(loader.max_key_bytes(), '\0'), value(loader.max_value_bytes(), '\0');
  std::vector<std::string> keys;
  const uint64_t want = std::max<uint64_t>(1, per_server >> shift);
  const uint64_t first = s.workload.insertstart, end = first + s.workload.effective_insertcount();
  for (uint64_t n = first; n < end && keys.size() < want; ++n) {
    if (pilaf_shard_of(n, s.platform.servers) != 0) continue;
    const size_t kl = loader.build_key(n, key.data(), key.size());
    const auto plan = loader.plan_record(rng, n, loader.max_value_bytes());
    workload::Workload::fill_planned(plan, value.data());
    LOCUS_RETURN_IF_ERROR(store->put(std::string_view(key.data(), kl), std::string_view(value.data(), plan.length)));
    keys.emplace_back(key.data(), kl);
  }
  Probes p;
  for (const std::string& k : keys) walk(*store, k, &p);
  if (p.keys == 0 || p.extent_reads == 0) return invalid_argument("workload.recordcount: no records to model a get on");
  *shift_out = shift;
  *buckets_out = store->bucket_count();
  return p;
}

}  // namespace

StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s) {
  const auto* c = s.index.get<PilafConfig>();
  if (c == nullptr) return invalid_argument("index.type: not a pilaf scenario");
  const auto& wl = s.workload;
  if (wl.scanproportion > 0) return invalid_argument("workload.scanproportion: pilaf has no scans");
  if (wl.readmodifywriteproportion > 0) {
    return invalid_argument(
        "workload.readmodifywriteproportion: the pilaf model has no operation that is a get and a put");
  }
  // In 64 bits: 65536 x 65536 wrapped to 32 bytes and predicted 1.2 M ops/s.
  const uint64_t record = uint64_t{wl.fieldcount} * wl.fieldlength + kExtentHeaderBytes;
  if (record > (1ull << 31)) {
    return invalid_argument("workload.fieldcount x workload.fieldlength: records of " + std::to_string(record) +
                            " bytes; one READ carries at most 2^31");
  }
  uint32_t shift = 0;
  uint64_t buckets = 0;
  LOCUS_ASSIGN_OR_RETURN(const Probes p, count_probes(s, *c, &shift, &buckets));
  const double n = p.keys;
  const double entries = p.entry_reads / n, extents = p.extent_reads / n, extent_bytes = p.extent_bytes / n;
  const double key_bytes = p.key_bytes / n, value_bytes = p.value_bytes / n;
  const auto& cpu = s.platform.cpu;
  const auto& nic = s.platform.nic;

  design::ModelProfile m;
  // Client side: the probe's entry READs, then the extent READs.
  m.reads_per_client_op = entries + extents;
  m.round_trips_per_client_op = m.reads_per_client_op;  // each READ's address comes from the one before
  m.read_bytes = (entries * kEntryBytes + extent_bytes) / m.reads_per_client_op;
  const auto read_us = [&](double bytes) { return 1e6 / nic.read.ops_per_s(static_cast<uint32_t>(bytes)); };
  m.nic_rdma_service_us = (entries * read_us(kEntryBytes) + extents * read_us(extent_bytes / extents)) /
                          m.reads_per_client_op;
  m.client_cpu_us_per_client_op = entries * design::handler_cost_us(cpu, kClientCrcWork, kEntryCrcBytes) +
                                  extents * design::handler_cost_us(cpu, kClientCrcWork, extent_bytes / extents);
  // What each server registers for READs: its table, extents and meta.
  const StoreOptions full = store_options_for(s, *c);
  m.remote_read_bytes = static_cast<double>(table_buckets(full)) * kEntryBytes +
                        static_cast<double>(extent_region_bytes(full)) + kMetaBytes;
  m.client_op_us = design::client_op_cost_us(s);

  // Server side: each operation's handler at the payload bytes it moves
  // (request and response, as the RPC server charges them), and its
  // messages at their bytes with the RPC header.
  struct ServerOp {
    const char* handler;
    double share, request, response;  // share of all operations; payload bytes
  };
  const double blob_key = 4 + key_bytes, blob_value = 4 + value_bytes;
  const double writes = wl.updateproportion + wl.insertproportion;
  const double get_server_share = c->mode == "vo" ? 1.0 : 0.0;
  const ServerOp ops[] = {{"pilaf.get", wl.readproportion * get_server_share, blob_key, blob_value},
                          {"pilaf.put", writes, blob_key + blob_value, 0},
                          {"pilaf.delete", wl.deleteproportion, blob_key, 0}};
  double server_ops = 0, cpu_us = 0, request = 0, response = 0, send_us = 0, recv_us = 0;
  for (const ServerOp& op : ops) {
    if (op.share <= 0) continue;
    server_ops += op.share;
    cpu_us += op.share * design::handler_cost_us(cpu, op.handler, op.request + op.response);
    request += op.share * (rpc::kHeaderBytes + op.request);
    response += op.share * (rpc::kHeaderBytes + op.response);
    send_us += op.share * 1e6 / nic.send.ops_per_s(static_cast<uint32_t>(rpc::kHeaderBytes + op.response));
    recv_us += op.share * 1e6 / nic.recv.ops_per_s(static_cast<uint32_t>(rpc::kHeaderBytes + op.request));
  }
  if (server_ops > 0) {
    m.server_cpu_us_per_server_op = cpu_us / server_ops;
    m.rpc_request_bytes = request / server_ops;
    m.rpc_response_bytes = response / server_ops;
    m.nic_send_service_us = send_us / server_ops;
    m.nic_recv_service_us = recv_us / server_ops;
  } else {  // read-only over READs: the get RPC the split could choose
    m.server_cpu_us_per_server_op = design::handler_cost_us(cpu, "pilaf.get", blob_key + blob_value);
    m.rpc_request_bytes = rpc::kHeaderBytes + blob_key;
    m.rpc_response_bytes = rpc::kHeaderBytes + blob_value;
  }
  // Reads by READs in rdma mode, everything else by RPC.
  const bool only_gets_choose = writes + wl.deleteproportion <= 0;
  m.scenario_server_share = server_ops;

  m.derivation = {
      fmt::format("table: {} keys of server 0 of {} loaded into {} buckets{} (load factor {:.2f}), {:.0f} B keys, "
                  "{:.0f} B values",
                  p.keys, s.platform.servers, buckets,
                  shift == 0 ? std::string() : fmt::format(" (its share and table scaled by 1/{})", 1u << shift),
                  p.keys / static_cast<double>(buckets), key_bytes, value_bytes),
      fmt::format("client side: {:.3f} entry READs of {} B (probes) and {:.3f} extent READs of {:.0f} B a get, one "
                  "round trip each, {:.3f} us at the NIC a READ; pilaf.client_crc {:.3f} us a get",
                  entries, kEntryBytes, extents, extent_bytes / extents, m.nic_rdma_service_us,
                  m.client_cpu_us_per_client_op),
      fmt::format("server side: {:.3f} us a server op ({:.0f} B request, {:.0f} B response), from {}",
                  m.server_cpu_us_per_server_op, m.rpc_request_bytes, m.rpc_response_bytes,
                  server_ops > 0 ? "the mix below" : "pilaf.get"),
      fmt::format("mix: gets {:.3f} of operations, {}; puts {:.3f} and deletes {:.3f}, always by RPC",
                  wl.readproportion, c->mode == "vo" ? "by RPC (index.mode = vo)" : "by READs (index.mode = rdma)",
                  writes, wl.deleteproportion),
      fmt::format("split: {:.3f} of operations to the server{}", server_ops,
                  only_gets_choose ? "" : " (puts and deletes cannot go client-side)")};
  if (wl.deleteproportion > 0) m.derivation.push_back("not modelled: gets of deleted keys (a miss's extra READs)");
  return m;
}

}  // namespace locus::pilaf
