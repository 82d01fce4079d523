// The record loader: see record_loader.h.
#include "core/design/record_loader.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "core/workload/workload.h"

namespace locus::design {

Status load_records(const workload::WorkloadSpec& spec, Random& rng, const PutRecord& put) {
  LOCUS_ASSIGN_OR_RETURN(auto loader, workload::Workload::create(spec));
  std::string key(loader.max_key_bytes(), '\0');
  std::string value(loader.max_value_bytes(), '\0');
  for (uint64_t n = spec.insertstart; n < spec.insertstart + spec.effective_insertcount(); ++n) {
    const size_t kl = loader.build_key(n, key.data(), key.size());
    const size_t vl = loader.build_record(rng, n, value.data(), value.size());
    LOCUS_RETURN_IF_ERROR(put(std::string_view(key.data(), kl), std::string_view(value.data(), vl)));
  }
  return Status();
}

namespace {
struct Planned {
  uint64_t keynum;
  uint32_t shard;
  workload::Workload::RecordPlan plan;
};
}  // namespace

uint64_t sharded_load_bytes_per_record() { return sizeof(Planned); }

Status load_records_sharded(const workload::WorkloadSpec& spec, Random& rng, uint32_t shards,
                            const std::function<uint32_t(uint64_t keynum)>& shard_of, const PutShardRecord& put) {
  LOCUS_ASSIGN_OR_RETURN(auto loader, workload::Workload::create(spec));
  const uint32_t threads = std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, std::max<uint32_t>(shards, 1));
  std::vector<std::vector<Planned>> parts(threads);
  const uint64_t first = spec.insertstart, count = spec.effective_insertcount();
  for (std::vector<Planned>& part : parts) part.reserve(count / threads + 1);
  for (uint64_t n = first; n < first + count; ++n) {
    const uint32_t shard = shard_of(n);
    parts[shard % threads].push_back({n, shard, loader.plan_record(rng, n, loader.max_value_bytes())});
  }
  std::vector<Status> failed(threads);
  auto load_part = [&](uint32_t part) {
    std::string key(loader.max_key_bytes(), '\0');
    std::string value(loader.max_value_bytes(), '\0');
    for (const Planned& r : parts[part]) {
      const size_t kl = loader.build_key(r.keynum, key.data(), key.size());
      workload::Workload::fill_planned(r.plan, value.data());
      Status st = put(r.shard, std::string_view(key.data(), kl), std::string_view(value.data(), r.plan.length));
      if (!st.is_ok()) {
        failed[part] = std::move(st);
        return;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (uint32_t part = 1; part < threads; ++part) helpers.emplace_back(load_part, part);
  load_part(0);
  for (std::thread& t : helpers) t.join();
  for (Status& st : failed) LOCUS_RETURN_IF_ERROR(std::move(st));
  return Status();
}

Status loaded_puts(const workload::WorkloadSpec& spec, Random rng, check::History* out) {
  return load_records(spec, rng, [out](std::string_view key, std::string_view value) {
    check::Operation op;
    op.kind = check::OpKind::kPut;
    op.key.assign(key);
    op.value = check::value_digest(value);
    op.outcome = check::Outcome::kOk;
    op.invoke_ns = -2;  // before the run's clock starts (0 on SimGrid)
    op.response_ns = -1;
    out->push_back(std::move(op));
    return Status();
  });
}

}  // namespace locus::design
