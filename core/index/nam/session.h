// A NAM client session: YCSB operations as the index's own calls. Keys are
// YCSB's "user<number>" as 8-byte numbers; a record's payload is the
// 64-bit digest of its value (the index maps keys to 8-byte payloads, the
// paper's tuple identifiers). Reads are lookups (every payload of the key),
// updates and inserts add a (key, payload) pair, read-modify-writes both,
// deletes remove every pair of the key (a lookup, then each pair's delete
// bit), scans a range of scan_length pairs from the key on.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/design/client_session.h"
#include "core/index/nam/client.h"
#include "core/messaging/mailbox.h"

namespace locus::nam {

class NamSession final : public design::ClientSession {
 public:
  // `keys` maps workload keys to index keys (index.key_skew); outlives this.
  // `mailboxes`: the client's index RPCs' transport when it is the
  // mailboxes (config.h, rpc_transport), which `client` calls; else null.
  NamSession(std::unique_ptr<NamClient> client, const Partitioner* keys,
             std::unique_ptr<messaging::MailboxCaller> mailboxes = nullptr)
      : mailboxes_(std::move(mailboxes)), client_(std::move(client)), keys_(keys) {}
  Status execute(const workload::Op& op, std::string_view key, std::string_view value,
                 std::string_view* measured_as) override;
  void report(metrics::OpStats& stats) const override;
  Status close() override { return client_->close(); }
  bool can_record() const override { return true; }

  NamClient& client() { return *client_; }
  // Fine-grained and hybrid GC on this compute server (config.h,
  // gc_interval_ms): its client's pass (NamClient::collect_garbage) before
  // the first operation drawn at least `interval_ns` after the last pass
  // ended, on the clock of `clock`.
  void collect_garbage_every(Clock* clock, Nanos interval_ns) {
    gc_clock_ = clock;
    gc_interval_ns_ = interval_ns;
    next_gc_ns_ = clock->now() + interval_ns;
  }

 private:
  Status lookup(std::string_view key, uint64_t k);
  // Records the invocation of a pair's insert or delete (0 when not recording).
  size_t invoke_pair(check::OpKind kind, std::string_view key, uint64_t payload);
  Status insert(std::string_view key, uint64_t k, uint64_t payload);
  Status remove_key(std::string_view key, uint64_t k);

  std::unique_ptr<messaging::MailboxCaller> mailboxes_;  // before client_: outlives it
  std::unique_ptr<NamClient> client_;
  const Partitioner* keys_;
  std::vector<uint64_t> payloads_;
  std::vector<Pair> pairs_;
  uint64_t scanned_pairs_ = 0;
  uint64_t deleted_pairs_ = 0;
  uint64_t get_misses_ = 0;  // lookups that found no payload
  uint64_t ops_ = 0;
  Clock* gc_clock_ = nullptr;
  Nanos gc_interval_ns_ = 0;
  Nanos next_gc_ns_ = 0;
  uint64_t gc_failures_ = 0;
};

}  // namespace locus::nam
