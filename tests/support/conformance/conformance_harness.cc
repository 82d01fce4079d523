// Implementation of the conformance harness (see conformance_harness.h).
#include "tests/support/conformance/conformance_harness.h"

#include <algorithm>
#include <array>
#include <cstring>

#include <boost/test/unit_test.hpp>
#include <fmt/format.h>

namespace locus::conformance {

std::string describe(uint64_t v) { return fmt::format("{} (0x{:x})", v, v); }
std::string describe(int64_t v) { return std::to_string(v); }
std::string describe(int v) { return std::to_string(v); }
std::string describe(uint32_t v) { return fmt::format("{} (0x{:x})", v, v); }
std::string describe(bool v) { return v ? "true" : "false"; }
std::string describe(std::byte v) { return fmt::format("0x{:02x}", static_cast<unsigned>(v)); }
std::string describe(WcStatus s) { return std::string(wc_status_name(s)); }
std::string describe(Opcode op) { return std::string(opcode_name(op)); }
std::string describe(const Status& s) { return s.to_string(); }
std::string describe(const Completion& c) {
  return fmt::format("{{wr_id={} op={} status={} peer={} byte_len={} imm={} has_imm={}}}", c.wr_id,
                     opcode_name(c.op), wc_status_name(c.status), c.peer, c.byte_len, c.imm, c.has_imm);
}

// ---- Probe ----

void Probe::expect(bool ok, const char* file, int line, std::string_view what) {
  checks_.fetch_add(1);
  if (ok) return;
  const char* base = std::strrchr(file, '/');
  std::lock_guard<std::mutex> lock(mu_);
  failures_.push_back(fmt::format("{}:{}: {}", base != nullptr ? base + 1 : file, line, what));
}

std::vector<std::string> Probe::failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

// ---- GuardedBuffer ----

GuardedBuffer::GuardedBuffer(uint64_t length, uint8_t pattern_seed)
    : storage_(new uint64_t[(length + 2 * kGuardBytes + 7) / 8]),
      length_(length),
      seed_(pattern_seed) {
  static_assert(kGuardBytes % 8 == 0);
  std::fill_n(bytes(), kGuardBytes, kGuardByte);
  std::fill_n(bytes() + kGuardBytes + length, kGuardBytes, kGuardByte);
  for (uint64_t i = 0; i < length; ++i) data()[i] = pattern_byte(seed_, i);
}

uint64_t GuardedBuffer::load_u64(uint64_t offset) const { return conformance::load_u64(body() + offset); }
void GuardedBuffer::store_u64(uint64_t offset, uint64_t value) { conformance::store_u64(data() + offset, value); }

bool GuardedBuffer::guards_intact() const {
  const std::byte* s = bytes();
  auto is_guard = [](std::byte b) { return b == kGuardByte; };
  return std::all_of(s, s + kGuardBytes, is_guard) &&
         std::all_of(s + kGuardBytes + length_, s + 2 * kGuardBytes + length_, is_guard);
}

int64_t GuardedBuffer::first_change(uint64_t begin, uint64_t end) const {
  for (uint64_t i = begin; i < end && i < length_; ++i) {
    if (body()[i] != initial(i)) return static_cast<int64_t>(i);
  }
  return -1;
}

// ---- Actor ----

std::optional<Completion> Actor::next(std::string_view what, Nanos timeout) {
  if (timeout == 0) timeout = backend.completion_timeout;
  if (pending_.empty()) {
    // wait() may return early with nothing (a spurious wake-up is allowed),
    // so keep waiting until the deadline on the backend's own clock.
    const Nanos deadline = env.clock->now() + timeout;
    std::array<Completion, 16> out;
    while (pending_.empty()) {
      const Nanos left = deadline - env.clock->now();
      if (left <= 0) break;
      const size_t n = env.transport->wait(out, left);
      probe.expect(n <= out.size(), __FILE__, __LINE__, "wait() returned more than the span holds");
      pending_.insert(pending_.end(), out.begin(), out.begin() + std::min(n, out.size()));
    }
  }
  if (pending_.empty()) {
    CONF_FAIL(probe, fmt::format("no completion within {} ms: {}", timeout / kMillisecond, what));
    return std::nullopt;
  }
  Completion c = pending_.front();
  pending_.pop_front();
  return c;
}

std::optional<Completion> Actor::exec(const WorkRequest& wr, std::string_view what) {
  const Status s = post(wr);
  if (!s.is_ok()) {
    CONF_FAIL(probe, fmt::format("post() rejected a valid request ({}): {}", what, s.to_string()));
    return std::nullopt;
  }
  return next(what);
}

void Actor::expect_quiet(std::string_view what) {
  std::array<Completion, 16> out;
  size_t n = pending_.size();
  std::string seen;
  for (const Completion& c : pending_) seen += describe(c) + " ";
  pending_.clear();
  if (n == 0) {
    n = env.transport->wait(out, backend.quiet_period);
    for (size_t i = 0; i < std::min(n, out.size()); ++i) seen += describe(out[i]) + " ";
  }
  probe.expect(n == 0, __FILE__, __LINE__, fmt::format("unexpected completion(s) ({}): {}", what, seen));
}

void expect_completion(Probe& probe, const std::optional<Completion>& c, uint64_t wr_id, Opcode op,
                       WcStatus status, NodeId peer, const char* file, int line) {
  if (!c.has_value()) {
    probe.expect(false, file, line, fmt::format("missing completion of wr_id {}", wr_id));
    return;
  }
  const bool ok = c->wr_id == wr_id && c->op == op && c->status == status && c->peer == peer;
  probe.expect(ok, file, line,
               ok ? std::string()
                  : fmt::format("completion {} expected {{wr_id={} op={} status={} peer={}}}", describe(*c),
                                wr_id, opcode_name(op), wc_status_name(status), peer));
}

// ---- Latch ----

Latch::Latch(SyncFactory& sync, Clock& clock)
    : mu_(sync.new_mutex()), cv_(sync.new_condvar()), clock_(clock) {}

void Latch::open() {
  MutexLock lock(*mu_);
  open_ = true;
  cv_->notify_all();
}

bool Latch::wait(Nanos timeout) {
  const Nanos deadline = clock_.now() + timeout;
  MutexLock lock(*mu_);
  while (!open_) {
    const Nanos left = deadline - clock_.now();
    if (left <= 0) return false;
    cv_->wait_for(*mu_, left);
  }
  return true;
}

// ---- World ----

World::World(const BackendUnderTest& backend, std::string_view check_name) : backend_(backend) {
  BOOST_TEST_MESSAGE("transport conformance: backend " << backend.name << ", check " << check_name
                                                        << ", seed " << backend.seed);
  runtime_ = backend.make_runtime(backend.seed);
  BOOST_REQUIRE_MESSAGE(runtime_ != nullptr, "backend factory returned no runtime");
}

World::~World() {
  latches_.clear();
  runtime_.reset();
}

NodeId World::add_node(std::string name, bool is_server) {
  NodeOptions options;
  options.name = std::move(name);
  options.is_server = is_server;
  StatusOr<NodeId> id = runtime_->add_node(options);
  BOOST_REQUIRE_MESSAGE(id.is_ok(), "add_node(" << options.name << "): " << id.status().to_string());
  return *id;
}

GuardedBuffer& World::buffer(uint64_t length, uint8_t pattern_seed) {
  return buffers_.emplace_back(length, pattern_seed);
}

Region World::register_region(NodeId node, GuardedBuffer& buf, Access access, uint64_t offset, uint64_t length) {
  if (length == 0) length = buf.size() - offset;
  BOOST_REQUIRE(offset + length <= buf.size());
  Env env = runtime_->setup_env(node);
  BOOST_REQUIRE(env.transport != nullptr);
  StatusOr<Region> r = env.transport->register_memory(buf.data() + offset, length, access);
  BOOST_REQUIRE_MESSAGE(r.is_ok(), "register_memory on node " << node << ": " << r.status().to_string());
  BOOST_REQUIRE(r->base == buf.data() + offset);
  BOOST_REQUIRE(r->length == length);
  BOOST_REQUIRE(r->node == node);
  return *r;
}

Latch& World::latch(NodeId any_node) {
  Env env = runtime_->setup_env(any_node);
  BOOST_REQUIRE(env.sync != nullptr && env.clock != nullptr);
  return latches_.emplace_back(*env.sync, *env.clock);
}

void World::spawn(NodeId node, std::string name, std::function<void(Actor&)> fn) {
  ++spawned_;
  Status s = runtime_->spawn(node, name, ActorKind::kWorker,
                             [this, fn = std::move(fn)](Env& env) {
                               Actor actor(env, probe_, backend_);
                               fn(actor);
                               finished_.fetch_add(1);
                             });
  BOOST_REQUIRE_MESSAGE(s.is_ok(), "spawn(" << name << "): " << s.to_string());
}

void World::run() {
  const Status s = runtime_->run();
  BOOST_TEST(s.is_ok(), "run(): " << s.to_string());
  // A broken backend can fail thousands of expectations at once; the first
  // few say what is wrong, the count says how much.
  constexpr size_t kMaxReported = 40;
  const std::vector<std::string> failures = probe_.failures();
  for (size_t i = 0; i < failures.size() && i < kMaxReported; ++i) BOOST_ERROR(failures[i]);
  if (failures.size() > kMaxReported) {
    BOOST_ERROR("... and " << failures.size() - kMaxReported << " more failed expectations");
  }
  BOOST_TEST(finished_.load() == spawned_, "actors that ran to their end");
  BOOST_TEST(probe_.checks() > 0, "expectations recorded by actors");
}

// ---- builders ----

LocalBuf local_buf(const Region& local, uint64_t local_offset, uint32_t length) {
  return LocalBuf{local.base + local_offset, length, local.lkey};
}

WorkRequest read_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset, uint32_t length) {
  WorkRequest wr;
  wr.wr_id = wr_id;
  wr.op = Opcode::kRead;
  wr.remote = remote;
  wr.local = local_buf(local, local_offset, length);
  return wr;
}

WorkRequest write_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset, uint32_t length) {
  WorkRequest wr = read_wr(wr_id, remote, local, local_offset, length);
  wr.op = Opcode::kWrite;
  return wr;
}

WorkRequest write_imm_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset,
                         uint32_t length, uint32_t imm) {
  WorkRequest wr = read_wr(wr_id, remote, local, local_offset, length);
  wr.op = Opcode::kWriteWithImm;
  wr.imm = imm;
  return wr;
}

WorkRequest cas_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset,
                   uint64_t compare, uint64_t swap) {
  WorkRequest wr = read_wr(wr_id, remote, local, local_offset, 8);
  wr.op = Opcode::kCas;
  wr.compare_add = compare;
  wr.swap = swap;
  return wr;
}

WorkRequest faa_wr(uint64_t wr_id, RemoteAddr remote, const Region& local, uint64_t local_offset, uint64_t add) {
  WorkRequest wr = read_wr(wr_id, remote, local, local_offset, 8);
  wr.op = Opcode::kFaa;
  wr.compare_add = add;
  return wr;
}

WorkRequest send_wr(uint64_t wr_id, NodeId target, const Region& local, uint64_t local_offset, uint32_t length) {
  WorkRequest wr;
  wr.wr_id = wr_id;
  wr.op = Opcode::kSend;
  wr.remote.node = target;
  wr.local = local_buf(local, local_offset, length);
  return wr;
}

RecvRequest recv_req(uint64_t wr_id, const Region& local, uint64_t local_offset, uint32_t length) {
  return RecvRequest{wr_id, local_buf(local, local_offset, length)};
}

uint64_t load_u64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void store_u64(void* p, uint64_t v) { std::memcpy(p, &v, sizeof v); }

std::vector<std::byte> pattern(uint8_t seed, uint64_t begin, uint64_t n) {
  std::vector<std::byte> out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = GuardedBuffer::pattern_byte(seed, begin + i);
  return out;
}

int64_t first_mismatch(const void* a, const void* b, uint64_t n) {
  auto* x = static_cast<const std::byte*>(a);
  auto* y = static_cast<const std::byte*>(b);
  for (uint64_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace locus::conformance
