// FakeFabric: a synchronous, single-threaded, in-memory RDMA fabric for the
// fuzz targets. Every work request is carried out inside post(): SEND
// consumes the target's oldest posted receive, one-sided operations copy
// to or from the target's registered regions after the same region, rkey,
// bounds and rights checks the real backends make, and completions are
// queued for the next poll()/wait(). Time is a counter: wait() with
// nothing queued advances it by the whole timeout and returns, so a
// component that waits for an answer that never comes times out at once
// instead of stalling the fuzzer. No threads, no sleeping, no randomness:
// one input always runs the same way, which is what a fuzzer needs to
// reproduce a crash (the loopback backend has a NIC thread per node).
//
// A node may have an on_message hook, called after a SEND or
// WRITE_WITH_IMM landed on it, to play a scripted peer (answer a request
// with fuzzed responses) without a thread of its own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "backends/os/os_env.h"
#include "core/transport/env.h"

namespace locus::fuzz {

class FakeFabric;

class FakeClock final : public Clock {
 public:
  Nanos now() const override { return now_; }
  void sleep_for(Nanos duration) override {
    if (duration > 0) now_ += duration;
  }
  void advance(Nanos d) { sleep_for(d); }

 private:
  Nanos now_ = 1;
};

class FakeTransport final : public Transport {
 public:
  FakeTransport(FakeFabric& fabric, NodeId id);

  NodeId node_id() const override { return id_; }
  TransportLimits limits() const override;
  StatusOr<Region> register_memory(void* addr, uint64_t length, Access access) override;
  Status deregister_memory(const Region& region) override;
  Status post(std::span<const WorkRequest> batch) override;
  Status post_recv(std::span<const RecvRequest> batch) override;
  size_t poll(std::span<Completion> out) override;
  size_t wait(std::span<Completion> out, Nanos timeout) override;

  // Called after a message (SEND, WRITE_WITH_IMM) from `from` completed here.
  std::function<void(NodeId from)> on_message;

  size_t posted_recvs() const { return recvs_.size(); }
  size_t queued_completions() const { return completions_.size(); }
  // A registered region of this node by id (nullptr if none).
  const Region* region(RegionId id) const;

 private:
  friend class FakeFabric;
  bool local_ok(const LocalBuf& b) const;
  void complete(const Completion& c) { completions_.push_back(c); }
  // Consumes the oldest posted receive for a message from `from`: its completion.
  Completion take_recv(NodeId from, uint32_t imm);
  // Runs one request against its target; returns the initiator's status.
  WcStatus execute(const WorkRequest& wr);

  FakeFabric& fabric_;
  NodeId id_;
  std::map<RegionId, Region> regions_;
  std::deque<RecvRequest> recvs_;
  std::deque<Completion> completions_;
};

class FakeFabric {
 public:
  static constexpr uint32_t kMaxMessageBytes = 1u << 20;
  static constexpr uint32_t kMaxSendWr = 256;
  static constexpr uint32_t kMaxRecvWr = 4096;

  // Adds node `id` (ids need not be dense).
  FakeTransport& add_node(NodeId id);
  FakeTransport* node(NodeId id);
  // An Env on node `id`: the fabric's clock, a no-op CPU, std sync.
  Env env(NodeId id);
  FakeClock& clock() { return clock_; }

  RegionId next_region_id() { return next_region_++; }

 private:
  std::map<NodeId, std::unique_ptr<FakeTransport>> nodes_;
  FakeClock clock_;
  os::NoopCpu cpu_;
  os::StdSyncFactory sync_;
  Random random_{42};
  RegionId next_region_ = 1;
};

}  // namespace locus::fuzz
