// A `locus serve` child process serving an index over several nodes of a
// cluster file of its own (every port 0: free ports), and the cluster file
// its clients use, written with the ports it got from the ready file. For
// the multi-process tests of indexes served from several nodes of one
// process (Cell's servers, Catfish's connect node and workers); needs
// LOCUS_BINARY, the locus executable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "backends/verbs/cluster_config.h"
#include "tests/verbs/child_process.h"
#include "tests/verbs/verbs_test_env.h"

namespace locus::verbs::testing {

struct ServedIndex {
  std::string dir;
  std::unique_ptr<ChildProcess> server;
  std::string config_path;
  ClusterConfig config;
};

// Starts `locus serve` with `serve_args` (after "serve"; --config and
// --ready-file are added) and waits until it listens on all `nodes`.
inline ServedIndex start_served_index(const std::string& name, size_t nodes,
                                      const std::vector<std::string>& serve_args) {
  ServedIndex t;
  t.dir = make_temp_dir(name);
  const std::string address = local_address();
  write_file(t.dir + "/serve.toml", cluster_toml(address, std::vector<std::string>(nodes, "0")));
  std::vector<std::string> argv{LOCUS_BINARY, "serve"};
  argv.insert(argv.end(), serve_args.begin(), serve_args.end());
  for (const char* arg : {"--config", "/serve.toml", "--ready-file", "/ready"}) {
    argv.push_back(arg[0] == '/' ? t.dir + arg : std::string(arg));
  }
  t.server = std::make_unique<ChildProcess>(argv, t.dir + "/serve.log");
  const std::vector<std::string> where = wait_for_lines(t.dir + "/ready", nodes, 180'000);
  BOOST_REQUIRE_MESSAGE(where.size() == nodes, "locus serve did not start:\n" << t.server->output());
  std::vector<std::string> ports;
  for (const std::string& w : where) ports.push_back(w.substr(w.rfind(':') + 1));
  t.config_path = t.dir + "/cluster.toml";
  write_file(t.config_path, cluster_toml(address, ports));
  auto config = load_cluster_config(t.config_path);
  BOOST_REQUIRE_MESSAGE(config.is_ok(), config.status().to_string());
  t.config = *config;
  return t;
}

}  // namespace locus::verbs::testing
