// Running ahead: when the effect of a one-sided request (a READ's copy, a
// WRITE, an atomic) may be applied before the engine's clock reaches its
// moment, in the same engine round as what is due now, instead of in a
// round of its own. Exact, not approximate: an effect runs ahead only when
// nothing that can happen before its moment could see it or be seen by it,
// so results are byte-identical with running ahead off
// (SimOptions::run_ahead; tests/sim/validation_test.cc runs both ways).
// World::run_events asks quiet_effect and may_run_ahead for each event due
// later; the actors a clock step wakes are recorded by World::note_wake.
#include "backends/simgrid/sim_world.h"

namespace locus::simgrid_backend {
namespace {
namespace timer = simgrid::kernel::timer;
}  // namespace

bool World::quiet_effect(const InFlight& f) {
  const Connection& c = *f.conn;
  return is_rdma(f.wr.op) && c.actor_outstanding == 0 && !c.effects.empty() && c.effects.front() == &f;
}

// An effect may run ahead of the engine's clock when nothing can happen
// before its moment that it could see or that could see it. SimGrid's own
// timers and activities end when they end (none before it). Actors woken
// at the engine's time (they run once the events are done) are the rest:
// - none woken: nothing else can happen before the next event at all;
// - only actors on client hosts, on neither the initiator's host nor the
//   target's, and the initiator on a client host, and the effect due
//   within the lookahead: what such an actor posts takes effect (and
//   makes a response) a whole path's latency later, so after this effect;
//   it reserves its own host's links up and servers' links down, never
//   the links this effect's response takes (target's up, initiator's
//   down); it touches no memory but its own host's; and what it makes
//   itself wait for (a sleep, a CPU execution) wakes only itself. Clients
//   that do anything else in the meantime are caught by note_hazard();
// - anything else (an actor on a server host, an executor): none may run.
bool World::may_run_ahead(const InFlight& f, double at_s, double clock_s) const {
  if (!run_ahead_ || last_wake_s_ >= clock_s) return false;
  // An activity that ends exactly when it was asked to may still be
  // rounded a little earlier by the engine: keep a nanosecond clear.
  if (!native_ends_.empty() && at_s >= *native_ends_.begin() - 1e-9) return false;
  const double next_timer = timer::Timer::next();
  if (next_timer >= 0 && at_s >= next_timer) return false;
  if (client_woken_s_ < clock_s) return true;
  if (f.target == nullptr) return false;  // failing at once: no host to reason about
  const uint32_t from = f.from->host_index, to = f.target->host_index;
  return at_s < clock_s + lookahead_s_ && client_host(from) && host_woken_s_[from] < clock_s &&
         host_woken_s_[to] < clock_s;
}

void World::note_hazard() {
  if (lookahead_s_ <= 0 || engine_clock_s() >= ahead_until_s_) return;
  ++run_ahead_hazards_;
  lookahead_s_ = 0;
}

void World::note_post_between_clients(const SimNode& from, const SimNode& target) {
  if (lookahead_s_ <= 0 || !client_host(from.host_index) || !client_host(target.host_index)) return;
  note_hazard();
  lookahead_s_ = 0;  // clients that talk to each other: the rule never holds
}

}  // namespace locus::simgrid_backend
