// The static selectors: always server-side, always client-side, and a
// fixed ratio (each step client-side with probability f, from the actor's
// RNG). They are the baselines JSQ is measured against, and the way tests
// force one path.
#pragma once

#include "core/common/random.h"
#include "core/selector/selector.h"

namespace locus::selector {

class ServerOnlySelector final : public Selector {
 public:
  std::string_view name() const override { return "server-only"; }
  Path choose(NodeId, Nanos) override { return count(Path::kServer); }
};

class ClientOnlySelector final : public Selector {
 public:
  std::string_view name() const override { return "client-only"; }
  Path choose(NodeId, Nanos) override { return count(Path::kClient); }
};

class FixedRatioSelector final : public Selector {
 public:
  FixedRatioSelector(double client_fraction, Random& rng)
      : client_fraction_(client_fraction), rng_(rng) {}
  std::string_view name() const override { return "fixed-ratio"; }
  Path choose(NodeId, Nanos) override {
    return count(rng_.bernoulli(client_fraction_) ? Path::kClient : Path::kServer);
  }
  double client_fraction() const { return client_fraction_; }

 private:
  double client_fraction_;
  Random& rng_;
};

}  // namespace locus::selector
