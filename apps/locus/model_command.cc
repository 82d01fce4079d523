// `locus model` and `locus plan`: see model_command.h.
#include "apps/locus/model_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "apps/locus/model_input.h"
#include "apps/locus/plan_search.h"
#include "core/designs/designs.h"
#include "core/scenario/scenario.h"
#include "models/queueing/planner.h"

namespace locus::cli {
namespace {

struct ModelOptions {
  std::string scenario_path;
  std::vector<std::string> sets;
  std::string sim_json;
};

struct PlanCli {
  std::string scenario_path;
  std::vector<std::string> sets;
  double target_ops = 0;
  double p99_us = 0;
  std::string servers = "1:16";
  std::string cores = "1:16";
  std::string clients = "1:1024";
  std::vector<std::string> designs;  // plan_search.h
  std::vector<std::string> selectors;
  models::PlanCosts costs;
};

// Simulated throughput and mean latency (over all operations) from a
// `locus sim` JSON file.
Status read_simulated(const std::string& path, double* ops, double* mean_us) {
  std::ifstream in(path);
  if (!in) return not_found(path + ": cannot open the simulation result");
  nlohmann::json j;
  try {
    in >> j;
    const auto& run = j.at("runs").at(0);
    *ops = run.at("throughput_ops_per_s").get<double>();
    double weighted = 0, count = 0;
    for (const auto& op : run.at("ops")) {
      const double n = op.at("count").get<double>();
      weighted += n * op.at("latency_ns").at("mean").get<double>() / 1e3;
      count += n;
    }
    *mean_us = count > 0 ? weighted / count : 0;
  } catch (const std::exception& e) {
    return invalid_argument(path + ": not a locus sim result: " + e.what());
  }
  return Status();
}

std::string row(const std::string& policy, const models::LocalityPrediction& p) {
  return fmt::format("{:<16} {:>6.3f} {:>13.0f} {:>9.2f} {:>9.2f} {:>7.1f} {:>8.1f} {:>9.1f}  {}\n", policy,
                     p.server_side_share, p.throughput_ops_per_s, p.mean_latency_us, p.p99_latency_us,
                     100 * p.cpu_utilisation, 100 * p.nic_read_utilisation, 100 * p.nic_verb_utilisation, p.bottleneck);
}

Status run_model(const ModelOptions& o) {
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario s, designs::load_scenario(o.scenario_path, o.sets));
  LOCUS_ASSIGN_OR_RETURN(design::ModelProfile profile, settled_profile(s));
  if (!profile.bound_only.empty()) {
    if (!o.sim_json.empty()) return invalid_argument("--sim-json: " + profile.bound_only);
    fmt::print("locus model: {} ({} servers x {} cores, {} clients): an analytic bound only\n", s.source,
               s.platform.servers, s.platform.cores_per_server, s.run.clients);
    for (const std::string& line : profile.derivation) fmt::print("  {}\n", line);
    fmt::print("no queueing prediction: {}\n", profile.bound_only);
    return Status();
  }
  LOCUS_ASSIGN_OR_RETURN(models::LocalityInput in, locality_input_from(s, profile));
  LOCUS_ASSIGN_OR_RETURN(models::LocalityReport r, models::predict_policies(in));
  std::optional<models::LocalityPrediction> own;
  if (profile.scenario_server_share) {
    LOCUS_ASSIGN_OR_RETURN(own, models::predict_split(in, *profile.scenario_server_share));
  }
  fmt::print(
      "locus model: {} ({} servers x {} cores, {} clients; {:.2f} us per RPC, {:.0f} READs/s, "
      "{:.0f} verb msgs/s per NIC, m = {:.2f}, RTT {:.2f} us)\n",
      s.source, in.platform.servers, in.platform.cores_per_server, in.workload.clients,
      in.platform.server_op_service_time_us, in.platform.nic_read_rate_ops_per_s, in.platform.nic_verb_rate_msgs_per_s,
      in.workload.reads_per_client_op, in.workload.network_rtt_us);
  for (const std::string& line : profile.derivation) fmt::print("  {}\n", line);
  fmt::print("{:<16} {:>6} {:>13} {:>9} {:>9} {:>7} {:>8} {:>9}  {}\n", "policy", "p", "ops/s", "mean us", "p99 us",
             "cpu %", "read %", "verbs %", "bottleneck");
  fmt::print("{}", row("server-only", r.server_only));
  fmt::print("{}", row("client-only", r.client_only));
  if (own) fmt::print("{}", row("scenario split", *own));
  fmt::print("{}", row("optimal p*", r.optimal));
  fmt::print("{}", row("jsq equilibrium", r.jsq_equilibrium));
  fmt::print("saturation at the balanced split p = {:.3f}: {:.0f} ops/s\n", r.balanced_split,
             r.saturation_throughput_ops_per_s);
  if (own && s.platform.power.given) {
    // As `locus plan --cost-watt` counts it: polling threads busy at any load.
    const double busy = in.busy_cores(own->cpu_utilisation);
    fmt::print("power at the scenario split: {} servers x ({:g} W idle + {:g} W x {:.2f} busy cores) = {:.1f} W\n",
               in.platform.servers, s.platform.power.idle_w, s.platform.power.busy_w_per_core, busy,
               in.platform.servers * (s.platform.power.idle_w + s.platform.power.busy_w_per_core * busy));
  }
  if (!o.sim_json.empty()) {
    if (!own) {
      return invalid_argument(
          "--sim-json: the scenario's selector decides its split at run time, so there is no "
          "fixed split to compare the simulation with");
    }
    double ops = 0, mean_us = 0;
    LOCUS_RETURN_IF_ERROR(read_simulated(o.sim_json, &ops, &mean_us));
    fmt::print(
        "simulated (scenario split): {:.0f} ops/s, mean {:.2f} us; model/simulation: throughput {:.3f}, "
        "mean latency {:.3f}\n",
        ops, mean_us, own->throughput_ops_per_s / ops, own->mean_latency_us / mean_us);
  }
  return Status();
}

// MIN:MAX[:STEP], each a whole number in [1, limit]: read in 64 bits and
// checked before anything narrows, so 4294967298 is refused rather than
// wrapped to 2, and a bound near INT_MAX cannot overflow the planner's loop.
Status parse_range(const std::string& option, const std::string& text, int64_t limit, models::IntRange* out) {
  int64_t v[3] = {0, 0, 1};
  size_t parts = 0;
  std::string_view rest(text);
  while (parts < 3) {
    const size_t colon = rest.find(':');
    const std::string_view field = rest.substr(0, colon);
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v[parts]);
    if (ec != std::errc() || end != field.data() + field.size() || field.empty()) break;
    ++parts;
    if (colon == std::string_view::npos) {
      rest = {};
      break;
    }
    rest.remove_prefix(colon + 1);
  }
  if (parts < 2 || !rest.empty() || v[0] < 1 || v[1] < v[0] || v[1] > limit || v[2] < 1 || v[2] > limit) {
    return invalid_argument(
        fmt::format("{}: expected MIN:MAX or MIN:MAX:STEP with 1 <= MIN <= MAX <= {} and STEP "
                    ">= 1, got '{}'",
                    option, limit, text));
  }
  *out = {static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2])};
  return Status();
}

// One row of the merged frontier: a configuration and the design and
// selector that run it.
struct PlanRow {
  const PlanChoice* choice;
  models::PlannedConfig config;
};

Status run_plan(const PlanCli& o) {
  LOCUS_ASSIGN_OR_RETURN(std::vector<PlanChoice> choices,
                         plan_choices(o.scenario_path, o.sets, o.designs, o.selectors));
  models::PlanSpace space;
  // Bounds that can be planned for: beyond them the space is not a
  // cluster anyone buys, and a search over it would not end.
  LOCUS_RETURN_IF_ERROR(parse_range("--servers", o.servers, 100'000, &space.servers));
  LOCUS_RETURN_IF_ERROR(parse_range("--cores", o.cores, 4096, &space.cores_per_server));
  LOCUS_RETURN_IF_ERROR(parse_range("--clients", o.clients, 10'000'000, &space.clients));
  constexpr long double kMaxConfigurations = 1e7;
  const long double configurations = static_cast<long double>(space.servers.count()) * space.cores_per_server.count() *
                                     space.clients.count() * choices.size();
  if (configurations > kMaxConfigurations) {
    return invalid_argument(
        fmt::format("--servers x --cores x --clients x designs x selectors: {:.3g} "
                    "configurations, more than {:.0g} a plan can evaluate; narrow the ranges or "
                    "give them a STEP",
                    static_cast<double>(configurations), static_cast<double>(kMaxConfigurations)));
  }
  const bool several = choices.size() > 1;
  std::vector<PlanRow> rows;
  int64_t evaluated = 0;
  double elapsed_ms = 0;
  bool any_power = false;
  for (size_t k = 0; k < choices.size(); ++k) {
    const PlanChoice& c = choices[k];
    models::PlanCosts costs = o.costs;
    if (c.scenario.platform.power.given) {
      costs.idle_watts_per_server = c.scenario.platform.power.idle_w;
      costs.busy_watts_per_core = c.scenario.platform.power.busy_w_per_core;
      any_power = true;
    }
    LOCUS_ASSIGN_OR_RETURN(models::PlanResult r,
                           models::plan_capacity(c.input, space, {o.target_ops, o.p99_us}, costs, c.options));
    evaluated += r.configurations_in_space;
    elapsed_ms += r.elapsed_ms;
    if (several) {
      // Progress, on stderr so the table stays clean.
      fmt::print(stderr, "locus plan: [{}/{}] {} with {}: {} rows on its frontier, {} configurations in {:.0f} ms\n",
                 k + 1, choices.size(), c.design, c.selector.empty() ? c.policy : c.selector, r.frontier.size(),
                 r.configurations_in_space, r.elapsed_ms);
    }
    for (const models::PlannedConfig& f : r.frontier) rows.push_back({&c, f});
  }
  // The frontier over every design and selector: a row stays unless another
  // needs no more of each resource and less of one.
  std::vector<PlanRow> frontier;
  for (const PlanRow& a : rows) {
    const bool dominated = std::any_of(rows.begin(), rows.end(), [&](const PlanRow& b) {
      return models::dominates(b.config, a.config) ||
             (&a != &b && b.config.servers == a.config.servers &&
              b.config.cores_per_server == a.config.cores_per_server && b.config.clients == a.config.clients &&
              (b.config.cost < a.config.cost || (b.config.cost == a.config.cost && &b < &a)));
    });
    if (!dominated) frontier.push_back(a);
  }
  std::stable_sort(frontier.begin(), frontier.end(), [](const PlanRow& a, const PlanRow& b) {
    return std::tie(a.config.cost, a.config.servers, a.config.cores_per_server, a.config.clients) <
           std::tie(b.config.cost, b.config.servers, b.config.cores_per_server, b.config.clients);
  });
  fmt::print(
      "locus plan: {} for {:.0f} ops/s at p99 <= {:.1f} us: {} configurations evaluated in {:.0f} ms "
      "({:.0f} per second)\n",
      o.scenario_path, o.target_ops, o.p99_us, evaluated, elapsed_ms,
      elapsed_ms > 0 ? evaluated / (elapsed_ms / 1e3) : 0.0);
  if (several) {
    for (const PlanChoice& c : choices) {
      fmt::print("  {} with {}: {}\n", c.design, c.selector.empty() ? "its selector" : c.selector, c.policy);
    }
  }
  if (frontier.empty()) {
    fmt::print("no configuration in the space meets the targets; widen --servers, --cores or --clients\n");
    return Status();
  }
  const std::string head = several ? fmt::format("{:<16} {:<12} ", "design", "selector") : "";
  fmt::print("{}{:>8} {:>6} {:>8} {:>9} {:>7} {:>13} {:>9} {:>9}{}  {}\n", head, "servers", "cores", "clients", "cost",
             "p", "ops/s", "mean us", "p99 us", any_power ? fmt::format(" {:>8}", "watts") : "", "bottleneck");
  for (const PlanRow& row : frontier) {
    const models::PlannedConfig& c = row.config;
    const std::string lead = several ? fmt::format("{:<16} {:<12} ", row.choice->design,
                                                   row.choice->selector.empty() ? "(own)" : row.choice->selector)
                                     : "";
    fmt::print("{}{:>8} {:>6} {:>8} {:>9.2f} {:>7.3f} {:>13.0f} {:>9.2f} {:>9.2f}{}  {}\n", lead, c.servers,
               c.cores_per_server, c.clients, c.cost, c.prediction.server_side_share, c.prediction.throughput_ops_per_s,
               c.prediction.mean_latency_us, c.prediction.p99_latency_us,
               any_power ? fmt::format(" {:>8.1f}", c.watts) : "", c.prediction.bottleneck);
  }
  return Status();
}

void report(const Status& st, const char* cmd, int& exit_code) {
  if (st.is_ok()) return;
  fmt::print(stderr, "locus {}: {}\n", cmd, st.to_string());
  exit_code = 1;
}

}  // namespace

void add_model_commands(CLI::App& app, int& exit_code) {
  auto mo = std::make_shared<ModelOptions>();
  CLI::App* model = app.add_subcommand("model", "Predict a scenario with the analytic queueing models");
  model->add_option("scenario", mo->scenario_path, "Scenario file (TOML)")->required()->check(CLI::ExistingFile);
  model->add_option("--set", mo->sets, "Override a scenario key (repeatable)");
  model->add_option("--sim-json", mo->sim_json, "A `locus sim --json` result to compare against")
      ->check(CLI::ExistingFile);
  model->callback([mo, &exit_code] { report(run_model(*mo), "model", exit_code); });

  auto po = std::make_shared<PlanCli>();
  CLI::App* plan = app.add_subcommand("plan", "Find the cheapest configurations that meet a target");
  plan->add_option("scenario", po->scenario_path, "Scenario file (TOML) giving the platform and workload")
      ->required()
      ->check(CLI::ExistingFile);
  plan->add_option("--target-ops", po->target_ops, "Throughput to reach, operations per second")
      ->required()
      ->check(CLI::PositiveNumber);
  plan->add_option("--p99-us", po->p99_us, "Largest acceptable 99th percentile latency, microseconds")
      ->required()
      ->check(CLI::PositiveNumber);
  plan->add_option("--servers", po->servers, "Servers to consider, MIN:MAX[:STEP]")->capture_default_str();
  plan->add_option("--cores", po->cores, "Cores per server to consider, MIN:MAX[:STEP]")->capture_default_str();
  plan->add_option("--clients", po->clients, "Clients to consider, MIN:MAX[:STEP]")->capture_default_str();
  plan->add_option("--cost-server", po->costs.per_server, "Cost of a server")->capture_default_str();
  plan->add_option("--cost-core", po->costs.per_core, "Cost of a core")->capture_default_str();
  plan->add_option("--cost-client", po->costs.per_client, "Cost of a client")->capture_default_str();
  plan->add_option("--cost-nic", po->costs.per_nic, "Cost of a NIC (one per server)")->capture_default_str();
  plan->add_option("--cost-watt", po->costs.per_watt,
                   "Cost of a watt of server power at the predicted load (scenarios with [platform.power])")
      ->capture_default_str();
  plan->add_option("--designs", po->designs,
                   "Designs to plan over: NAME (the scenario's own) or NAME=SCENARIO.toml (that design's [index] "
                   "and handler costs with this workload), comma-separated")
      ->delimiter(',');
  plan->add_option("--selectors", po->selectors,
                   "Selectors to plan over: server_only, client_only, fixed_ratio (the best fixed split), jsq; "
                   "comma-separated")
      ->delimiter(',');
  plan->add_option("--set", po->sets, "Override a scenario key (repeatable)");
  plan->callback([po, &exit_code] { report(run_plan(*po), "plan", exit_code); });
}

}  // namespace locus::cli
