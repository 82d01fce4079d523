// Experiment files of `locus reproduce`: see experiment.h.
#include "apps/locus/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "core/common/file_text.h"
#include "core/scenario/scenario_decoder.h"

namespace locus::cli {
namespace {

// The scenario decoder's reads, and the pieces only experiments have.
class Reader : public scenario::Decoder {
 public:
  using Decoder::Decoder;

  // A non-empty string, present where `required`.
  Status text(const toml::table& t, const std::string& section, std::string_view key, std::string* out,
              bool required) const {
    if (required) LOCUS_RETURN_IF_ERROR(need(t, section, key));
    LOCUS_RETURN_IF_ERROR(Decoder::text(t, section, key, out));
    if (t.get(key) != nullptr && out->empty()) return fail(t.get(key), section + "." + std::string(key), "empty");
    return Status();
  }

  Status sets(const toml::table& t, const std::string& section, std::vector<std::string>* out) const {
    const toml::node* n = t.get("set");
    if (n == nullptr) return Status();
    const toml::array* a = n->as_array();
    if (a == nullptr) return fail(n, section + ".set", "expected an array of \"key=value\" strings");
    for (const toml::node& e : *a) {
      auto s = e.value_exact<std::string>();
      if (!s || s->find('=') == std::string::npos || s->front() == '=') {
        return fail(&e, section + ".set", "expected \"key=value\" strings");
      }
      out->push_back(*s);
    }
    return Status();
  }

  // A number or a string, as --set takes it.
  Status value(const toml::node& n, const std::string& key, std::string* out, bool* numeric) const {
    if (auto i = n.value_exact<int64_t>()) {
      *out = std::to_string(*i);
      *numeric = true;
    } else if (auto d = n.value_exact<double>()) {
      *out = fmt::format("{}", *d);
      *numeric = true;
    } else if (auto s = n.value_exact<std::string>(); s && !s->empty()) {
      *out = *s;
      *numeric = false;
    } else {
      return fail(&n, key, "expected a number or a non-empty string");
    }
    return Status();
  }

  Status metric(const toml::table& t, const std::string& section, std::string* out) const {
    return Decoder::text(t, section, "metric", out, {kReproduceMetrics[0], kReproduceMetrics[1], kReproduceMetrics[2]});
  }

  // `at`: one of the experiment's x values.
  Status at(const toml::table& t, const std::string& section, const Experiment& x, std::string* out) const {
    const toml::node* n = t.get("at");
    if (n == nullptr) return fail(&t, section + ".at", "missing");
    bool numeric = false;
    LOCUS_RETURN_IF_ERROR(value(*n, section + ".at", out, &numeric));
    if (std::find(x.values.begin(), x.values.end(), *out) == x.values.end()) {
      return fail(n, section + ".at", "'" + *out + "' is not one of experiment.values");
    }
    return Status();
  }

  // A series named by `key` of t (a string), which must exist.
  Status series(const toml::table& t, const std::string& section, std::string_view key, const Experiment& x,
                std::string* out, bool required) const {
    LOCUS_RETURN_IF_ERROR(text(t, section, key, out, required));
    if (out->empty()) return Status();
    return known_series(t.get(key), section + "." + std::string(key), x, *out);
  }

  Status known_series(const toml::node* n, const std::string& key, const Experiment& x, const std::string& name) const {
    for (const ExperimentSeries& s : x.series) {
      if (s.name == name) return Status();
    }
    return fail(n, key, "no series '" + name + "'");
  }

  // [[order]]: series, at, exactly one of above/below (non-empty arrays of
  // other series), any, metric.
  Status order(const toml::table& t, const Experiment& x, ExperimentOrder* o) const {
    o->metric = x.metric;
    LOCUS_RETURN_IF_ERROR(only(t, "order", {"text", "series", "at", "above", "below", "any", "metric"}));
    LOCUS_RETURN_IF_ERROR(text(t, "order", "text", &o->text, true));
    LOCUS_RETURN_IF_ERROR(series(t, "order", "series", x, &o->series, true));
    LOCUS_RETURN_IF_ERROR(at(t, "order", x, &o->at));
    LOCUS_RETURN_IF_ERROR(flag(t, "order", "any", &o->any));
    LOCUS_RETURN_IF_ERROR(metric(t, "order", &o->metric));
    const toml::node* above = t.get("above");
    const toml::node* below = t.get("below");
    if ((above == nullptr) == (below == nullptr)) return fail(&t, "order", "expected exactly one of above and below");
    o->above = above != nullptr;
    const std::string key = o->above ? "order.above" : "order.below";
    const toml::array* a = (o->above ? above : below)->as_array();
    if (a == nullptr || a->empty()) return fail(o->above ? above : below, key, "expected a non-empty array of series");
    for (const toml::node& e : *a) {
      auto name = e.value_exact<std::string>();
      if (!name) return fail(&e, key, "expected series names");
      LOCUS_RETURN_IF_ERROR(known_series(&e, key, x, *name));
      if (*name == o->series) return fail(&e, key, "'" + *name + "' is the ordered series itself");
      o->others.push_back(*name);
    }
    return Status();
  }
};

}  // namespace

StatusOr<Experiment> parse_experiment(const std::string& path, std::string_view text) {
  Reader r(path);
  LOCUS_ASSIGN_OR_RETURN(toml::table root, scenario::parse_toml(text, path));
  Experiment x;
  x.path = path;
  const std::filesystem::path p(path);
  x.name = p.stem().string();
  x.design = p.parent_path().filename().string();
  LOCUS_RETURN_IF_ERROR(r.only(root, "", {"experiment", "series", "claim", "order"}));
  const toml::table* e = root["experiment"].as_table();
  if (e == nullptr) return r.fail(&root, "experiment", "missing [experiment] table");
  LOCUS_RETURN_IF_ERROR(r.only(*e, "experiment", {"title", "source", "scenario", "set", "x", "values", "metric"}));
  LOCUS_RETURN_IF_ERROR(r.text(*e, "experiment", "title", &x.title, true));
  LOCUS_RETURN_IF_ERROR(r.text(*e, "experiment", "source", &x.source, true));
  LOCUS_RETURN_IF_ERROR(r.text(*e, "experiment", "scenario", &x.scenario, true));
  x.scenario = (p.parent_path() / x.scenario).lexically_normal().string();
  LOCUS_RETURN_IF_ERROR(r.sets(*e, "experiment", &x.sets));
  LOCUS_RETURN_IF_ERROR(r.text(*e, "experiment", "x", &x.x, true));
  LOCUS_RETURN_IF_ERROR(r.metric(*e, "experiment", &x.metric));
  const toml::array* values = (*e)["values"].as_array();
  if (values == nullptr || values->empty()) return r.fail(e, "experiment.values", "expected a non-empty array");
  for (const toml::node& v : *values) {
    std::string s;
    bool numeric = false;
    LOCUS_RETURN_IF_ERROR(r.value(v, "experiment.values", &s, &numeric));
    if (std::find(x.values.begin(), x.values.end(), s) != x.values.end()) {
      return r.fail(&v, "experiment.values", "'" + s + "' is listed twice");
    }
    x.values.push_back(s);
    x.numeric_x = x.numeric_x && numeric;
  }

  const toml::array* series = root["series"].as_array();
  if (series == nullptr || series->empty()) return r.fail(&root, "series", "expected at least one [[series]]");
  for (const toml::node& n : *series) {
    const toml::table* t = n.as_table();
    if (t == nullptr) return r.fail(&n, "series", "expected a table");
    ExperimentSeries s;
    LOCUS_RETURN_IF_ERROR(r.only(*t, "series", {"name", "set", "scenario"}));
    LOCUS_RETURN_IF_ERROR(r.text(*t, "series", "name", &s.name, true));
    LOCUS_RETURN_IF_ERROR(r.sets(*t, "series", &s.sets));
    LOCUS_RETURN_IF_ERROR(r.text(*t, "series", "scenario", &s.scenario, false));
    if (!s.scenario.empty()) s.scenario = (p.parent_path() / s.scenario).lexically_normal().string();
    for (const ExperimentSeries& other : x.series) {
      if (other.name == s.name) return r.fail(t, "series.name", "'" + s.name + "' is used twice");
    }
    x.series.push_back(std::move(s));
  }
  if (const toml::node* claims = root.get("claim")) {
    const toml::array* a = claims->as_array();
    if (a == nullptr) return r.fail(claims, "claim", "expected [[claim]] tables");
    for (const toml::node& n : *a) {
      const toml::table* t = n.as_table();
      if (t == nullptr) return r.fail(&n, "claim", "expected a table");
      ExperimentClaim c;
      c.metric = x.metric;
      LOCUS_RETURN_IF_ERROR(r.only(*t, "claim", {"text", "series", "at", "over", "value", "metric"}));
      LOCUS_RETURN_IF_ERROR(r.text(*t, "claim", "text", &c.text, true));
      LOCUS_RETURN_IF_ERROR(r.series(*t, "claim", "series", x, &c.series, true));
      LOCUS_RETURN_IF_ERROR(r.series(*t, "claim", "over", x, &c.over, false));
      LOCUS_RETURN_IF_ERROR(r.metric(*t, "claim", &c.metric));
      LOCUS_RETURN_IF_ERROR(r.at(*t, "claim", x, &c.at));
      const toml::node* v = t->get("value");
      std::optional<double> d = v == nullptr ? std::nullopt : v->value<double>();
      if (!d || !(*d > 0) || !std::isfinite(*d))
        return r.fail(v != nullptr ? v : t, "claim.value", "expected a positive number");
      c.value = *d;
      x.claims.push_back(std::move(c));
    }
  }
  if (const toml::node* orders = root.get("order")) {
    const toml::array* a = orders->as_array();
    if (a == nullptr) return r.fail(orders, "order", "expected [[order]] tables");
    for (const toml::node& n : *a) {
      const toml::table* t = n.as_table();
      if (t == nullptr) return r.fail(&n, "order", "expected a table");
      ExperimentOrder o;
      LOCUS_RETURN_IF_ERROR(r.order(*t, x, &o));
      x.orders.push_back(std::move(o));
    }
  }
  return x;
}

StatusOr<Experiment> load_experiment(const std::string& path) {
  LOCUS_ASSIGN_OR_RETURN(std::string text, read_file_text(path, "the experiment file"));
  return parse_experiment(path, text);
}

}  // namespace locus::cli
