// Tests for the CTMC solver itself: chains with known stationary laws, and a
// reducible chain reported as an error rather than a wrong answer.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "models/queueing/ctmc.h"

using namespace locus::models;

BOOST_AUTO_TEST_SUITE(ctmc)

BOOST_AUTO_TEST_CASE(two_state_chain_balances_rates) {
  // 0 -> 1 at rate 2, 1 -> 0 at rate 3: pi = (3/5, 2/5).
  Ctmc chain(2);
  chain.add_rate(0, 1, 2.0);
  chain.add_rate(1, 0, 3.0);
  auto pi = chain.stationary();
  BOOST_REQUIRE(pi.is_ok());
  BOOST_CHECK_CLOSE((*pi)(0), 0.6, 1e-10);
  BOOST_CHECK_CLOSE((*pi)(1), 0.4, 1e-10);
}

BOOST_AUTO_TEST_CASE(rates_to_the_same_pair_accumulate) {
  Ctmc chain(2);
  chain.add_rate(0, 1, 1.0);
  chain.add_rate(0, 1, 1.0);
  chain.add_rate(1, 0, 3.0);
  chain.add_rate(1, 1, 100.0);  // self-loop: no effect
  auto pi = chain.stationary();
  BOOST_REQUIRE(pi.is_ok());
  BOOST_CHECK_CLOSE((*pi)(0), 0.6, 1e-10);
}

BOOST_AUTO_TEST_CASE(birth_death_chain_is_geometric) {
  // M/M/1 truncated at 200: pi_j proportional to rho^j.
  const int n = 200;
  const double rho = 0.7;
  Ctmc chain(n + 1);
  for (int j = 0; j < n; ++j) {
    chain.add_rate(j, j + 1, rho);
    chain.add_rate(j + 1, j, 1.0);
  }
  auto pi = chain.stationary();
  BOOST_REQUIRE(pi.is_ok());
  for (int j = 0; j < 20; ++j) {
    BOOST_CHECK_CLOSE((*pi)(j), (1 - rho) * std::pow(rho, j), 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(reducible_chain_is_an_error) {
  // Two closed classes {0, 1} and {2, 3}: no unique stationary law.
  Ctmc chain(4);
  chain.add_rate(0, 1, 1.0);
  chain.add_rate(1, 0, 1.0);
  chain.add_rate(2, 3, 1.0);
  chain.add_rate(3, 2, 1.0);
  BOOST_CHECK(!chain.stationary().is_ok());
}

BOOST_AUTO_TEST_SUITE_END()
