// The micro index's driver and session: a synthetic workload with known saturation points, for
// validating the platform models and calibrating the analytic ones. An
// operation is either one RPC (handler "micro.op", whose cost comes from
// the scenario's CPU table) or a chain of dependent READs, like a
// client-side tree traversal, over a remotely readable region.
#include <string>

#include "core/common/aligned_buffer.h"
#include "core/design/index_driver.h"
#include "core/index/micro/config.h"

namespace locus::micro {
namespace {

constexpr uint16_t kOp = 1;
constexpr uint16_t kLayout = 2;
constexpr uint64_t kRegionBytes = 1 << 20;

struct MicroServer {
  AlignedBuffer memory;
  Region region;
};

class MicroSession final : public design::ClientSession {
 public:
  MicroSession(Env& env, Endpoint& ep, rpc::RpcClient& rpc, std::span<const NodeId> servers,
               const MicroConfig& spec)
      : env_(env), ep_(ep), rpc_(rpc), servers_(servers.begin(), servers.end()), spec_(spec) {}

  Status init() {
    buffer_ = AlignedBuffer(std::max<uint64_t>(spec_.read_bytes, 64));
    LOCUS_ASSIGN_OR_RETURN(local_, ep_.transport().register_memory(buffer_.data(), buffer_.size(), kLocalOnly));
    for (NodeId s : servers_) {
      LOCUS_ASSIGN_OR_RETURN(auto body, rpc_.call(s, kLayout, 0));
      rpc::Reader r(body);
      RemoteRegion rr;
      if (!rpc::get_region(r, &rr)) {
        return corruption("micro: bad layout from server " + std::to_string(s));
      }
      regions_.push_back(rr);
    }
    return Status();
  }

  ~MicroSession() override { (void)ep_.transport().deregister_memory(local_); }

  Status execute(const workload::Op&, std::string_view, std::string_view, std::string_view* as) override {
    Random& rng = *env_.random;
    const size_t s = rng.uniform(servers_.size());
    if (rng.bernoulli(spec_.rpc_fraction)) {
      *as = "RPC";
      const size_t n = std::min<size_t>(spec_.rpc_request_bytes, rpc_.payload_buffer().size());
      return rpc_.call(servers_[s], kOp, n).status();
    }
    *as = "TRAVERSAL";
    const uint64_t slots = kRegionBytes / spec_.read_bytes;
    for (uint32_t i = 0; i < spec_.reads_per_op; ++i) {
      WorkRequest wr;
      wr.wr_id = ep_.next_wr_id();
      wr.op = Opcode::kRead;
      wr.remote = remote_at(regions_[s], rng.uniform(slots) * spec_.read_bytes);
      wr.local = {buffer_.data(), spec_.read_bytes, local_.lkey};
      LOCUS_RETURN_IF_ERROR(ep_.execute(wr));
    }
    return Status();
  }
  void report(metrics::OpStats&) const override {}

 private:
  Env& env_;
  Endpoint& ep_;
  rpc::RpcClient& rpc_;
  std::vector<NodeId> servers_;
  const MicroConfig& spec_;
  std::vector<RemoteRegion> regions_;
  AlignedBuffer buffer_;
  Region local_;
};

class MicroDriver final : public design::IndexDriver {
 public:
  MicroDriver(const MicroConfig& spec, uint64_t servers) : spec_(spec), servers_count_(servers) {}

  Status setup_server(uint32_t, Env env, rpc::RpcServer& rpc) override {
    auto server = std::make_unique<MicroServer>();
    server->memory = AlignedBuffer(spec_.region_bytes);
    if (server->memory.size() < spec_.region_bytes) {
      return resource_exhausted("micro: cannot reserve index.region_bytes = " + std::to_string(spec_.region_bytes));
    }
    LOCUS_ASSIGN_OR_RETURN(server->region, env.transport->register_memory(server->memory.data(), spec_.region_bytes,
                                                                          kRemoteRead));
    const RemoteRegion rr = server->region.remote();
    const uint32_t response_bytes = spec_.rpc_response_bytes;
    LOCUS_RETURN_IF_ERROR(rpc.handle(kOp, "micro.op", [response_bytes](const rpc::RequestContext&, rpc::Reader&,
                                                                       rpc::Writer& w) {
      static const std::byte zeros[4096] = {};
      for (uint32_t left = response_bytes; left > 0;) {
        const uint32_t n = std::min<uint32_t>(left, sizeof zeros);
        w.bytes(zeros, n);
        left -= n;
      }
      return Status();
    }));
    LOCUS_RETURN_IF_ERROR(rpc.handle(kLayout, "micro.layout", [rr](const rpc::RequestContext&, rpc::Reader&,
                                                                   rpc::Writer& w) {
      rpc::put_region(rr, w);
      return Status();
    }));
    servers_.push_back(std::move(server));
    return Status();
  }

  Status load(const workload::WorkloadSpec&, Random&) override { return Status(); }

  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env& env, Endpoint& ep, rpc::RpcClient& rpc,
                                                   std::span<const NodeId> servers) override {
    auto s = std::make_unique<MicroSession>(env, ep, rpc, servers, spec_);
    LOCUS_RETURN_IF_ERROR(s->init());
    return std::unique_ptr<design::ClientSession>(std::move(s));
  }
  void report_servers(std::map<std::string, double>&) const override {}
  // A region per server; a READ buffer per client.
  design::MemoryEstimate server_memory() const override { return {design::saturating_mul(servers_count_, kRegionBytes), "platform.servers"}; }
  design::MemoryEstimate client_memory() const override {
    return {std::max<uint64_t>(spec_.read_bytes, 64), "index.read_bytes"};
  }
  // The larger of its two messages behind the header, and at least a page.
  uint32_t rpc_message_bytes() const override {
    return std::max<uint32_t>(kDefaultRpcMessageBytes,
                              std::max(spec_.rpc_request_bytes, spec_.rpc_response_bytes) + rpc::kHeaderBytes);
  }

 private:
  MicroConfig spec_;
  uint64_t servers_count_;
  std::vector<std::unique_ptr<MicroServer>> servers_;
};

}  // namespace

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement&) {
  const MicroConfig& config = *s.index.get<MicroConfig>();
  if (config.read_bytes > kRegionBytes) return invalid_argument("index.read_bytes: larger than the 1 MiB region");
  return std::unique_ptr<design::IndexDriver>(new MicroDriver(config, s.platform.servers));
}

}  // namespace locus::micro
