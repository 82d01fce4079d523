// Cost look-ups shared by the designs' models; see model_profile.h.
#include "core/design/model_profile.h"

#include <cmath>

#include "core/workload/keys.h"

namespace locus::design {

double handler_cost_us(const scenario::CpuSpec& cpu, const std::string& handler, double bytes) {
  auto it = cpu.handler_cost_us.find(handler);
  // Not costed and no default: the simulator refuses the run (platform.h).
  if (it == cpu.handler_cost_us.end()) return cpu.default_handler_us.value_or(0.0);
  return it->second.us_at(static_cast<uint64_t>(std::llround(std::max(0.0, bytes))));
}

double client_op_cost_us(const scenario::Scenario& s) {
  const auto& cpu = s.platform.cpu;
  const auto it = cpu.handler_cost_us.find(scenario::kClientOpWork);
  return it != cpu.handler_cost_us.end() ? it->second.us_at(workload::max_key_bytes(s.workload.zeropadding))
                                         : cpu.client_op_us;
}

}  // namespace locus::design
