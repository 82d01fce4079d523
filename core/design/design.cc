// The design registry: see design.h.
#include "core/design/design.h"

namespace locus::design {

Status Registry::add(Design design) {
  if (design.type.name.empty() || !design.type.read_keys || !design.make_driver) {
    return invalid_argument("design '" + design.type.name + "': needs a name, a key reader and a driver factory");
  }
  if (find(design.type.name) != nullptr) return invalid_argument("design '" + design.type.name + "' registered twice");
  designs_.push_back(std::move(design));
  return Status();
}

const Design* Registry::find(std::string_view name) const {
  for (const Design& d : designs_) {
    if (d.type.name == name) return &d;
  }
  return nullptr;
}

const scenario::IndexType* Registry::find_type(std::string_view name) const {
  const Design* d = find(name);
  return d == nullptr ? nullptr : &d->type;
}

std::vector<std::string> Registry::type_names() const {
  std::vector<std::string> out;
  for (const Design& d : designs_) out.push_back(d.type.name);
  return out;
}

}  // namespace locus::design
