// WorkloadSpec: what a YCSB CoreWorkload run asks for, under YCSB's own
// property names, so a scenario's [workload] table (and anyone who knows
// YCSB) reads the same words. Parsing, validation and the six standard
// workloads A-F live here; the generators that act on a spec are in
// workload.h. Defaults are YCSB's CoreWorkload defaults.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/status.h"

namespace locus::workload {

enum class RequestDistribution : uint8_t { kUniform, kZipfian, kLatest, kHotspot };
enum class InsertOrder : uint8_t { kHashed, kOrdered };
// Field lengths may be constant/uniform/zipfian; scan lengths uniform/zipfian
// (validate() rejects a constant scan length, as YCSB does).
enum class LengthDistribution : uint8_t { kConstant, kUniform, kZipfian };

std::string_view request_distribution_name(RequestDistribution d);
std::string_view insert_order_name(InsertOrder o);
std::string_view length_distribution_name(LengthDistribution d);

// Field names match the YCSB property they hold, so `spec.readproportion`
// is the `readproportion` property. Key numbers run from 0 to recordcount-1
// after the load phase; run-phase inserts continue from recordcount.
struct WorkloadSpec {
  uint64_t recordcount = 1000;
  uint64_t operationcount = 1000;
  // Load-phase partitioning (YCSB): this client set owns keys
  // [insertstart, insertstart + insertcount). insertcount 0 means
  // "recordcount - insertstart", YCSB's default.
  uint64_t insertstart = 0;
  uint64_t insertcount = 0;

  double readproportion = 0.95;
  double updateproportion = 0.05;
  double insertproportion = 0.0;
  double scanproportion = 0.0;
  double readmodifywriteproportion = 0.0;
  // Deletes of keys drawn like reads' (YCSB's name from its later
  // CoreWorkload; 0 keeps the standard workloads' op streams unchanged).
  double deleteproportion = 0.0;

  RequestDistribution requestdistribution = RequestDistribution::kUniform;
  // Not a CoreWorkload property upstream (YCSB hard-codes 0.99); the name
  // follows the forks that expose it.
  double zipfianconstant = 0.99;
  double hotspotdatafraction = 0.2;
  double hotspotopnfraction = 0.8;

  InsertOrder insertorder = InsertOrder::kHashed;
  uint32_t zeropadding = 1;

  uint32_t fieldcount = 10;
  uint32_t fieldlength = 100;   // maximum field length in bytes
  uint32_t minfieldlength = 1;  // used by the uniform and zipfian distributions
  LengthDistribution fieldlengthdistribution = LengthDistribution::kConstant;
  bool readallfields = true;
  bool writeallfields = false;

  uint32_t minscanlength = 1;
  uint32_t maxscanlength = 1000;
  LengthDistribution scanlengthdistribution = LengthDistribution::kUniform;

  // Checks the spec as a whole: proportions in [0,1] summing to 1 (within
  // 1e-6), positive counts, min <= max lengths, fractions in [0,1], the
  // insert range inside recordcount. The message names the property.
  Status validate() const;

  // insertcount with YCSB's default applied.
  uint64_t effective_insertcount() const {
    return insertcount != 0 ? insertcount : recordcount - insertstart;
  }
};

// YCSB's standard workloads, 'A'..'F' (either case), as their workload
// files set them (recordcount = operationcount = 1000, readallfields = true).
StatusOr<WorkloadSpec> standard_workload(char letter);

// Sets one property by its YCSB name from its textual value. Unknown names
// and unparsable values fail with a message naming the property.
Status set_property(WorkloadSpec& spec, std::string_view name, std::string_view value);

// Every property of `spec` as (name, value) text, in a stable order; feeding
// them back through set_property reproduces the spec. For logs and results.
std::vector<std::pair<std::string, std::string>> to_properties(const WorkloadSpec& spec);

}  // namespace locus::workload
