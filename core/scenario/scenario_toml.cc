// Scenario loading from TOML (toml++): one reader per section, each of
// which knows its keys, then cross-section checks. --set overrides are
// applied to the parsed document before any of it is read.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/scenario/scenario.h"
#include "core/common/file_text.h"
#include "core/scenario/scenario_decoder.h"

namespace locus::scenario {

struct IndexKeys::Impl {
  const Decoder& d;
  const toml::table& t;
  std::set<std::string> known;
};

Status IndexKeys::number(std::string_view key, uint32_t* out, double lo, double hi) {
  impl_.known.emplace(key);
  return impl_.d.number(impl_.t, "index", key, out, lo, hi);
}
Status IndexKeys::number(std::string_view key, uint64_t* out, double lo, double hi) {
  impl_.known.emplace(key);
  return impl_.d.number(impl_.t, "index", key, out, lo, hi);
}
Status IndexKeys::number(std::string_view key, double* out, double lo, double hi) {
  impl_.known.emplace(key);
  return impl_.d.number(impl_.t, "index", key, out, lo, hi);
}
Status IndexKeys::text(std::string_view key, std::string* out, std::initializer_list<std::string_view> allowed) {
  impl_.known.emplace(key);
  return impl_.d.text(impl_.t, "index", key, out, allowed);
}
Status IndexKeys::flag(std::string_view key, bool* out) {
  impl_.known.emplace(key);
  return impl_.d.flag(impl_.t, "index", key, out);
}
std::optional<double> IndexKeys::number_if_numeric(std::string_view key) {
  impl_.known.emplace(key);
  const toml::node* n = impl_.t.get(key);
  if (n == nullptr || !n->is_number()) return std::nullopt;
  return n->value<double>();
}
bool IndexKeys::has(std::string_view key) const { return impl_.t.contains(key); }
Status IndexKeys::fail(std::string_view key, const std::string& what) const {
  const toml::node* n = impl_.t.get(key);
  return impl_.d.fail(n != nullptr ? n : &impl_.t, "index." + std::string(key), what);
}

namespace {

constexpr int kMaxTimeseriesWindows = 100000;  // each holds a latency histogram

Status read_link(const Decoder& d, const toml::table& t, const std::string& name, LinkSpec* out) {
  LOCUS_RETURN_IF_ERROR(d.only(t, name, {"bandwidth_gbps", "latency_us"}));
  LOCUS_RETURN_IF_ERROR(d.number(t, name, "bandwidth_gbps", &out->bandwidth_gbps, 1e-6, 1e6));
  return d.number(t, name, "latency_us", &out->latency_us, 0, 1e6);
}

Status read_nic(const Decoder& d, const toml::table& t, NicSpec* nic) {
  const std::string s = "platform.nic";
  LOCUS_RETURN_IF_ERROR(d.only(t, s, {"model", "read", "write", "atomic", "send", "recv",
                                      "rdma_share_with_verbs", "verbs_share_with_rdma", "atc_reach_bytes",
                                      "read_by_region", "read_region_bytes", "ack_timeout", "retry_count",
                                      "qp_cache_entries", "qp_miss_ns"}));
  std::string model = nic->model == NicModel::kFcfs ? "fcfs" : "ps";
  LOCUS_RETURN_IF_ERROR(d.text(t, s, "model", &model, {"fcfs", "ps"}));
  nic->model = model == "fcfs" ? NicModel::kFcfs : NicModel::kProcessorSharing;
  LOCUS_RETURN_IF_ERROR(d.curve(t, s, "read", &nic->read));
  LOCUS_RETURN_IF_ERROR(d.curve(t, s, "write", &nic->write));
  LOCUS_RETURN_IF_ERROR(d.curve(t, s, "atomic", &nic->atomic));
  LOCUS_RETURN_IF_ERROR(d.curve(t, s, "send", &nic->send));
  LOCUS_RETURN_IF_ERROR(d.curve(t, s, "recv", &nic->recv));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "rdma_share_with_verbs", &nic->rdma_share_with_verbs, 0.01, 1.0));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "verbs_share_with_rdma", &nic->verbs_share_with_rdma, 0.01, 1.0));
  // The ranges ibv_modify_qp(3) accepts (a 5-bit timeout, a 3-bit count).
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "ack_timeout", &nic->ack_timeout, 1, 31));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "retry_count", &nic->retry_count, 0, 7));
  // The address-translation cache (NicSpec::atc_*).
  constexpr double kMaxRegistered = 1ull << 50;  // a petabyte: beyond any NIC
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "atc_reach_bytes", &nic->atc_reach_bytes, 0, kMaxRegistered));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "read_region_bytes", &nic->read_region_bytes, 0, kMaxRegistered));
  if (const toml::node* n = t.get("read_by_region")) {
    const toml::array* a = n->as_array();
    if (a == nullptr) return d.fail(n, s + ".read_by_region", "expected [[registered_bytes, ops_per_s], ...]");
    nic->read_by_region.clear();
    for (const toml::node& e : *a) {
      const toml::array* pt = e.as_array();
      std::optional<double> bytes, rate;
      if (pt != nullptr && pt->size() == 2) bytes = (*pt)[0].value<double>(), rate = (*pt)[1].value<double>();
      if (!bytes || !rate) return d.fail(&e, s + ".read_by_region", "expected [registered_bytes, ops_per_s] pairs");
      if (!(*bytes >= 1 && *bytes <= kMaxRegistered) || !(*rate >= 1 && *rate <= 1e12)) {
        return d.fail(&e, s + ".read_by_region", "bytes must be in [1, 2^50] and ops_per_s in [1, 1e12]");
      }
      nic->read_by_region.emplace_back(static_cast<uint64_t>(*bytes), *rate);
    }
  }
  if (Status st = nic->fit_atc(); !st.is_ok()) {
    return d.fail(t.get("atc_reach_bytes"), s + ".atc_reach_bytes", st.message());
  }
  // The queue-pair state cache (NicSpec::qp_*).
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "qp_cache_entries", &nic->qp_cache_entries, 0, 1 << 24));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "qp_miss_ns", &nic->qp_miss_ns, 0, 1e9));
  if (nic->qp_cache_entries > 0 && nic->qp_miss_ns == 0) {
    if (nic->atc_miss_ns <= 0) {
      return d.fail(t.get("qp_cache_entries"), s + ".qp_cache_entries",
                    "needs qp_miss_ns, or atc_reach_bytes and read_by_region to fit the miss cost from");
    }
    nic->qp_miss_ns = nic->atc_miss_ns;
  }
  return Status();
}

Status read_cpu(const Decoder& d, const toml::table& t, CpuSpec* cpu) {
  const std::string s = "platform.cpu";
  LOCUS_RETURN_IF_ERROR(d.only(t, s, {"handler_cost_us", "default_handler_us", "measured", "measured_factor", "client_op_us"}));
  if (t.contains("default_handler_us")) {
    double us = 0;
    LOCUS_RETURN_IF_ERROR(d.number(t, s, "default_handler_us", &us, 0, 1e6));
    cpu->default_handler_us = us;
  }
  LOCUS_RETURN_IF_ERROR(d.flag(t, s, "measured", &cpu->measured));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "measured_factor", &cpu->measured_factor, 0, 1e6));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "client_op_us", &cpu->client_op_us, 0, 1e6));
  LOCUS_RETURN_IF_ERROR(d.require_table(t, s, "handler_cost_us"));
  if (const toml::table* costs = d.sub(t, "handler_cost_us")) {
    for (auto&& [k, v] : *costs) {
      const std::string key = s + ".handler_cost_us." + std::string(k.str());
      CostCurve curve;
      if (const toml::array* a = v.as_array()) {
        // [[bytes, us], ...]: bytes increasing.
        for (const toml::node& e : *a) {
          const toml::array* pt = e.as_array();
          std::optional<double> bytes, us;
          if (pt != nullptr && pt->size() == 2) bytes = (*pt)[0].value<double>(), us = (*pt)[1].value<double>();
          if (!bytes || !us) return d.fail(&e, key, "expected [bytes, us] pairs");
          if (!(*bytes >= 0 && *bytes <= 4294967295.0) || *bytes != std::floor(*bytes)) {
            return d.fail(&e, key, "bytes must be an integer in [0, 2^32)");
          }
          if (!(*us >= 0 && *us <= 1e6)) return d.fail(&e, key, "us must be in [0, 1e6]");
          if (!curve.points.empty() && *bytes <= static_cast<double>(curve.points.back().first)) {
            return d.fail(&e, key, "bytes must increase along the curve");
          }
          curve.points.emplace_back(static_cast<uint64_t>(*bytes), *us);
        }
        if (curve.points.empty()) return d.fail(&v, key, "an empty cost curve");
      } else {
        double us = 0;
        LOCUS_RETURN_IF_ERROR(d.number(*costs, s + ".handler_cost_us", k.str(), &us, 0, 1e6));
        curve.points.emplace_back(0, us);
      }
      cpu->handler_cost_us[std::string(k.str())] = std::move(curve);
    }
  }
  return Status();
}

// [platform.power]: both figures or none; there is no default to fall
// back on (PowerSpec).
Status read_power(const Decoder& d, const toml::table& t, PowerSpec* power) {
  const std::string s = "platform.power";
  LOCUS_RETURN_IF_ERROR(d.only(t, s, {"idle_w", "busy_w_per_core"}));
  for (const char* k : {"idle_w", "busy_w_per_core"}) {
    if (!t.contains(k)) {
      return d.fail(&t, s + "." + k,
                    "missing: a power profile needs both idle_w and busy_w_per_core (watts, with their source; "
                    "shared/calibration.md gives none, so there is no default)");
    }
  }
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "idle_w", &power->idle_w, 0, 1e6));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "busy_w_per_core", &power->busy_w_per_core, 0, 1e6));
  power->given = true;
  return Status();
}

// [platform.disk]: all three figures or none (DiskSpec).
Status read_disk(const Decoder& d, const toml::table& t, DiskSpec* disk) {
  const std::string s = "platform.disk";
  LOCUS_RETURN_IF_ERROR(d.only(t, s, {"sync_us", "write_mb_per_s", "read_mb_per_s"}));
  for (const char* k : {"sync_us", "write_mb_per_s", "read_mb_per_s"}) {
    if (!t.contains(k)) {
      return d.fail(&t, s + "." + k,
                    "missing: a disk needs sync_us, write_mb_per_s and read_mb_per_s (measure them with `locus bench "
                    "--micro log --log-dir DIR`; there is no default)");
    }
  }
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "sync_us", &disk->sync_us, 0, 1e7));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "write_mb_per_s", &disk->write_mb_per_s, 1e-3, 1e7));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "read_mb_per_s", &disk->read_mb_per_s, 1e-3, 1e7));
  disk->given = true;
  return Status();
}

Status read_platform(const Decoder& d, const toml::table& t, PlatformSpec* p) {
  const std::string s = "platform";
  LOCUS_RETURN_IF_ERROR(
      d.only(t, s,
             {"servers", "cores_per_server", "client_hosts", "cores_per_client_host", "topology", "hosts_per_rack",
              "link", "rack_uplink", "pcie", "nic", "cpu", "packet_bytes", "power", "disk", "background_load",
              "cpu_scheduler", "polling_clients"}));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "servers", &p->servers, 1, 100000));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "cores_per_server", &p->cores_per_server, 1, 1024));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "client_hosts", &p->client_hosts, 0, 1000000));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "cores_per_client_host", &p->cores_per_client_host, 1, 1024));
  std::string topo = p->topology == Topology::kStar ? "star" : "two-level";
  LOCUS_RETURN_IF_ERROR(d.text(t, s, "topology", &topo, {"star", "two-level"}));
  p->topology = topo == "star" ? Topology::kStar : Topology::kTwoLevel;
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "hosts_per_rack", &p->hosts_per_rack, 1, 100000));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "packet_bytes", &p->packet_bytes, 0, 1u << 20));
  LOCUS_RETURN_IF_ERROR(d.number(t, s, "background_load", &p->background_load, 0, 4096));
  std::string sched = p->cpu_scheduler == CpuScheduler::kCfs ? "cfs" : "fluid";
  LOCUS_RETURN_IF_ERROR(d.text(t, s, "cpu_scheduler", &sched, {"fluid", "cfs"}));
  p->cpu_scheduler = sched == "cfs" ? CpuScheduler::kCfs : CpuScheduler::kFluid;
  LOCUS_RETURN_IF_ERROR(d.flag(t, s, "polling_clients", &p->polling_clients));
  for (const char* k : {"link", "rack_uplink", "pcie", "nic", "cpu", "power", "disk"})
    LOCUS_RETURN_IF_ERROR(d.require_table(t, s, k));
  if (auto* l = d.sub(t, "link")) LOCUS_RETURN_IF_ERROR(read_link(d, *l, "platform.link", &p->host_link));
  if (auto* l = d.sub(t, "rack_uplink")) LOCUS_RETURN_IF_ERROR(read_link(d, *l, "platform.rack_uplink", &p->rack_uplink));
  if (auto* l = d.sub(t, "pcie")) LOCUS_RETURN_IF_ERROR(read_link(d, *l, "platform.pcie", &p->pcie));
  if (auto* n = d.sub(t, "nic")) LOCUS_RETURN_IF_ERROR(read_nic(d, *n, &p->nic));
  if (auto* c = d.sub(t, "cpu")) LOCUS_RETURN_IF_ERROR(read_cpu(d, *c, &p->cpu));
  if (auto* w = d.sub(t, "power")) LOCUS_RETURN_IF_ERROR(read_power(d, *w, &p->power));
  if (auto* k = d.sub(t, "disk")) LOCUS_RETURN_IF_ERROR(read_disk(d, *k, &p->disk));
  return Status();
}

// [index]: the design index.type names reads its own keys through an
// IndexKeys view; whatever it did not read is an unknown key.
Status read_index(const Decoder& d, const toml::table& t, const IndexTypes& types, IndexSpec* x) {
  LOCUS_RETURN_IF_ERROR(d.text(t, "index", "type", &x->type));
  const IndexType* type = types.find_type(x->type);
  if (type == nullptr) {
    std::string list;
    for (const std::string& n : types.type_names()) list += (list.empty() ? "" : " | ") + n;
    return d.fail(t.get("type"), "index.type", "'" + x->type + "' is not one of " + list);
  }
  IndexKeys::Impl impl{d, t, {"type"}};
  IndexKeys keys(impl);
  LOCUS_ASSIGN_OR_RETURN(x->config, type->read_keys(keys));
  for (auto&& [k, v] : t) {
    if (!impl.known.contains(std::string(k.str()))) {
      return d.fail(&v, "index." + std::string(k.str()), "unknown key for index type " + x->type);
    }
  }
  return Status();
}

// A TOML scalar as the text a property setter parses; false if not one.
bool scalar_text(const toml::node& v, std::string* out) {
  if (auto s = v.value_exact<std::string>()) *out = *s;
  else if (auto i = v.value_exact<int64_t>()) *out = std::to_string(*i);
  else if (auto f = v.value_exact<double>()) { std::ostringstream os; os.precision(17); os << *f; *out = os.str(); }
  else if (auto b = v.value_exact<bool>()) *out = *b ? "true" : "false";
  else return false;
  return true;
}

Status read_workload(const Decoder& d, const toml::table& t, workload::WorkloadSpec* w) {
  // `standard = "b"` starts from a YCSB core workload; every other key is
  // a CoreWorkload property, parsed by the workload module itself.
  if (const toml::node* n = t.get("standard")) {
    auto letter = n->value_exact<std::string>();
    if (!letter || letter->size() != 1) return d.fail(n, "workload.standard", "expected one letter a-f");
    auto spec = workload::standard_workload((*letter)[0]);
    if (!spec.is_ok()) return d.fail(n, "workload.standard", spec.status().message());
    *w = *spec;
  }
  for (auto&& [k, v] : t) {
    if (k.str() == "standard") continue;
    std::string value;
    if (!scalar_text(v, &value)) {
      return d.fail(&v, "workload." + std::string(k.str()), "expected a string, number or boolean");
    }
    Status st = workload::set_property(*w, k.str(), value);
    if (!st.is_ok()) return d.fail(&v, "workload." + std::string(k.str()), st.message());
  }
  return Status();
}

// True if `n` came from a --set (apply_override gives its nodes that source).
bool from_set(const toml::node* n) {
  return n != nullptr && n->source().path != nullptr && *n->source().path == "--set";
}

// [selector]: type static (the index's own choice) or a core/selector
// kind; client_fraction and the sub-tables ([selector.jsq],
// [selector.window], ...) are selector_config's property names, so every
// constant a selector has can be set here or with --set.
Status read_selector(const Decoder& d, const toml::table& t, SelectorSpec* x) {
  if (const toml::node* n = t.get("type")) {
    auto v = n->value_exact<std::string>();
    if (!v) return d.fail(n, "selector.type", "expected a string");
    if (*v != "static") {
      auto kind = selector::parse_selector_kind(*v);
      if (!kind.is_ok()) return d.fail(n, "selector.type", "not static, and " + kind.status().message());
      x->config.kind = *kind;
    }
    x->type = *v;
  }
  LOCUS_RETURN_IF_ERROR(d.number(t, "selector", "client_fraction", &x->config.client_fraction, 0, 1));
  // Settings the chosen kind does not read are refused: they would be
  // ignored. Except a sweep's: when --set changes the type, the file's
  // settings for the file's own type stay legal (an --set one never is).
  const bool chosen = x->type != "static";
  const std::string chosen_name = std::string(selector::selector_kind_name(x->config.kind));
  const bool type_from_set = from_set(t.get("type"));
  for (auto&& [group, node] : t) {
    const toml::table* g = node.as_table();
    if (g == nullptr) {
      if (group.str() != "type" && group.str() != "client_fraction") {
        return d.fail(&node, "selector." + std::string(group.str()), "unknown key");
      }
      if (group.str() == "client_fraction" && chosen && !selector::selector_takes_client_fraction(x->config.kind) &&
          (from_set(&node) || !type_from_set)) {
        return d.fail(&node, "selector.client_fraction",
                      "only fixed_ratio takes it, and selector.type is " + chosen_name + " (it would be ignored)");
      }
      continue;
    }
    if (!selector::is_selector_settings_group(group.str())) {
      return d.fail(&node, "selector." + std::string(group.str()), "unknown key");
    }
    const std::string_view uses = selector::selector_settings_group(x->config.kind);
    const bool group_from_set = std::any_of(g->begin(), g->end(), [](auto&& kv) { return from_set(&kv.second); });
    if (chosen && group.str() != uses && !g->empty() && (group_from_set || !type_from_set)) {
      return d.fail(&node, "selector." + std::string(group.str()),
                    "settings of another selector: selector.type is " + chosen_name +
                        (uses.empty() ? std::string(", which takes none here")
                                      : ", which takes [selector." + std::string(uses) + "]") +
                        " (they would be ignored)");
    }
    for (auto&& [k, v] : *g) {
      const std::string property = std::string(group.str()) + "." + std::string(k.str());
      std::string value;
      if (!scalar_text(v, &value)) return d.fail(&v, "selector." + property, "expected a number or boolean");
      Status st = selector::set_selector_property(x->config, property, value);
      if (!st.is_ok()) return d.fail(&v, "selector." + property, st.message());
    }
  }
  if (x->type == "static" && t.size() > (t.contains("type") ? 1u : 0u)) {
    return d.fail(&t, "selector", "settings need a selector.type other than static");
  }
  if (Status st = x->config.validate(); !st.is_ok()) return d.fail(&t, "selector", st.message());
  return Status();
}

Status read_faults(const Decoder& d, const toml::table& t, fault::FaultOptions* f) {
  LOCUS_RETURN_IF_ERROR(d.only(t, "faults", {"seed", "delay", "max_delay_us", "retry_exceeded", "applied",
                                             "remote_access_error", "rnr", "register_failure", "split_read",
                                             "piece_bytes", "read_order", "crash_clients", "crash_servers",
                                             "restart_after_ms", "server_outage_ms", "restart_servers"}));
  LOCUS_RETURN_IF_ERROR(d.flag(t, "faults", "restart_servers", &f->restart_servers));
  LOCUS_RETURN_IF_ERROR(d.number(t, "faults", "crash_clients", &f->crash_clients, 0, 1000000));
  LOCUS_RETURN_IF_ERROR(d.number(t, "faults", "crash_servers", &f->crash_servers, 0, 1000000));
  double restart_after_ms = static_cast<double>(f->restart_after_ns) / 1e6;
  LOCUS_RETURN_IF_ERROR(d.number(t, "faults", "restart_after_ms", &restart_after_ms, 0.0, 1e7));
  f->restart_after_ns = static_cast<Nanos>(restart_after_ms * 1e6);
  double server_outage_ms = static_cast<double>(f->server_outage_ns) / 1e6;
  LOCUS_RETURN_IF_ERROR(d.number(t, "faults", "server_outage_ms", &server_outage_ms, 0.0, 1e7));
  f->server_outage_ns = static_cast<Nanos>(server_outage_ms * 1e6);
  LOCUS_RETURN_IF_ERROR(d.number(t, "faults", "seed", &f->seed, 0, 9.0e15));
  for (auto [key, p] : {std::pair{"delay", &f->delay}, {"retry_exceeded", &f->retry_exceeded}, {"applied", &f->applied},
                        {"remote_access_error", &f->remote_access_error}, {"rnr", &f->rnr},
                        {"register_failure", &f->register_failure}, {"split_read", &f->split_read}}) {
    LOCUS_RETURN_IF_ERROR(d.number(t, "faults", key, p, 0.0, 1.0));
  }
  double max_delay_us = static_cast<double>(f->max_delay_ns) / 1e3;
  LOCUS_RETURN_IF_ERROR(d.number(t, "faults", "max_delay_us", &max_delay_us, 0.0, 1e7));
  f->max_delay_ns = static_cast<Nanos>(max_delay_us * 1e3);
  LOCUS_RETURN_IF_ERROR(d.number(t, "faults", "piece_bytes", &f->piece_bytes, 8, 1u << 20));
  std::string order = f->read_order == fault::ReadOrder::kRandom ? "random" : "reverse";
  LOCUS_RETURN_IF_ERROR(d.text(t, "faults", "read_order", &order, {"reverse", "random"}));
  f->read_order = order == "random" ? fault::ReadOrder::kRandom : fault::ReadOrder::kReverse;
  return Status();
}

// A handler cost the design never charges is a misspelling ("pilaf.putt"),
// which would otherwise cost nothing, silently.
Status check_work_names(const Decoder& d, const toml::table& root, const IndexType& type, const CpuSpec& cpu) {
  if (type.work_names.empty()) return Status();
  for (const auto& [name, curve] : cpu.handler_cost_us) {
    if (name == kClientOpWork) continue;  // every design's clients charge it
    if (std::find(type.work_names.begin(), type.work_names.end(), name) != type.work_names.end()) continue;
    const toml::node* at = root.at_path("platform.cpu.handler_cost_us").as_table() != nullptr
                               ? root.at_path("platform.cpu.handler_cost_us").as_table()->get(name)
                               : nullptr;
    std::string known = kClientOpWork;
    for (const std::string& n : type.work_names) known += (known.empty() ? "" : ", ") + n;
    return d.fail(at, "platform.cpu.handler_cost_us." + name,
                  "index type " + type.name + " charges no work of that name (it charges " + known + ")");
  }
  return Status();
}

Status read_rest(const Decoder& d, const toml::table& root, const IndexTypes& types, Scenario* sc) {
  LOCUS_RETURN_IF_ERROR(
      d.only(root, "", {"platform", "index", "workload", "selector", "phases", "run", "output", "faults", "check"}));
  for (const char* k : {"platform", "index", "workload", "selector", "run", "output", "faults", "check"}) {
    LOCUS_RETURN_IF_ERROR(d.require_table(root, "", k));
  }
  if (auto* t = d.sub(root, "platform")) LOCUS_RETURN_IF_ERROR(read_platform(d, *t, &sc->platform));
  static const toml::table kNoIndexKeys;
  const toml::table* index = d.sub(root, "index");
  LOCUS_RETURN_IF_ERROR(read_index(d, index != nullptr ? *index : kNoIndexKeys, types, &sc->index));
  LOCUS_RETURN_IF_ERROR(check_work_names(d, root, *types.find_type(sc->index.type), sc->platform.cpu));
  if (auto* t = d.sub(root, "workload")) LOCUS_RETURN_IF_ERROR(read_workload(d, *t, &sc->workload));
  if (auto* t = d.sub(root, "selector")) {
    LOCUS_RETURN_IF_ERROR(read_selector(d, *t, &sc->selector));
    if (sc->selector.type != "static" && !types.find_type(sc->index.type)->takes_selector) {
      return d.fail(t->get("type"), "selector.type",
                    "index type " + sc->index.type + " has a fixed choice of paths: only 'static'");
    }
  }
  if (auto* t = d.sub(root, "run")) {
    LOCUS_RETURN_IF_ERROR(
        d.only(*t, "run", {"seed", "clients", "duration_s", "warmup_s", "wait_timeout_ms", "clients_on_servers"}));
    LOCUS_RETURN_IF_ERROR(d.flag(*t, "run", "clients_on_servers", &sc->run.clients_on_servers));
    LOCUS_RETURN_IF_ERROR(d.number(*t, "run", "wait_timeout_ms", &sc->run.wait_timeout_ms, 0.001, 3.6e6));
    LOCUS_RETURN_IF_ERROR(d.number(*t, "run", "seed", &sc->run.seed, 0, 9.0e15));
    LOCUS_RETURN_IF_ERROR(d.number(*t, "run", "clients", &sc->run.clients, 1, 1000000));
    LOCUS_RETURN_IF_ERROR(d.number(*t, "run", "duration_s", &sc->run.duration_s, 1e-6, 1e6));
    LOCUS_RETURN_IF_ERROR(d.number(*t, "run", "warmup_s", &sc->run.warmup_s, 0, 1e6));
    if (sc->run.warmup_s >= sc->run.duration_s) {
      return d.fail(t->get("warmup_s"), "run.warmup_s", "must be shorter than run.duration_s");
    }
  }
  if (auto* t = d.sub(root, "output")) {
    LOCUS_RETURN_IF_ERROR(d.only(*t, "output", {"name", "json", "csv", "timeseries_ms", "timeseries"}));
    LOCUS_RETURN_IF_ERROR(d.text(*t, "output", "name", &sc->output.name));
    LOCUS_RETURN_IF_ERROR(d.text(*t, "output", "json", &sc->output.json));
    LOCUS_RETURN_IF_ERROR(d.text(*t, "output", "csv", &sc->output.csv));
    LOCUS_RETURN_IF_ERROR(d.number(*t, "output", "timeseries_ms", &sc->output.timeseries_ms, 0, 1e9));
    LOCUS_RETURN_IF_ERROR(d.text(*t, "output", "timeseries", &sc->output.timeseries));
    if (sc->output.timeseries_ms > 0 && sc->run.duration_s * 1e3 / sc->output.timeseries_ms > kMaxTimeseriesWindows) {
      return d.fail(t->get("timeseries_ms"), "output.timeseries_ms",
                    "more than " + std::to_string(kMaxTimeseriesWindows) + " windows in run.duration_s");
    }
  }
  if (const toml::node* n = root.get("phases")) {
    const toml::array* a = n->as_array();
    if (a == nullptr) return d.fail(n, "phases", "expected [[phases]] tables");
    for (const toml::node& e : *a) {
      const toml::table* t = e.as_table();
      if (t == nullptr) return d.fail(&e, "phases", "expected a table");
      PhaseSpec ph;
      LOCUS_RETURN_IF_ERROR(d.only(*t, "phases", {"start_s", "active_clients"}));
      LOCUS_RETURN_IF_ERROR(d.number(*t, "phases", "start_s", &ph.start_s, 0, 1e6));
      ph.active_clients = sc->run.clients;
      LOCUS_RETURN_IF_ERROR(d.number(*t, "phases", "active_clients", &ph.active_clients, 0, sc->run.clients));
      if (!sc->phases.empty() && ph.start_s <= sc->phases.back().start_s) {
        return d.fail(&e, "phases.start_s", "phases must start in increasing order");
      }
      if (ph.start_s >= sc->run.duration_s) {  // would never apply, silently
        return d.fail(t->get("start_s"), "phases.start_s", "starts at or after the run ends (run.duration_s)");
      }
      sc->phases.push_back(ph);
    }
  }
  sc->faults.seed = sc->run.seed;
  if (auto* t = d.sub(root, "faults")) {
    LOCUS_RETURN_IF_ERROR(read_faults(d, *t, &sc->faults));
    if (sc->faults.crash_clients > sc->run.clients) {
      return d.fail(t->get("crash_clients"), "faults.crash_clients",
                    fmt::format("{} clients to crash, but run.clients is {}", sc->faults.crash_clients, sc->run.clients));
    }
    if (sc->faults.crash_servers > sc->platform.servers) {
      return d.fail(t->get("crash_servers"), "faults.crash_servers",
                    fmt::format("{} servers to crash, but platform.servers is {}", sc->faults.crash_servers,
                                sc->platform.servers));
    }
    if (sc->faults.server_outage_ns > 0 && sc->faults.crash_servers == 0) {
      return d.fail(t->get("server_outage_ms"), "faults.server_outage_ms",
                    "brings crashed servers back, and faults.crash_servers is 0 (it would be ignored)");
    }
    if (sc->faults.restart_servers && sc->faults.server_outage_ns == 0) {
      return d.fail(t->get("restart_servers"), "faults.restart_servers",
                    "restarts crashed servers when they come back, and faults.server_outage_ms is 0 (they never do)");
    }
    if (sc->faults.restart_after_ns > 0 && sc->faults.crash_clients == 0) {
      return d.fail(t->get("restart_after_ms"), "faults.restart_after_ms",
                    "restarts crashed clients, and faults.crash_clients is 0 (it would be ignored)");
    }
  }
  if (auto* t = d.sub(root, "check")) {
    LOCUS_RETURN_IF_ERROR(d.only(*t, "check", {"linearizability", "time_budget_s", "max_ops", "history_file"}));
    LOCUS_RETURN_IF_ERROR(d.text(*t, "check", "history_file", &sc->check.history_file));
    LOCUS_RETURN_IF_ERROR(d.number(*t, "check", "max_ops", &sc->check.max_ops, 1, 1e9));
    LOCUS_RETURN_IF_ERROR(d.flag(*t, "check", "linearizability", &sc->check.linearizability));
    LOCUS_RETURN_IF_ERROR(d.number(*t, "check", "time_budget_s", &sc->check.time_budget_s, 0, 1e6));
  }
  if (sc->platform.client_hosts == 0) sc->platform.client_hosts = sc->run.clients;
  if (Status st = sc->workload.validate(); !st.is_ok()) {
    return d.fail(root.get("workload"), "workload", st.message());
  }
  if (sc->workload.deleteproportion > 0 && !types.find_type(sc->index.type)->deletes) {
    // Refused here rather than by the first delete mid-run.
    return d.fail(root.get("workload"), "workload.deleteproportion",
                  "index type " + sc->index.type + " cannot delete: set workload.deleteproportion = 0");
  }
  return Status();
}

// A TOML basic string holding `raw`.
std::string toml_quoted(std::string_view raw) {
  std::string out = "\"";
  for (char ch : raw) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(ch)));
      out += esc;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// "a.b.c=value": the value is parsed as a TOML value; a bare word that is
// not one is taken as a string, so --set index.mode=vo works unquoted.
// Every node it adds, tables included, has "--set" as its source, so an
// error about it blames the --set, not the scenario file.
Status apply_override(toml::table& root, const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) return invalid_argument("--set " + spec + ": expected key=value");
  const std::string key = spec.substr(0, eq);
  const std::string raw = spec.substr(eq + 1);
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + raw, std::string_view("--set"));
  } catch (const toml::parse_error&) {
    try {
      parsed = toml::parse("v = " + toml_quoted(raw), std::string_view("--set"));
    } catch (const toml::parse_error& e) {
      return invalid_argument("--set " + spec + ": " + std::string(e.description()));
    }
  }
  // The key's segments, split at dots outside double quotes, as TOML
  // reads a dotted key: handler_cost_us."pilaf.put" is two segments.
  std::vector<std::string> parts(1);
  bool quoted = false, was_quoted = false;
  for (char ch : key) {
    if (ch == '"') {
      quoted = !quoted;
      was_quoted = true;
    } else if (ch == '.' && !quoted) {
      if (parts.back().empty() && !was_quoted) return invalid_argument("--set " + spec + ": empty key segment");
      parts.emplace_back();
      was_quoted = false;
    } else {
      parts.back().push_back(ch);
    }
  }
  if (quoted) return invalid_argument("--set " + spec + ": unbalanced quote in the key");
  if (parts.back().empty() && !was_quoted) return invalid_argument("--set " + spec + ": empty key segment");
  toml::table* t = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!t->contains(parts[i])) {
      // Moved, not copied: a toml++ node's copy drops its source.
      toml::table fresh = toml::parse("t = {}", std::string_view("--set"));
      t->insert(parts[i], std::move(*fresh.get_as<toml::table>("t")));
    }
    t = t->get_as<toml::table>(parts[i]);
    if (t == nullptr) return invalid_argument("--set " + spec + ": '" + parts[i] + "' is not a table");
  }
  t->insert_or_assign(parts.back(), std::move(*parsed.get("v")));
  return Status();
}

// Scenario::written_at: every key given, leaves and arrays alike.
void record_where(const Decoder& d, const toml::table& t, const std::string& prefix, Scenario* sc) {
  for (auto&& [k, v] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      record_where(d, *sub, key, sc);
    } else {
      sc->written_at.emplace(key, d.where(&v, key));
    }
  }
}

}  // namespace

Status setting_error(const Scenario& s, std::string_view key, const std::string& what) {
  auto it = s.written_at.find(key);
  const std::string k(key);
  if (it == s.written_at.end()) return invalid_argument(s.source + ": " + k + ": " + what);
  if (it->second.starts_with("--set ")) return invalid_argument(it->second + ": " + what);
  return invalid_argument(it->second + ": " + k + ": " + what);
}

StatusOr<Scenario> parse_scenario(std::string_view text, const std::string& source,
                                  const std::vector<std::string>& overrides, const IndexTypes& types) {
  LOCUS_ASSIGN_OR_RETURN(toml::table root, parse_toml(text, source));
  // An empty file (or /dev/null) is a mistake, not the default scenario.
  if (root.empty() && overrides.empty()) {
    return invalid_argument(source + ": the scenario is empty; it needs at least [index] type");
  }
  for (const std::string& o : overrides) LOCUS_RETURN_IF_ERROR(apply_override(root, o));
  Scenario sc;
  sc.source = source;
  sc.output.name = std::filesystem::path(source).stem().string();
  const Decoder d(source);
  LOCUS_RETURN_IF_ERROR(read_rest(d, root, types, &sc));
  record_where(d, root, "", &sc);
  return sc;
}

StatusOr<Scenario> load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                                 const IndexTypes& types) {
  LOCUS_ASSIGN_OR_RETURN(std::string text, read_file_text(path, "the scenario file"));
  return parse_scenario(text, path, overrides, types);
}

}  // namespace locus::scenario
