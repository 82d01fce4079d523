// Selector configuration: names, validation, property setting and the
// factory. See selector_config.h.
#include "core/selector/selector_config.h"

#include <charconv>
#include <ostream>
#include <string>

#include "core/selector/backoff_selector.h"
#include "core/selector/jsq_selector.h"
#include "core/selector/latency_window_selector.h"
#include "core/selector/simple_selectors.h"

namespace locus::selector {
namespace {

Status bad(std::string_view name, std::string_view value, std::string_view why) {
  return invalid_argument("selector property " + std::string(name) + " = '" + std::string(value) +
                          "': " + std::string(why));
}

template <typename T>
Status parse_number(std::string_view name, std::string_view value, T* out) {
  T v{};
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size()) return bad(name, value, "not a number");
  *out = v;
  return Status();
}

Status parse_bool(std::string_view name, std::string_view value, bool* out) {
  if (value == "true" || value == "1") {
    *out = true;
  } else if (value == "false" || value == "0") {
    *out = false;
  } else {
    return bad(name, value, "expected true or false");
  }
  return Status();
}

Status parse_ms(std::string_view name, std::string_view value, Nanos* out) {
  double ms = 0;
  LOCUS_RETURN_IF_ERROR(parse_number(name, value, &ms));
  if (ms < 0) return bad(name, value, "must not be negative");
  *out = static_cast<Nanos>(ms * static_cast<double>(kMillisecond));
  return Status();
}

bool is_probability(double p) { return p >= 0.0 && p <= 1.0; }

}  // namespace

std::string_view path_name(Path path) { return path == Path::kServer ? "server" : "client"; }
std::ostream& operator<<(std::ostream& os, Path path) { return os << path_name(path); }
std::ostream& operator<<(std::ostream& os, SelectorKind kind) { return os << selector_kind_name(kind); }

namespace {
constexpr SelectorKind kAllSelectorKinds[] = {SelectorKind::kServerOnly, SelectorKind::kClientOnly,
                                              SelectorKind::kFixedRatio, SelectorKind::kJsq,
                                              SelectorKind::kLatencyWindow, SelectorKind::kBackoff};
}  // namespace

std::string_view selector_kind_name(SelectorKind kind) {
  switch (kind) {
    case SelectorKind::kServerOnly: return "server_only";
    case SelectorKind::kClientOnly: return "client_only";
    case SelectorKind::kFixedRatio: return "fixed_ratio";
    case SelectorKind::kJsq: return "jsq";
    case SelectorKind::kLatencyWindow: return "latency_window";
    case SelectorKind::kBackoff: return "backoff";
  }
  return "unknown";
}

std::string_view selector_settings_group(SelectorKind kind) {
  switch (kind) {
    case SelectorKind::kJsq: return "jsq";
    case SelectorKind::kLatencyWindow: return "window";
    case SelectorKind::kBackoff: return "backoff";
    case SelectorKind::kServerOnly:
    case SelectorKind::kClientOnly:
    case SelectorKind::kFixedRatio: return "";
  }
  return "";
}

bool selector_takes_client_fraction(SelectorKind kind) { return kind == SelectorKind::kFixedRatio; }

bool is_selector_settings_group(std::string_view group) {
  for (SelectorKind k : kAllSelectorKinds) {
    if (!group.empty() && selector_settings_group(k) == group) return true;
  }
  return false;
}

StatusOr<SelectorKind> parse_selector_kind(std::string_view name) {
  for (SelectorKind k : kAllSelectorKinds) {
    if (name == selector_kind_name(k)) return k;
  }
  return invalid_argument("selector kind '" + std::string(name) +
                          "': expected server_only, client_only, fixed_ratio, jsq, latency_window or backoff");
}

Status SelectorConfig::validate() const {
  if (!is_probability(client_fraction)) return invalid_argument("selector client_fraction must be in [0, 1]");
  if (jsq.history_samples == 0) return invalid_argument("selector jsq.history_samples must be positive");
  if (!(jsq.outlier_k > 0)) return invalid_argument("selector jsq.outlier_k must be positive");
  if (!is_probability(jsq.explore_probability)) {
    return invalid_argument("selector jsq.explore_probability must be in [0, 1]");
  }
  if (jsq.idle_reset_ns <= 0) return invalid_argument("selector jsq.idle_reset_ms must be positive");
  if (!(jsq.initial_meganode_height >= 1)) {
    return invalid_argument("selector jsq.initial_meganode_height must be at least 1");
  }
  if (jsq.height_samples == 0) return invalid_argument("selector jsq.height_samples must be positive");
  if (window.window_ns <= 0) return invalid_argument("selector window.window_ms must be positive");
  if (window.max_samples == 0) return invalid_argument("selector window.max_samples must be positive");
  if (!is_probability(window.explore_probability)) {
    return invalid_argument("selector window.explore_probability must be in [0, 1]");
  }
  if (!(window.initial_meganode_height >= 1)) {
    return invalid_argument("selector window.initial_meganode_height must be at least 1");
  }
  if (window.height_samples == 0) return invalid_argument("selector window.height_samples must be positive");
  if (backoff.n == 0) return invalid_argument("selector backoff.n must be positive");
  if (!is_probability(backoff.threshold)) return invalid_argument("selector backoff.threshold must be in [0, 1]");
  if (backoff.interval_ns < 0) return invalid_argument("selector backoff.interval_ms must not be negative");
  return Status();
}

Status set_selector_property(SelectorConfig& c, std::string_view name, std::string_view value) {
  if (name == "kind") {
    LOCUS_ASSIGN_OR_RETURN(c.kind, parse_selector_kind(value));
    return Status();
  }
  if (name == "client_fraction") return parse_number(name, value, &c.client_fraction);
  if (name == "jsq.history_samples") return parse_number(name, value, &c.jsq.history_samples);
  if (name == "jsq.outlier_k") return parse_number(name, value, &c.jsq.outlier_k);
  if (name == "jsq.min_samples_for_outliers") return parse_number(name, value, &c.jsq.min_samples_for_outliers);
  if (name == "jsq.explore_probability") return parse_number(name, value, &c.jsq.explore_probability);
  if (name == "jsq.idle_reset_ms") return parse_ms(name, value, &c.jsq.idle_reset_ns);
  if (name == "jsq.initial_meganode_height") return parse_number(name, value, &c.jsq.initial_meganode_height);
  if (name == "jsq.adapt_meganode_height") return parse_bool(name, value, &c.jsq.adapt_meganode_height);
  if (name == "jsq.height_samples") return parse_number(name, value, &c.jsq.height_samples);
  if (name == "jsq.probe_unmeasured") return parse_bool(name, value, &c.jsq.probe_unmeasured);
  if (name == "jsq.rule") {
    if (value == "expected_latency") {
      c.jsq.rule = JsqRule::kExpectedLatency;
    } else if (value == "marginal_latency") {
      c.jsq.rule = JsqRule::kMarginalLatency;
    } else if (value == "paper") {
      c.jsq.rule = JsqRule::kPaperQueueing;
    } else {
      return bad(name, value, "expected expected_latency, marginal_latency or paper");
    }
    return Status();
  }
  if (name == "jsq.rtt_baseline") {
    if (value == "lowest_rdma") {
      c.jsq.rtt_baseline = RttBaseline::kLowestRdma;
    } else if (value == "per_path_minimum") {
      c.jsq.rtt_baseline = RttBaseline::kPerPathMinimum;
    } else {
      return bad(name, value, "expected lowest_rdma or per_path_minimum");
    }
    return Status();
  }
  if (name == "window.window_ms") return parse_ms(name, value, &c.window.window_ns);
  if (name == "window.max_samples") return parse_number(name, value, &c.window.max_samples);
  if (name == "window.explore_probability") return parse_number(name, value, &c.window.explore_probability);
  if (name == "window.initial_meganode_height") return parse_number(name, value, &c.window.initial_meganode_height);
  if (name == "window.height_samples") return parse_number(name, value, &c.window.height_samples);
  if (name == "backoff.n") return parse_number(name, value, &c.backoff.n);
  if (name == "backoff.threshold") return parse_number(name, value, &c.backoff.threshold);
  if (name == "backoff.interval_ms") return parse_ms(name, value, &c.backoff.interval_ns);
  return invalid_argument("unknown selector property '" + std::string(name) + "'");
}

StatusOr<std::unique_ptr<Selector>> make_selector(const SelectorConfig& config, Random& rng) {
  LOCUS_RETURN_IF_ERROR(config.validate());
  switch (config.kind) {
    case SelectorKind::kServerOnly: return std::unique_ptr<Selector>(new ServerOnlySelector());
    case SelectorKind::kClientOnly: return std::unique_ptr<Selector>(new ClientOnlySelector());
    case SelectorKind::kFixedRatio:
      return std::unique_ptr<Selector>(new FixedRatioSelector(config.client_fraction, rng));
    case SelectorKind::kJsq: return std::unique_ptr<Selector>(new JsqSelector(config.jsq, rng));
    case SelectorKind::kLatencyWindow:
      return std::unique_ptr<Selector>(new LatencyWindowSelector(config.window, rng));
    case SelectorKind::kBackoff: return std::unique_ptr<Selector>(new BackoffSelector(config.backoff, rng));
  }
  return invalid_argument("selector: unknown kind");
}

}  // namespace locus::selector
