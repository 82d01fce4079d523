// `locus bench`: see bench_command.h.
#include "apps/locus/bench_command.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "apps/locus/bench_modes.h"
#include "apps/locus/cli_checks.h"
#include "apps/locus/cpu_hogs.h"
#include "apps/locus/micro_blink.h"
#include "apps/locus/micro_namtree.h"
#include "apps/locus/micro_cuckoo.h"
#include "apps/locus/micro_log.h"
#include "apps/locus/micro_read.h"
#include "apps/locus/micro_rtree.h"
#include "apps/locus/run_command.h"
#include "backends/loopback/loopback_runtime.h"
#ifdef LOCUS_HAVE_VERBS
#include "backends/verbs/verbs_runtime.h"
#endif
#include "core/design/record_loader.h"
#include "core/index/pilaf/server.h"
#include "core/rpc/rpc_server.h"
#include "core/workload/workload_spec.h"

namespace locus::cli {
namespace {

using RuntimeFactory = std::function<std::unique_ptr<Runtime>(uint64_t seed)>;

struct BenchOptions {
  RunOptionsCli run;  // the scenario form
  std::string micro;
  uint64_t records = 100'000;
  uint64_t ops = 200'000;
  uint64_t seed = 1;
  double op_latency_us = 0;
  uint32_t server = 0;             // verbs: the server node the READs go to
  uint32_t size_bytes = 64;        // --micro read
  uint32_t depth = 16;             // --micro read
  std::string index;               // --index: compare its --mode values
  std::vector<std::string> modes;  // --mode
  std::string baseline;            // --baseline
  std::string log_dir;               // --micro log
  uint32_t cpu_hogs = 0;             // --cpu-hogs
};

Status fail(const std::string& option, const std::string& message) { return invalid_argument(option + ": " + message); }

StatusOr<RuntimeFactory> runtime_factory(const BenchOptions& o) {
  if (o.run.backend == "loopback") {
    const Nanos latency = static_cast<Nanos>(o.op_latency_us * 1e3);
    return RuntimeFactory([latency](uint64_t seed) {
      loopback::LoopbackOptions lo;
      lo.seed = seed;
      lo.op_latency = latency;
      return loopback::make_loopback_runtime(lo);
    });
  }
#ifdef LOCUS_HAVE_VERBS
  if (o.run.backend == "verbs") {
    if (o.run.config_path.empty()) return fail("--config", "--backend verbs needs the cluster file the servers use");
    LOCUS_ASSIGN_OR_RETURN(verbs::ClusterConfig cluster, verbs::load_cluster_config(o.run.config_path));
    LOCUS_RETURN_IF_ERROR(verbs::check_connectable(cluster));  // clients connect to every server
    if (o.server >= cluster.servers.size()) {
      return fail("--server", std::to_string(o.server) + " is not a server of " + o.run.config_path);
    }
    // Client endpoints only: the servers are `locus serve` processes.
    return RuntimeFactory([cluster](uint64_t seed) -> std::unique_ptr<Runtime> {
      return verbs::make_verbs_runtime(cluster, {.seed = seed});
    });
  }
  return fail("--backend", "'" + o.run.backend + "' is not built into this binary (available: loopback, verbs)");
#else
  return fail("--backend", "'" + o.run.backend + "' is not built into this binary (available: loopback)");
#endif
}

// One client's READ rate against a Pilaf server's table: a server of this
// process on loopback, the --server of the cluster file on verbs (a
// `locus serve` of a Pilaf scenario).
Status run_read_micro(const BenchOptions& o) {
  LOCUS_ASSIGN_OR_RETURN(auto factory, runtime_factory(o));
  std::unique_ptr<Runtime> runtime = factory(o.seed);
  NodeId server = o.server;
  std::unique_ptr<rpc::RpcServer> rpc;
  std::unique_ptr<pilaf::PilafServer> pilaf;
  if (o.run.backend == "loopback") {
    LOCUS_ASSIGN_OR_RETURN(server, runtime->add_node({"server0", true}));
    Env env = runtime->setup_env(server);
    workload::WorkloadSpec load = workload::standard_workload('c').value();
    load.recordcount = 1000;
    pilaf::StoreOptions store;
    store.initial_buckets = 2048;
    LOCUS_ASSIGN_OR_RETURN(rpc, rpc::RpcServer::create(env));
    LOCUS_ASSIGN_OR_RETURN(pilaf, pilaf::PilafServer::create(env, store));
    LOCUS_RETURN_IF_ERROR(pilaf->attach(*rpc));
    LOCUS_RETURN_IF_ERROR(design::load_records(
        load, *env.random, [&](std::string_view k, std::string_view v) { return pilaf->store().put(k, v); }));
    rpc::RpcServer* srv = rpc.get();
    LOCUS_RETURN_IF_ERROR(runtime->spawn(server, "server0", ActorKind::kDaemon, [srv](Env&) { srv->serve(); }));
  }
  MicroReadConfig mc;
  mc.size_bytes = o.size_bytes;
  mc.depth = o.depth;
  mc.reads = o.ops;
  LOCUS_ASSIGN_OR_RETURN(MicroReadResult r, run_micro_read(*runtime, server, mc));
  fmt::print("micro read on {}: {}-byte READs, {} in flight, {} measured\n", o.run.backend, mc.size_bytes, mc.depth,
             r.reads);
  fmt::print("{:<28} {:>16}\n", "", "READs/s");
  fmt::print("{:<28} {:>16.0f}\n", "locus transport", r.reads_per_s);
  // One line for scripts (ci/softroce-bench.sh).
  fmt::print("result: backend={} size_bytes={} depth={} reads={} reads_per_s={:.1f} mib_per_s={:.3f}\n", o.run.backend,
             mc.size_bytes, mc.depth, r.reads, r.reads_per_s, r.mib_per_s);
  return Status();
}

Status run_bench_body(const BenchOptions& o);

// Whatever the benchmark, with o.cpu_hogs spinning threads beside it.
Status run_bench(const BenchOptions& o) {
  if (o.cpu_hogs == 0) return run_bench_body(o);
  fmt::print(stderr, "locus bench: {} CPU hog thread(s) spinning during the run\n", o.cpu_hogs);
  CpuHogs hogs(o.cpu_hogs);
  return run_bench_body(o);
}

Status run_bench_body(const BenchOptions& o) {
  if (!o.index.empty()) {
    if (!o.micro.empty()) return fail("--micro", "runs no scenario: give --index or --micro");
    if (o.run.backend != "loopback") return fail("--backend", "--index compares modes on loopback only");
    ModesBenchConfig mc;
    mc.index = o.index;
    mc.modes = o.modes;
    mc.baseline = o.baseline;
    mc.scenario_path = o.run.scenario_path;
    mc.sets = o.run.sets;
    const MemoryLimit limit = memory_limit(o.run.max_memory_bytes);
    mc.max_memory_bytes = static_cast<double>(limit.bytes);
    return run_modes_bench(mc);
  }
  if (!o.modes.empty() || !o.baseline.empty()) return fail("--mode", "only with --index");
  if (!o.run.scenario_path.empty()) {
    if (!o.micro.empty()) return fail("--micro", "runs no scenario: give one or the other");
    return run_scenario_command(o.run, "bench");
  }
  if (o.micro.empty()) return fail("scenario", "give a scenario file, or --micro for a microbenchmark");
  if (o.micro == "read") return run_read_micro(o);
  if (o.run.backend != "loopback") return fail("--backend", "--micro " + o.micro + " runs locally, with no backend");
  if (o.micro == "blink") {
    // Its own sizes (1M keys and an in-cache 10K) unless --records/--ops say otherwise.
    MicroBlinkConfig mb;
    if (o.records != BenchOptions{}.records) mb.records = o.records;
    if (o.ops != BenchOptions{}.ops) mb.lookups = o.ops;
    mb.seed = o.seed;
    return run_micro_blink(mb);
  }
  if (o.micro == "namtree") {
    // Its own sizes (1M keys and an in-cache 10K) unless --records/--ops say otherwise.
    MicroNamtreeConfig mn;
    if (o.records != BenchOptions{}.records) mn.records = o.records;
    if (o.ops != BenchOptions{}.ops) mn.lookups = o.ops;
    mn.seed = o.seed;
    return run_micro_namtree(mn);
  }
  if (o.micro == "log") {
    // Its own sizes (200K puts of 1000 bytes over 100K keys) unless --records/--ops/--size say otherwise.
    MicroLogConfig ml;
    ml.dir = o.log_dir;
    if (o.records != BenchOptions{}.records) ml.keys = o.records;
    if (o.ops != BenchOptions{}.ops) ml.puts = o.ops;
    if (o.size_bytes != BenchOptions{}.size_bytes) ml.value_bytes = o.size_bytes;
    ml.seed = o.seed;
    return run_micro_log(ml);
  }
  if (o.micro == "rtree") {
    // Its own sizes (1M rectangles, 100K queries per scale) unless --records/--ops say otherwise.
    MicroRtreeConfig mr;
    if (o.records != BenchOptions{}.records) mr.records = o.records;
    if (o.ops != BenchOptions{}.ops) mr.queries = o.ops;
    mr.seed = o.seed;
    return run_micro_rtree(mr);
  }
  MicroCuckooConfig mc;
  mc.records = o.records;
  mc.lookups = o.ops;
  mc.seed = o.seed;
  const MemoryLimit limit = memory_limit(o.run.max_memory_bytes);
  if (const uint64_t need = micro_cuckoo_bytes(mc); limit.bytes > 0 && need > limit.bytes) {
    return resource_exhausted(fmt::format(
        "--records {} (and --ops {}): the cuckoo microbenchmark needs about {:.1f} GiB, more than the {:.1f} GiB {}",
        o.records, o.ops, static_cast<double>(need) / (1 << 30), static_cast<double>(limit.bytes) / (1 << 30),
        limit.source));
  }
  return run_micro_cuckoo(mc);
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<BenchOptions>();
  opts->run.backend = "loopback";
  CLI::App* cmd =
      app.add_subcommand("bench", "Run a scenario natively (locus run --backend loopback), or a --micro benchmark");
  cmd->add_option("scenario", opts->run.scenario_path, "Scenario file (TOML)")->check(CLI::ExistingFile);
  cmd->add_option("--backend", opts->run.backend, "Transport backend")
      ->check(CLI::IsMember({"loopback", "verbs"}))
      ->capture_default_str();
  add_scenario_options(*cmd, opts->run);
  cmd->add_option("--micro", opts->micro,
                  "A microbenchmark instead of a scenario: cuckoo (local lookups), read (one client's READ rate), "
                  "blink (Cell local B-link search vs absl::btree_map), namtree (NAM index local B-link search vs "
                  "absl::btree_map), rtree (Catfish R*-tree search vs "
                  "boost::geometry rtree), log (Pilaf puts/s with its operation log on disk vs without, and recovery time per GB)")
      ->check(CLI::IsMember({"cuckoo", "read", "blink", "namtree", "rtree", "log"}));
  cmd->add_option("--log-dir", opts->log_dir, "--micro log: an empty or absent directory on the disk to measure");
  cmd->add_option("--index", opts->index,
                  "Compare this index's --mode values on loopback, on the scenario given or a built-in one "
                  "(e.g. --index nessie --mode client,server,hybrid)");
  cmd->add_option("--mode", opts->modes, "--index: the index.mode values to run, in order (comma-separated)")
      ->delimiter(',');
  cmd->add_option("--baseline", opts->baseline,
                  "--index: the mode the others' rates are divided by (default: the first)");
  cmd->add_option("--records", opts->records, "--micro: records, keys or rectangles loaded")
      ->check(kPositiveInteger)
      ->capture_default_str();
  cmd->add_option("--ops", opts->ops, "--micro: lookups, queries or READs measured")
      ->check(kPositiveInteger)
      ->capture_default_str();
  cmd->add_option("--seed", opts->seed, "--micro: seed of every random choice")
      ->check(kUnsignedInteger)
      ->capture_default_str();
  cmd->add_option("--server", opts->server, "--micro read on verbs: the server node the READs go to")
      ->check(kUnsignedInteger)
      ->capture_default_str();
  cmd->add_option("--size", opts->size_bytes, "--micro read: bytes per READ; --micro log: bytes per value")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  cmd->add_option("--depth", opts->depth, "--micro read: READs in flight (one connection)")
      ->check(CLI::Range(1, 128))
      ->capture_default_str();
  cmd->add_option("--op-latency-us", opts->op_latency_us,
                  "--micro read on loopback: latency added to every RDMA operation and message")
      ->check(finite_range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--cpu-hogs", opts->cpu_hogs,
                  "Threads that spin on the CPU for the whole benchmark (CPU contention on a real backend; "
                  "on SimGrid, a scenario's [platform] background_load)")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
  cmd->callback([opts, &exit_code] {
    Status st = catch_bad_alloc("locus bench", [&] { return run_bench(*opts); });
    if (!st.is_ok()) {
      fmt::print(stderr, "locus bench: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
