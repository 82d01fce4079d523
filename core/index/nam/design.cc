// The NAM tree index as a design plug-in, registered under "nam": its
// [index] keys and its driver (driver.cc).
#include "core/design/design.h"

#include "core/index/nam/config.h"
#include "core/index/nam/layout.h"
#include "core/index/nam/protocol.h"

namespace locus::nam {

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement& p);
StatusOr<design::ModelProfile> model_profile(const scenario::Scenario& s);  // model.cc

std::string distribution_name(Distribution d) {
  switch (d) {
    case Distribution::kCoarse:
      return "coarse";
    case Distribution::kFine:
      return "fine";
    case Distribution::kHybrid:
      return "hybrid";
  }
  return "unknown";
}

namespace {

StatusOr<std::shared_ptr<const scenario::IndexConfig>> read_keys(scenario::IndexKeys& keys) {
  auto c = std::make_shared<NamConfig>();
  std::string distribution = "coarse";
  LOCUS_RETURN_IF_ERROR(keys.text("distribution", &distribution));
  if (distribution == "coarse") {
    c->distribution = Distribution::kCoarse;
  } else if (distribution == "fine") {
    c->distribution = Distribution::kFine;
  } else if (distribution == "hybrid") {
    c->distribution = Distribution::kHybrid;
  } else {
    return keys.fail("distribution", "\"" + distribution + "\" is not one of coarse, fine, hybrid");
  }
  std::string partitioning = "range";
  LOCUS_RETURN_IF_ERROR(keys.text("partitioning", &partitioning, {"range", "hash"}));
  c->partitioning = partitioning == "range" ? Partitioning::kRange : Partitioning::kHash;
  std::string transport = "send_recv";
  LOCUS_RETURN_IF_ERROR(keys.text("rpc_transport", &transport, {"send_recv", "mailbox"}));
  c->rpc_transport = transport == "mailbox" ? RpcTransport::kMailbox : RpcTransport::kSendRecv;
  std::string mailbox_mode = "event";
  LOCUS_RETURN_IF_ERROR(keys.text("mailbox_mode", &mailbox_mode, {"event", "polling"}));
  c->mailbox_polling = mailbox_mode == "polling";
  LOCUS_RETURN_IF_ERROR(keys.number("mailbox_workers", &c->mailbox_workers, 0, 1024));
  LOCUS_RETURN_IF_ERROR(keys.number("page_bytes", &c->page_bytes, kMinPageBytes, kMaxPageBytes));
  if (c->page_bytes % 8 != 0) return keys.fail("page_bytes", "must be a multiple of 8 (nodes are 8-byte words)");
  LOCUS_RETURN_IF_ERROR(keys.number("region_bytes", &c->region_bytes, 1 << 16, 1ull << 50));
  LOCUS_RETURN_IF_ERROR(keys.number("lease_ms", &c->lease_ms, 1e-3, 3.6e6));
  LOCUS_RETURN_IF_ERROR(keys.number("head_node_interval", &c->head_node_interval, 0, 4096));
  if (c->head_node_interval > leaf_capacity(c->page_bytes)) {
    return keys.fail("head_node_interval",
                     "a head node holds at most " + std::to_string(leaf_capacity(c->page_bytes)) +
                         " leaf pointers with index.page_bytes = " + std::to_string(c->page_bytes));
  }
  LOCUS_RETURN_IF_ERROR(keys.number("gc_interval_ms", &c->gc_interval_ms, 0, 3.6e6));
  LOCUS_RETURN_IF_ERROR(keys.number("gc_epoch_slots", &c->gc_epoch_slots, 0, 1 << 20));
  LOCUS_RETURN_IF_ERROR(keys.number("gc_epoch_every_ops", &c->gc_epoch_every_ops, 1, 1 << 20));
  LOCUS_RETURN_IF_ERROR(keys.number("gc_epoch_lease_ms", &c->gc_epoch_lease_ms, 1e-3, 3.6e6));
  std::string skew;
  LOCUS_RETURN_IF_ERROR(keys.text("key_skew", &skew));
  if (!skew.empty()) {
    auto shares = parse_shares(skew);
    if (!shares.is_ok()) return keys.fail("key_skew", shares.status().message());
    c->key_skew = std::move(*shares);
    if (c->partitioning != Partitioning::kRange) {
      return keys.fail("key_skew", "attribute-value skew is modelled for index.partitioning = \"range\" only");
    }
  }
  for (const char* key : {"mailbox_mode", "mailbox_workers"}) {
    if (c->rpc_transport != RpcTransport::kMailbox && keys.has(key)) {
      return keys.fail(key, "applies to index.rpc_transport = \"mailbox\" only (this scenario's RPCs are SEND/RECV)");
    }
  }
  if (c->rpc_transport == RpcTransport::kMailbox && c->distribution == Distribution::kFine) {
    return keys.fail("rpc_transport", "the fine-grained design sends no index RPCs (its operations are one-sided): "
                                      "mailboxes serve \"coarse\" and \"hybrid\"");
  }
  return std::shared_ptr<const scenario::IndexConfig>(std::move(c));
}

}  // namespace

Status register_design(design::Registry& registry) {
  return registry.add(
      {{"nam",
        "the NAM tree index: distributed B-link trees of 8-byte keys and payloads, coarse-grained "
        "(a tree per memory server, RPC), fine-grained (one tree, one-sided RDMA with CAS locks) or hybrid "
        "(inner levels by RPC, leaves one-sided)",
        false,
        read_keys,
        {kRangeWork, kInsertWork, kRemoveWork, kLayoutWork, kLeafWork, kSeparatorWork, kFenceWork, kGcWork,
         kMailboxWork, kJoinWork, kInnerGcWork},
        /*deletes=*/true},
       make_driver,
       model_profile});
}

}  // namespace locus::nam
