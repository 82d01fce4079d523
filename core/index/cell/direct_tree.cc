// DirectTree: see direct_tree.h.
#include "core/index/cell/direct_tree.h"

#include <string>

namespace locus::cell {
namespace {
constexpr int kMaxDrainDepth = 2 * kMaxLevels;  // a busy parent chain is at most the tree height
constexpr uint32_t kMaxAttempts = 1u << 16;
}  // namespace

DirectTree::DirectTree(const Layout& layout, const SplitDriverOptions& split, uint32_t max_message_bytes)
    : layout_(layout), split_(split), direct_(max_message_bytes) {}

void DirectTree::add(CellServer* server, Env setup_env) {
  if (servers_.empty()) setup_env_ = setup_env;
  servers_.push_back(server);
  direct_.add(server);
}

Status DirectTree::drain_splits(int depth) {
  if (depth > kMaxDrainDepth) return internal_error("cell load: split chain deeper than the tree");
  for (CellServer* server : servers_) {
    uint32_t meganode = 0;
    while (server->try_take_split(&meganode)) {
      SplitDriver driver(direct_, layout_, server->node_id(), server->split_ids(), split_, *setup_env_.random,
                         *setup_env_.clock,
                         [this, depth](Nanos d) {
                           // A busy parent waits for a split still queued: run it now.
                           if (!drain_splits(depth + 1).is_ok()) setup_env_.clock->sleep_for(d);
                         });
      LOCUS_RETURN_IF_ERROR(driver.run(meganode));
      const SplitDriverStats& s = driver.stats();
      splits_.splits += s.splits;
      splits_.remote_placements += s.remote_placements;
      splits_.new_roots += s.new_roots;
      splits_.parents_abandoned += s.parents_abandoned;
    }
  }
  return Status();
}

StatusOr<OpResponse> DirectTree::op(OpKind op, std::string_view key, std::string_view value) {
  uint64_t start = kNullPtr;
  for (uint32_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
    rpc::Writer w(direct_.payload_buffer());
    encode_op_request({.op = op, .start = start, .key = key, .value = value}, w);
    if (!w.ok()) return invalid_argument("cell: record exceeds one message");
    LOCUS_ASSIGN_OR_RETURN(auto body, direct_.call(layout_.server_of(start), kOp, w.size()));
    rpc::Reader r(body);
    OpResponse resp;
    if (!decode_op_response(r, &resp)) return corruption("cell: malformed response");
    switch (resp.outcome) {
      case Outcome::kDone:
        if (is_write(op)) LOCUS_RETURN_IF_ERROR(drain_splits(0));  // responses of reads stay valid
        return resp;
      case Outcome::kRedirect: start = resp.next; break;
      case Outcome::kRestart: start = kNullPtr; break;
      case Outcome::kBusy: LOCUS_RETURN_IF_ERROR(drain_splits(0)); break;
    }
  }
  return internal_error("cell: no progress on a direct operation");
}

StatusOr<uint64_t> DirectTree::range(std::string_view start, std::optional<std::string_view> end, uint32_t limit,
                                     RangeSink& sink) {
  std::string resume(start);
  bool exclusive = false;
  uint64_t ptr = kNullPtr;
  uint64_t delivered = 0;
  for (uint32_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (delivered >= limit) return delivered;
    rpc::Writer w(direct_.payload_buffer());
    RangeRequest q;
    q.start = ptr;
    q.query = RangeQuery{resume, exclusive, end.value_or(std::string_view()), end.has_value(),
                         static_cast<uint32_t>(limit - delivered)};
    encode_range_request(q, w);
    LOCUS_ASSIGN_OR_RETURN(auto body, direct_.call(layout_.server_of(ptr), kRange, w.size()));
    rpc::Reader r(body);
    RangeResult head;
    if (!decode_range_header(r, &head)) return corruption("cell: malformed range response");
    for (uint32_t i = 0; i < head.returned; ++i) {
      std::string_view k, v;
      if (!r.blob(&k) || !r.blob(&v)) return corruption("cell: truncated range response");
      ++delivered;
      if (!sink.accept(k, v)) return delivered;
    }
    if (head.outcome == Outcome::kDone) return delivered;
    resume.assign(head.resume);
    exclusive = head.resume_exclusive;
    ptr = head.outcome == Outcome::kRedirect ? head.next : kNullPtr;
  }
  return internal_error("cell: no progress on a direct range");
}

}  // namespace locus::cell
