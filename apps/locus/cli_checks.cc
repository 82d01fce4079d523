// Shared command-line checks: see cli_checks.h.
#include "apps/locus/cli_checks.h"

#include <cmath>
#include <new>

#include <fmt/format.h>

#include "apps/locus/run_command.h"

namespace locus::cli {

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || !std::isfinite(v) || v < lo || v > hi) {
          return fmt::format("'{}' is not a finite number in [{:g}, {:g}]", text, lo, hi);
        }
        return std::string();
      },
      fmt::format("FINITE in [{:g}, {:g}]", lo, hi));
}

namespace {
std::string unsigned_integer_error(const std::string& text, bool positive) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      (positive && text.find_first_not_of('0') == std::string::npos)) {
    return "'" + text + "' is not a" + (positive ? " positive" : " non-negative") + " integer";
  }
  return std::string();
}
}  // namespace

const CLI::Validator kUnsignedInteger([](std::string& text) { return unsigned_integer_error(text, false); }, "UINT");
const CLI::Validator kPositiveInteger([](std::string& text) { return unsigned_integer_error(text, true); }, "UINT > 0");

MemoryLimit memory_limit(double max_memory_flag) {
  if (max_memory_flag >= 0) return {static_cast<uint64_t>(max_memory_flag), "allowed (--max-memory)"};
  return {memory_available_bytes(), "available (MemAvailable of /proc/meminfo; --max-memory sets another limit)"};
}

void add_max_memory_option(CLI::App& cmd, double* flag) {
  cmd.add_option("--max-memory", *flag,
                 "Refuse a run estimated to need more than this many bytes (0: no check; default: the memory "
                 "available now)")
      ->check(finite_range(0.0, 1e18));
}

Status catch_bad_alloc(std::string_view doing, const std::function<Status()>& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return resource_exhausted(fmt::format(
        "{}: out of memory (std::bad_alloc) beyond what was estimated beforehand; lower the sizes of the run "
        "(records, clients, servers, caches)",
        doing));
  }
}

}  // namespace locus::cli
