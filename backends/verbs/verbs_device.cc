// Device probing: whether RDMA is usable here at all (tests skip cleanly
// when it is not), and which IPv4 address a RoCE port carries (so tests on
// one host need no configuration). Reads the GID tables entry by entry:
// which index holds what differs between devices and kernels.
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <cstring>

#include "backends/verbs/verbs_runtime.h"

namespace locus::verbs {
namespace {

// Calls fn(context, port, port_attr) for every active port; stops when fn returns true.
template <typename Fn>
bool for_each_active_port(Fn fn) {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) return false;
  bool stopped = false;
  for (int d = 0; d < count && !stopped; ++d) {
    ibv_context* ctx = ibv_open_device(list[d]);
    if (ctx == nullptr) continue;
    ibv_device_attr dev{};
    if (ibv_query_device(ctx, &dev) == 0) {
      for (uint8_t port = 1; port <= dev.phys_port_cnt && !stopped; ++port) {
        ibv_port_attr attr{};
        if (ibv_query_port(ctx, port, &attr) == 0 && attr.state == IBV_PORT_ACTIVE) stopped = fn(ctx, port, attr);
      }
    }
    ibv_close_device(ctx);
  }
  ibv_free_device_list(list);
  return stopped;
}

}  // namespace

bool rdma_available(std::string* detail) {
  std::string found;
  for_each_active_port([&](ibv_context* ctx, uint8_t port, const ibv_port_attr&) {
    found = std::string(ibv_get_device_name(ctx->device)) + " port " + std::to_string(port);
    return true;
  });
  if (found.empty()) {
    if (detail != nullptr) *detail = "no RDMA device with an active port (ibv_devices lists none usable)";
    return false;
  }
  if (access("/dev/infiniband/rdma_cm", R_OK | W_OK) != 0) {
    if (detail != nullptr) *detail = found + " is active, but /dev/infiniband/rdma_cm is missing (load rdma_ucm)";
    return false;
  }
  if (detail != nullptr) *detail = found + " is active";
  return true;
}

std::optional<std::string> find_roce_ipv4_address() {
  std::optional<std::string> address;
  for_each_active_port([&](ibv_context* ctx, uint8_t port, const ibv_port_attr& attr) {
    if (attr.link_layer != IBV_LINK_LAYER_ETHERNET) return false;
    for (int index = 0; index < attr.gid_tbl_len; ++index) {
      ibv_gid gid{};
      if (ibv_query_gid(ctx, port, index, &gid) != 0) continue;  // an empty entry
      static constexpr uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      if (std::memcmp(gid.raw, kV4Mapped, sizeof kV4Mapped) == 0) {
        char text[INET_ADDRSTRLEN];
        if (inet_ntop(AF_INET, gid.raw + 12, text, sizeof text) != nullptr) {
          address = text;
          return true;
        }
      }
    }
    return false;
  });
  return address;
}

}  // namespace locus::verbs
