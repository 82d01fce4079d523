// Selectors: the static ones, JSQ against scripted latency feeds (idle and
// overloaded servers, outlier rejection, history drops, exploration, idle
// reset, the measured meganode height), the latency-window baseline, and
// configuration by property name.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "core/common/random.h"
#include "core/selector/jsq_selector.h"
#include "core/selector/latency_window_selector.h"
#include "core/selector/sample_window.h"
#include "core/selector/selector_config.h"
#include "core/selector/simple_selectors.h"

namespace locus::selector {
namespace {

constexpr NodeId kServer = 3;
constexpr Nanos kUs = kMicrosecond;

JsqConfig quiet_jsq() {
  JsqConfig c;
  c.explore_probability = 0;  // deterministic choices unless a test wants exploration
  return c;
}

// Feeds `n` server-side and `n` RDMA samples: server at server_us, RDMA
// alternating rdma_us +- 1 us (so the lowest RDMA latency is rdma_us - 1).
void feed(Selector& s, int n, double server_us, double rdma_us, Nanos* now) {
  for (int i = 0; i < n; ++i) {
    *now += 10 * kUs;
    s.observe(kServer, Path::kServer, static_cast<Nanos>(server_us * kUs), *now);
    const double r = rdma_us + (i % 2 == 0 ? -1.0 : 1.0);
    s.observe(kServer, Path::kClient, static_cast<Nanos>(r * kUs), *now);
  }
}

double server_share(Selector& s, int choices, Nanos* now) {
  int server = 0;
  for (int i = 0; i < choices; ++i) {
    *now += kUs;
    if (s.choose(kServer, *now) == Path::kServer) ++server;
  }
  return static_cast<double>(server) / choices;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(selector_basics)

BOOST_AUTO_TEST_CASE(static_selectors) {
  Random rng(1);
  ServerOnlySelector s;
  ClientOnlySelector c;
  for (int i = 0; i < 100; ++i) {
    BOOST_REQUIRE(s.choose(kServer, i) == Path::kServer);
    BOOST_REQUIRE(c.choose(kServer, i) == Path::kClient);
  }
  BOOST_TEST(s.stats().server_share() == 1.0);
  BOOST_TEST(c.stats().server_share() == 0.0);
  FixedRatioSelector f(0.3, rng);
  Nanos now = 0;
  const double share = server_share(f, 20'000, &now);
  BOOST_TEST(std::fabs(share - 0.7) < 0.02);
}

BOOST_AUTO_TEST_CASE(sample_windows) {
  SampleWindow w(4);
  for (double v : {1.0, 2.0, 3.0, 4.0, 5.0}) w.push(v);  // 1 falls out
  BOOST_TEST(w.size() == 4u);
  BOOST_TEST(w.mean() == 3.5);
  BOOST_TEST(std::fabs(w.stddev() - std::sqrt(1.25)) < 1e-9);
  TimedWindow t(100, 8);
  t.push(0, 10);
  t.push(50, 20);
  t.push(120, 30);  // the sample at 0 expired
  BOOST_TEST(t.size() == 2u);
  BOOST_TEST(t.mean() == 25.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(jsq)

BOOST_AUTO_TEST_CASE(without_probing_stays_server_side_until_both_paths_are_measured) {
  Random rng(2);
  JsqConfig cfg = quiet_jsq();
  cfg.probe_unmeasured = false;
  JsqSelector s(cfg, rng);
  Nanos now = 0;
  BOOST_TEST(server_share(s, 100, &now) == 1.0);
  s.observe(kServer, Path::kServer, 500 * kUs, now);  // very slow server, but no RDMA estimate yet
  BOOST_TEST(!s.estimate(kServer).complete);
  BOOST_TEST(server_share(s, 100, &now) == 1.0);
}

// Issue 15 (2026-11-27): a client whose RDMA history is empty (at start,
// or after outliers dropped it) measures the RDMA path on its next step
// instead of waiting ~1/p steps for exploration, during which it kept
// sending steps to a saturated server (four servers at one core: JSQ at
// 0.73 of the best fixed split's throughput, 1.04 with probing).
BOOST_AUTO_TEST_CASE(probes_the_rdma_path_once_the_server_is_measured) {
  Random rng(2);
  JsqSelector s(quiet_jsq(), rng);
  Nanos now = 0;
  BOOST_TEST(s.choose(kServer, now) == Path::kServer);  // nothing measured: server first
  s.observe(kServer, Path::kServer, 500 * kUs, now);
  BOOST_TEST(!s.estimate(kServer).complete);
  BOOST_TEST(s.estimate(kServer).preferred == Path::kClient);
  BOOST_TEST(s.choose(kServer, now) == Path::kClient);
  // One client-side step measured the READs: the rule decides from here
  // (500 us server-side against m = 5 READs of 4 us).
  s.observe(kServer, Path::kClient, 4 * kUs, now);
  BOOST_TEST(s.estimate(kServer).complete);
  BOOST_TEST(server_share(s, 100, &now) == 0.0);
  // An idle server measured both ways keeps the server-side steps.
  JsqSelector idle(quiet_jsq(), rng);
  feed(idle, 100, 8, 5, &now);
  BOOST_TEST(server_share(idle, 100, &now) == 1.0);
}

BOOST_AUTO_TEST_CASE(idle_server_gets_server_side_overloaded_server_client_side) {
  Random rng(3);
  JsqConfig cfg = quiet_jsq();
  cfg.adapt_meganode_height = false;  // m = 5
  JsqSelector s(cfg, rng);
  Nanos now = 0;
  // Idle: l_s - RTT = 8 - 4 = 4 us < m * (l_r - RTT) = 5 * (5 - 4) = 5 us.
  feed(s, 100, 8, 5, &now);
  JsqSelector::Estimate e = s.estimate(kServer);
  BOOST_TEST(e.complete);
  BOOST_TEST(e.rtt_ns == 4000.0);
  BOOST_TEST(e.preferred == Path::kServer);
  BOOST_TEST(server_share(s, 1000, &now) == 1.0);
  // Overloaded server: its queue grows step by step (small enough steps
  // that no sample is an outlier), the NIC stays idle.
  for (double server_us = 8; server_us <= 60; server_us += 0.5) feed(s, 4, server_us, 5, &now);
  feed(s, 100, 60, 5, &now);
  e = s.estimate(kServer);
  BOOST_TEST(e.server_latency_ns > 50'000.0);
  BOOST_TEST(e.preferred == Path::kClient);
  BOOST_TEST(server_share(s, 1000, &now) == 0.0);
}

BOOST_AUTO_TEST_CASE(client_share_grows_with_server_load) {
  // A closed loop: the server-side latency rises with the share of steps
  // sent to the server (its queue), the RDMA latency with the share sent to
  // the NIC. JSQ should settle where the two queueing delays balance, well
  // away from all-server when the server is the bottleneck.
  Random rng(4);
  JsqConfig cfg;
  cfg.explore_probability = 0.01;
  cfg.adapt_meganode_height = false;
  cfg.initial_meganode_height = 2;
  auto settle = [&](double server_cost_us) {
    JsqSelector s(cfg, rng);
    Nanos now = 0;
    double share = 1.0;
    for (int round = 0; round < 400; ++round) {
      int to_server = 0;
      for (int i = 0; i < 50; ++i) {
        now += 10 * kUs;
        const Path p = s.choose(kServer, now);
        if (p == Path::kServer) ++to_server;
        // The paper's model: each latency is one round trip (4 us) plus a
        // queueing delay that grows with the load sent to that queue.
        const double ls = 4 + server_cost_us * share;
        const double lr = 4 + 2.0 * (1.0 - share);
        s.observe(kServer, p, static_cast<Nanos>((p == Path::kServer ? ls : lr) * kUs), now);
        if (p == Path::kClient) s.observe(kServer, p, static_cast<Nanos>((lr + 0.5) * kUs), now);
      }
      share = 0.8 * share + 0.2 * (to_server / 50.0);
    }
    return share;
  };
  const double light = settle(0.5);  // server barely loaded
  const double heavy = settle(100);  // server saturated
  BOOST_TEST_MESSAGE("server share: light load " << light << ", heavy load " << heavy);
  BOOST_TEST(light > 0.8);
  BOOST_TEST(heavy < 0.5);
  BOOST_TEST(heavy < light);
}

BOOST_AUTO_TEST_CASE(outliers_are_discarded) {
  Random rng(5);
  JsqSelector s(quiet_jsq(), rng);
  Nanos now = 0;
  for (int i = 0; i < 60; ++i) {
    now += kUs;
    s.observe(kServer, Path::kServer, (10 + (i % 3) - 1) * kUs, now);  // 9, 10, 11 us
  }
  const double before = s.estimate(kServer).server_latency_ns;
  s.observe(kServer, Path::kServer, 1000 * kUs, now);  // one spike
  BOOST_TEST(s.stats().samples_discarded == 1u);
  BOOST_TEST(s.estimate(kServer).server_latency_ns == before);
  BOOST_TEST(s.estimate(kServer).server_samples == 60u);
  s.observe(kServer, Path::kServer, 11 * kUs, now);  // within K sigma: kept
  BOOST_TEST(s.stats().samples_discarded == 1u);
  BOOST_TEST(s.estimate(kServer).server_samples == 61u);
}

BOOST_AUTO_TEST_CASE(history_is_dropped_when_most_samples_are_outliers) {
  Random rng(6);
  JsqConfig cfg = quiet_jsq();
  JsqSelector s(cfg, rng);
  Nanos now = 0;
  for (int i = 0; i < 100; ++i) s.observe(kServer, Path::kServer, (10 + (i % 3) - 1) * kUs, now);
  BOOST_TEST(s.stats().history_drops == 0u);
  // The level moves to 100 us for good: every sample is an outlier until a
  // moving period has discarded more than it kept; then the history goes
  // and the new level is learnt.
  int until_drop = 0;
  while (s.stats().history_drops == 0 && until_drop < 1000) {
    s.observe(kServer, Path::kServer, (100 + (until_drop % 3) - 1) * kUs, now);
    ++until_drop;
  }
  BOOST_TEST(s.stats().history_drops == 1u);
  BOOST_TEST(until_drop <= 2 * static_cast<int>(cfg.history_samples));
  for (int i = 0; i < 50; ++i) s.observe(kServer, Path::kServer, (100 + (i % 3) - 1) * kUs, now);
  BOOST_TEST(std::fabs(s.estimate(kServer).server_latency_ns - 100'000.0) < 1'000.0);
}

BOOST_AUTO_TEST_CASE(exploration_rate) {
  Random rng(7);
  JsqConfig cfg;
  cfg.explore_probability = 0.05;
  JsqSelector s(cfg, rng);
  Nanos now = 0;
  feed(s, 100, 8, 5, &now);  // server preferred
  const int n = 40'000;
  const double share = server_share(s, n, &now);
  BOOST_TEST(std::fabs((1.0 - share) - 0.05) < 0.006);
  BOOST_TEST(std::fabs(static_cast<double>(s.stats().explorations) / n - 0.05) < 0.006);
}

BOOST_AUTO_TEST_CASE(idle_connection_loses_its_history) {
  Random rng(8);
  JsqConfig cfg = quiet_jsq();
  JsqSelector s(cfg, rng);
  Nanos now = 0;
  feed(s, 100, 60, 5, &now);
  (void)s.choose(kServer, now);
  BOOST_TEST(s.estimate(kServer).preferred == Path::kClient);
  now += cfg.idle_reset_ns - kUs;
  BOOST_TEST(s.choose(kServer, now) == Path::kClient);  // not idle long enough yet
  now += cfg.idle_reset_ns;
  BOOST_TEST(s.choose(kServer, now) == Path::kServer);  // history gone: the default
  BOOST_TEST(s.stats().idle_resets == 1u);
  BOOST_TEST(s.estimate(kServer).server_samples == 0u);
  BOOST_TEST(s.estimate(kServer).rdma_samples == 0u);
}

// m arrives through the generic Selector interface, as Cell and Catfish
// report it without knowing the selector's kind.
BOOST_AUTO_TEST_CASE(meganode_height_is_measured) {
  Random rng(9);
  JsqConfig cfg = quiet_jsq();
  cfg.rule = JsqRule::kPaperQueueing;  // the inequality below
  JsqSelector s(cfg, rng);
  Selector& generic = s;
  Nanos now = 0;
  BOOST_TEST(s.meganode_height() == 5.0);
  // l_s - RTT = 12 - 4 = 8 us against m * (l_r - RTT) = m * 1 us.
  feed(s, 100, 12, 5, &now);
  BOOST_TEST(s.estimate(kServer).preferred == Path::kClient);  // m = 5: 8 > 5
  for (int i = 0; i < 100; ++i) generic.observe_client_step_cost(10);  // tall meganodes: RDMA costs more
  BOOST_TEST(s.meganode_height() == 10.0);
  BOOST_TEST(s.estimate(kServer).preferred == Path::kServer);  // m = 10: 8 < 10
  BOOST_TEST(generic.choose(kServer, now) == Path::kServer);
}

// One meganode on an idle Cell server: a server-side step answers in
// 13.5 us (an RPC and ~6 us of CPU), a client-side one in 5 READs of
// 4.26 us (21.3 us). The default rule takes the faster server; the
// paper's inequality (1), which counts the RPC's floor as queueing,
// does not.
BOOST_AUTO_TEST_CASE(idle_server_faster_than_reads_is_taken_unless_the_paper_rule_is_asked_for) {
  auto preferred = [](JsqRule rule) {
    Random rng(12);
    JsqConfig cfg = quiet_jsq();
    cfg.adapt_meganode_height = false;  // m = 5
    cfg.rule = rule;
    JsqSelector s(cfg, rng);
    for (int i = 0; i < 50; ++i) {
      s.observe(kServer, Path::kServer, 13'500, 0);
      s.observe(kServer, Path::kClient, 4'260, 0);
    }
    return s.estimate(kServer).preferred;
  };
  BOOST_TEST(preferred(JsqConfig{}.rule) == Path::kServer);
  BOOST_TEST(preferred(JsqRule::kExpectedLatency) == Path::kServer);
  BOOST_TEST(preferred(JsqRule::kMarginalLatency) == Path::kServer);
  BOOST_TEST(preferred(JsqRule::kPaperQueueing) == Path::kClient);
}

// Under load the marginal rule leaves the congested server earlier than
// expected latency: a server at 2.07x its floor (28 us, marginal 58 us)
// against READs at 1.41x theirs (6 us, m = 5: 30 us, marginal 42 us).
BOOST_AUTO_TEST_CASE(marginal_rule_moves_off_a_congested_server_before_latencies_meet) {
  auto preferred = [](JsqRule rule) {
    Random rng(14);
    JsqConfig cfg = quiet_jsq();
    cfg.adapt_meganode_height = false;
    cfg.rule = rule;
    cfg.min_samples_for_outliers = 1000;  // the floors below are not outliers
    JsqSelector s(cfg, rng);
    s.observe(kServer, Path::kServer, 13'500, 0);  // the floors
    s.observe(kServer, Path::kClient, 4'260, 0);
    for (int i = 0; i < 200; ++i) {
      s.observe(kServer, Path::kServer, 28'000, 0);
      s.observe(kServer, Path::kClient, 6'000, 0);
    }
    return s.estimate(kServer).preferred;
  };
  BOOST_TEST(preferred(JsqRule::kMarginalLatency) == Path::kClient);
  BOOST_TEST(preferred(JsqRule::kExpectedLatency) == Path::kServer);
}

BOOST_AUTO_TEST_CASE(per_path_baseline_prefers_server_when_nothing_queues) {
  Random rng(10);
  JsqConfig cfg = quiet_jsq();
  cfg.rtt_baseline = RttBaseline::kPerPathMinimum;
  JsqSelector s(cfg, rng);
  Nanos now = 0;
  for (int i = 0; i < 50; ++i) {
    s.observe(kServer, Path::kServer, 9 * kUs, now);
    s.observe(kServer, Path::kClient, 4 * kUs, now);
  }
  BOOST_TEST(s.estimate(kServer).preferred == Path::kServer);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(latency_window)

BOOST_AUTO_TEST_CASE(compares_recent_means) {
  Random rng(11);
  LatencyWindowConfig cfg;
  cfg.explore_probability = 0;
  cfg.window_ns = 1 * kMillisecond;
  LatencyWindowSelector s(cfg, rng);
  Nanos now = 0;
  BOOST_TEST(server_share(s, 10, &now) == 1.0);
  // Server 20 us against 5 READs of 5 us: server.
  for (int i = 0; i < 20; ++i) {
    s.observe(kServer, Path::kServer, 20 * kUs, now);
    s.observe(kServer, Path::kClient, 5 * kUs, now);
  }
  BOOST_TEST(s.choose(kServer, now) == Path::kServer);
  // A spike: the server's recent mean climbs past the predicted 25 us.
  for (int i = 0; i < 60; ++i) s.observe(kServer, Path::kServer, 40 * kUs, now);
  BOOST_TEST(s.choose(kServer, now) == Path::kClient);
  // A window later the spike has aged out and only fresh samples count.
  now += 2 * kMillisecond;
  for (int i = 0; i < 5; ++i) {
    s.observe(kServer, Path::kServer, 10 * kUs, now);
    s.observe(kServer, Path::kClient, 5 * kUs, now);
  }
  BOOST_TEST(s.choose(kServer, now) == Path::kServer);
}

BOOST_AUTO_TEST_CASE(predicts_client_steps_from_their_measured_cost) {
  Random rng(13);
  LatencyWindowConfig cfg;
  cfg.explore_probability = 0;
  LatencyWindowSelector window(cfg, rng);
  Selector& s = window;
  Nanos now = 0;
  // Server 20 us against 5 READs of 5 us (the initial m): server.
  for (int i = 0; i < 20; ++i) {
    s.observe(kServer, Path::kServer, 20 * kUs, now);
    s.observe(kServer, Path::kClient, 5 * kUs, now);
  }
  BOOST_TEST(s.choose(kServer, now) == Path::kServer);
  // Steps measured at 2 dependent READs: 10 us beats 20 us.
  for (int i = 0; i < 100; ++i) s.observe_client_step_cost(2);
  BOOST_TEST(window.meganode_height() == 2.0);
  BOOST_TEST(s.choose(kServer, now) == Path::kClient);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(selector_config)

BOOST_AUTO_TEST_CASE(properties_and_factory) {
  SelectorConfig c;
  BOOST_TEST(set_selector_property(c, "kind", "fixed_ratio").is_ok());
  BOOST_TEST(set_selector_property(c, "client_fraction", "0.25").is_ok());
  BOOST_TEST(set_selector_property(c, "jsq.history_samples", "50").is_ok());
  BOOST_TEST(set_selector_property(c, "jsq.outlier_k", "2.5").is_ok());
  BOOST_TEST(set_selector_property(c, "jsq.explore_probability", "0.02").is_ok());
  BOOST_TEST(set_selector_property(c, "jsq.idle_reset_ms", "1500").is_ok());
  BOOST_TEST(set_selector_property(c, "jsq.adapt_meganode_height", "false").is_ok());
  BOOST_TEST(set_selector_property(c, "jsq.rtt_baseline", "per_path_minimum").is_ok());
  BOOST_TEST(set_selector_property(c, "jsq.rule", "paper").is_ok());
  BOOST_TEST((c.jsq.rule == JsqRule::kPaperQueueing));
  BOOST_TEST(!set_selector_property(c, "jsq.rule", "fastest").is_ok());
  BOOST_TEST(set_selector_property(c, "jsq.probe_unmeasured", "false").is_ok());
  BOOST_TEST(!c.jsq.probe_unmeasured);
  BOOST_TEST(!set_selector_property(c, "jsq.probe_unmeasured", "sometimes").is_ok());
  BOOST_TEST(set_selector_property(c, "window.window_ms", "5").is_ok());
  BOOST_TEST(c.kind == SelectorKind::kFixedRatio);
  BOOST_TEST(c.client_fraction == 0.25);
  BOOST_TEST(c.jsq.history_samples == 50u);
  BOOST_TEST(c.jsq.outlier_k == 2.5);
  BOOST_TEST(c.jsq.idle_reset_ns == 1500 * kMillisecond);
  BOOST_TEST(!c.jsq.adapt_meganode_height);
  BOOST_TEST(c.window.window_ns == 5 * kMillisecond);
  BOOST_TEST(set_selector_property(c, "jsq.outlier_k", "lots").code() == StatusCode::kInvalidArgument);
  BOOST_TEST(set_selector_property(c, "kind", "magic").code() == StatusCode::kInvalidArgument);
  BOOST_TEST(set_selector_property(c, "no.such", "1").code() == StatusCode::kInvalidArgument);

  Random rng(12);
  for (SelectorKind k : {SelectorKind::kServerOnly, SelectorKind::kClientOnly, SelectorKind::kFixedRatio,
                         SelectorKind::kJsq, SelectorKind::kLatencyWindow}) {
    c.kind = k;
    auto s = make_selector(c, rng);
    BOOST_REQUIRE(s.is_ok());
    BOOST_TEST(!(*s)->name().empty());
  }
  c.client_fraction = 1.5;
  BOOST_TEST(make_selector(c, rng).status().code() == StatusCode::kInvalidArgument);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus::selector
