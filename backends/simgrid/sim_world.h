// Internals of the SimGrid backend. A World owns the engine, the hosts and
// every simulated node; a SimNode is one endpoint: its registrations, its
// completion queue, its posted receives, its NIC's service queues and the
// executor actors that carry its work requests through the network model.
//
// Everything here runs in SimGrid's single OS thread; actors only switch
// at simulation calls (wait, sleep, execute, communicate), so plain data
// structures are safe between such calls and need no locks.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/simgrid/sim_runtime.h"
#include "core/common/short_mutex.h"
#include "core/transport/transport.h"

namespace locus::simgrid_backend {

namespace sg4 = simgrid::s4u;

struct SimRegion {
  std::byte* base = nullptr;
  uint64_t length = 0;
  Access access = kLocalOnly;
  uint32_t rkey = 0;
};

struct SimNode;

// Every registration of the world, by id (ids are handed out in order and
// never reused): a lookup on the data path is one index, not a hash.
struct RegionSlot {
  const SimNode* owner = nullptr;  // none once deregistered
  SimRegion region;
};

// A NIC's first-come-first-served service budgets: RDMA (READ, WRITE,
// atomics), verb sends and verb receives, each at its own rate (a NIC
// sends ~0.7 M and receives ~1.5 M verb messages/s independently). RDMA
// and verb sending share the NIC's engines: running both at their peaks
// leaves each the share PlatformSpec gives, which is charged as extra work
// ahead of later requests in the other budget.
class NicQueues {
 public:
  enum Budget { kRdma = 0, kSend = 1, kRecv = 2 };
  void configure(double rdma_share_with_verbs, double verbs_share_with_rdma);
  struct Slot {
    double start_s;
    double finish_s;
  };
  Slot reserve(Budget b, double now_s, double service_s);
  // Processor-sharing model: only the busy time is kept here.
  void account(Budget b, double service_s) { busy_s_[b] += service_s; }
  double busy_s(Budget b) const { return busy_s_[b]; }
  void reset_busy() { busy_s_[0] = busy_s_[1] = busy_s_[2] = 0; }

  // Bytes registered for remote READs on this NIC's host: what its
  // address-translation cache must cover (NicSpec::atc_extra_ns).
  uint64_t readable_bytes = 0;
  // Queue pairs that end on this NIC: what its queue-pair state cache
  // must hold (NicSpec::qp_extra_ns). Counted only with that cache.
  uint64_t qps = 0;

 private:
  double free_s_[3] = {0, 0, 0};
  double busy_s_[3] = {0, 0, 0};
  double send_cost_on_rdma_ = 0, rdma_cost_on_send_ = 0;
};

// One direction of a link under the packet-level model: when it is free
// again, how fast it serialises and how long a bit takes to cross it.
// The same direction carries SimGrid's CM02 flows (longer messages); the
// two share its capacity as sim_events.cc ("Packets and flows on one
// link") describes.
struct PacketLink {
  double bytes_per_s = 0;
  double latency_s = 0;
  double free_s = 0;
  sg4::Link* flow_link = nullptr;  // this direction in SimGrid's model
  uint32_t flows = 0;              // executor flows crossing it now
  double flow_bytes_per_s = 0;     // the capacity set for them
  // Packet bytes serialised since window_start_s, and the packets' rate
  // over the last closed window.
  double window_start_s = 0;
  double window_bytes = 0;
  double packet_bytes_per_s = 0;
  bool share_pending = false;  // in World::pending_shares_
  // When the packets queued on it finish serialising, in order: those
  // after a moment are the packets still there then.
  std::deque<double> packet_ends;
  uint32_t packets_after(double t_s) {
    while (!packet_ends.empty() && packet_ends.front() <= t_s) packet_ends.pop_front();
    return static_cast<uint32_t>(packet_ends.size());
  }
};

struct Connection;
class World;

// What the backend keeps per actor spawned by the Runtime (its SimGrid
// actor data). CPU time charged where the host has a core for each of its
// actors cannot be delayed by anyone else, so it need not be simulated as
// an execution at once: it is owed (debt_s), and the actor's clock runs
// ahead of the engine's by it. The debt is paid where time matters to
// others: a one-sided or message request is posted at the actor's own
// time (the event-driven datapath schedules it there), a wait for a
// completion that has not come yet simply ends at or after that time, and
// everything else (a sleep, a lock, a receive, a poll, an executor-carried
// batch, the actor's end) first sleeps the debt off. This saves the
// engine an execution activity and two actor switches per charge.
class PollingCore;
struct SliceWindows;
struct WakeCredit;
struct ActorState {
  SimNode* node = nullptr;
  World* world = nullptr;
  double debt_s = 0;
  PollingCore* polling = nullptr;  // a polling daemon's busy core (sim_energy.h)
  // Under [platform] cpu_scheduler = "cfs" (sim_sched.h): a polling
  // daemon's slices on an oversubscribed host, any other actor's credit.
  const SliceWindows* slices = nullptr;
  WakeCredit* wake = nullptr;
};

// The engine's clock, kept by a callback the engine runs each time it
// advances (the only place its clock changes). The datapath reads the
// clock a few dozen times per operation; sg4::Engine::get_clock() is a
// chain of calls, this is a load. World's constructor starts the tracking.
inline double tracked_clock_s = 0;
inline double engine_clock_s() { return tracked_clock_s; }
void track_engine_clock();

// The calling actor's state; none in maestro (timers) or an executor.
inline ActorState* current_actor() {
  sg4::Actor* self = sg4::Actor::self();
  return self == nullptr ? nullptr : self->get_data<ActorState>();
}
// An actor's own time: the engine's plus what it owes (the engine's for none).
inline double own_time_s(const ActorState* a) { return engine_clock_s() + (a == nullptr ? 0.0 : a->debt_s); }
// The calling actor's own time.
inline double actor_now_s() { return own_time_s(current_actor()); }
// A SimGrid activity of an actor (an execution, a sleep, a timed wait, an
// executor's flows) for as long as it runs, with the latest moment it can
// end by itself, or 0 if that moment is not known. While none ends before
// an event of the World's own queue, that event may run ahead of the
// engine's clock (World::run_events).
class NativeActivity {
 public:
  NativeActivity(World* world, double ends_by_s);
  ~NativeActivity();
  NativeActivity(const NativeActivity&) = delete;
  NativeActivity& operator=(const NativeActivity&) = delete;

 private:
  World* world_;
  std::multiset<double>::iterator it_;
};

// Sleeps the calling actor's debt off, so its clock and the engine's agree.
void settle_debt();

// An actor blocked in wait() for a completion on its node: woken by the
// first completion or, at its deadline, by its node's timeout timer. One
// kernel timer per node, moved only when a waiter's deadline comes before
// it, is much cheaper than a SimGrid acquire with a timeout, which puts a
// sleep action on the host's CPU model for every wait. The actor suspends
// itself and is resumed: one simcall, where a semaphore acquisition takes
// two and an activity.
struct CqWaiter {
  explicit CqWaiter(SimNode& n);
  // Also run when a daemon is killed in its wait: leaves no timer and no
  // queue entry behind.
  ~CqWaiter();
  CqWaiter(const CqWaiter&) = delete;
  CqWaiter& operator=(const CqWaiter&) = delete;
  // Blocks the calling actor until a completion or `deadline_s`.
  void block_until(double deadline_s);

  SimNode& node;
  sg4::Actor* actor;
  double deadline_s = 0;
  bool queued = false;
  CqWaiter* prev = nullptr;  // in the node's list of waiters
  CqWaiter* next = nullptr;
};

// A work request carried by the event-driven datapath (sim_events.cc): its
// times are known in advance, so kernel timers, not actors, apply its
// effect on the target and deliver its completion.
struct InFlight {
  WorkRequest wr;
  uint64_t ticket = 0;
  SimNode* from = nullptr;
  SimNode* target = nullptr;
  Connection* conn = nullptr;
  double start_s = 0;         // NIC service starts (a tearable READ copies half)
  double effect_s = 0;        // NIC service ends: the effect on the target
  double done_s = 0;          // the response is back: the completion
  double rnr_deadline_s = 0;  // a SEND waiting for a receive gives up here
  // A SEND queued behind others in its NIC leaves for the wire then
  // (World::depart); until it has, start_s and effect_s are that moment.
  double depart_s = 0;
  WcStatus status = WcStatus::kSuccess;
  bool half_copied = false;
  bool departed = true;
  // World::deregistrations when the initiator's buffer was last found
  // registered (at post): while no region is deregistered it still is.
  uint64_t checked_deregistrations = 0;
  uint64_t armed_seq = 0;  // its pending event in World's queue, 0 if none
  double armed_s = 0;
  InFlight* next = nullptr;  // in its connection's FlightQueue
};

// A first-in first-out queue of requests linked through InFlight::next: a
// request is in at most one queue at a time, and a connection's queues
// then cost two pointers each and no allocation (a simulation has one
// connection per initiator and target pair: many thousands).
class FlightQueue {
 public:
  bool empty() const { return head_ == nullptr; }
  InFlight* front() const { return head_; }
  InFlight* back() const { return tail_; }
  void push_back(InFlight* f) {
    f->next = nullptr;
    (tail_ == nullptr ? head_ : tail_->next) = f;
    tail_ = f;
  }
  void pop_front() {
    head_ = head_->next;
    if (head_ == nullptr) tail_ = nullptr;
  }

 private:
  InFlight* head_ = nullptr;
  InFlight* tail_ = nullptr;
};

// Posting-order bookkeeping of one connection (initiator -> target), so
// requests are served and completed in order whichever datapath carries
// them. It exists only while requests are in flight on it: once the last
// completes it goes back to the World's pool (World::release_if_idle), so
// a node that has talked to thousands of peers keeps nothing per peer
// (tickets only order requests in flight, so a fresh one starts at 0).
struct Connection {
  SimNode* owner = nullptr;
  NodeId peer = kInvalidNode;
  uint64_t next_ticket = 0;
  uint64_t serving = 0;          // ticket whose NIC slot is reserved next
  uint64_t completing = 0;       // ticket whose completion is delivered next
  sg4::ConditionVariablePtr cv;  // created once an executor carries a request
  // Event-driven datapath: requests awaiting their effect, then their
  // completion, each in ticket order.
  FlightQueue effects;
  FlightQueue completions;
  // Requests carried by executor actors (flows, processor-sharing NIC)
  // not yet completed; while any are, new batches take the same path.
  uint32_t actor_outstanding = 0;
  bool waiting_recv = false;  // listed in the target's rnr_waiters
};

struct Batch {
  std::vector<WorkRequest> wrs;
  std::vector<uint64_t> tickets;
};

// Fields are laid out hot first: a simulation has thousands of nodes, and
// each request touches its initiator's and target's first few cache lines
// only.
struct alignas(64) SimNode {
  World* world = nullptr;
  const std::vector<RegionSlot>* region_table = nullptr;  // the World's
  sg4::Host* host = nullptr;
  // Endpoints on one host (NodeOptions::host_of) share its NIC, cores,
  // links and PCIe; the first endpoint owns the host.
  NicQueues* nic = nullptr;
  Connection* last_conn = nullptr;  // connection_to's cache
  NodeId last_peer = kInvalidNode;
  NodeId id = kInvalidNode;
  uint32_t host_index = 0;  // into World's packet links
  uint32_t host_cores = 1;  // its host's, read once (cpu_uncontended runs per charge)
  // Actors the Runtime spawned on this node (executors not counted).
  uint32_t actors = 0;
  uint32_t outstanding_send = 0;
  uint32_t posted_recvs = 0;
  bool is_server = false;
  bool crashed = false;
  bool owns_host = true;
  double cpu_busy_s = 0;
  uint64_t bytes_in = 0, bytes_out = 0;  // on this node's link
  // Actors blocked in wait() for a completion, first come first woken (a
  // list through the waiters, which live on the actors' stacks).
  CqWaiter* first_waiter = nullptr;
  CqWaiter* last_waiter = nullptr;
  simgrid::kernel::timer::Timer* timeout_timer = nullptr;  // at the earliest deadline, or later
  double timeout_at_s = 0;
  std::deque<Completion> cq;
  // Client nodes: batches the posting actor will carry itself in its next
  // wait() (it would only block there anyway), saving two actor switches
  // per batch. Servers always hand batches to executors, so a reply being
  // sent never holds up the next request.
  std::deque<std::unique_ptr<Batch>> deferred;

  std::string name;
  sg4::Host* nic_host = nullptr;  // processor-sharing NIC model only
  std::deque<RecvRequest> recvs;
  sg4::MutexPtr mu;  // only to pair with the condition variables below
  sg4::ConditionVariablePtr recv_cv;
  sg4::ConditionVariablePtr work_cv;
  std::deque<std::unique_ptr<Batch>> pending;
  uint32_t executors = 0;
  uint32_t idle_executors = 0;
  // Connections with requests in flight, at most one per peer and one per
  // outstanding request (a Connection never moves: InFlight and last_conn
  // point to it).
  std::vector<Connection*> active_connections;
  // Their peers, index for index: connection_to scans these contiguous
  // ids instead of loading every Connection (a cache miss each on a
  // server with dozens of clients in flight).
  std::vector<NodeId> active_peers;
  // Peers with a higher id this node has a queue pair with (one per pair
  // of nodes, whichever posted first), kept only under a queue-pair cache.
  std::unordered_set<NodeId> qp_peers;
  // Peers this node has posted to through executors (World::post).
  std::unordered_set<NodeId> executor_peers;
  // Event-driven SENDs to this node waiting (RNR) for a posted receive.
  std::vector<Connection*> rnr_waiters;
  // Peers fenced off this node's memory and receives until they rejoin
  // (Transport::fence_peer): their requests fail when they would take effect.
  std::unordered_set<NodeId> fenced;

  void add_waiter(CqWaiter* w);
  void remove_waiter(CqWaiter* w);
  void complete(const Completion& c);
  // Wakes the waiters whose deadline has come; re-arms for the others.
  void fire_timeouts();
  void arm_timeout(double deadline_s);
  // The registration with this id, or none.
  const SimRegion* region(RegionId id) const {
    const std::vector<RegionSlot>& t = *region_table;
    return id < t.size() && t[id].owner == this ? &t[id].region : nullptr;
  }
};

// True if `buf` lies inside one of `node`'s live registrations (its lkey).
bool local_buffer_ok(const SimNode& node, const LocalBuf& buf);
// The target's registration a one-sided request may touch, or none if its
// rkey, rights or bounds do not allow it.
const SimRegion* find_remote(SimNode& target, const WorkRequest& wr);
Connection& connection_to(SimNode& from, NodeId to);

constexpr uint64_t kCacheLine = 64;

inline bool is_rdma(Opcode op) {
  return op == Opcode::kRead || op == Opcode::kWrite || op == Opcode::kCas || op == Opcode::kFaa;
}

// Bytes a request moves at the target: atomics move one word.
inline uint32_t op_bytes(const WorkRequest& wr) {
  return (wr.op == Opcode::kCas || wr.op == Opcode::kFaa) ? 8 : wr.local.length;
}

class World {
 public:
  World(const scenario::PlatformSpec& platform, const SimOptions& options);
  ~World();

  const scenario::PlatformSpec& platform() const { return platform_; }
  const SimOptions& options() const { return options_; }
  double start_s() const { return start_s_; }
  Nanos now_ns() const;

  // A new endpoint on a host of its own, or on `host_of`'s host.
  StatusOr<SimNode*> add_node(const std::string& name, bool is_server, SimNode* host_of = nullptr);
  SimNode* node(NodeId id) { return id < nodes_.size() ? nodes_[id].get() : nullptr; }
  size_t node_count() const { return nodes_.size(); }
  // Registers [addr, addr + length) of `node`; its id is also its lkey.
  Region add_region(SimNode& node, std::byte* addr, uint64_t length, Access access);
  // False if `node` has no registration `id`.
  bool remove_region(const SimNode& node, RegionId id);
  // True while `f`'s local buffer must still be registered: looked up only
  // if some region was deregistered since it was last found.
  bool local_buffer_still_ok(InFlight& f) const;
  uint32_t make_rkey(RegionId id) const;

  // The connection from `from` to `to`, taken from the pool if none is active.
  Connection& open_connection(SimNode& from, NodeId to);
  // Returns `c` to the pool if no request is in flight on it.
  void release_if_idle(Connection& c);
  // Carries a validated batch: on the event-driven datapath when every
  // message fits one packet and the NIC is FCFS, else by executor actors.
  void post(SimNode& from, std::span<const WorkRequest> batch);
  // A receive was posted on `node`: SENDs waiting for one go on.
  void receives_posted(SimNode& node);
  // Queues a validated batch on `from` and wakes (or creates) an executor.
  void submit(SimNode& from, std::unique_ptr<Batch> batch);
  // Carries the node's deferred batches in the calling actor, in order.
  void run_deferred(SimNode& node);
  // Hands the node's deferred batches to executors (poll() must not block).
  void release_deferred(SimNode& node);
  // Asks every executor to finish once its queue is empty.
  void stop_executors();
  void restart_executors() { stopping_ = false; }
  uint32_t live_executors() const { return live_executors_; }
  std::vector<ResourceUsage> usage(double duration_s) const;
  // On the wire: the request, and its response (data, atomic result, ACK).
  uint64_t request_bytes(const WorkRequest& wr) const;
  uint64_t response_bytes(const WorkRequest& wr, bool success) const;
  // The target NIC's service time for `wr`.
  Nanos service_ns(const WorkRequest& wr, const SimNode& target) const;
  // The same from the NIC's rate curves and address-translation cache only.
  Nanos curve_service_ns(const WorkRequest& wr, const SimNode& target) const;
  void reset_usage();
  // Server handlers that ran with no cost (none in handler_cost_us and no
  // default_handler_us): the run fails naming them (SimRuntime::run).
  void note_uncosted_handler(std::string_view name) {
    if (uncosted_handlers_.find(name) == uncosted_handlers_.end()) uncosted_handlers_.emplace(name);
  }
  const std::set<std::string, std::less<>>& uncosted_handlers() const { return uncosted_handlers_; }
  // Runtime actors on nodes: the CPU of an actor alone on its node, on a
  // host with a core for each such actor, is charged as debt (ActorState).
  void actor_started(SimNode& node);
  void actor_ended(SimNode& node);
  // Never under a power profile: the energy plugin sees executions only.
  bool cpu_uncontended(const SimNode& node) const {
    return node.actors == 1 && host_uncontended(node) && !platform_.power.given;
  }
  // The platform's hosts (servers, then client hosts) in host_index order.
  std::vector<sg4::Host*> hosts() const;
  // `n` more (or fewer) executions that run on the host for the whole run
  // (background load, sim_energy.h) contend for its cores as actors do.
  void add_host_load(uint32_t host_index, int n);
  // An execution on such a host takes exactly its length.
  bool host_uncontended(const SimNode& node) const { return host_actors_[node.host_index] <= node.host_cores; }
  // An actor woken at the engine's current time (it runs before the clock
  // moves on): no event may run ahead of it.
  void note_wake() { last_wake_s_ = engine_clock_s(); }
  // An actor of `node` woken at the engine's current time. One on a
  // client host lets effects run ahead by less than the lookahead still
  // (may_run_ahead); any other blocks them as note_wake() does.
  void note_wake(const SimNode& node) {
    const double now = engine_clock_s();
    if (!client_host(node.host_index)) {
      last_wake_s_ = now;
      return;
    }
    host_woken_s_[node.host_index] = now;
    client_woken_s_ = now;
  }
  // Called where an actor does something that the lookahead rule assumes
  // no client-host actor does (crash a node, wake another actor through a
  // lock, post to a client host): if an effect ran ahead under that rule
  // and its moment has not come, the order may differ from the engine's.
  // Counted (SimOptions::run_ahead_hazards), and the rule is off from then.
  void note_hazard();
  bool client_host(uint32_t host_index) const { return host_index >= server_hosts_.size(); }
  // A post from `from` to `target`: between client hosts, the lookahead
  // rule is off from now on (a hazard if an effect is ahead).
  void note_post_between_clients(const SimNode& from, const SimNode& target);

 private:
  std::set<std::string, std::less<>> uncosted_handlers_;
  void build_platform();
  // Event-driven datapath (sim_events.cc).
  bool packet_path_ok(SimNode& from, std::span<const WorkRequest> batch);
  // Posted at `now` (the engine's time, or later by the poster's debt).
  void launch(SimNode& from, Connection& c, const WorkRequest& wr, double now);
  // The request leaves its initiator's NIC at at_s: its packet crosses the
  // links and queues at the target's NIC.
  void depart(InFlight& f, double at_s);
  // When a message of `bytes` sent at `t_s` has fully arrived.
  double packet_leg(const SimNode& a, const SimNode& b, uint64_t bytes, double t_s);
  // The packet links a message from `a` to `b` crosses, in order (at most
  // six); none between two nodes of one host.
  size_t route(const SimNode& a, const SimNode& b, PacketLink** hops);
  // Packets and flows on one link (sim_events.cc): an executor flow from
  // `a` to `b` starts or ends; the capacity flows get on a link, from the
  // packets' rate; a packet's serialisation rate beside the link's flows.
  void flow_started(const SimNode& a, const SimNode& b);
  void flow_ended(const SimNode& a, const SimNode& b);
  double flow_share(PacketLink& l) const;
  double packet_share(PacketLink& l, uint32_t packets);
  void note_packet_bytes(PacketLink& l, double bytes, double at_s);
  // Queues `l` for apply_shares() if its flows' share moved.
  void request_share(PacketLink& l);
  // Sets the flow capacity of the links whose share changed (in maestro).
  void apply_shares();
  // Carries the connection's requests up to `now_s`. With `may_wake`
  // false (an event run ahead of the engine's clock) it stops before
  // anything that could wake an actor: a message delivery, a completion.
  void drain(Connection& c, double now_s, bool may_wake);
  // True for the effect of a one-sided request at the head of its
  // connection: applying it wakes nobody.
  static bool quiet_effect(const InFlight& f);
  // True if the event of `f` at `at_s` may run now, at engine time
  // `clock_s`: no SimGrid activity or timer can end or fire before
  // `at_s`, and nobody woken at `clock_s` can act on what it touches
  // before then (see the comment of its definition).
  bool may_run_ahead(const InFlight& f, double at_s, double clock_s) const;
  bool advance_effect(InFlight& f, double now_s);
  // Schedules drain(f's connection) at `at_s` (replacing f's pending one),
  // for f's effect or, once that is done, its completion.
  enum class Phase : uint8_t { kEffect, kCompletion };
  void arm(InFlight& f, double at_s, Phase phase = Phase::kEffect);
  // Runs the queued events that are due, then sets the one kernel timer
  // for the next.
  void run_events();
  void set_events_timer(double at_s);
  void finish(InFlight& f);
  InFlight* new_flight();
  void executor_loop(SimNode& node);
  void execute_batch(SimNode& from, Batch& batch);
  // The request's effect on the target's memory during its NIC slot.
  WcStatus apply(SimNode& from, SimNode& target, const WorkRequest& wr, const NicQueues::Slot& slot);
  // Delivers a SEND or WRITE_WITH_IMM into the receive it consumed.
  WcStatus deliver_message(SimNode& from, SimNode& target, const WorkRequest& wr, const RecvRequest& recv);
  // Pops the target's oldest posted receive, waiting (RNR) for one; none
  // if the RNR budget ran out.
  std::optional<RecvRequest> take_recv(SimNode& target);

  scenario::PlatformSpec platform_;
  SimOptions options_;
  std::unique_ptr<sg4::Engine> engine_;
  double start_s_ = 0;
  std::vector<sg4::Host*> server_hosts_, client_hosts_;
  std::vector<sg4::Link*> links_;
  uint32_t next_client_host_ = 0, next_server_host_ = 0;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  // Set-up code may register from several OS threads at once (a design's
  // sharded record loader), so the table's writers take regions_mu_. The
  // data path only reads it, from the one thread the simulation runs on,
  // after set-up: its readers take no lock.
  ShortMutex regions_mu_;
  std::vector<RegionSlot> regions_{1};  // id 0 is never a registration
  uint64_t deregistrations_ = 0;
  bool stopping_ = false;
  uint32_t live_executors_ = 0;
  // Packet-level links: per host {pcie up, pcie down, link up, link down},
  // then per rack {uplink up, uplink down}.
  std::vector<PacketLink> packet_links_;
  uint32_t racks_ = 0;
  // Links whose flow capacity is to be set, by one kernel timer (a
  // capacity set from an actor would be a simcall, and let others run).
  std::vector<PacketLink*> pending_shares_;
  simgrid::kernel::timer::Timer* shares_timer_ = nullptr;
  // Set by ~World: a flow's actor killed while the engine goes sets no
  // timer, which would outlive this world.
  bool tearing_down_ = false;
  std::vector<std::unique_ptr<NicQueues>> nics_;  // one per host in use
  std::vector<NicQueues*> host_nics_;             // by host_index
  std::vector<uint32_t> host_actors_;             // by host_index
  // The event-driven datapath's own queue: a binary min-heap of (time,
  // sequence) entries, one SimGrid kernel timer at its earliest. An
  // entry whose sequence is no longer its InFlight's armed_seq is stale.
  struct Event {
    double at_s;
    uint64_t seq;
    InFlight* f;
    Phase phase;
  };
  std::vector<Event> events_;
  uint64_t next_event_seq_ = 1;
  simgrid::kernel::timer::Timer* events_timer_ = nullptr;
  double events_timer_s_ = 0;
  bool running_events_ = false;
  std::vector<std::unique_ptr<InFlight>> flights_;
  std::vector<std::unique_ptr<Connection>> connections_;  // every one made
  std::vector<Connection*> free_connections_;
  std::vector<InFlight*> free_flights_;
  // NativeActivity: the moments by which the running ones end (0: unknown).
  friend class NativeActivity;
  std::multiset<double> native_ends_;
  double last_wake_s_ = -1;
  bool run_ahead_ = true;          // SimOptions::run_ahead, if the engine's timers are visible
  uint64_t events_run_ahead_ = 0;  // reported to SimOptions::events_run_ahead
  // The lookahead rule (may_run_ahead): when actors on client hosts only
  // were woken at the engine's time, by host index; the latest such time;
  // the shortest time from a post on one host to its effect on another
  // (0: the rule is off); the latest moment an effect ran ahead to.
  std::vector<double> host_woken_s_;
  double client_woken_s_ = -1;
  double lookahead_s_ = 0;
  double ahead_until_s_ = -1;
  uint64_t run_ahead_hazards_ = 0;  // reported to SimOptions::run_ahead_hazards
};

}  // namespace locus::simgrid_backend
