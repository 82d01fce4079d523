// `locus bench`: see bench_command.h.
#include "apps/locus/bench_command.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/locus/micro_blink.h"
#include "apps/locus/micro_cuckoo.h"
#include "apps/locus/micro_read.h"
#include "apps/locus/micro_rtree.h"
#include "backends/loopback/loopback_runtime.h"
#ifdef LOCUS_HAVE_VERBS
#include "backends/verbs/verbs_runtime.h"
#endif
#include "core/harness/catfish_bench.h"
#include "core/harness/cell_bench.h"
#include "core/harness/pilaf_bench.h"
#include "core/selector/selector_config.h"
#include "core/metrics/run_result.h"
#include "core/workload/spatial.h"
#include "core/workload/workload_spec.h"

namespace locus::cli {
namespace {

struct BenchOptions {
  std::string index = "pilaf";
  std::string backend = "loopback";
  std::string workload = "b";
  uint64_t records = 100'000;
  uint64_t ops = 200'000;
  uint32_t clients = 4;
  std::string mode = "both";
  uint64_t seed = 1;
  std::vector<std::string> properties;
  std::string json_path;
  std::string csv_path;
  bool ycsb = false;
  std::string micro;
  double op_latency_us = 0;
  std::string config_path;  // verbs: the cluster file
  uint32_t server = 0;      // verbs: the server node the clients use
  uint32_t size_bytes = 64; // --micro read
  uint32_t depth = 16;      // --micro read
  uint32_t servers = 2;     // cell: servers in the tree
  std::string selectors;    // cell, catfish: one run each; empty: the index's default list
  uint32_t workers = 2;     // catfish: messaging workers
  std::string messaging = "polling";  // catfish
  std::string query_scale = "small";  // catfish
  std::vector<std::string> given;     // options set on the command line
};

Status fail(const std::string& option, const std::string& message) {
  return invalid_argument(option + ": " + message);
}

StatusOr<harness::RuntimeFactory> runtime_factory(const BenchOptions& o) {
  if (o.backend == "loopback") {
    const Nanos latency = static_cast<Nanos>(o.op_latency_us * 1e3);
    return harness::RuntimeFactory([latency](uint64_t seed) {
      loopback::LoopbackOptions lo;
      lo.seed = seed;
      lo.op_latency = latency;
      return loopback::make_loopback_runtime(lo);
    });
  }
#ifdef LOCUS_HAVE_VERBS
  if (o.backend == "verbs") {
    if (o.config_path.empty()) return fail("--config", "--backend verbs needs the cluster file the servers use");
    LOCUS_ASSIGN_OR_RETURN(verbs::ClusterConfig cluster, verbs::load_cluster_config(o.config_path));
    if (o.server >= cluster.servers.size()) {
      return fail("--server", std::to_string(o.server) + " is not a server of " + o.config_path);
    }
    // Client endpoints only: the servers are `locus serve` processes.
    return harness::RuntimeFactory([cluster](uint64_t seed) -> std::unique_ptr<Runtime> {
      return verbs::make_verbs_runtime(cluster, {.seed = seed});
    });
  }
  return fail("--backend", "'" + o.backend + "' is not built into this binary (available: loopback, verbs)");
#else
  return fail("--backend", "'" + o.backend + "' is not built into this binary (available: loopback)");
#endif
}

// One client's READ rate against a Pilaf server's table: a server of this
// process on loopback, the --server of the cluster file on verbs.
Status run_read_micro(const BenchOptions& o) {
  LOCUS_ASSIGN_OR_RETURN(auto factory, runtime_factory(o));
  std::unique_ptr<Runtime> runtime = factory(o.seed);
  NodeId server = o.server;
  harness::PilafServerSet local;
  if (o.backend == "loopback") {
    LOCUS_ASSIGN_OR_RETURN(server, runtime->add_node({"server0", true}));
    workload::WorkloadSpec load = workload::standard_workload('c').value();
    load.recordcount = 1000;
    pilaf::StoreOptions store;
    store.initial_buckets = 2048;
    LOCUS_ASSIGN_OR_RETURN(local, harness::start_pilaf_server(runtime->setup_env(server), store, load));
    rpc::RpcServer* srv = local.rpc.get();
    LOCUS_RETURN_IF_ERROR(runtime->spawn(server, "server0", ActorKind::kDaemon, [srv](Env&) { srv->serve(); }));
  }
  MicroReadConfig mc;
  mc.size_bytes = o.size_bytes;
  mc.depth = o.depth;
  mc.reads = o.ops;
  LOCUS_ASSIGN_OR_RETURN(MicroReadResult r, run_micro_read(*runtime, server, mc));
  fmt::print("micro read on {}: {}-byte READs, {} in flight, {} measured\n", o.backend, mc.size_bytes, mc.depth,
             r.reads);
  fmt::print("{:<28} {:>16}\n", "", "READs/s");
  fmt::print("{:<28} {:>16.0f}\n", "locus transport", r.reads_per_s);
  // One line for scripts (ci/softroce-bench.sh).
  fmt::print("result: backend={} size_bytes={} depth={} reads={} reads_per_s={:.1f} mib_per_s={:.3f}\n", o.backend,
             mc.size_bytes, mc.depth, r.reads, r.reads_per_s, r.mib_per_s);
  return Status();
}

StatusOr<workload::WorkloadSpec> build_workload(const BenchOptions& o) {
  if (o.workload.size() != 1) return fail("--workload", "expected one letter a-f");
  auto spec = workload::standard_workload(o.workload[0]);
  if (!spec.is_ok()) return fail("--workload", spec.status().message());
  spec->recordcount = o.records;
  spec->operationcount = o.ops;
  for (const std::string& p : o.properties) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos) return fail("--property", "expected name=value, got '" + p + "'");
    Status st = workload::set_property(*spec, p.substr(0, eq), p.substr(eq + 1));
    if (!st.is_ok()) return fail("--property", st.message());
  }
  return spec;
}

// --selectors as selector kinds, with their names; `fallback` when not given.
StatusOr<std::vector<std::pair<std::string, selector::SelectorKind>>> selector_list(const BenchOptions& o,
                                                                                   const std::string& fallback) {
  std::vector<std::pair<std::string, selector::SelectorKind>> out;
  std::string list = o.selectors.empty() ? fallback : o.selectors;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string name = list.substr(0, comma);
    list = comma == std::string::npos ? "" : list.substr(comma + 1);
    auto kind = selector::parse_selector_kind(name);
    if (!kind.is_ok()) return fail("--selectors", kind.status().message());
    out.emplace_back(name, *kind);
  }
  if (out.empty()) return fail("--selectors", "names no selector");
  return out;
}

Status write_results(const BenchOptions& o, const std::vector<metrics::RunResult>& results) {
  fmt::print("{}", metrics::format_table(results));
  if (!o.json_path.empty()) LOCUS_RETURN_IF_ERROR(metrics::write_json_file(o.json_path, results));
  if (!o.csv_path.empty()) LOCUS_RETURN_IF_ERROR(metrics::write_csv_file(o.csv_path, results));
  return Status();
}

// Cell under each requested selector, one run each, in one table. On
// verbs the tree is a `locus serve --index cell` process's (loaded with the
// same --records and --workload) and only the clients run here, bootstrapping
// from --server.
Status run_cell(const BenchOptions& o, const workload::WorkloadSpec& spec) {
  LOCUS_ASSIGN_OR_RETURN(auto factory, runtime_factory(o));
  LOCUS_ASSIGN_OR_RETURN(auto selectors, selector_list(o, "server_only,client_only,jsq"));
  std::vector<metrics::RunResult> results;
  for (const auto& [name, kind] : selectors) {
    harness::CellBenchConfig cfg;
    cfg.workload = spec;
    cfg.clients = o.clients;
    cfg.servers = o.servers;
    cfg.seed = o.seed;
    cfg.selector.kind = kind;
    cfg.name = fmt::format("cell-{}-{}", name, o.workload);
    auto r = o.backend == "verbs" ? harness::run_cell_clients(*factory(cfg.seed), o.server, cfg)
                                  : harness::run_cell_bench(factory, cfg);
    if (!r.is_ok()) return Status(r.status().code(), cfg.name + ": " + r.status().message());
    results.push_back(std::move(r).value());
  }
  return write_results(o, results);
}

// Catfish under each requested selector, one run each, in one table: YCSB
// operations as spatial searches (at --query-scale) and inserts. On verbs
// the R-tree is a `locus serve --index catfish` process's, whose connect
// node is --server; only the clients run here.
Status run_catfish(const BenchOptions& o, const workload::WorkloadSpec& spec) {
  LOCUS_ASSIGN_OR_RETURN(auto factory, runtime_factory(o));
  LOCUS_ASSIGN_OR_RETURN(auto selectors, selector_list(o, "server_only,client_only,backoff"));
  auto scale = workload::parse_query_scale(o.query_scale);
  if (!scale.is_ok()) return fail("--query-scale", scale.status().message());
  std::vector<metrics::RunResult> results;
  for (const auto& [name, kind] : selectors) {
    harness::CatfishBenchConfig cfg;
    cfg.workload = spec;
    cfg.query_scale = *scale;
    cfg.clients = o.clients;
    cfg.workers = o.workers;
    cfg.seed = o.seed;
    cfg.server.messaging.mode = o.messaging == "event" ? catfish::ServerMode::kEvent : catfish::ServerMode::kPolling;
    cfg.selector.kind = kind;
    cfg.name = fmt::format("catfish-{}-{}-{}", name, o.query_scale, o.workload);
    auto r = o.backend == "verbs" ? harness::run_catfish_clients(*factory(cfg.seed), o.server, cfg)
                                  : harness::run_catfish_bench(factory, cfg);
    if (!r.is_ok()) return Status(r.status().code(), cfg.name + ": " + r.status().message());
    results.push_back(std::move(r).value());
  }
  return write_results(o, results);
}

// Options that belong to other indexes than --index.
Status check_options(const BenchOptions& o) {
  auto given = [&](const std::string& name) { return std::find(o.given.begin(), o.given.end(), name) != o.given.end(); };
  if (!o.micro.empty()) return Status();
  for (const char* name : {"--workers", "--messaging", "--query-scale"}) {
    if (o.index != "catfish" && given(name)) return fail(name, "only for --index catfish");
  }
  if (o.index != "cell" && given("--servers")) {
    return fail("--servers", o.index == "catfish" ? "only for --index cell (catfish: --workers; on verbs the "
                                                    "server's own --workers apply)"
                                                  : "only for --index cell");
  }
  if (o.index != "cell" && o.index != "catfish" && given("--selectors")) {
    return fail("--selectors", "only for --index cell and catfish");
  }
  if (o.index != "pilaf" && given("--mode")) return fail("--mode", "only for --index pilaf");
  if (o.backend == "verbs" && (given("--workers") || given("--messaging"))) {
    return fail(given("--workers") ? "--workers" : "--messaging",
                "set by the `locus serve --index catfish` process on verbs, not by the clients");
  }
  return Status();
}

Status run_bench(const BenchOptions& o) {
  if (o.micro == "read") return run_read_micro(o);
  if (o.micro == "blink") {
    // Its own sizes (1M keys and an in-cache 10K) unless --records/--ops say otherwise.
    MicroBlinkConfig mb;
    if (o.records != BenchOptions{}.records) mb.records = o.records;
    if (o.ops != BenchOptions{}.ops) mb.lookups = o.ops;
    mb.seed = o.seed;
    return run_micro_blink(mb);
  }
  if (o.micro == "rtree") {
    // Its own sizes (1M rectangles, 100K queries per scale) unless --records/--ops say otherwise.
    MicroRtreeConfig mr;
    if (o.records != BenchOptions{}.records) mr.records = o.records;
    if (o.ops != BenchOptions{}.ops) mr.queries = o.ops;
    mr.seed = o.seed;
    return run_micro_rtree(mr);
  }
  if (!o.micro.empty()) {
    MicroCuckooConfig mc;
    mc.records = o.records;
    mc.lookups = o.ops;
    mc.seed = o.seed;
    return run_micro_cuckoo(mc);
  }
  LOCUS_RETURN_IF_ERROR(check_options(o));
  LOCUS_ASSIGN_OR_RETURN(workload::WorkloadSpec spec, build_workload(o));
  if (o.index == "cell") return run_cell(o, spec);
  if (o.index == "catfish") return run_catfish(o, spec);
  harness::PilafBenchConfig cfg;
  cfg.workload = spec;
  cfg.clients = o.clients;
  cfg.seed = o.seed;
  cfg.store.initial_buckets = o.records * 2;
  cfg.store.initial_extent_bytes = o.records * 2048;
  LOCUS_ASSIGN_OR_RETURN(auto factory, runtime_factory(o));

  std::vector<pilaf::GetMode> modes;
  if (o.mode == "rdma" || o.mode == "both") modes.push_back(pilaf::GetMode::kRdma);
  if (o.mode == "vo" || o.mode == "both") modes.push_back(pilaf::GetMode::kVerbsOnly);
  fmt::print(stderr, "locus bench: pilaf on {}, workload {}, {} records, {} ops, {} clients, seed {}\n",
             o.backend, o.workload, o.records, o.ops, o.clients, o.seed);
  std::vector<metrics::RunResult> results;
  for (pilaf::GetMode m : modes) {
    cfg.mode = m;
    cfg.name = fmt::format("pilaf-{}-{}", m == pilaf::GetMode::kRdma ? "rdma" : "vo", o.workload);
    // verbs: the server runs in a `locus serve` process, loaded with the
    // same --records and --workload; only the clients run here.
    auto r = o.backend == "verbs" ? harness::run_pilaf_clients(*factory(cfg.seed), o.server, cfg)
                                  : harness::run_pilaf_bench(factory, cfg);
    if (!r.is_ok()) return Status(r.status().code(), cfg.name + ": " + r.status().message());
    results.push_back(std::move(r).value());
  }
  if (results.size() == 2) {
    const auto* rdma = results[0].stats.find_op("READ");
    const auto* vo = results[1].stats.find_op("READ");
    if (rdma != nullptr && vo != nullptr && vo->latency.count() > 0) {
      const double ratio = results[0].throughput_ops_per_s(rdma->latency.count()) /
                           results[1].throughput_ops_per_s(vo->latency.count());
      results[0].extra["get_rate_ratio_rdma_over_vo"] = ratio;
    }
  }
  fmt::print("{}", metrics::format_table(results));
  if (results.size() == 2 && results[0].extra.count("get_rate_ratio_rdma_over_vo")) {
    fmt::print("gets/s RDMA over VO: {:.2f}\n", results[0].extra["get_rate_ratio_rdma_over_vo"]);
  }
  if (o.ycsb) {
    for (const auto& r : results) fmt::print("# {}\n{}", r.name, metrics::to_ycsb_summary(r));
  }
  if (!o.json_path.empty()) LOCUS_RETURN_IF_ERROR(metrics::write_json_file(o.json_path, results));
  if (!o.csv_path.empty()) LOCUS_RETURN_IF_ERROR(metrics::write_csv_file(o.csv_path, results));
  return Status();
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Run a native benchmark on a real backend");
  cmd->add_option("--index", opts->index, "Index structure to benchmark")
      ->check(CLI::IsMember({"pilaf", "cell", "catfish"}))
      ->capture_default_str();
  cmd->add_option("--backend", opts->backend, "Transport backend")
      ->check(CLI::IsMember({"loopback", "verbs"}))
      ->capture_default_str();
  cmd->add_option("--workload", opts->workload, "YCSB core workload a-f (e needs scans; pilaf has none)")
      ->check(CLI::IsMember({"a", "b", "c", "d", "e", "f"}))
      ->capture_default_str();
  cmd->add_option("--records", opts->records, "Records loaded before the run (YCSB recordcount)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--ops", opts->ops, "Operations in the run, over all clients (YCSB operationcount)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--clients", opts->clients, "Client threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--mode", opts->mode, "Gets by RDMA, by RPC (Pilaf-VO), or both in one run")
      ->check(CLI::IsMember({"rdma", "vo", "both"}))
      ->capture_default_str();
  cmd->add_option("--seed", opts->seed, "Seed of every random choice (printed)")->capture_default_str();
  cmd->add_option("-p,--property", opts->properties,
                  "YCSB property override, name=value (e.g. requestdistribution=uniform)");
  cmd->add_option("--json", opts->json_path, "Write the results as JSON to FILE");
  cmd->add_option("--csv", opts->csv_path, "Write the results as CSV to FILE");
  cmd->add_flag("--ycsb", opts->ycsb, "Also print YCSB-style summary lines");
  cmd->add_option("--micro", opts->micro,
                  "Run a micro-benchmark instead: cuckoo (local lookups), read (one client's READ rate), "
                  "blink (Cell local B-link search vs absl::btree_map), rtree (Catfish R*-tree search vs "
                  "boost::geometry rtree)")
      ->check(CLI::IsMember({"cuckoo", "read", "blink", "rtree"}));
  cmd->add_option("--config", opts->config_path,
                  "verbs: the cluster file (TOML) listing the servers, as given to `locus serve`");
  cmd->add_option("--server", opts->server, "verbs: the server node the clients use")->capture_default_str();
  cmd->add_option("--size", opts->size_bytes, "--micro read: bytes per READ")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  cmd->add_option("--depth", opts->depth, "--micro read: READs in flight (one connection)")
      ->check(CLI::Range(1, 128))
      ->capture_default_str();
  cmd->add_option("--servers", opts->servers, "cell: servers the tree spans")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--selectors", opts->selectors,
                  "cell, catfish: comma-separated selectors, one run each (server_only, client_only, fixed_ratio, "
                  "jsq, latency_window, backoff); default cell: server_only,client_only,jsq, catfish: "
                  "server_only,client_only,backoff");
  cmd->add_option("--workers", opts->workers, "catfish on loopback: the server's messaging workers (cores)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--messaging", opts->messaging,
                  "catfish on loopback: workers poll their request rings, or sleep until a WRITE_WITH_IMM wakes them")
      ->check(CLI::IsMember({"polling", "event"}))
      ->capture_default_str();
  cmd->add_option("--query-scale", opts->query_scale,
                  "catfish: search rectangles with edges up to 1e-5 (small), 1e-2 (large) or a power law between")
      ->check(CLI::IsMember({"small", "large", "powerlaw"}))
      ->capture_default_str();
  cmd->add_option("--op-latency-us", opts->op_latency_us,
                  "Loopback only: latency added to every RDMA operation and message")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->callback([opts, cmd, &exit_code] {
    for (const CLI::Option* opt : cmd->get_options()) {
      if (opt->count() > 0) opts->given.push_back(opt->get_name());
    }
    Status st = run_bench(*opts);
    if (!st.is_ok()) {
      fmt::print(stderr, "locus bench: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
