// The built-in designs: see designs.h.
#include "core/designs/designs.h"

#include "core/common/check.h"

namespace locus::designs {

Status register_builtin(design::Registry& registry);  // builtin_designs.cc, generated

const design::Registry& registry() {
  static const design::Registry built = [] {
    design::Registry r;
    Status st = register_builtin(r);
    // Two folders registering one name is a build defect, not an input error.
    LOCUS_CHECK_MSG(st.is_ok(), st.to_string().c_str());
    return r;
  }();
  return built;
}

StatusOr<scenario::Scenario> load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return scenario::load_scenario(path, overrides, registry());
}

StatusOr<scenario::Scenario> parse_scenario(std::string_view text, const std::string& source,
                                            const std::vector<std::string>& overrides) {
  return scenario::parse_scenario(text, source, overrides, registry());
}

}  // namespace locus::designs
