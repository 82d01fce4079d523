// The coarse-grained client (client.h): each operation an RPC to the
// memory server owning its key; ranges on hash partitioning ask every
// server and merge.
#include "core/index/nam/client.h"

#include <algorithm>
#include <string>

namespace locus::nam {

Status CoarseClient::server_range(uint32_t server, Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out) {
  uint32_t got = 0;
  for (;;) {
    rpc::Writer w(rpc_.payload_buffer());
    w.put(from.key);
    w.put(from.payload);
    w.put(to_key);
    w.put(limit == 0 ? 0 : limit - got);
    if (!w.ok()) return internal_error("nam: range request larger than a message");
    LOCUS_ASSIGN_OR_RETURN(auto body, rpc_.call(servers_[server], kRangeRpc, w.size()));
    rpc::Reader r(body);
    uint32_t more = 0, count = 0;
    if (!r.get(&more) || !r.get(&count)) return corruption("nam: truncated range response");
    Pair last;
    for (uint32_t i = 0; i < count; ++i) {
      if (!r.get(&last.key) || !r.get(&last.payload)) return corruption("nam: truncated range response");
      out->push_back(last);
    }
    got += count;
    if (more == 0 || count == 0 || (limit != 0 && got >= limit) || !next_pair(last, &from)) return Status();
  }
}

Status CoarseClient::lookup(uint64_t key, std::vector<uint64_t>* payloads) {
  merge_.clear();
  LOCUS_RETURN_IF_ERROR(server_range(partitioner_.server_of(key), {key, 0}, key, 0, &merge_));
  for (const Pair& x : merge_) payloads->push_back(x.payload);
  return Status();
}

Status partitioned_range(const Partitioner& partitioner, Pair from, uint32_t limit, std::vector<Pair>* out,
                         const std::function<Status(uint32_t server, uint32_t limit)>& share) {
  const size_t start = out->size();
  const bool ordered = partitioner.how() == Partitioning::kRange;
  for (uint32_t s : partitioner.servers_from(from.key)) {
    const size_t have = out->size() - start;
    if (ordered && limit != 0 && have >= limit) break;
    LOCUS_RETURN_IF_ERROR(share(s, ordered && limit != 0 ? static_cast<uint32_t>(limit - have) : limit));
  }
  if (!ordered) {
    std::sort(out->begin() + static_cast<long>(start), out->end());
    if (limit != 0 && out->size() - start > limit) out->resize(start + limit);
  }
  return Status();
}

Status CoarseClient::range(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out) {
  return partitioned_range(partitioner_, from, limit, out, [&](uint32_t server, uint32_t share_limit) {
    return server_range(server, from, to_key, share_limit, out);
  });
}

StatusOr<std::span<const std::byte>> CoarseClient::call_pair(uint16_t type, Pair x) {
  rpc::Writer w(rpc_.payload_buffer());
  w.put(x.key);
  w.put(x.payload);
  return rpc_.call(servers_[partitioner_.server_of(x.key)], type, w.size());
}

Status CoarseClient::insert(Pair x) { return call_pair(kInsertRpc, x).status(); }

StatusOr<bool> CoarseClient::remove(Pair x) {
  LOCUS_ASSIGN_OR_RETURN(auto body, call_pair(kRemoveRpc, x));
  rpc::Reader r(body);
  uint8_t found = 0;
  if (!r.get(&found)) return corruption("nam: truncated remove response");
  return found != 0;
}

}  // namespace locus::nam
