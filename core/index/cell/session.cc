// Cell's client session: see cell_session.h.
#include "core/index/cell/session.h"

#include <optional>

namespace locus::cell {

CellSession::CellSession(std::unique_ptr<selector::Selector> sel, std::unique_ptr<cell::CellClient> client)
    : design::SelectorSession(std::move(sel)), client_(std::move(client)) {}


Status CellSession::execute(const workload::Op& op, std::string_view key, std::string_view value,
                            std::string_view* as) {
  return design::execute_key_value(
      *client_, op, key, value, as,
      [this](std::string_view from, uint32_t length, std::vector<std::string>* keys) {
        return scan(from, length, keys);
      },
      recording_);
}

Status CellSession::scan(std::string_view from, uint32_t length, std::vector<std::string>* keys) {
  sink_.start(from, keys);
  Status s = client_->range(from, std::nullopt, length, sink_).status();
  if (!s.is_ok()) return s;
  if (!sink_.ordered) return corruption("cell scan from '" + std::string(from) + "': keys out of order");
  return Status();
}

void CellSession::ScanSink::start(std::string_view from, std::vector<std::string>* keys_out) {
  keys = keys_out;
  last.assign(from);
  records = 0;
  ordered = true;
}

bool CellSession::ScanSink::accept(std::string_view key, std::string_view) {
  if (key < last || (records > 0 && key == last)) ordered = false;
  last.assign(key);
  if (keys != nullptr) keys->emplace_back(key);
  ++records;
  return true;
}

void CellSession::report(metrics::OpStats& stats) const {
  const cell::ClientStats& c = client_->stats();
  design::add_counters(stats, {{"cell.ops", c.ops},
                       {"cell.server_steps", c.server_steps},
                       {"cell.client_steps", c.client_steps},
                       {"cell.write_rpcs", c.write_rpcs},
                       {"cell.node_reads", c.node_reads},
                       {"cell.torn_reads", c.torn_reads},
                       {"cell.torn_fallbacks", c.torn_fallbacks},
                       {"cell.node_cache_hits", c.node_cache_hits},
                       {"cell.path_cache_hits", c.path_cache_hits},
                       {"cell.extent_retries", c.extent_retries},
                       {"cell.restarts", c.restarts},
                       {"cell.busy_retries", c.busy_retries},
                       {"cell.layout_refreshes", c.layout_refreshes}});
}

}  // namespace locus::cell
