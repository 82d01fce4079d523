// The locality model against a small discrete-event simulation of the same
// system with deterministic service times, as the SimGrid backend has them.
//
// MVA assumes exponential service; the real costs are nearly fixed, so the
// model should be exact at both population extremes and conservative in
// between. This measures how far, for mean and p99 latency, ahead of the
// cross-validation against SimGrid proper. The simulation: N clients in a
// closed loop; an RPC crosses the network (one RTT), takes one verb message
// at the server NIC, a core, and one more message; a traversal makes m
// READs in r rounds: each round an RTT, then its m / r READs queue at the
// READ engine together and the round ends when the last is served (r = m:
// one READ after another). Stations are FCFS.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <deque>
#include <queue>
#include <random>
#include <vector>

#include "models/queueing/locality_model.h"

using namespace locus::models;

namespace {

struct SimResult {
  double throughput_ops_per_s = 0;
  double mean_latency_us = 0;
  double p99_latency_us = 0;
};

class LocalitySim {
 public:
  LocalitySim(const LocalityInput& in, double p, uint64_t seed) : in_(in), p_(p), rng_(seed) {
    const LocalityPlatform& pl = in.platform;
    const double phi = nic_slowdown(in, p);
    for (int s = 0; s < pl.servers; ++s) {
      stations_.push_back({pl.cores_per_server, pl.server_op_service_time_us});  // 3s: cpu
      stations_.push_back({1, phi * 1e6 / pl.nic_read_rate_ops_per_s});          // 3s+1: read
      stations_.push_back({1, phi * 1e6 / pl.nic_verb_rate_msgs_per_s});         // 3s+2: verbs
    }
  }

  SimResult run(double warmup_us, double measure_us) {
    jobs_.resize(in_.workload.clients);
    for (int c = 0; c < in_.workload.clients; ++c) start_job(c, 0.0);
    const double end_us = warmup_us + measure_us;
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      now_ = e.time_us;
      if (now_ > end_us) break;
      if (e.departs_station) {
        depart(e.station);
        if (--jobs_[e.job].pending > 0) continue;
      }
      step(e.job);
    }
    SimResult r;
    std::vector<double>& l = latencies_;
    const size_t skip =
        std::count_if(completions_.begin(), completions_.end(), [&](double t) { return t < warmup_us; });
    l.erase(l.begin(), l.begin() + skip);
    r.throughput_ops_per_s = l.size() / measure_us * 1e6;
    double sum = 0;
    for (double x : l) sum += x;
    r.mean_latency_us = sum / l.size();
    std::sort(l.begin(), l.end());
    r.p99_latency_us = l[static_cast<size_t>(0.99 * (l.size() - 1))];
    return r;
  }

 private:
  struct StationState {
    int servers;
    double service_us;
    int busy = 0;
    std::deque<int> waiting;
  };
  struct Step {
    int station;  // -1: a pure delay
    double delay_us;
    int copies = 1;  // visits queued together; the step ends with the last
  };
  struct Job {
    std::vector<Step> route;
    size_t next = 0;
    double start_us = 0;
    int pending = 0;  // visits of the current step not yet served
  };
  struct Event {
    double time_us;
    uint64_t seq;
    int job;
    bool departs_station;
    int station;
    bool operator<(const Event& o) const { return time_us != o.time_us ? time_us > o.time_us : seq > o.seq; }
  };

  void schedule(double at_us, int job, bool departs, int station) {
    events_.push({at_us, seq_++, job, departs, station});
  }

  void start_job(int c, double at_us) {
    Job& j = jobs_[c];
    j.route.clear();
    j.next = 0;
    j.start_us = at_us;
    const int server = std::uniform_int_distribution<int>(0, in_.platform.servers - 1)(rng_);
    const double rtt = in_.workload.network_rtt_us;
    if (std::bernoulli_distribution(p_)(rng_)) {
      j.route = {{-1, rtt}, {3 * server + 2, 0}, {3 * server, 0}, {3 * server + 2, 0}};
    } else {
      // Read off the input itself, not through the model's own helper.
      const int reads = static_cast<int>(in_.workload.reads_per_client_op);
      const int rounds =
          in_.workload.round_trips_per_client_op > 0 ? static_cast<int>(in_.workload.round_trips_per_client_op) : reads;
      const int per_round = reads / rounds;
      for (int i = 0; i < rounds; ++i) {
        j.route.push_back({-1, rtt});
        j.route.push_back({3 * server + 1, 0, per_round});
      }
    }
    schedule(at_us, c, false, -1);
  }

  void depart(int station) {
    StationState& s = stations_[station];
    --s.busy;
    if (!s.waiting.empty()) {
      const int next = s.waiting.front();
      s.waiting.pop_front();
      ++s.busy;
      schedule(now_ + s.service_us, next, true, station);
    }
  }

  // Moves job c on to its next step (or completes it).
  void step(int c) {
    Job& j = jobs_[c];
    if (j.next == j.route.size()) {
      latencies_.push_back(now_ - j.start_us);
      completions_.push_back(now_);
      start_job(c, now_ + in_.workload.think_time_us);
      return;
    }
    const Step st = j.route[j.next++];
    if (st.station < 0) {
      schedule(now_ + st.delay_us, c, false, -1);
      return;
    }
    StationState& s = stations_[st.station];
    j.pending = st.copies;
    for (int k = 0; k < st.copies; ++k) {
      if (s.busy < s.servers) {
        ++s.busy;
        schedule(now_ + s.service_us, c, true, st.station);
      } else {
        s.waiting.push_back(c);
      }
    }
  }

  const LocalityInput& in_;
  double p_;
  std::mt19937_64 rng_;
  std::vector<StationState> stations_;
  std::vector<Job> jobs_;
  std::priority_queue<Event> events_;
  uint64_t seq_ = 0;
  double now_ = 0;
  std::vector<double> latencies_, completions_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(locality_simulation)

BOOST_AUTO_TEST_CASE(model_against_deterministic_service_simulation) {
  struct Case {
    int servers, cores, clients;
    double p, think_us;
  };
  const Case cases[] = {
      // The anchors; the balanced split (third) is the one case where the
      // p99 is far off: product form spreads a population shared by two
      // saturated stations evenly over all splits, while deterministic
      // service keeps the queues steady. Its p99 is not checked.
      {1, 1, 2000, 1.0, 0}, {1, 1, 2000, 0.0, 0}, {1, 1, 2000, 0.355, 0},
      {1, 1, 4, 0.355, 0},  {1, 1, 16, 0.355, 0}, {1, 1, 64, 0.355, 0},  // through the knee
      {4, 4, 32, 0.6, 0},   {4, 4, 128, 0.6, 0},  {4, 4, 512, 0.6, 0},
      {2, 8, 64, 1.0, 20},  {2, 8, 128, 1.0, 20}, {2, 8, 64, 0.0, 20},  // with think time
      {2, 8, 128, 0.0, 20}, {8, 4, 200, 0.5, 50}, {8, 4, 400, 0.5, 50},
  };
  double worst_x = 0, worst_mean = 0, worst_p99 = 0;
  for (const Case& c : cases) {
    LocalityInput in;
    in.platform.servers = c.servers;
    in.platform.cores_per_server = c.cores;
    in.workload.clients = c.clients;
    in.workload.network_rtt_us = 3.0;
    in.workload.think_time_us = c.think_us;
    auto model = predict_split(in, c.p);
    BOOST_REQUIRE(model.is_ok());
    LocalitySim sim(in, c.p, 7);
    const SimResult s = sim.run(20'000, 200'000);
    const double ex = model->throughput_ops_per_s / s.throughput_ops_per_s - 1;
    const double em = model->mean_latency_us / s.mean_latency_us - 1;
    const double ep = model->p99_latency_us / s.p99_latency_us - 1;
    const bool balanced_saturated = c.clients == 2000 && c.p > 0 && c.p < 1;
    worst_x = std::max(worst_x, std::fabs(ex));
    worst_mean = std::max(worst_mean, std::fabs(em));
    if (!balanced_saturated) worst_p99 = std::max(worst_p99, std::fabs(ep));
    // Loose bounds that guard against regressions; the figures themselves
    // are printed for the accuracy notes.
    BOOST_CHECK_SMALL(ex, 0.10);
    BOOST_CHECK_SMALL(em, 0.12);
    if (!balanced_saturated) BOOST_CHECK(ep > -0.20 && ep < 0.45);
    BOOST_TEST_MESSAGE(c.servers << " servers x " << c.cores << " cores, " << c.clients << " clients, p = " << c.p
                                 << ", think " << c.think_us << " us: throughput model " << model->throughput_ops_per_s
                                 << " sim " << s.throughput_ops_per_s << " (" << 100 * ex << "%), mean "
                                 << model->mean_latency_us << " vs " << s.mean_latency_us << " us (" << 100 * em
                                 << "%), p99 " << model->p99_latency_us << " vs " << s.p99_latency_us << " us ("
                                 << 100 * ep << "%)");
  }
  BOOST_TEST_MESSAGE("worst: throughput " << 100 * worst_x << "%, mean " << 100 * worst_mean
                                          << "%, p99 (balanced saturated case aside) " << 100 * worst_p99 << "%");
}

// Multi-issue rounds (Catfish's offloaded search issues a tree level's
// READs together): 12 READs in 3 rounds. The client pays 3 network delays,
// the READ engine still serves 12 READs. Taking one round trip per READ
// puts the unloaded latency at 12 RTTs instead of 3 and fails every case
// below the knee.
BOOST_AUTO_TEST_CASE(multi_issue_rounds_against_simulation) {
  struct Case {
    int servers, clients;
    double p, think_us;
  };
  const Case cases[] = {{1, 1, 0.0, 0},  {1, 4, 0.0, 0},   {1, 16, 0.0, 0},  {1, 256, 0.0, 0},
                        {2, 8, 0.0, 20}, {2, 64, 0.0, 20}, {2, 16, 0.5, 10}, {2, 128, 0.5, 10}};
  for (const Case& c : cases) {
    LocalityInput in;
    in.platform.servers = c.servers;
    in.platform.cores_per_server = 4;
    in.workload.clients = c.clients;
    in.workload.network_rtt_us = 3.0;
    in.workload.reads_per_client_op = 12;
    in.workload.round_trips_per_client_op = 3;
    in.workload.think_time_us = c.think_us;
    auto model = predict_split(in, c.p);
    BOOST_REQUIRE(model.is_ok());
    LocalitySim sim(in, c.p, 11);
    const SimResult s = sim.run(20'000, 200'000);
    const double ex = model->throughput_ops_per_s / s.throughput_ops_per_s - 1;
    const double em = model->mean_latency_us / s.mean_latency_us - 1;
    // Conservative near the knee (+15% at 2 servers, 8 clients): MVA has
    // each of a round's READs wait on its own, where the simulated round's
    // READs arrive together and wait once, on top of product form's spread.
    BOOST_CHECK_SMALL(ex, 0.10);
    BOOST_CHECK(em > -0.05 && em < 0.18);
    BOOST_TEST_MESSAGE("rounds: " << c.servers << " servers, " << c.clients << " clients, p = " << c.p << ", think "
                                  << c.think_us << " us: throughput model " << model->throughput_ops_per_s << " sim "
                                  << s.throughput_ops_per_s << " (" << 100 * ex << "%), mean " << model->mean_latency_us
                                  << " vs " << s.mean_latency_us << " us (" << 100 * em << "%), p99 "
                                  << model->p99_latency_us << " vs " << s.p99_latency_us << " us");
  }
}

BOOST_AUTO_TEST_CASE(round_trips_must_not_exceed_reads) {
  LocalityInput in;
  in.workload.reads_per_client_op = 2;
  in.workload.round_trips_per_client_op = 3;
  BOOST_CHECK(!in.validate().is_ok());
  in.workload.round_trips_per_client_op = -1;
  BOOST_CHECK(!in.validate().is_ok());
}

BOOST_AUTO_TEST_SUITE_END()
