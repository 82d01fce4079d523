// A small continuous-time Markov chain solver for exact stationary answers.
//
// The closed forms and MVA recursions in this library rest on assumptions
// (product form, exponential service, Poisson arrivals). A CTMC of a small
// model makes none beyond exponential holding times, so the tests use it as
// the referee: the M/M/c queue-length distribution against Erlang C, closed
// MVA against the chain of a small closed network. The generator is held as
// an Eigen sparse matrix and solved directly by sparse LU: thousands of
// states of a birth-death chain take milliseconds, but fill-in grows with
// the chain's dimension (an eight-station network of 3,400 states takes
// about 0.3 s), so "small" means small.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "core/common/status.h"

namespace locus::models {

class Ctmc {
 public:
  explicit Ctmc(int states);

  int states() const { return states_; }
  // Adds rate_per_us to the transition from -> to (rates to the same pair
  // accumulate; self-loops are ignored, they do not change the chain).
  void add_rate(int from, int to, double rate_per_us);

  // The stationary distribution pi (pi Q = 0, sum pi = 1). Fails when the
  // chain has no unique one (reducible) or the factorisation breaks down.
  StatusOr<Eigen::VectorXd> stationary() const;

 private:
  StatusOr<Eigen::VectorXd> solve_pinned(int reference) const;

  struct Transition {
    int from;
    int to;
    double rate_per_us;
  };
  int states_;
  std::vector<Transition> transitions_;
};

}  // namespace locus::models
