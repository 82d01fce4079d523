// The machinery the conformance checks share: a World (one fresh Runtime,
// the memory its nodes register, the actors of one check), a Probe that
// actors record expectations into, and an Actor handle with helpers to post
// and collect completions.
//
// Why expectations go through a Probe instead of BOOST_TEST: Boost.Test is
// not thread-safe (loopback actors are OS threads) and SimGrid actors run
// on their own stacks inside run(). Actors only record; the test thread
// reports everything after run() returns, and also asserts that every
// actor ran to its end, so a check whose actors never ran cannot pass.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/transport/env.h"
#include "core/transport/runtime.h"
#include "tests/support/conformance/transport_conformance.h"

namespace locus::conformance {

// Text for expectation messages.
std::string describe(uint64_t v);
std::string describe(int64_t v);
std::string describe(int v);
std::string describe(uint32_t v);
std::string describe(bool v);
std::string describe(std::byte v);
std::string describe(WcStatus s);
std::string describe(Opcode op);
std::string describe(const Status& s);
std::string describe(const Completion& c);

class Probe {
 public:
  void expect(bool ok, const char* file, int line, std::string_view what);
  template <typename A, typename B>
  void expect_eq(const A& a, const B& b, const char* file, int line, std::string_view what) {
    const bool ok = (a == b);
    expect(ok, file, line, ok ? std::string(what) : std::string(what) + "  [" + describe(a) + " vs " + describe(b) + "]");
  }
  void fail(const char* file, int line, std::string_view what) { expect(false, file, line, what); }

  int checks() const { return checks_.load(); }
  std::vector<std::string> failures() const;

 private:
  mutable std::mutex mu_;  // held only while appending, never across a wait
  std::vector<std::string> failures_;
  std::atomic<int> checks_{0};
};

#define CONF_EXPECT(probe, cond) (probe).expect(static_cast<bool>(cond), __FILE__, __LINE__, #cond)
#define CONF_EXPECT_EQ(probe, a, b) (probe).expect_eq((a), (b), __FILE__, __LINE__, #a " == " #b)
#define CONF_FAIL(probe, what) (probe).fail(__FILE__, __LINE__, (what))

// Test-owned memory: a body bracketed by guard bytes, so a write that
// escapes the registered bounds shows up in the guards. The body starts
// 8-byte aligned (atomics need it) and holds a known pattern.
class GuardedBuffer {
 public:
  static constexpr uint64_t kGuardBytes = 64;
  static constexpr std::byte kGuardByte{0xA5};

  GuardedBuffer(uint64_t length, uint8_t pattern_seed);

  std::byte* data() { return bytes() + kGuardBytes; }
  uint64_t size() const { return length_; }
  std::byte initial(uint64_t i) const { return pattern_byte(seed_, i); }
  static std::byte pattern_byte(uint8_t seed, uint64_t i) {
    return static_cast<std::byte>((i * 131 + seed * 17 + (i >> 8)) & 0xff);
  }

  uint64_t load_u64(uint64_t offset) const;
  void store_u64(uint64_t offset, uint64_t value);

  bool guards_intact() const;
  // First body offset in [begin, end) whose byte differs from the initial
  // pattern, or -1.
  int64_t first_change(uint64_t begin, uint64_t end) const;

 private:
  std::byte* bytes() const { return reinterpret_cast<std::byte*>(storage_.get()); }
  const std::byte* body() const { return bytes() + kGuardBytes; }
  // uint64_t words keep the body 8-byte aligned (kGuardBytes is a multiple of 8).
  std::unique_ptr<uint64_t[]> storage_;
  uint64_t length_;
  uint8_t seed_;
};

// One actor's view: its Env, the shared Probe, and completions it has
// received but not yet consumed (wait() may return several at once).
class Actor {
 public:
  Actor(Env& env, Probe& probe, const BackendUnderTest& backend)
      : env(env), probe(probe), backend(backend) {}

  Transport& transport() { return *env.transport; }
  NodeId node() { return env.transport->node_id(); }

  Status post(std::span<const WorkRequest> batch) { return env.transport->post(batch); }
  Status post(const WorkRequest& wr) { return post(std::span<const WorkRequest>(&wr, 1)); }
  Status post_recv(std::span<const RecvRequest> batch) { return env.transport->post_recv(batch); }
  Status post_recv(const RecvRequest& r) { return post_recv(std::span<const RecvRequest>(&r, 1)); }

  // The next completion, or nullopt (and a recorded failure naming `what`)
  // if none arrives within `timeout` (default: the backend's).
  std::optional<Completion> next(std::string_view what, Nanos timeout = 0);
  // Posts one request (expecting post() to accept it) and returns the next
  // completion.
  std::optional<Completion> exec(const WorkRequest& wr, std::string_view what);
  // Records a failure if any completion arrives within the quiet period:
  // every signaled request yields exactly one completion, no more.
  void expect_quiet(std::string_view what);

  Env& env;
  Probe& probe;
  const BackendUnderTest& backend;

 private:
  std::deque<Completion> pending_;
};

// Records whether `c` is a completion of request `wr_id`, of `op`, against
// `peer`, with `status`.
void expect_completion(Probe& probe, const std::optional<Completion>& c, uint64_t wr_id, Opcode op,
                       WcStatus status, NodeId peer, const char* file, int line);
#define CONF_EXPECT_WC(actor, c, wr_id, op, status, peer) \
  ::locus::conformance::expect_completion((actor).probe, (c), (wr_id), (op), (status), (peer), __FILE__, __LINE__)

// A one-shot gate between actors, built on the backend's own SyncFactory so
// it blocks correctly on every backend (simulated actors included).
class Latch {
 public:
  Latch(SyncFactory& sync, Clock& clock);
  void open();
  // False if the latch stayed closed for `timeout`.
  bool wait(Nanos timeout);

 private:
  std::unique_ptr<Mutex> mu_;
  std::unique_ptr<CondVar> cv_;
  Clock& clock_;
  bool open_ = false;
};

class World {
 public:
  // Creates the runtime (BOOST_REQUIREs success). Call on the test thread.
  World(const BackendUnderTest& backend, std::string_view check_name);
  ~World();

  NodeId add_node(std::string name, bool is_server);
  // Memory owned by the world; it outlives the runtime.
  GuardedBuffer& buffer(uint64_t length, uint8_t pattern_seed);
  // Registers [offset, offset+length) of `buf` on `node` (BOOST_REQUIREs
  // success); length 0 means to the end of the body.
  Region register_region(NodeId node, GuardedBuffer& buf, Access access, uint64_t offset = 0,
                         uint64_t length = 0);
  Latch& latch(NodeId any_node);

  void spawn(NodeId node, std::string name, std::function<void(Actor&)> fn);
  // Runs every spawned actor to completion, then reports the probe's
  // failures and asserts that every actor finished and something was checked.
  void run();

  Runtime& runtime() { return *runtime_; }
  Env setup_env(NodeId node) { return runtime_->setup_env(node); }
  Probe& probe() { return probe_; }
  const BackendUnderTest& backend() const { return backend_; }

 private:
  const BackendUnderTest& backend_;
  // Destroyed after the runtime (declared before it): the runtime may touch
  // registered memory until it is gone.
  std::deque<GuardedBuffer> buffers_;
  std::unique_ptr<Runtime> runtime_;
  // Destroyed before the runtime whose SyncFactory made them.
  std::deque<Latch> latches_;
  Probe probe_;
  int spawned_ = 0;
  std::atomic<int> finished_{0};
};

// Work-request builders. `local` is a registration on the posting node and
// `local_offset` an offset inside it.
LocalBuf local_buf(const Region& local, uint64_t local_offset, uint32_t length);
WorkRequest read_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset, uint32_t length);
WorkRequest write_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset, uint32_t length);
WorkRequest write_imm_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset,
                         uint32_t length, uint32_t imm);
WorkRequest cas_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset,
                   uint64_t compare, uint64_t swap);
WorkRequest faa_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset, uint64_t add);
WorkRequest send_wr(uint64_t wr_id, NodeId target, const Region& local, uint64_t local_offset, uint32_t length);
RecvRequest recv_req(uint64_t wr_id, const Region& local, uint64_t local_offset, uint32_t length);

uint64_t load_u64(const void* p);
void store_u64(void* p, uint64_t v);

// The initial contents of a GuardedBuffer built with `seed`, bytes
// [begin, begin+n): what an exact transfer from it must deliver.
std::vector<std::byte> pattern(uint8_t seed, uint64_t begin, uint64_t n);
// First offset where the n bytes at a and b differ, or -1.
int64_t first_mismatch(const void* a, const void* b, uint64_t n);
#define CONF_EXPECT_BYTES(probe, actual, expected, n)                                       \
  (probe).expect_eq(::locus::conformance::first_mismatch((actual), (expected), (n)), int64_t{-1}, \
                    __FILE__, __LINE__, "first differing byte of " #actual " vs " #expected " (-1: none)")
#define CONF_EXPECT_UNTOUCHED(probe, buf, begin, end)                                     \
  (probe).expect_eq((buf).first_change((begin), (end)), int64_t{-1}, __FILE__, __LINE__,  \
                    "first changed byte of " #buf " in [" #begin ", " #end ") (-1: none)")

}  // namespace locus::conformance
