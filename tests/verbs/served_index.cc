// A scenario served across processes: see served_index.h.
#include "tests/verbs/served_index.h"

#include <signal.h>

#include <boost/test/unit_test.hpp>

#include "tests/verbs/verbs_test_env.h"

namespace locus::verbs::testing {

std::string scenario_path(const std::string& file) { return std::string(LOCUS_VERBS_SCENARIOS) + "/" + file; }

ServedIndex start_served_index(const std::string& name, const std::string& scenario,
                               const std::vector<std::string>& sets, size_t endpoints,
                               const std::string& serve_verbs) {
  ServedIndex t;
  t.dir = make_temp_dir(name);
  t.scenario = scenario;
  t.sets = sets;
  const std::string address = local_address();
  write_file(t.dir + "/serve.toml", cluster_toml(address, std::vector<std::string>(endpoints, "0")) + serve_verbs + "\n");
  std::vector<std::string> argv{LOCUS_BINARY, "serve", scenario, "--config", t.dir + "/serve.toml",
                                "--ready-file", t.dir + "/ready"};
  for (const std::string& s : sets) argv.insert(argv.end(), {"--set", s});
  t.server = std::make_unique<ChildProcess>(argv, t.dir + "/serve.log");
  // Loading a large scenario (Cell's split tree) in an emulated guest takes a while.
  const std::vector<std::string> where = wait_for_lines(t.dir + "/ready", endpoints, 240'000, t.server.get());
  BOOST_REQUIRE_MESSAGE(where.size() == endpoints, "locus serve did not start (" << t.server->ending() << "):\n"
                                                                                 << t.server->output());
  std::vector<std::string> ports;
  for (const std::string& w : where) ports.push_back(w.substr(w.rfind(':') + 1));
  t.config_path = t.dir + "/cluster.toml";
  write_file(t.config_path, cluster_toml(address, ports));
  auto config = load_cluster_config(t.config_path);
  BOOST_REQUIRE_MESSAGE(config.is_ok(), config.status().to_string());
  t.config = *config;
  return t;
}

std::string refused_serve(const std::string& name, const std::string& scenario, const std::vector<std::string>& sets,
                          size_t endpoints) {
  const std::string dir = make_temp_dir(name);
  write_file(dir + "/serve.toml", cluster_toml(local_address(), std::vector<std::string>(endpoints, "0")));
  std::vector<std::string> argv{LOCUS_BINARY, "serve", scenario, "--config", dir + "/serve.toml"};
  for (const std::string& s : sets) argv.insert(argv.end(), {"--set", s});
  ChildProcess serve(argv, dir + "/serve.log");
  const int end = serve.wait(120'000);
  BOOST_TEST(end == 1, "locus serve should have refused: " << serve.ending() << ":\n" << serve.output());
  return serve.output();
}

std::string run_json(const ServedIndex& t, const std::string& tag) { return t.dir + "/" + tag + ".json"; }

std::unique_ptr<ChildProcess> start_run(const ServedIndex& t, const std::string& tag,
                                        const std::vector<std::string>& extra) {
  std::vector<std::string> argv{LOCUS_BINARY, "run", t.scenario, "--backend", "verbs", "--config", t.config_path,
                                "--json", run_json(t, tag), "--csv", t.dir + "/" + tag + ".csv", "--quiet"};
  for (const std::string& s : t.sets) argv.insert(argv.end(), {"--set", s});
  for (const std::string& s : extra) argv.insert(argv.end(), {"--set", s});
  return std::make_unique<ChildProcess>(argv, t.dir + "/" + tag + ".log");
}

RunResults finish_run(const ServedIndex& t, ChildProcess& run, const std::string& tag, int timeout_ms) {
  const int end = run.wait(timeout_ms);  // before the messages read ending()
  BOOST_TEST(end == 0, "locus run (" << tag << "): " << run.ending() << ":\n" << run.output());
  RunResults r = read_run_json(run_json(t, tag));
  BOOST_TEST(r.ok(), r.error << "\n" << run.output());
  BOOST_TEST(r.backend == "verbs", tag << ":\n" << run.output());
  BOOST_TEST(r.total_ops > 0u, tag << ": no operation measured:\n" << run.output());
  BOOST_TEST(r.failed == 0u, tag << ": operations failed:\n" << run.output());
  const auto failed_ops = r.counters.find("failed_ops");
  BOOST_TEST((failed_ops == r.counters.end() || failed_ops->second == 0), tag << ":\n" << run.output());
  return r;
}

std::map<std::string, double> stop_served_index(ServedIndex& t, int timeout_ms) {
  BOOST_TEST(t.server->running(), "the server exited:\n" << t.server->output());
  t.server->kill(SIGTERM);
  const int end = t.server->wait(timeout_ms);  // before the message reads ending()
  BOOST_TEST(end == 0, "locus serve: " << t.server->ending() << ":\n" << t.server->output());
  std::map<std::string, double> figures = serve_stop_figures(t.server->output());
  BOOST_TEST(!figures.empty(), "no stopping line:\n" << t.server->output());
  return figures;
}

double figure(const std::map<std::string, double>& figures, const std::string& name) {
  auto it = figures.find(name);
  return it == figures.end() ? -1 : it->second;
}

}  // namespace locus::verbs::testing
