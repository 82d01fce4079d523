// Runs a scenario, given as TOML text, on the SimGrid backend with the
// scenario's seed: what the simulation tests share (tests/sim/).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "backends/simgrid/sim_runtime.h"
#include "core/designs/designs.h"
#include "core/metrics/run_result.h"
#include "core/runner/scenario_run.h"
#include "core/scenario/scenario.h"

namespace locus::testing {

// The validation platform: the synthetic micro index (one RPC, or a chain
// of dependent READs, per operation) on one server with one core.
// Links, PCIe and verb messaging far from saturation, RDMA and verbs
// independent: only the resource under test can limit throughput.
inline constexpr const char* kMicroPlatform = R"(
[platform]
servers = 1
cores_per_server = 1
link = { bandwidth_gbps = 400.0, latency_us = 0.5 }
pcie = { bandwidth_gbps = 400.0, latency_us = 0.1 }
[platform.nic]
read = [[1024, 1.44e6]]
send = [[64, 1.0e8]]
recv = [[64, 1.0e8]]
rdma_share_with_verbs = 1.0
verbs_share_with_rdma = 1.0
[platform.cpu]
handler_cost_us = { "micro.op" = 6.3, "micro.layout" = 0.0 }
client_op_us = 0.0
[index]
type = "micro"
reads_per_op = 5
read_bytes = 1024
[workload]
recordcount = 1
[run]
seed = 7
clients = 96
duration_s = 0.025
warmup_s = 0.005
)";


// Runs `sc` on SimGrid with its seed; `tweak` may change the backend's
// other options.
inline StatusOr<runner::ScenarioReport> simulate(const scenario::Scenario& sc,
                                                 const std::function<void(simgrid_backend::SimOptions&)>& tweak = {}) {
  return runner::run_scenario(sc, designs::registry(), [&tweak](const scenario::Scenario& s) {
    simgrid_backend::SimOptions o;
    o.seed = s.run.seed;
    if (tweak) tweak(o);
    return simgrid_backend::make_simgrid_runtime(s.platform, o);
  });
}

inline StatusOr<runner::ScenarioReport> simulate_scenario(std::string_view text, const std::string& source,
                                                           const std::vector<std::string>& sets = {}) {
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario sc, designs::parse_scenario(text, source, sets));
  return simulate(sc);
}

// The same for a scenario file (a shipped one: LOCUS_SOURCE_DIR "/scenarios/...").
inline StatusOr<runner::ScenarioReport> simulate_file(const std::string& path, const std::vector<std::string>& sets = {}) {
  LOCUS_ASSIGN_OR_RETURN(scenario::Scenario sc, designs::load_scenario(path, sets));
  return simulate(sc);
}

// Throughput and mean latency over every operation of a run, as a model's
// prediction gives them (the model-against-simulation tests).
struct OpsAndLatency {
  double ops_per_s = 0;
  double mean_us = 0;
};
inline OpsAndLatency throughput_and_mean(const runner::ScenarioReport& r) {
  double ops = 0, weighted_us = 0;
  for (const auto& op : r.result.stats.ops()) {
    ops += static_cast<double>(op.latency.count());
    weighted_us += static_cast<double>(op.latency.count()) * op.latency.mean() / 1e3;
  }
  if (ops == 0) return {};
  return {r.result.throughput_ops_per_s(static_cast<uint64_t>(ops)), weighted_us / ops};
}

// How busy the resource `name` was in `r` (a test failure if it has none).
inline double utilization_of(const runner::ScenarioReport& r, const std::string& name) {
  for (const ResourceUsage& u : r.result.resources) {
    if (u.name == name) return u.utilization;
  }
  BOOST_FAIL("no resource " << name);
  return 0;
}

// A run made in a child process forked from this one: its results as JSON
// and what the backend counted.
struct ForkedRun {
  Status status;
  std::string json;
  uint64_t total_ops = 0;
  uint64_t events_run_ahead = 0;
  uint64_t run_ahead_hazards = 0;
};

// Runs `sc` as simulate() does, but in a child process. SimGrid's clock
// runs on from one engine to the next in a process, so a run starts where
// the previous one ended, and its floating-point times round differently:
// two runs in one process can differ where two runs of `locus sim` (a
// process each) never do. Runs forked from the same moment start at the
// same engine time, so comparing them is comparing two fresh starts.
// What `child` returns, run in a process forked from this one (which then
// _exits, so neither Boost.Test nor SimGrid runs its exit handlers): for a
// run that needs an engine of its own (one per process).
inline StatusOr<std::string> output_of_child(const std::function<std::string()>& child) {
  int fds[2];
  if (pipe(fds) != 0) return internal_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return internal_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    const std::string out = child();
    for (size_t done = 0; done < out.size();) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) _exit(2);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string in;
  char buf[65536];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return internal_error("the child ended badly (wait status " + std::to_string(wstatus) + ")");
  }
  return in;
}

inline ForkedRun simulate_forked(const scenario::Scenario& sc,
                                 const std::function<void(simgrid_backend::SimOptions&)>& tweak = {}) {
  ForkedRun run;
  // The child: one line of counts (or "error" and the reason), then the JSON.
  auto got = output_of_child([&] {
    auto r = simulate(sc, [&](simgrid_backend::SimOptions& o) {
      if (tweak) tweak(o);
      o.events_run_ahead = &run.events_run_ahead;
      o.run_ahead_hazards = &run.run_ahead_hazards;
    });
    return r.is_ok() ? std::to_string(r->total_ops) + " " + std::to_string(run.events_run_ahead) + " " +
                           std::to_string(run.run_ahead_hazards) + "\n" + metrics::to_json_string({r->result})
                     : "error\n" + r.status().to_string();
  });
  const size_t eol = got.is_ok() ? got->find('\n') : std::string::npos;
  if (!got.is_ok()) {
    run.status = internal_error("simulate_forked: " + got.status().message());
  } else if (eol == std::string::npos) {
    run.status = internal_error("simulate_forked: the child ended badly (no result)");
  } else if (got->compare(0, eol, "error") == 0) {
    run.status = internal_error("simulate_forked: " + got->substr(eol + 1));
  } else {
    std::istringstream counts(got->substr(0, eol));
    counts >> run.total_ops >> run.events_run_ahead >> run.run_ahead_hazards;
    run.json = got->substr(eol + 1);
  }
  return run;
}

}  // namespace locus::testing
