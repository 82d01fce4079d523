// Verbs test tier set-up: see verbs_test_env.h.
#include "tests/verbs/verbs_test_env.h"

#include <cstdio>
#include <cstdlib>

#include "backends/verbs/verbs_runtime.h"
#include "core/workload/workload.h"

namespace locus::verbs::testing {

void exit_unless_rdma_available(const char* test_name) {
  std::string detail;
  if (rdma_available(&detail)) return;
  std::printf("%s: SKIPPED: %s. The verbs tier needs an RDMA device: run it with "
              "`ci/softroce-vm.sh ctest -L verbs` (Soft-RoCE in a qemu guest).\n",
              test_name, detail.c_str());
  std::fflush(stdout);
  // _Exit: nothing registered yet, and no leak check should judge a skip.
  std::_Exit(kSkipExitCode);
}

std::string local_address() {
  if (const char* env = std::getenv("LOCUS_VERBS_ADDRESS"); env != nullptr && *env != '\0') return env;
  if (auto a = find_roce_ipv4_address()) return *a;
  return "127.0.0.1";
}

ClusterConfig local_cluster(int servers) {
  ClusterConfig config;
  config.source = "<test cluster>";
  for (int i = 0; i < servers; ++i) config.servers.push_back({local_address(), 0});
  config.verbs.connect_timeout_ms = 10'000;  // generous: Soft-RoCE under emulation is slow
  return config;
}

std::string cluster_toml(const std::string& address, const std::vector<std::string>& ports) {
  std::string text;
  for (const std::string& p : ports) text += "[[server]]\naddress = \"" + address + "\"\nport = " + p + "\n\n";
  return text + "[verbs]\nconnect_timeout_ms = 10000\n";
}

bool device_writes_land_in_order() {
  auto runtime = make_verbs_runtime(local_cluster(1));
  auto node = runtime->add_node({"probe", true});
  if (!node.is_ok()) return false;
  return runtime->setup_env(*node).transport->limits().writes_land_in_order;
}

std::string loaded_key(char workload, uint64_t records, uint64_t keynum) {
  workload::WorkloadSpec spec = workload::standard_workload(workload).value();
  spec.recordcount = records;
  auto wl = workload::Workload::create(spec);
  std::string key(wl->max_key_bytes(), '\0');
  key.resize(wl->build_key(keynum, key.data(), key.size()));
  return key;
}

}  // namespace locus::verbs::testing
