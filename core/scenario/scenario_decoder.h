// Decoder: typed, range-checked reads of TOML tables, with errors that
// name the file, line, column and the dotted key. Scenarios use it, and so
// do the other TOML files locus reads (the experiments of `locus
// reproduce`).
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "core/common/status.h"
#include "core/scenario/platform.h"

namespace locus::scenario {

// `text` parsed as TOML; a syntax error names the file, line and column.
inline StatusOr<toml::table> parse_toml(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, std::string_view(source));
  } catch (const toml::parse_error& e) {
    return invalid_argument(source + ":" + std::to_string(e.source().begin.line) + ":" +
                            std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
}

class Decoder {
 public:
  explicit Decoder(std::string source) : source_(std::move(source)) {}

  Status fail(const toml::node* n, const std::string& key, const std::string& what) const {
    const std::string at = where(n, key);
    // "--set KEY" names the key already.
    return invalid_argument(at.starts_with("--set ") ? at + ": " + what : at + ": " + key + ": " + what);
  }

  // Where node `n` (of dotted key `key`) was written: "file:line:col", or
  // "--set KEY" for an override; the file alone without a position.
  std::string where(const toml::node* n, const std::string& key) const {
    if (n == nullptr || n->source().begin.line == 0) return source_;
    if (n->source().path && *n->source().path == "--set") return "--set " + key;
    return source_ + ":" + std::to_string(n->source().begin.line) + ":" + std::to_string(n->source().begin.column);
  }

  // Fails on keys of `t` outside `known`.
  Status only(const toml::table& t, const std::string& section, std::initializer_list<std::string_view> known) const {
    for (auto&& [k, v] : t) {
      bool ok = false;
      for (std::string_view kk : known) ok = ok || k.str() == kk;
      if (!ok) return fail(&v, section + "." + std::string(k.str()), "unknown key");
    }
    return Status();
  }

  // Fails where `key` is absent from `t`.
  Status need(const toml::table& t, const std::string& section, std::string_view key) const {
    if (t.get(key) != nullptr) return Status();
    return fail(&t, section + "." + std::string(key), "missing");
  }

  template <typename T>
  Status number(const toml::table& t, const std::string& section, std::string_view key, T* out,
                double lo, double hi) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return Status();
    const std::string name = section + "." + std::string(key);
    double v;
    if (auto i = n->value_exact<int64_t>()) {
      v = static_cast<double>(*i);
    } else if (auto d = n->value_exact<double>()) {
      v = *d;
    } else {
      return fail(n, name, "expected a number");
    }
    if (!(v >= lo && v <= hi)) {
      return fail(n, name, "value " + fmt_num(v) + " outside [" + fmt_num(lo) + ", " + fmt_num(hi) + "]");
    }
    if constexpr (std::is_integral_v<T>) {
      if (v != std::floor(v)) return fail(n, name, "expected an integer");
    }
    *out = static_cast<T>(v);
    return Status();
  }

  Status text(const toml::table& t, const std::string& section, std::string_view key, std::string* out,
              std::initializer_list<std::string_view> allowed = {}) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return Status();
    const std::string name = section + "." + std::string(key);
    auto s = n->value_exact<std::string>();
    if (!s) return fail(n, name, "expected a string");
    if (allowed.size() > 0) {
      bool ok = false;
      std::string list;
      for (std::string_view a : allowed) {
        ok = ok || *s == a;
        list += (list.empty() ? "" : " | ") + std::string(a);
      }
      if (!ok) return fail(n, name, "'" + *s + "' is not one of " + list);
    }
    *out = *s;
    return Status();
  }

  Status flag(const toml::table& t, const std::string& section, std::string_view key, bool* out) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return Status();
    auto b = n->value_exact<bool>();
    if (!b) return fail(n, section + "." + std::string(key), "expected true or false");
    *out = *b;
    return Status();
  }

  // [[bytes, ops_per_s], ...] with bytes increasing and rates positive.
  Status curve(const toml::table& t, const std::string& section, std::string_view key, RateCurve* out) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return Status();
    const std::string name = section + "." + std::string(key);
    const toml::array* a = n->as_array();
    if (a == nullptr || a->empty()) return fail(n, name, "expected [[bytes, ops_per_s], ...]");
    RateCurve c;
    for (const toml::node& p : *a) {
      const toml::array* pair = p.as_array();
      if (pair == nullptr || pair->size() != 2) return fail(&p, name, "expected a [bytes, ops_per_s] pair");
      // value_exact: toml++'s converting value<int64_t>() of a float such
      // as 1e25 is undefined behaviour (found by fuzz_scenario).
      auto bytes = (*pair)[0].value_exact<int64_t>();
      auto rate = (*pair)[1].value<double>();
      if (!bytes || !rate) return fail(&p, name, "expected a [bytes, ops_per_s] pair: an integer and a number");
      // Sizes are kept in 32 bits; a rate outside [1, 1e12] ops/s (NaN and
      // infinity included) is no NIC's and would make operations free or
      // push the simulator's clock past its range.
      if (*bytes < 0 || *bytes > int64_t{UINT32_MAX}) {
        return fail(&p, name, "byte count " + std::to_string(*bytes) + " outside [0, " +
                                  std::to_string(UINT32_MAX) + "]");
      }
      if (!(*rate >= kMinRate && *rate <= kMaxRate)) {
        return fail(&p, name, "rate " + fmt_num(*rate) + " ops/s outside [1, 1e12]");
      }
      if (!c.points.empty() && static_cast<uint32_t>(*bytes) <= c.points.back().bytes) {
        return fail(&p, name, "sizes must increase");
      }
      c.points.push_back({static_cast<uint32_t>(*bytes), *rate});
    }
    *out = std::move(c);
    return Status();
  }

  const toml::table* sub(const toml::table& t, std::string_view key) const { return t.get_as<toml::table>(key); }
  Status require_table(const toml::table& t, const std::string& section, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (n != nullptr && !n->is_table()) return fail(n, section + "." + std::string(key), "expected a table");
    return Status();
  }

 private:
  static constexpr double kMinRate = 1.0;     // ops/s
  static constexpr double kMaxRate = 1e12;    // ops/s
  static std::string fmt_num(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  std::string source_;
};

}  // namespace locus::scenario
