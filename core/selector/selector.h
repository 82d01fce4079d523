// Selector: the per-request choice between server-side processing (ship
// the step to the server's CPU as an RPC) and client-side processing (do it
// with one-sided RDMA READs on the client's CPU), and the feedback that
// informs it. A client asks once per step on one server (for Cell, one
// meganode traversal), performs the step the chosen way, and reports what
// it measured. One Selector belongs to one client actor: not thread-safe,
// no clock or randomness of its own (time is passed in, randomness comes
// from the actor's Env), so a SimGrid run replays from its seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>

#include "core/common/time.h"
#include "core/transport/types.h"

namespace locus::selector {

enum class Path : uint8_t { kServer, kClient };
std::string_view path_name(Path path);
std::ostream& operator<<(std::ostream& os, Path path);
inline Path other(Path p) { return p == Path::kServer ? Path::kClient : Path::kServer; }

struct SelectorStats {
  uint64_t server_choices = 0;
  uint64_t client_choices = 0;
  uint64_t explorations = 0;       // choices of the path estimated to be worse
  uint64_t samples_kept = 0;
  uint64_t samples_discarded = 0;  // outliers
  uint64_t history_drops = 0;      // more discarded than kept in one moving period
  uint64_t idle_resets = 0;        // history dropped after an idle connection

  uint64_t choices() const { return server_choices + client_choices; }
  SelectorStats& operator+=(const SelectorStats& o) {
    server_choices += o.server_choices;
    client_choices += o.client_choices;
    explorations += o.explorations;
    samples_kept += o.samples_kept;
    samples_discarded += o.samples_discarded;
    history_drops += o.history_drops;
    idle_resets += o.idle_resets;
    return *this;
  }
  double server_share() const {
    return choices() == 0 ? 0.0 : static_cast<double>(server_choices) / static_cast<double>(choices());
  }
};
static_assert(sizeof(SelectorStats) == 7 * sizeof(uint64_t), "operator+= must add every counter");

class Selector {
 public:
  virtual ~Selector() = default;
  virtual std::string_view name() const = 0;

  // The path for one step on `server`, at time `now`.
  virtual Path choose(NodeId server, Nanos now) = 0;
  // A measured outcome on `server`: for kServer the latency of one
  // server-side request (queueing and round trip included), for kClient
  // the latency of one RDMA round trip of a client-side step (one READ, or
  // one round of READs issued together).
  virtual void observe(NodeId server, Path path, Nanos latency_ns, Nanos now) {
    (void)server, (void)path, (void)latency_ns, (void)now;
  }
  // How many dependent RDMA round trips one client-side step took: each
  // needs the data of the one before, so the step costs that many times
  // the latency observe() reports for kClient. Cell: the READs of one
  // meganode traversal (the paper's m; nodes served from the client's cache
  // cost none, so this is the height as experienced). Catfish: the
  // multi-issue rounds of one offloaded search.
  virtual void observe_client_step_cost(uint32_t dependent_reads) { (void)dependent_reads; }
  // Server-to-client feedback: `server` RDMA-WRITEs a HeartbeatRecord (its
  // CPU utilisation and a sequence; server_feedback.h) into `slot`, 16
  // bytes, 8-byte aligned, in this client's registered memory and valid as
  // long as the selector chooses for `server`. A selector that uses it keeps
  // the pointer and reads the slot when it chooses, so each choice sees the
  // newest record landed by then (Catfish's clients attach their heartbeat
  // slot at connect).
  virtual void attach_server_feedback(NodeId server, const std::byte* slot) { (void)server, (void)slot; }

  const SelectorStats& stats() const { return stats_; }

 protected:
  Path count(Path p) {
    (p == Path::kServer ? stats_.server_choices : stats_.client_choices) += 1;
    return p;
  }
  SelectorStats stats_;
};

}  // namespace locus::selector
