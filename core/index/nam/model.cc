// The NAM index's analytic model (design::ModelProfile): point queries on
// the trees the driver builds (model_tree.h), beside the paper's section
// 2.3 bandwidth model (Table 2), whose figures the derivation prints.
//
// Paths. The scenario's distribution is the server-side path when it uses
// the memory servers' CPUs: coarse-grained, one nam.range RPC to the key's
// partition; hybrid, one nam.leaf RPC to the partition's inner levels and
// one READ of the leaf it names. The client-side path is the fine-grained
// traversal of the one global tree: a READ of every level, root first, in
// sequence (the root pointer is cached, the root node is not). So a coarse
// or hybrid scenario runs server-only and its client-only row answers "and
// fine-grained?", a fine-grained scenario runs client-only.
//
// Per-server shares: the coarse and hybrid RPCs go to the key's partition
// (its share of the loaded keys); the fine traversal's READs to the server
// holding each node on the way (the root and the few upper nodes sit on
// the first servers of the round-robin: the hot spot), the hybrid leaf
// READs to the server holding the leaf. The hybrid scenario's shares are
// its leaves' (its client-only row, the fine traversal, shares them too).
//
// Range scans (workload.scanproportion = 1): Table 2's bound and the
// memory servers' CPU only, no queueing prediction (range_bound).
// Inserts (workload.insertproportion, the paper's 95/5 and 50/50 mixes):
// coarse-grained as nam.insert RPCs, fine-grained as the traversal plus
// the leaf's lock, install and unlock, splits at the built tree's rate.
// Not covered (refused by name): updates, deletes and other mixes; hybrid
// inserts; more than kMaxModelRecords records.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/design/index_driver.h"
#include "core/design/model_profile.h"
#include "core/index/nam/config.h"
#include "core/index/nam/model_tree.h"
#include "core/index/nam/protocol.h"

namespace locus::nam {
namespace {

constexpr double kKeyBytes = 8;  // Table 1's K: keys, values and pointers
// A coarse-grained range request: from key, from payload, to key, limit.
constexpr double kRangeRequestBytes = 3 * kKeyBytes + 4;

// One-sided operations of the fine-grained client path (model_profile):
// their NIC service times and the shares of an operation.
struct ClientPath {
  double read_us = 0, install_us = 0, create_us = 0, atomic_us = 0;
  double inserts = 0, splits = 0;  // share of operations; leaf splits an insert
};

// Each server's share of the client path's NIC time, from the tree built
// for `t`'s server count: the traversal's READs by the server of each node
// (fine_read_share), an insert's lock, install and unlock at the leaf's
// server, a split's parent READs at the upper levels' servers, its FAA and
// new page round-robin (even), its parent's lock, install and unlock at
// the upper levels' servers too.
std::vector<double> client_path_shares(const ModelTrees& t, const ClientPath& c) {
  const size_t n = t.fine_read_share.size();
  const double height = t.fine_height;
  std::vector<double> time(n, 0);
  for (size_t s = 0; s < n; ++s) {
    const double leaf = t.fine_leaf_share[s], reads = height * t.fine_read_share[s];
    const double upper = height > 1 ? (reads - leaf) / (height - 1) : 0;  // of one READ per upper level
    time[s] = reads * c.read_us + c.inserts * leaf * (2 * c.atomic_us + c.install_us) +
              c.inserts * c.splits *
                  ((height - 1) * upper * c.read_us + upper * (2 * c.atomic_us + c.install_us) +
                   (c.atomic_us + c.create_us) / static_cast<double>(n));
  }
  return normalised(std::move(time));
}

std::string shares_text(const std::vector<double>& v) {
  std::string t;
  for (double x : v) t += fmt::format("{}{:.3f}", t.empty() ? "" : " ", x);
  return t;
}

// Table 2 for point queries under a uniform workload: the aggregate READ
// bandwidth of S servers over H pages a query.
// Table 1's symbols for the scenario: S memory servers of BW bytes/s each
// (the NIC's READ rate at a page times the page), P, D, M = P / 3K,
// L = D / M, and the heights H_FG = log_M L and H_CG = log_M (L / S).
struct Table1 {
  double servers = 0, bw = 0, page = 0, records = 0, fanout = 0, leaves = 0, h_fg = 0, h_cg = 0;

  Table1(const scenario::Scenario& s, const NamConfig& c, const ModelTrees& t)
      : servers(s.platform.servers),
        bw(s.platform.nic.read.ops_per_s(c.page_bytes) * c.page_bytes),
        page(c.page_bytes),
        records(static_cast<double>(t.records)),
        fanout(page / (3 * kKeyBytes)),
        leaves(records / fanout),
        h_fg(std::ceil(std::log(leaves) / std::log(fanout))),
        h_cg(std::ceil(std::log(leaves / servers) / std::log(fanout))) {}
  // Queries a second for `bytes` of the memory servers' bandwidth each.
  double qps(double bytes) const { return servers * bw / bytes; }
  std::string line() const {
    return fmt::format(
        "Table 2 (paper, section 2.3): S = {:.0f}, BW = {:.2f} GB/s (the NIC's {:.0f} B READ rate), P = {:.0f} B, "
        "D = {:.0f}, M = P/3K = {:.1f}, L = D/M = {:.0f}, H_FG = {:.0f}, H_CG = {:.0f}",
        servers, bw / 1e9, page, page, records, fanout, leaves, h_fg, h_cg);
  }
};

std::vector<std::string> table2(const scenario::Scenario& s, const NamConfig& c, const ModelTrees& t,
                                double server_cpu_us) {
  const Table1 k(s, c, t);
  const double servers = k.servers, page = k.page, h_fg = k.h_fg, h_cg = k.h_cg;
  const double built_cg = *std::max_element(t.partition_height.begin(), t.partition_height.end());
  auto qps = [&](double h) { return k.qps(h * page); };
  return {k.line(),
          fmt::format("Table 2 point queries, uniform: fine {:.0f} B/query, {:.3g} queries/s; coarse {:.0f} B/query, "
                      "{:.3g} queries/s (S x BW / H x P)",
                      h_fg * page, qps(h_fg), h_cg * page, qps(h_cg)),
          fmt::format("the built trees: fine {} levels ({} leaves, {} nodes), coarse partitions of {} levels at most "
                      "({} leaves): Table 2's bound {:.3g} (fine), {:.3g} (coarse) queries/s",
                      t.fine_height, t.fine_leaves, t.fine_nodes, built_cg, t.partition_leaves, qps(t.fine_height),
                      qps(built_cg)),
          fmt::format("memory servers' CPU (not in Table 2): {:.0f} cores / {:.3f} us = {:.3g} RPCs/s",
                      servers * s.platform.cores_per_server, server_cpu_us,
                      servers * s.platform.cores_per_server / server_cpu_us * 1e6)};
}

// Table 2 for range queries under a uniform workload: S x BW over the
// bytes a scan of selectivity s reads, H x P + s x L x P (hash
// partitioning: a traversal on every server, H x P x S), beside the same
// on the built trees and the memory servers' CPU for coarse-grained scans.
// A bound, not a prediction: the queueing model covers point queries and
// inserts, not scans.
StatusOr<design::ModelProfile> range_bound(const scenario::Scenario& s, const NamConfig& c) {
  const workload::WorkloadSpec& w = s.workload;
  if (w.scanlengthdistribution == workload::LengthDistribution::kZipfian) {
    return invalid_argument("workload.scanlengthdistribution: the nam range bound takes constant or uniform lengths");
  }
  LOCUS_ASSIGN_OR_RETURN(ModelTrees t, build_model_trees(s, c, s.platform.servers));
  const double pairs = w.scanlengthdistribution == workload::LengthDistribution::kUniform
                           ? (static_cast<double>(w.minscanlength) + w.maxscanlength) / 2
                           : static_cast<double>(w.maxscanlength);
  const Table1 k(s, c, t);
  const double servers = k.servers, page = k.page, leaves = k.leaves;
  const double sel = pairs / k.records;
  const bool hash = c.partitioning == Partitioning::kHash;
  const double traversals = hash ? servers : 1;  // hash: every server's tree
  const double h_fg = k.h_fg, h_cg = k.h_cg;
  const double fg = h_fg * page + sel * leaves * page, cg = h_cg * page * traversals + sel * leaves * page;
  const double built_cg = *std::max_element(t.partition_height.begin(), t.partition_height.end());
  // Table 2's H counts the levels above the leaves (log_M L), s.L.P the leaves.
  const double built_fg_bytes = (t.fine_height - 1) * page + sel * static_cast<double>(t.fine_leaves) * page;
  const double built_cg_bytes =
      (built_cg - 1) * page * traversals + sel * static_cast<double>(t.partition_leaves) * page;
  // Coarse-grained: each server asked (one, or all S with hash
  // partitioning, each for its part of the pairs) answers in responses of
  // at most pairs_per_response pairs, one RPC apiece, each charged
  // nam.range at the bytes it moves.
  const uint32_t per_response = pairs_per_response(design::IndexDriver::kDefaultRpcMessageBytes);
  const double part = pairs / traversals;
  const double rpcs_per_part = std::max(1.0, std::ceil(part / per_response));
  double part_us = 0, left = part;
  for (double i = 0; i < rpcs_per_part; ++i) {
    const double here = std::min<double>(left, per_response);
    part_us += design::handler_cost_us(s.platform.cpu, kRangeWork, kRangeRequestBytes + kRangeResponseHead + 16 * here);
    left -= here;
  }
  const double rpcs = traversals * rpcs_per_part, cpu_us = traversals * part_us;
  const double cores = servers * s.platform.cores_per_server;
  design::ModelProfile m;
  m.derivation = {
      k.line(),
      fmt::format("Table 2 range queries, uniform, sel = s = {:.1f} pairs / D = {:.3g}: fine H_FG.P + s.L.P = {:.0f} "
                  "B/query, {:.4g} queries/s; coarse ({} partitioning) {}H_CG.P + s.L.P = {:.0f} B/query, {:.4g} "
                  "queries/s (S x BW / bytes)",
                  pairs, sel, fg, k.qps(fg), hash ? "hash" : "range", hash ? "S." : "", cg, k.qps(cg)),
      fmt::format("the built trees: fine {} levels, {} leaves: {:.0f} B/query, {:.4g} queries/s; coarse partitions of "
                  "{:.0f} levels at most, {} leaves: {:.0f} B/query, {:.4g} queries/s",
                  t.fine_height, t.fine_leaves, built_fg_bytes, k.qps(built_fg_bytes), built_cg, t.partition_leaves,
                  built_cg_bytes, k.qps(built_cg_bytes)),
      fmt::format("memory servers' CPU (not in Table 2), coarse-grained: {:.0f} RPC(s) of up to {} pairs a scan, "
                  "{} {:.3f} us a scan; {:.0f} cores: {:.4g} scans/s",
                  rpcs, per_response, kRangeWork, cpu_us, cores, cores / cpu_us * 1e6)};
  m.bound_only =
      "the nam queueing model covers point queries and inserts (workload.readproportion + insertproportion = 1), "
      "not scans; for range scans "
      "(workload.scanproportion = 1) the paper's Table 2 bound above is all it gives";
  return m;
}

}  // namespace

StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s) {
  const auto* c = s.index.get<NamConfig>();
  if (c == nullptr) return invalid_argument("index.type: not a nam scenario");
  const workload::WorkloadSpec& w = s.workload;
  if (w.scanproportion >= 1.0) {
    if (w.effective_insertcount() == 0) return invalid_argument("workload.recordcount: the nam model needs records");
    return range_bound(s, *c);
  }
  const bool hybrid = c->distribution == Distribution::kHybrid;
  const double reads = w.readproportion, inserts = w.insertproportion;
  if (std::abs(reads + inserts - 1.0) > 1e-9) {
    return invalid_argument(fmt::format(
        "workload.readproportion: the nam model covers point queries and inserts (readproportion + "
        "insertproportion = 1), not readproportion {} with insertproportion {}",
        reads, inserts));
  }
  if (inserts > 0 && hybrid) {
    return invalid_argument(
        "workload.insertproportion: the nam model covers inserts for the coarse- and fine-grained designs; hybrid "
        "inserts (a nam.leaf RPC, then the leaf locked, installed and unlocked one-sidedly) are not in it yet");
  }
  if (w.effective_insertcount() == 0) return invalid_argument("workload.recordcount: the nam model needs records");
  LOCUS_ASSIGN_OR_RETURN(ModelTrees t, build_model_trees(s, *c, s.platform.servers));

  design::ModelProfile m;
  // Client path, the fine-grained traversal (tree.cc, remote_access.cc): a
  // lookup READs a page per level; an insert too, then CAS-locks the leaf,
  // WRITEs it but its word and CAS-unlocks it. A leaf split (as many per
  // insert as the built tree has leaves per record: its load was the same
  // random inserts) adds an FAA for the page, a WRITE of the new leaf, and
  // the separator's insert into the parent: the levels above READ again,
  // the parent locked, installed and unlocked.
  const scenario::NicSpec& nic = s.platform.nic;
  const double height = t.fine_height, page = c->page_bytes;
  const double splits = t.records > 0 ? t.level_nodes.front() / static_cast<double>(t.records) : 0;
  ClientPath path;
  path.read_us = static_cast<double>(nic.read.service_ns(c->page_bytes)) * 1e-3;
  path.install_us = static_cast<double>(nic.write.service_ns(c->page_bytes - 8)) * 1e-3;
  path.create_us = static_cast<double>(nic.write.service_ns(c->page_bytes)) * 1e-3;
  path.atomic_us = static_cast<double>(nic.atomic.service_ns(8)) * 1e-3;
  path.inserts = inserts;
  path.splits = splits;
  struct Ops {
    double n = 0, service_us = 0, out_bytes = 0, in_bytes = 0;
    void add(double count, double us, double out, double in) {
      n += count, service_us += count * us, out_bytes += count * out, in_bytes += count * in;
    }
  } client;
  client.add(height * (reads + inserts) + inserts * splits * (height - 1), path.read_us, 0, page);
  client.add(inserts * (2 + splits * 3), path.atomic_us, 0, 8);  // lock, unlock; FAA, parent's lock and unlock
  client.add(inserts * (1 + splits), path.install_us, page - 8, 0);
  client.add(inserts * splits, path.create_us, page, 0);
  m.reads_per_client_op = client.n;
  m.round_trips_per_client_op = client.n;  // each waits for the one before
  m.read_bytes = (client.out_bytes + client.in_bytes) / client.n;
  m.nic_rdma_service_us = client.service_us / client.n;
  m.link_payload_bytes = std::max(client.out_bytes, client.in_bytes) / client.n;
  // Server path. Coarse: a nam.range RPC per lookup, (from key, from
  // payload, to key, limit) -> (more, count, one pair), and a nam.insert
  // per insert, (key, payload) -> (). Hybrid (point queries): a nam.leaf
  // RPC, (key, payload) -> (leaf pointer), then the leaf's READ.
  struct ServerOp {
    const char* handler;
    double share, request, response;
  };
  const ServerOp coarse_ops[] = {{kRangeWork, reads, kRangeRequestBytes, kRangeResponseHead + 2 * kKeyBytes},
                                 {kInsertWork, inserts, 2 * kKeyBytes, 0}};
  const ServerOp hybrid_ops[] = {{kLeafWork, 1, 2 * kKeyBytes, kKeyBytes}};
  double cpu_us = 0, request = 0, response = 0, send_us = 0, recv_us = 0;
  for (const ServerOp& op : hybrid ? std::span<const ServerOp>(hybrid_ops) : std::span<const ServerOp>(coarse_ops)) {
    cpu_us += op.share * design::handler_cost_us(s.platform.cpu, op.handler, op.request + op.response);
    request += op.share * op.request, response += op.share * op.response;
    send_us += op.share * 1e6 / nic.send.ops_per_s(static_cast<uint32_t>(op.response));
    recv_us += op.share * 1e6 / nic.recv.ops_per_s(static_cast<uint32_t>(op.request));
  }
  m.rpc_request_bytes = request;
  m.rpc_response_bytes = response;
  m.server_cpu_us_per_server_op = cpu_us;
  m.nic_send_service_us = send_us;
  m.nic_recv_service_us = recv_us;
  const std::string handler = hybrid ? kLeafWork : inserts > 0 ? "nam.range and nam.insert" : kRangeWork;
  m.messages_per_server_op = 1;
  m.reads_per_server_op = hybrid ? 1 : 0;
  m.client_op_us = design::client_op_cost_us(s);
  m.scenario_server_share = c->distribution == Distribution::kFine ? 0.0 : 1.0;
  const NamConfig config = *c;
  m.server_shares = [s, config, t, path](uint32_t servers) -> StatusOr<design::ServerShares> {
    ModelTrees trees = t;  // the scenario's own count: built above
    if (servers != s.platform.servers) {
      LOCUS_ASSIGN_OR_RETURN(trees, build_model_trees(s, config, servers));
    }
    const bool leaves = config.distribution == Distribution::kHybrid;
    design::ServerShares out{trees.partition_share,
                             leaves                ? trees.hybrid_leaf_share
                             : path.inserts > 0    ? client_path_shares(trees, path)
                                                   : trees.fine_read_share,
                             {}};
    out.derivation =
        fmt::format("shares over {} servers: RPCs (partitions' keys) {}; READs ({}) {}", servers, shares_text(out.work),
                    leaves ? "hybrid leaves" : "fine tree's nodes", shares_text(out.read));
    return out;
  };
  std::string levels;
  for (size_t i = t.level_nodes.size(); i-- > 0;)
    levels += fmt::format("{}{:.0f}", levels.empty() ? "" : " ", t.level_nodes[i]);
  std::string heights;
  for (uint32_t h : t.partition_height) heights += fmt::format("{}{}", heights.empty() ? "" : " ", h);
  m.derivation = table2(s, *c, t, m.server_cpu_us_per_server_op);
  m.derivation.push_back(fmt::format(
      "fine tree (client-side path): {} records inserted as the driver does, {} B pages ({} pairs a leaf, {} "
      "entries an inner node): nodes per level from the root {}; a lookup READs {} pages in sequence; READ shares "
      "per server {}",
      t.records, c->page_bytes, leaf_capacity(c->page_bytes), inner_capacity(c->page_bytes), levels, t.fine_height,
      shares_text(t.fine_read_share)));
  if (inserts > 0) {
    m.derivation.push_back(fmt::format(
        "inserts ({:.0f}%): the traversal's READs, then CAS lock, WRITE of {:.0f} B, CAS unlock; {:.4f} leaf splits "
        "an insert (the built tree's leaves per record), each an FAA, a {:.0f} B WRITE and the parent's {} READs, "
        "lock, install and unlock: {:.3f} one-sided operations an operation, {:.3f} us each at the NIC; "
        "per-server shares of that NIC time: READs by node, the leaf's work at the leaf's server",
        100 * inserts, page - 8, splits, page, t.fine_height - 1, client.n, m.nic_rdma_service_us));
  }
  m.derivation.push_back(fmt::format("{} partitions ({} partitioning): keys per server {}, tree heights {}",
                                     s.platform.servers, c->partitioning == Partitioning::kRange ? "range" : "hash",
                                     shares_text(t.partition_share), heights));
  m.derivation.push_back(fmt::format("server-side path ({}): {} RPC of {:.0f} B + {:.0f} B at {} {:.3f} us{}",
                                     distribution_name(c->distribution), 1, m.rpc_request_bytes, m.rpc_response_bytes,
                                     handler, m.server_cpu_us_per_server_op,
                                     hybrid ? fmt::format(", then 1 READ of the {} B leaf; leaf READ shares {}",
                                                          c->page_bytes, shares_text(t.hybrid_leaf_share))
                                            : std::string()));
  m.derivation.push_back(fmt::format("split: index.distribution = {} runs {}", distribution_name(c->distribution),
                                     *m.scenario_server_share == 0 ? "client-only" : "server-only"));
  return m;
}

}  // namespace locus::nam
