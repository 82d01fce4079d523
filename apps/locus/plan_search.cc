// The (design, selector) pairs of `locus plan`; see plan_search.h.
#include "apps/locus/plan_search.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <filesystem>
#include <sstream>
#include <utility>

#include "apps/locus/model_input.h"
#include "core/designs/designs.h"

namespace locus::cli {
namespace {

StatusOr<toml::table> read_toml(const std::string& path) {
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << e.source().begin;
    return invalid_argument(path + ":" + where.str() + ": " + std::string(e.description()));
  }
}

// The design's own part of its scenario: [index] and the handler costs it
// measured for its code ([platform.cpu]'s entries, which replace the
// workload scenario's of the same name).
Status take_design(toml::table& base, const std::string& name, const std::string& path) {
  LOCUS_ASSIGN_OR_RETURN(toml::table own, read_toml(path));
  const toml::table* index = own["index"].as_table();
  if (index == nullptr) return invalid_argument("--designs " + name + "=" + path + ": the file has no [index] table");
  const std::string type = (*index)["type"].value_or(std::string());
  if (type != name) {
    return invalid_argument("--designs " + name + "=" + path + ": the file's index.type is '" + type + "'");
  }
  base.insert_or_assign("index", *index);
  if (const toml::table* cpu = own["platform"]["cpu"].as_table()) {
    toml::table* platform = base["platform"].as_table();
    if (platform == nullptr) platform = base.insert_or_assign("platform", toml::table{}).first->second.as_table();
    toml::table* base_cpu = (*platform)["cpu"].as_table();
    if (base_cpu == nullptr) base_cpu = platform->insert_or_assign("cpu", toml::table{}).first->second.as_table();
    for (const auto& [key, value] : *cpu) base_cpu->insert_or_assign(key, value);
  }
  return Status();
}

// The selector's policy for the planner, from the scenario that runs it.
Status choose_policy(PlanChoice& c) {
  LOCUS_ASSIGN_OR_RETURN(design::ModelProfile profile, model_profile_of(c.scenario));
  LOCUS_ASSIGN_OR_RETURN(c.input, locality_input_from(c.scenario, profile));
  const std::string& sel = c.selector;
  if (sel == "static") {
    if (profile.scenario_server_share) {
      c.options.fixed_split = *profile.scenario_server_share;
      c.policy = fmt::format("its own paths: server-side share {:.3f}", *profile.scenario_server_share);
    } else {
      c.policy = "its own choice of path, at the best fixed split";
    }
    return Status();
  }
  if (sel.empty() || sel == "fixed_ratio") {
    c.policy = "best fixed split";
    return Status();
  }
  if (profile.scenario_server_share) {
    c.options.fixed_split = *profile.scenario_server_share;
    c.policy = fmt::format("server-side share {:.3f}", *profile.scenario_server_share);
    return Status();
  }
  if (sel == "jsq") {
    if (c.scenario.selector.config.jsq.rule == selector::JsqRule::kPaperQueueing) {
      c.options.split_rule = [](const models::LocalityInput& in) { return models::jsq_equilibrium_split(in); };
      c.policy = "JSQ, the paper's rule: its equilibrium split";
    } else {
      c.options.split_rule = [](const models::LocalityInput& in) { return models::optimal_split(in); };
      c.policy = "JSQ: the split minimising mean latency";
    }
    return Status();
  }
  return invalid_argument("--selectors " + sel +
                          ": the planner has no model of the split this selector runs (planned: server_only, "
                          "client_only, fixed_ratio, jsq)");
}

}  // namespace

StatusOr<std::vector<PlanChoice>> plan_choices(const std::string& scenario_path, const std::vector<std::string>& sets,
                                               const std::vector<std::string>& designs,
                                               const std::vector<std::string>& selectors) {
  LOCUS_ASSIGN_OR_RETURN(toml::table base, read_toml(scenario_path));
  const std::string own_type = base["index"]["type"].value_or(std::string());
  std::vector<std::string> design_list = designs.empty() ? std::vector<std::string>{own_type} : designs;
  std::vector<std::string> selector_list = selectors.empty() ? std::vector<std::string>{""} : selectors;
  std::vector<PlanChoice> out;
  for (const std::string& item : design_list) {
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const design::Design* d = designs::registry().find(name);
    if (d == nullptr) return invalid_argument("--designs " + name + ": no such design in this locus");
    toml::table with_design = base;
    if (eq != std::string::npos) {
      LOCUS_RETURN_IF_ERROR(take_design(with_design, name, item.substr(eq + 1)));
    } else if (name != own_type) {
      return invalid_argument("--designs " + name + ": " + scenario_path + " is a '" + own_type + "' scenario; give " +
                              name +
                              "=SCENARIO.toml, a scenario of that design, for its "
                              "[index] keys and handler costs");
    }
    // A design with a fixed choice of paths (Pilaf's, the NAM index's
    // distributions) runs its own: one row set, whatever --selectors says.
    const std::vector<std::string> own_only = {"static"};
    for (const std::string& sel : d->type.takes_selector ? selector_list : own_only) {
      toml::table t = with_design;
      if (sel == "static") {
        t.insert_or_assign("selector", toml::table{{"type", "static"}});
      } else if (!sel.empty() && sel != "fixed_ratio") {
        const toml::table* given = t["selector"].as_table();
        const bool same = given != nullptr && (*given)["type"].value_or(std::string()) == sel;
        if (!same) t.insert_or_assign("selector", toml::table{{"type", sel}});
      }
      std::ostringstream text;
      text << t;
      const std::string source = scenario_path + " (" + name + (sel.empty() ? "" : ", " + sel) + ")";
      LOCUS_ASSIGN_OR_RETURN(scenario::Scenario s, designs::parse_scenario(text.str(), source, sets));
      // NAME:STEM when a file gave the design, so two files of one design
      // (the NAM index's distributions, say) stay apart in the table.
      const std::string label =
          eq == std::string::npos ? name : name + ":" + std::filesystem::path(item.substr(eq + 1)).stem().string();
      PlanChoice c{.design = label, .selector = sel, .scenario = std::move(s)};
      LOCUS_RETURN_IF_ERROR(choose_policy(c));
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace locus::cli
