// Stationary distribution of a CTMC by sparse LU on the transposed generator
// with one state's probability pinned, then normalised.
#include "models/queueing/ctmc.h"

#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <algorithm>
#include <cmath>
#include <string>

#include "core/common/check.h"

namespace locus::models {

Ctmc::Ctmc(int states) : states_(states) { LOCUS_CHECK(states >= 1); }

void Ctmc::add_rate(int from, int to, double rate_per_us) {
  LOCUS_CHECK(from >= 0 && from < states_ && to >= 0 && to < states_);
  LOCUS_CHECK(rate_per_us >= 0 && std::isfinite(rate_per_us));
  if (from == to || rate_per_us == 0) return;
  transitions_.push_back({from, to, rate_per_us});
}

StatusOr<Eigen::VectorXd> Ctmc::stationary() const {
  const int n = states_;
  if (n == 1) return Eigen::VectorXd(Eigen::VectorXd::Ones(1));
  if (transitions_.empty()) return invalid_argument("CTMC has no transitions");
  // A first attempt pins state 0; should its probability be so small that
  // the others overflow relative to it, the most probable state found so
  // far is pinned instead.
  int reference = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    LOCUS_ASSIGN_OR_RETURN(Eigen::VectorXd pi, solve_pinned(reference));
    int best = 0;
    bool finite = true;
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(pi(i))) {
        finite = false;
        continue;
      }
      if (pi(i) > pi(best) || !std::isfinite(pi(best))) best = i;
    }
    if (finite && pi.sum() > 0 && std::isfinite(pi.sum())) {
      // Round-off can leave tiny negative probabilities; anything larger
      // means the chain was not what the caller thought.
      for (int i = 0; i < n; ++i) {
        if (pi(i) < -1e-9 * pi(best)) {
          return Status(StatusCode::kInvalidArgument,
                        "CTMC stationary solution has negative mass at state " + std::to_string(i) +
                            " (reducible chain?)");
        }
        if (pi(i) < 0) pi(i) = 0;
      }
      return Eigen::VectorXd(pi / pi.sum());
    }
    if (best == reference) break;
    reference = best;
  }
  return Status(StatusCode::kInternal, "CTMC stationary solution overflows");
}

// Solves Q^T x = 0 with x(reference) = 1: the balance equation of the
// reference state (redundant, the equations sum to zero) is replaced by that
// pin. Pinning keeps the matrix as sparse as the chain; a normalisation row
// sum(x) = 1 instead would be dense and fill the LU factors in.
StatusOr<Eigen::VectorXd> Ctmc::solve_pinned(int reference) const {
  const int n = states_;
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(2 * transitions_.size() + 1);
  for (const Transition& t : transitions_) {
    if (t.to != reference) triplets.emplace_back(t.to, t.from, t.rate_per_us);
    if (t.from != reference) triplets.emplace_back(t.from, t.from, -t.rate_per_us);
  }
  triplets.emplace_back(reference, reference, 1.0);
  Eigen::SparseMatrix<double> a(n, n);
  a.setFromTriplets(triplets.begin(), triplets.end());  // sums duplicates
  a.makeCompressed();

  Eigen::SparseLU<Eigen::SparseMatrix<double>> lu;
  lu.analyzePattern(a);
  lu.factorize(a);
  if (lu.info() != Eigen::Success) {
    return Status(StatusCode::kInvalidArgument,
                  "CTMC with " + std::to_string(n) +
                      " states has no unique stationary distribution (reducible?): " +
                      lu.lastErrorMessage());
  }
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n);
  rhs(reference) = 1.0;
  Eigen::VectorXd x = lu.solve(rhs);
  if (lu.info() != Eigen::Success) return Status(StatusCode::kInternal, "CTMC sparse LU solve failed");
  return x;
}

}  // namespace locus::models
