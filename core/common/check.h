// LOCUS_CHECK: invariants that hold in every build type. A failed check is a
// bug in locus, never bad input (bad input gets a Status), so it aborts with
// the file, line and condition.
#pragma once

#include <cstdio>
#include <cstdlib>

#define LOCUS_CHECK(cond)                                                        \
  do {                                                                           \
    if (!(cond)) [[unlikely]] {                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

#define LOCUS_CHECK_MSG(cond, msg)                                                      \
  do {                                                                                  \
    if (!(cond)) [[unlikely]] {                                                         \
      std::fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__, #cond, msg); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)
