// Fuzz target: the verbs backend's cluster-file loader
// (backends/verbs/cluster_config.cc, parse_cluster_config), compiled into
// the target on its own: it needs toml++ and no RDMA device or library.
// Every failure must be a Status naming the file and line; what it accepts
// must be within the ranges it documents.
#include <string>

#include "backends/verbs/cluster_config.h"
#include "tests/fuzz/support/input.h"

using namespace locus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = verbs::parse_cluster_config(text, "cluster.toml");
  if (!config.is_ok()) {
    FUZZ_CHECK(config.status().message().rfind("cluster.toml:", 0) == 0, "error without the file: %s",
               config.status().message().c_str());
    return 0;
  }
  FUZZ_CHECK(!config->servers.empty(), "no servers accepted");
  for (const verbs::ServerAddress& s : config->servers) {
    FUZZ_CHECK(!s.address.empty(), "empty address accepted");
    (void)s.to_string();
  }
  const verbs::VerbsTuning& v = config->verbs;
  FUZZ_CHECK(v.rnr_retry_count <= 6 && v.retry_count <= 7 && v.ack_timeout >= 1 && v.ack_timeout <= 31 &&
                 v.min_rnr_timer >= 1 && v.min_rnr_timer <= 31 && v.max_send_wr >= 1 && v.max_recv_wr >= 1 &&
                 v.max_message_bytes >= 64,
             "tuning out of range accepted");
  FUZZ_CHECK(v.rnr_retry_budget() >= 0, "negative RNR budget");
  return 0;
}
