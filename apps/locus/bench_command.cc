// `locus bench`: see bench_command.h.
#include "apps/locus/bench_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/locus/micro_cuckoo.h"
#include "backends/loopback/loopback_runtime.h"
#include "core/harness/pilaf_bench.h"
#include "core/metrics/run_result.h"
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
  return fail("--backend", "'" + o.backend + "' is not built into this binary (available: loopback)");
}

Status run_bench(const BenchOptions& o) {
  if (!o.micro.empty()) {
    MicroCuckooConfig mc;
    mc.records = o.records;
    mc.lookups = o.ops;
    mc.seed = o.seed;
    return run_micro_cuckoo(mc);
  }
  harness::PilafBenchConfig cfg;
  if (o.workload.size() != 1) return fail("--workload", "expected one letter a-f");
  auto spec = workload::standard_workload(o.workload[0]);
  if (!spec.is_ok()) return fail("--workload", spec.status().message());
  cfg.workload = *spec;
  cfg.workload.recordcount = o.records;
  cfg.workload.operationcount = o.ops;
  for (const std::string& p : o.properties) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos) return fail("--property", "expected name=value, got '" + p + "'");
    Status st = workload::set_property(cfg.workload, p.substr(0, eq), p.substr(eq + 1));
    if (!st.is_ok()) return fail("--property", st.message());
  }
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
    auto r = harness::run_pilaf_bench(factory, cfg);
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
      ->check(CLI::IsMember({"pilaf"}))
      ->capture_default_str();
  cmd->add_option("--backend", opts->backend, "Transport backend")
      ->check(CLI::IsMember({"loopback"}))
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
  cmd->add_option("--micro", opts->micro, "Run a micro-benchmark instead: cuckoo")
      ->check(CLI::IsMember({"cuckoo"}));
  cmd->add_option("--op-latency-us", opts->op_latency_us,
                  "Loopback only: latency added to every RDMA operation and message")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->callback([opts, &exit_code] {
    Status st = run_bench(*opts);
    if (!st.is_ok()) {
      fmt::print(stderr, "locus bench: {}\n", st.to_string());
      exit_code = 1;
    }
  });
}

}  // namespace locus::cli
