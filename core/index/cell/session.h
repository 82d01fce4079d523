// CellSession: a Cell client's YCSB operations (core/design/
// client_session.h), opened by the driver (driver.cc). Reads are gets, updates and
// inserts puts of the whole record, scans ranges of scan-length records
// from the key (whose keys must come in strictly increasing order: a scan
// that breaks it fails as corruption), read-modify-writes a get then a put.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/design/client_session.h"
#include "core/index/cell/client.h"

namespace locus::cell {

class CellSession final : public design::SelectorSession {
 public:
  // `client` asks `sel`.
  CellSession(std::unique_ptr<selector::Selector> sel, std::unique_ptr<cell::CellClient> client);

  Status execute(const workload::Op& op, std::string_view key, std::string_view value,
                 std::string_view* measured_as) override;
  // The client's counters as "cell.<name>".
  void report(metrics::OpStats& stats) const override;
  bool can_record() const override { return true; }

  const cell::ClientStats& client_stats() const { return client_->stats(); }

 private:
  // Counts a scan's records (the values are not kept) and checks that the
  // keys come in strictly increasing order from the start key. One per
  // session: its key buffer grows to the longest key once.
  struct ScanSink final : cell::RangeSink {
    void start(std::string_view from, std::vector<std::string>* keys_out);
    bool accept(std::string_view key, std::string_view) override;
    std::string last;
    uint64_t records = 0;
    bool ordered = true;
    std::vector<std::string>* keys = nullptr;  // the keys, when recording
  };

  Status scan(std::string_view from, uint32_t length, std::vector<std::string>* keys);

  std::unique_ptr<cell::CellClient> client_;
  ScanSink sink_;
};

}  // namespace locus::cell
