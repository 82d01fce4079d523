// StoreLog: see store_log.h. A record is one byte of kind, then for a put
// the key's length (u32, little-endian), the key and the value; for a
// delete the key.
#include "core/index/pilaf/store_log.h"

#include <fmt/format.h>

namespace locus::pilaf {
namespace {

constexpr char kPut = 'P';
constexpr char kDelete = 'D';

}  // namespace

void StoreLog::encode_put(std::string_view key, std::string_view value, std::string* out) {
  out->clear();
  out->push_back(kPut);
  const auto n = static_cast<uint32_t>(key.size());
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(n >> (8 * i)));
  out->append(key);
  out->append(value);
}

void StoreLog::encode_delete(std::string_view key, std::string* out) {
  out->clear();
  out->push_back(kDelete);
  out->append(key);
}

Status StoreLog::apply(Store& store, std::string_view record) {
  if (record.empty()) return corruption("pilaf log: an empty record");
  if (record[0] == kDelete) {
    Status st = store.remove(record.substr(1));
    return st.code() == StatusCode::kNotFound ? Status() : st;
  }
  if (record[0] != kPut || record.size() < 5) {
    return corruption(fmt::format("pilaf log: a record of kind {:#x} and {} bytes", record[0], record.size()));
  }
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= uint32_t{static_cast<uint8_t>(record[1 + i])} << (8 * i);
  if (n > record.size() - 5) return corruption(fmt::format("pilaf log: a put whose key of {} bytes overruns it", n));
  return store.put(record.substr(5, n), record.substr(5 + n));
}

StatusOr<std::unique_ptr<StoreLog>> StoreLog::open(const Env& env, const LogSettings& settings, Store& store,
                                                   log::RecoveryReport* report) {
  log::RecoveryReport r;
  LOCUS_ASSIGN_OR_RETURN(auto log, log::DurableLog::open(
                                       env, settings.dir, settings.options,
                                       [&store](std::string_view record) { return apply(store, record); }, &r));
  std::unique_ptr<StoreLog> out(new StoreLog(settings, std::move(log)));
  out->checkpoint_bytes_ = r.checkpoint_bytes;
  if (report != nullptr) *report = std::move(r);
  return out;
}

Status StoreLog::log_put(std::string_view key, std::string_view value) {
  encode_put(key, value, &scratch_);
  return log_->append_exclusive(scratch_);
}

Status StoreLog::log_delete(std::string_view key) {
  encode_delete(key, &scratch_);
  return log_->append_exclusive(scratch_);
}

Status StoreLog::maybe_checkpoint(const Store& store) {
  const uint64_t grown = log_->log_bytes();
  if (grown < settings_.rewrite_min_bytes) return Status();
  if (grown * 100 < checkpoint_bytes_ * settings_.rewrite_percentage) return Status();
  return checkpoint(store);
}

Status StoreLog::checkpoint(const Store& store) {
  std::string record;
  uint64_t bytes = 0;
  LOCUS_RETURN_IF_ERROR(log_->checkpoint([&](const log::CheckpointSink& sink) {
    return store.for_each([&](std::string_view key, std::string_view value) {
      encode_put(key, value, &record);
      bytes += log::kRecordHeaderBytes + record.size();
      return sink(record);
    });
  }));
  checkpoint_bytes_ = bytes;
  ++checkpoints_;
  return Status();
}

}  // namespace locus::pilaf
