// Asking the CPU for cache lines ahead of a dependent search (a node's
// lines before its binary search probes them one after another).
//
// Not a bare __builtin_prefetch loop: GCC 12 takes __builtin_prefetch for
// an instruction without effect and deletes a loop of nothing else once
// it can tell the loop ends (a loop over a node's lines by pointer, or
// over a constant count of lines, compiled to no prefetch at all: Cell's
// server-side descent had none in the release build until 2026-11-29),
// and it drops prefetches from some switches too. An asm statement is
// never deleted; other architectures keep the builtin.
#pragma once

#include <cstddef>

namespace locus {

inline void prefetch_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

// Every 64-byte line of [p, p + bytes).
inline void prefetch_lines(const void* p, size_t bytes) {
  const auto* b = static_cast<const char*>(p);
  for (size_t at = 0; at < bytes; at += 64) prefetch_line(b + at);
}

}  // namespace locus
