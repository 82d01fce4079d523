// Cluster file loading (toml++): see cluster_config.h. Unknown keys are
// errors, not silently ignored, so a misspelt "adress" cannot leave a
// server without an address that the user believes they set.
#include "backends/verbs/cluster_config.h"

#include <arpa/inet.h>
#include <toml++/toml.h>

#include <cctype>
#include <cmath>
#include <set>

#include "backends/zookeeper/zookeeper_membership.h"
#include "core/common/file_text.h"

namespace locus::verbs {
namespace {

class Loader {
 public:
  explicit Loader(std::string source) : source_(std::move(source)) {}

  Status error(const toml::source_region& where, const std::string& key, const std::string& what) const {
    return invalid_argument(source_ + ":" + std::to_string(where.begin.line) + ": " + key + ": " + what);
  }

  // Fails on keys of `table` outside `known`.
  Status only_known(const toml::table& table, const std::string& prefix,
                    const std::set<std::string_view>& known) const {
    for (const auto& [key, node] : table) {
      if (known.count(key.str()) == 0) {
        return error(node.source(), prefix + std::string(key.str()), "unknown key");
      }
    }
    return Status();
  }

  template <typename T>
  Status integer(const toml::table& table, std::string_view key, const std::string& name, int64_t lo, int64_t hi,
                 bool required, T* out) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) {
      return required ? error(table.source(), name, "missing (required)") : Status();
    }
    const auto* v = node->as_integer();
    if (v == nullptr) return error(node->source(), name, "must be an integer");
    const int64_t x = v->get();
    if (x < lo || x > hi) {
      return error(node->source(), name,
                   "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
    }
    *out = static_cast<T>(x);
    return Status();
  }

  Status string(const toml::table& table, std::string_view key, const std::string& name, std::string* out) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return error(table.source(), name, "missing (required)");
    const auto* v = node->as_string();
    if (v == nullptr) return error(node->source(), name, "must be a string");
    if (v->get().empty()) return error(node->source(), name, "must not be empty");
    *out = v->get();
    return Status();
  }

  Status zookeeper(const toml::table& root, ClusterConfig* config) const {
    const toml::node* node = root.get("zookeeper");
    if (node == nullptr) return Status();
    const auto* t = node->as_table();
    if (t == nullptr) return error(node->source(), "zookeeper", "must be a table");
    LOCUS_RETURN_IF_ERROR(only_known(*t, "zookeeper.", {"connect"}));
    LOCUS_RETURN_IF_ERROR(string(*t, "connect", "zookeeper.connect", &config->zookeeper));
    StatusOr<zookeeper::ZooKeeperTarget> target = zookeeper::parse_zookeeper_target(config->zookeeper);
    if (!target.is_ok()) return error(t->get("connect")->source(), "zookeeper.connect", target.status().message());
    return Status();
  }

  Status servers(const toml::table& root, ClusterConfig* config) const {
    const toml::node* node = root.get("server");
    if (node == nullptr && !config->zookeeper.empty()) return Status();  // announced in ZooKeeper
    if (node == nullptr) {
      return error(root.source(), "server",
                   "missing: list each server as a [[server]] table, or name ZooKeeper in [zookeeper] connect");
    }
    const auto* array = node->as_array();
    if (array == nullptr || array->empty()) {
      return error(node->source(), "server", "must be a non-empty array of [[server]] tables");
    }
    for (size_t i = 0; i < array->size(); ++i) {
      const std::string prefix = "server[" + std::to_string(i) + "].";
      const auto* t = (*array)[i].as_table();
      if (t == nullptr) return error((*array)[i].source(), "server[" + std::to_string(i) + "]", "must be a table");
      LOCUS_RETURN_IF_ERROR(only_known(*t, prefix, {"address", "port"}));
      ServerAddress s;
      LOCUS_RETURN_IF_ERROR(string(*t, "address", prefix + "address", &s.address));
      LOCUS_RETURN_IF_ERROR(integer(*t, "port", prefix + "port", 0, 65535, true, &s.port));
      const toml::node* at = t->get("address");
      if (!valid_address(s.address)) {
        return error(at->source(), prefix + "address",
                     "'" + s.address + "' is neither an IPv4 or IPv6 address nor a host name");
      }
      for (size_t j = 0; j < config->servers.size(); ++j) {
        const ServerAddress& o = config->servers[j];
        if (o.address == s.address && o.port == s.port && s.port != 0) {
          return error(at->source(), "server[" + std::to_string(i) + "]",
                       "the same address and port as server[" + std::to_string(j) + "] (" + s.to_string() + ")");
        }
      }
      config->servers.push_back(std::move(s));
    }
    return Status();
  }

  Status tuning(const toml::table& root, VerbsTuning* v) const {
    const toml::node* node = root.get("verbs");
    if (node == nullptr) return Status();
    const auto* t = node->as_table();
    if (t == nullptr) return error(node->source(), "verbs", "must be a table");
    LOCUS_RETURN_IF_ERROR(only_known(*t, "verbs.",
                                     {"ack_timeout", "retry_count", "rnr_retry_count", "min_rnr_timer", "max_rd_atomic",
                                      "connect_timeout_ms", "reconnect_holddown_ms", "max_send_wr", "max_recv_wr",
                                      "max_message_bytes", "poll_spin_us", "max_connections"}));
    LOCUS_RETURN_IF_ERROR(integer(*t, "ack_timeout", "verbs.ack_timeout", 1, 31, false, &v->ack_timeout));
    LOCUS_RETURN_IF_ERROR(integer(*t, "retry_count", "verbs.retry_count", 0, 7, false, &v->retry_count));
    // 7 is "infinite" in the IB encoding: a SEND to a peer that never posts
    // a receive would hang its sender forever.
    LOCUS_RETURN_IF_ERROR(integer(*t, "rnr_retry_count", "verbs.rnr_retry_count", 0, 6, false, &v->rnr_retry_count));
    LOCUS_RETURN_IF_ERROR(integer(*t, "min_rnr_timer", "verbs.min_rnr_timer", 1, 31, false, &v->min_rnr_timer));
    LOCUS_RETURN_IF_ERROR(integer(*t, "max_rd_atomic", "verbs.max_rd_atomic", 1, 255, false, &v->max_rd_atomic));
    LOCUS_RETURN_IF_ERROR(
        integer(*t, "connect_timeout_ms", "verbs.connect_timeout_ms", 1, 600'000, false, &v->connect_timeout_ms));
    LOCUS_RETURN_IF_ERROR(integer(*t, "reconnect_holddown_ms", "verbs.reconnect_holddown_ms", 0, 600'000, false,
                                  &v->reconnect_holddown_ms));
    LOCUS_RETURN_IF_ERROR(integer(*t, "max_send_wr", "verbs.max_send_wr", 1, 16384, false, &v->max_send_wr));
    LOCUS_RETURN_IF_ERROR(integer(*t, "max_recv_wr", "verbs.max_recv_wr", 1, 65536, false, &v->max_recv_wr));
    LOCUS_RETURN_IF_ERROR(
        integer(*t, "max_message_bytes", "verbs.max_message_bytes", 64, 1 << 30, false, &v->max_message_bytes));
    LOCUS_RETURN_IF_ERROR(
        integer(*t, "max_connections", "verbs.max_connections", 1, 1'000'000, false, &v->max_connections));
    return integer(*t, "poll_spin_us", "verbs.poll_spin_us", 0, 1'000'000, false, &v->poll_spin_us);
  }

 private:
  std::string source_;
};

}  // namespace

bool valid_address(const std::string& address) {
  unsigned char buf[sizeof(in6_addr)];
  if (inet_pton(AF_INET, address.c_str(), buf) == 1 || inet_pton(AF_INET6, address.c_str(), buf) == 1) return true;
  // A host name (RFC 1123): dot-separated labels of letters, digits and
  // hyphens, none empty, longer than 63 or beginning or ending with '-'.
  if (address.empty() || address.size() > 253) return false;
  size_t label = 0;
  for (size_t i = 0; i <= address.size(); ++i) {
    const char ch = i < address.size() ? address[i] : '.';
    if (ch == '.') {
      if (label == 0 || label > 63 || address[i - 1] == '-' || address[i - label] == '-') return false;
      label = 0;
    } else if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-') {
      ++label;
    } else {
      return false;
    }
  }
  return true;
}

Status check_connectable(const ClusterConfig& config) {
  for (size_t i = 0; i < config.servers.size(); ++i) {
    if (config.servers[i].port == 0) {
      return invalid_argument(config.source + ": server[" + std::to_string(i) +
                              "].port: 0 (any free port) is for the serving process only; a client needs the "
                              "port the server listens on (locus serve prints it, and --ready-file holds it)");
    }
  }
  return Status();
}

std::string ServerAddress::to_string() const {
  const bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

StatusOr<ClusterConfig> parse_cluster_config(std::string_view text, const std::string& source) {
  Loader loader(source);
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return invalid_argument(source + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  LOCUS_RETURN_IF_ERROR(loader.only_known(root, "", {"server", "verbs", "zookeeper"}));
  ClusterConfig config;
  config.source = source;
  LOCUS_RETURN_IF_ERROR(loader.zookeeper(root, &config));
  LOCUS_RETURN_IF_ERROR(loader.servers(root, &config));
  LOCUS_RETURN_IF_ERROR(loader.tuning(root, &config.verbs));
  return config;
}

StatusOr<ClusterConfig> load_cluster_config(const std::string& path) {
  LOCUS_ASSIGN_OR_RETURN(std::string text, read_file_text(path, "the cluster file"));
  return parse_cluster_config(text, path);
}

}  // namespace locus::verbs
