// NessieSession: a Nessie client's YCSB operations (core/design/
// client_session.h), opened by the driver (driver.cc): reads are gets,
// updates and inserts puts of the whole record, read-modify-writes a get
// then a put. Nessie cannot scan.
#pragma once

#include <memory>
#include <string_view>

#include "core/design/client_session.h"
#include "core/index/nessie/client.h"

namespace locus::nessie {

class NessieSession final : public design::ClientSession {
 public:
  explicit NessieSession(std::unique_ptr<NessieClient> client) : client_(std::move(client)) {}

  Status execute(const workload::Op& op, std::string_view key, std::string_view value,
                 std::string_view* measured_as) override;
  // The client's counters, as "nessie.<name>".
  void report(metrics::OpStats& stats) const override;
  Status close() override { return client_->close(); }
  bool can_record() const override { return true; }

  NessieClient& client() { return *client_; }

 private:
  std::unique_ptr<NessieClient> client_;
  uint64_t get_misses_ = 0;  // gets answered NOT_FOUND
};

}  // namespace locus::nessie
