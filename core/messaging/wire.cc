// A messaging connection's set-up on the wire: see wire.h.
#include "core/messaging/wire.h"

namespace locus::messaging {
namespace {

// Why `bytes` cannot size a message ring (empty if it can).
std::string ring_size_problem(const char* what, uint32_t bytes) {
  if (bytes % kMessageAlignBytes != 0 || bytes < 2 * kMessageOverheadBytes || bytes > kMaxRingBytes) {
    return std::string(what) + ": " + std::to_string(bytes) + " bytes is not a multiple of " +
           std::to_string(kMessageAlignBytes) + " in [" + std::to_string(2 * kMessageOverheadBytes) + ", " +
           std::to_string(kMaxRingBytes) + "]";
  }
  return {};
}

bool get_flag(rpc::Reader& r, bool* out) {
  uint8_t v = 0;
  if (!r.get(&v) || v > 1) return false;
  *out = v == 1;
  return true;
}

}  // namespace

std::string region_problem(const char* what, const RemoteRegion& r, uint64_t bytes) {
  if (r.node == kInvalidNode) return std::string(what) + ": no node";
  if (r.region == kInvalidRegion) return std::string(what) + ": no region id";
  if (r.length < bytes) {
    return std::string(what) + ": " + std::to_string(r.length) + " bytes, needs " + std::to_string(bytes);
  }
  if (r.base_addr + r.length < r.base_addr) return std::string(what) + ": wraps the address space";
  return {};
}

void put_client_info(const ClientInfo& info, rpc::Writer& w) {
  w.put(kWireVersion);
  w.put(info.node);
  rpc::put_region(info.response_ring, w);
  w.put(info.response_ring_bytes);
}

StatusOr<ClientInfo> get_client_info(rpc::Reader& r, const std::string& what) {
  auto bad = [&what](const std::string& why) { return invalid_argument(what + ": " + why); };
  uint32_t version = 0;
  ClientInfo info;
  if (!r.get(&version)) return bad("truncated before its version");
  if (version != kWireVersion) {
    return bad("version " + std::to_string(version) + ", this server speaks " + std::to_string(kWireVersion));
  }
  if (!r.get(&info.node) || !rpc::get_region(r, &info.response_ring) || !r.get(&info.response_ring_bytes)) {
    return bad("truncated");
  }
  if (info.node == kInvalidNode) return bad("no client node");
  if (info.response_ring.node != info.node) {
    return bad("response ring on node " + std::to_string(info.response_ring.node) + ", not the client's node " +
               std::to_string(info.node));
  }
  if (std::string p = ring_size_problem("response ring", info.response_ring_bytes); !p.empty()) return bad(p);
  const uint64_t needed = uint64_t{info.response_ring_bytes} + kControlBytes;
  if (std::string p = region_problem("response ring region", info.response_ring, needed); !p.empty()) return bad(p);
  return info;
}

void put_connection_info(const ConnectionInfo& c, rpc::Writer& w) {
  w.put(kWireVersion);
  w.put(c.server);
  w.put(c.connection_id);
  w.put(static_cast<uint8_t>(c.mode == ServerMode::kEvent ? 1 : 0));
  w.put(static_cast<uint8_t>(c.awaits_first_message ? 1 : 0));
  rpc::put_region(c.request_ring, w);
  w.put(c.request_ring_bytes);
  w.put(static_cast<int64_t>(c.heartbeat_interval_ns));
}

StatusOr<ConnectionInfo> get_connection_info(rpc::Reader& r, const std::string& what) {
  auto bad = [&what](const std::string& why) { return corruption(what + ": " + why); };
  uint32_t version = 0;
  if (!r.get(&version)) return bad("truncated before its version");
  if (version != kWireVersion) {
    return bad("version " + std::to_string(version) + ", this client speaks " + std::to_string(kWireVersion));
  }
  ConnectionInfo c;
  bool event = false;
  int64_t heartbeat_ns = 0;
  if (!r.get(&c.server) || !r.get(&c.connection_id)) return bad("truncated");
  if (!get_flag(r, &event)) return bad("mode is neither 0 (polling) nor 1 (event)");
  if (!get_flag(r, &c.awaits_first_message)) return bad("awaits_first_message is neither 0 nor 1");
  if (!rpc::get_region(r, &c.request_ring) || !r.get(&c.request_ring_bytes) || !r.get(&heartbeat_ns)) {
    return bad("truncated");
  }
  c.mode = event ? ServerMode::kEvent : ServerMode::kPolling;
  c.heartbeat_interval_ns = heartbeat_ns;
  if (c.server == kInvalidNode) return bad("no worker node");
  if (c.request_ring.node != c.server) {
    return bad("request ring on node " + std::to_string(c.request_ring.node) + ", not the worker's node " +
               std::to_string(c.server));
  }
  if (heartbeat_ns < 0) return bad("negative heartbeat interval");
  if (std::string p = ring_size_problem("request ring", c.request_ring_bytes); !p.empty()) return bad(p);
  const uint64_t needed = uint64_t{c.request_ring_bytes} + kControlBytes;
  if (std::string p = region_problem("request ring region", c.request_ring, needed); !p.empty()) return bad(p);
  return c;
}

}  // namespace locus::messaging
