// The one record loader of the designs: the records of a workload's load
// phase (insertstart .. + effective_insertcount), built as YCSB builds
// them, handed to the design's own put, before any actor runs. Values are
// drawn from the caller's Random in key order, so a sharded parallel load
// fills every store exactly as a serial load would.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "core/check/history.h"
#include "core/common/random.h"
#include "core/common/status.h"
#include "core/workload/workload_spec.h"

namespace locus::design {

using PutRecord = std::function<Status(std::string_view key, std::string_view value)>;
using PutShardRecord = std::function<Status(uint32_t shard, std::string_view key, std::string_view value)>;

// put(key, value) for every record, in key order; stops at the first error.
Status load_records(const workload::WorkloadSpec& spec, Random& rng, const PutRecord& put);

// The same over `shards` stores filled on up to one thread per hardware
// thread: record plans drawn in key order, then each thread stores its
// shards' records in key order. put must be safe for different shards at
// once.
Status load_records_sharded(const workload::WorkloadSpec& spec, Random& rng, uint32_t shards,
                            const std::function<uint32_t(uint64_t keynum)>& shard_of, const PutShardRecord& put);

// What load_records_sharded() keeps per record until it has stored them
// all (the record's plan), for memory estimates.
uint64_t sharded_load_bytes_per_record();

// The records load_records() stores from `rng`, as puts (values as
// digests) completed before time 0: loaded_history() of a key-value design.
Status loaded_puts(const workload::WorkloadSpec& spec, Random rng, check::History* out);

}  // namespace locus::design
