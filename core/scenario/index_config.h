// The [index] section as the scenario module sees it: a design name and the
// design's own configuration, which only the design reads. A design
// registers an IndexType (core/design/design.h wraps it with the design's
// driver); the scenario loader finds it by `index.type` and hands it an
// IndexKeys view of the [index] table. Keys the reader does not ask for are
// rejected afterwards as unknown, with file, line and key, so a design's
// key list is exactly the keys its reader reads.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace locus::scenario {

// A design's parsed [index] keys. Each design derives its own.
class IndexConfig {
 public:
  virtual ~IndexConfig() = default;
};

// Typed, range-checked reads of the [index] table. Every read marks its key
// as known; a key that is absent leaves *out unchanged (the default).
class IndexKeys {
 public:
  struct Impl;
  explicit IndexKeys(Impl& impl) : impl_(impl) {}

  Status number(std::string_view key, uint32_t* out, double lo, double hi);
  Status number(std::string_view key, uint64_t* out, double lo, double hi);
  Status number(std::string_view key, double* out, double lo, double hi);
  // A string, one of `allowed` when that is not empty.
  Status text(std::string_view key, std::string* out, std::initializer_list<std::string_view> allowed = {});
  Status flag(std::string_view key, bool* out);
  // The key's value when it is a TOML number (for keys that take either,
  // like a bare 1e-5 from --set); marks it known.
  std::optional<double> number_if_numeric(std::string_view key);
  bool has(std::string_view key) const;
  // An error naming the key's place in the file (or the [index] table when
  // the key is absent) and the key as index.<key>.
  Status fail(std::string_view key, const std::string& what) const;

 private:
  Impl& impl_;
};

// What the scenario loader needs of a design.
struct IndexType {
  std::string name;     // index.type
  std::string summary;  // one line, for `locus --help`
  // Whether [selector] may name a selector other than "static" (the
  // design's own choice): designs with a per-step choice of path.
  bool takes_selector = false;
  std::function<StatusOr<std::shared_ptr<const IndexConfig>>(IndexKeys&)> read_keys;
  // The names its handlers charge their work under (Cpu::charge_work),
  // which [platform.cpu.handler_cost_us] may cost: another name there is a
  // misspelling, refused. Empty: not checked.
  std::vector<std::string> work_names = {};
  // Whether its sessions carry out a YCSB delete (OpKind::kDelete): the
  // loader refuses workload.deleteproportion > 0 for a design without.
  bool deletes = false;
};

// The designs a scenario may name (core/design's Registry).
class IndexTypes {
 public:
  virtual ~IndexTypes() = default;
  virtual const IndexType* find_type(std::string_view name) const = 0;
  virtual std::vector<std::string> type_names() const = 0;
};

struct IndexSpec {
  std::string type = "pilaf";
  std::shared_ptr<const IndexConfig> config;  // read by the design's IndexType

  // The design's configuration as its own type; nullptr for another design's.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(config.get());
  }
};

}  // namespace locus::scenario
