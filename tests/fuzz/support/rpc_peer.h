// RPC plumbing shared by the fuzz targets that talk to a real RpcServer on
// the fake fabric: the server itself, and a client that SENDs framed
// requests (header + payload) with a response buffer posted for each.
// Header-only.
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/rpc/message.h"
#include "core/rpc/rpc_server.h"
#include "tests/fuzz/support/fake_fabric.h"
#include "tests/fuzz/support/input.h"

namespace locus::fuzz {

inline std::unique_ptr<rpc::RpcServer> make_rpc_server(FakeFabric& fabric, NodeId node, uint32_t max_message_bytes,
                                                       uint32_t recv_buffers, uint32_t handler_types) {
  rpc::RpcServerOptions o;
  o.max_message_bytes = max_message_bytes;
  o.recv_buffers = recv_buffers;
  o.send_buffers = 2;
  o.max_handler_types = handler_types;
  auto server = rpc::RpcServer::create(fabric.env(node), o);
  FUZZ_CHECK(server.is_ok(), "%s", server.status().to_string().c_str());
  return std::move(*server);
}

// A client with one request buffer and one response buffer of
// max_message_bytes each.
class RpcRequester {
 public:
  RpcRequester(FakeTransport& client, uint32_t max_message_bytes)
      : client_(client), max_(max_message_bytes), mem_(2 * size_t{max_message_bytes}) {
    auto region = client_.register_memory(mem_.data(), mem_.size(), kLocalOnly);
    FUZZ_CHECK(region.is_ok(), "register");
    lkey_ = region->lkey;
  }

  // The most payload one request carries.
  uint32_t max_payload() const { return max_ - static_cast<uint32_t>(rpc::kHeaderBytes); }

  // Posts the response buffer, then SENDs the request (payload cut to max_payload()).
  void send(NodeId server, uint16_t type, uint64_t request_id, std::span<const std::byte> payload) {
    if (payload.size() > max_payload()) payload = payload.first(max_payload());
    rpc::MessageHeader h;
    h.type = type;
    h.payload_bytes = static_cast<uint32_t>(payload.size());
    h.request_id = request_id;
    rpc::write_header(mem_.data(), h);
    if (!payload.empty()) std::memcpy(mem_.data() + rpc::kHeaderBytes, payload.data(), payload.size());
    RecvRequest recv;
    recv.local = {response(), max_, lkey_};
    FUZZ_CHECK(client_.post_recv(std::span<const RecvRequest>(&recv, 1)).is_ok(), "post_recv");
    WorkRequest wr;
    wr.wr_id = 1;
    wr.op = Opcode::kSend;
    wr.remote.node = server;
    wr.local = {mem_.data(), static_cast<uint32_t>(rpc::kHeaderBytes + payload.size()), lkey_};
    FUZZ_CHECK(client_.post(std::span<const WorkRequest>(&wr, 1)).is_ok(), "post");
  }

  // Where the response lands.
  std::byte* response() { return mem_.data() + max_; }

  // Takes the completions the last send() left and checks (FUZZ_CHECK)
  // that the server answered request `request_id`: the OK answer's
  // payload, or nullopt for an error answer.
  std::optional<std::span<const std::byte>> answer(uint64_t request_id) {
    Completion cs[8];
    bool answered = false;
    std::optional<std::span<const std::byte>> ok;
    size_t got;
    while ((got = client_.poll(cs)) > 0) {
      for (size_t i = 0; i < got; ++i) {
        if (cs[i].op != Opcode::kRecv) continue;
        const rpc::MessageHeader rh = rpc::read_header(response());
        FUZZ_CHECK(cs[i].ok() && rh.magic == rpc::kMagic && rh.request_id == request_id, "answer header");
        answered = true;
        if (rh.status == 0) ok = std::span<const std::byte>(response() + rpc::kHeaderBytes, rh.payload_bytes);
      }
    }
    FUZZ_CHECK(answered, "request %llu got no answer", static_cast<unsigned long long>(request_id));
    return ok;
  }

 private:
  FakeTransport& client_;
  uint32_t max_;
  std::vector<std::byte> mem_;
  uint32_t lkey_ = 0;
};

}  // namespace locus::fuzz
