// The work profile of `locus calibrate`: see work_profile.h.
#include "core/runner/work_profile.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace locus::runner {
namespace {

// Records, then passes the charge on to the backend's own Cpu.
class ProfilingCpu final : public Cpu {
 public:
  ProfilingCpu(Cpu* inner, WorkProfile* profile, bool on_server)
      : inner_(inner), profile_(profile), on_server_(on_server) {}
  void charge(Nanos duration) override { inner_->charge(duration); }
  void charge_work(std::string_view name, Nanos native_ns, uint64_t bytes) override {
    if (native_ns > 0) profile_->add(name, native_ns, bytes, on_server_);
    inner_->charge_work(name, native_ns, bytes);
  }

 private:
  Cpu* inner_;
  WorkProfile* profile_;
  bool on_server_;
};

template <typename T>
T quantile(std::vector<T> v, double q) {
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

void WorkProfile::add(std::string_view name, Nanos native_ns, uint64_t bytes, bool on_server) {
  std::lock_guard<ShortMutex> lock(mu_);
  Samples& s = by_name_[std::string(name)];
  s.native_ns.push_back(native_ns);
  s.bytes.push_back(bytes);
  s.on_server = s.on_server || on_server;
}

std::vector<WorkProfile::Row> WorkProfile::rows() const {
  std::lock_guard<ShortMutex> lock(mu_);
  std::vector<Row> rows;
  for (const auto& [name, s] : by_name_) {
    Row r;
    r.name = name;
    r.calls = s.native_ns.size();
    r.median_bytes = quantile(s.bytes, 0.5);
    r.median_us = static_cast<double>(quantile(s.native_ns, 0.5)) / 1e3;
    r.p90_us = static_cast<double>(quantile(s.native_ns, 0.9)) / 1e3;
    r.mean_us = static_cast<double>(std::accumulate(s.native_ns.begin(), s.native_ns.end(), Nanos{0})) / 1e3 /
                static_cast<double>(r.calls);
    r.on_server = s.on_server;
    r.p10_bytes = quantile(s.bytes, 0.1);
    r.p90_bytes = quantile(s.bytes, 0.9);
    const Nanos cut = 10 * quantile(s.native_ns, 0.5);
    Nanos kept_ns = 0;
    uint64_t kept = 0;
    // Least squares of us on bytes over the kept calls, centred for
    // precision: slope = Sxy / Sxx.
    double sum_b = 0, sum_us = 0;
    for (size_t i = 0; i < s.native_ns.size(); ++i) {
      if (s.native_ns[i] > cut) continue;
      kept_ns += s.native_ns[i], ++kept;
      sum_b += static_cast<double>(s.bytes[i]);
      sum_us += static_cast<double>(s.native_ns[i]) / 1e3;
    }
    r.trimmed_mean_us = static_cast<double>(kept_ns) / 1e3 / static_cast<double>(kept);
    const double mean_b = sum_b / static_cast<double>(kept), mean_us = sum_us / static_cast<double>(kept);
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < s.native_ns.size(); ++i) {
      if (s.native_ns[i] > cut) continue;
      const double db = static_cast<double>(s.bytes[i]) - mean_b;
      sxx += db * db;
      sxy += db * (static_cast<double>(s.native_ns[i]) / 1e3 - mean_us);
    }
    if (sxx > 0) {
      r.has_fit = true;
      r.fit_us_per_byte = sxy / sxx;
      r.fit_intercept_us = mean_us - r.fit_us_per_byte * mean_b;
    }
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.name < b.name; });
  return rows;
}

std::vector<std::pair<uint64_t, double>> WorkProfile::Row::cost_points() const {
  if (has_fit && fit_us_per_byte > 0 && p90_bytes >= 2 * std::max<uint64_t>(p10_bytes, 1) && fit_us_at(p10_bytes) > 0) {
    return {{p10_bytes, fit_us_at(p10_bytes)}, {p90_bytes, fit_us_at(p90_bytes)}};
  }
  return {{median_bytes, trimmed_mean_us}};
}

ProfilingRuntime::ProfilingRuntime(std::unique_ptr<Runtime> inner, WorkProfile* profile)
    : inner_(std::move(inner)), profile_(profile) {}

StatusOr<NodeId> ProfilingRuntime::add_node(const NodeOptions& options) {
  LOCUS_ASSIGN_OR_RETURN(const NodeId node, inner_->add_node(options));
  if (options.is_server) {
    std::lock_guard<ShortMutex> lock(mu_);
    servers_.push_back(node);
  }
  return node;
}

bool ProfilingRuntime::is_server(NodeId node) {
  std::lock_guard<ShortMutex> lock(mu_);
  return std::find(servers_.begin(), servers_.end(), node) != servers_.end();
}

Env ProfilingRuntime::profiled(Env env, NodeId node) {
  if (env.cpu == nullptr) return env;
  const bool server = is_server(node);
  std::lock_guard<ShortMutex> lock(mu_);
  cpus_.push_back(std::make_unique<ProfilingCpu>(env.cpu, profile_, server));
  env.cpu = cpus_.back().get();
  return env;
}

Status ProfilingRuntime::spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) {
  return inner_->spawn(node, std::move(name), kind, [this, node, fn = std::move(fn)](Env& env) {
    Env wrapped = profiled(env, node);
    fn(wrapped);
  });
}

}  // namespace locus::runner
