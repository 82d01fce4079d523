// Random: the one source of randomness in locus (xoshiro256**, seeded by
// splitmix64). Every run prints its seed; on SimGrid the same seed replays
// the same run. Each client gets its own stream via fork(), so results do
// not depend on how threads interleave. Not thread-safe: one per actor.
#pragma once

#include <cstdint>

namespace locus {

class Random {
 public:
  explicit Random(uint64_t seed) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& word : s_) word = splitmix64(x);
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, bound); bound > 0. Lemire's multiply-shift (bias < 2^-64 * bound).
  uint64_t uniform(uint64_t bound) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<uint64_t>((static_cast<u128>(next_u64()) * bound) >> 64);
  }
  // Uniform in [lo, hi] inclusive.
  uint64_t uniform_between(uint64_t lo, uint64_t hi) { return lo + uniform(hi - lo + 1); }
  // Uniform double in [0, 1).
  double uniform_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  bool bernoulli(double p) { return uniform_double() < p; }

  // An independent stream derived from this generator's seed material and `stream`.
  Random fork(uint64_t stream) const {
    uint64_t mix = s_[0] ^ (s_[1] * 0x9E3779B97F4A7C15ULL) ^ splitmix64_value(stream + 0x51ED27A1ULL);
    return Random(mix);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  static uint64_t splitmix64_value(uint64_t x) { return splitmix64(x); }

  uint64_t s_[4];
};

}  // namespace locus
