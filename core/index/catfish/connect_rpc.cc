// The connect RPC's wire format: see connect_rpc.h.
#include "core/index/catfish/connect_rpc.h"

#include <string>

namespace locus::catfish {

StatusOr<ClientInfo> get_client_info(rpc::Reader& r) {
  LOCUS_ASSIGN_OR_RETURN(ClientInfo info, messaging::get_client_info(r, kConnectRequestName));
  if (!r.at_end()) return invalid_argument(std::string(kConnectRequestName) + ": trailing bytes after the response ring size");
  return info;
}

void put_connect_answer(const ConnectAnswer& a, rpc::Writer& w) {
  messaging::put_connection_info(a.connection, w);
  rpc::put_region(a.tree, w);
}

StatusOr<ConnectAnswer> get_connect_answer(rpc::Reader& r) {
  auto bad = [](const std::string& why) { return corruption("catfish connect answer: " + why); };
  ConnectAnswer a;
  LOCUS_ASSIGN_OR_RETURN(a.connection, messaging::get_connection_info(r, "catfish connect answer"));
  if (!rpc::get_region(r, &a.tree)) return bad("truncated");
  if (!r.at_end()) return bad("trailing bytes after the tree region");
  if (std::string p = messaging::region_problem("tree region", a.tree, 1); !p.empty()) return bad(p);
  return a;
}

}  // namespace locus::catfish
