// Checks every command shares: CLI11 validators for numbers given on the
// command line (CLI::Range lets NaN through, and an unsigned option takes
// "-1" as 2^64 - 1), the memory limit of --max-memory, and the guard that
// turns a std::bad_alloc escaping a command into an error saying what was
// being done (issue 17: nothing aborts).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "core/common/status.h"

namespace locus::cli {

// A finite number in [lo, hi] (refuses nan, inf and what CLI::Range refuses).
CLI::Validator finite_range(double lo, double hi);
// A non-negative integer written without a sign, for unsigned options.
extern const CLI::Validator kUnsignedInteger;
// The same, above zero.
extern const CLI::Validator kPositiveInteger;

// The byte limit a run's memory estimate is held to: --max-memory when
// given (>= 0; 0: no check), else MemAvailable of /proc/meminfo; and
// where it came from, for the refusal.
struct MemoryLimit {
  uint64_t bytes = 0;
  std::string source;
};
MemoryLimit memory_limit(double max_memory_flag);
// --max-memory on `cmd` into *flag (-1 until given).
void add_max_memory_option(CLI::App& cmd, double* flag);

// body(), with a std::bad_alloc turned into resource_exhausted naming
// `doing` (a command and its input).
Status catch_bad_alloc(std::string_view doing, const std::function<Status()>& body);

}  // namespace locus::cli
