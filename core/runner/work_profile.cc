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
  ProfilingCpu(Cpu* inner, WorkProfile* profile) : inner_(inner), profile_(profile) {}
  void charge(Nanos duration) override { inner_->charge(duration); }
  void charge_work(std::string_view name, Nanos native_ns, uint64_t bytes) override {
    if (native_ns > 0) profile_->add(name, native_ns, bytes);
    inner_->charge_work(name, native_ns, bytes);
  }

 private:
  Cpu* inner_;
  WorkProfile* profile_;
};

template <typename T>
T quantile(std::vector<T> v, double q) {
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

void WorkProfile::add(std::string_view name, Nanos native_ns, uint64_t bytes) {
  std::lock_guard<ShortMutex> lock(mu_);
  Samples& s = by_name_[std::string(name)];
  s.native_ns.push_back(native_ns);
  s.bytes.push_back(bytes);
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
    const Nanos cut = 10 * quantile(s.native_ns, 0.5);
    Nanos kept_ns = 0;
    uint64_t kept = 0;
    for (Nanos ns : s.native_ns) {
      if (ns <= cut) kept_ns += ns, ++kept;
    }
    r.trimmed_mean_us = static_cast<double>(kept_ns) / 1e3 / static_cast<double>(kept);
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.name < b.name; });
  return rows;
}

ProfilingRuntime::ProfilingRuntime(std::unique_ptr<Runtime> inner, WorkProfile* profile)
    : inner_(std::move(inner)), profile_(profile) {}

Env ProfilingRuntime::profiled(Env env) {
  if (env.cpu == nullptr) return env;
  std::lock_guard<ShortMutex> lock(mu_);
  cpus_.push_back(std::make_unique<ProfilingCpu>(env.cpu, profile_));
  env.cpu = cpus_.back().get();
  return env;
}

Status ProfilingRuntime::spawn(NodeId node, std::string name, ActorKind kind, std::function<void(Env&)> fn) {
  return inner_->spawn(node, std::move(name), kind, [this, fn = std::move(fn)](Env& env) {
    Env wrapped = profiled(env);
    fn(wrapped);
  });
}

}  // namespace locus::runner
