// Workload: setup (choosing generators from the spec) and the data path
// (drawing operations, keys and values).
#include "core/workload/workload.h"

#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace locus::workload {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kRead: return "READ";
    case OpKind::kUpdate: return "UPDATE";
    case OpKind::kInsert: return "INSERT";
    case OpKind::kScan: return "SCAN";
    case OpKind::kReadModifyWrite: return "READ-MODIFY-WRITE";
    case OpKind::kDelete: return "DELETE";
  }
  return "?";
}

LengthGenerator::LengthGenerator(LengthDistribution distribution, uint32_t min, uint32_t max, double theta)
    : distribution_(distribution), min_(min), max_(max) {
  LOCUS_CHECK(distribution == LengthDistribution::kConstant || min <= max);
  if (distribution == LengthDistribution::kZipfian) zipfian_.emplace(min, max, theta);
}

uint32_t LengthGenerator::next(Random& rng) {
  switch (distribution_) {
    case LengthDistribution::kConstant: return max_;
    case LengthDistribution::kUniform: return static_cast<uint32_t>(rng.uniform_between(min_, max_));
    case LengthDistribution::kZipfian: return static_cast<uint32_t>(zipfian_->next(rng));
  }
  return max_;
}

std::shared_ptr<AcknowledgedCounter> Workload::make_insert_counter(const WorkloadSpec& spec) {
  return std::make_shared<AcknowledgedCounter>(spec.recordcount);
}

StatusOr<Workload> Workload::create(const WorkloadSpec& spec, std::shared_ptr<AcknowledgedCounter> inserts) {
  LOCUS_RETURN_IF_ERROR(spec.validate());
  if (!inserts) inserts = make_insert_counter(spec);
  if (inserts->last() + 1 < spec.recordcount) {
    // Loaded keys would look uninserted and key draws would never end.
    return invalid_argument(fmt::format("insert counter starts at {}, below recordcount {}",
                                        inserts->last() + 1, spec.recordcount));
  }
  const uint64_t lo = spec.insertstart;
  const uint64_t loaded = spec.effective_insertcount();
  const double theta = spec.zipfianconstant;
  KeyChooser chooser = UniformGenerator(lo, lo + loaded - 1);
  switch (spec.requestdistribution) {
    case RequestDistribution::kUniform:
      break;
    case RequestDistribution::kZipfian: {
      // Sized for the inserts to come, so that the hash modulus (and with it
      // which keys are hot) stays put as the key range grows. YCSB's upper
      // bound is inclusive here, one past the expected range; we keep that
      // so the same zipfian draws pick the same keys.
      const auto expected_new_keys = static_cast<uint64_t>(
          static_cast<double>(spec.operationcount) * spec.insertproportion * 2.0);
      chooser = ScrambledZipfianGenerator(lo, lo + loaded + expected_new_keys, theta);
      break;
    }
    case RequestDistribution::kLatest:
      chooser = SkewedLatestGenerator(theta);
      break;
    case RequestDistribution::kHotspot:
      chooser = HotspotIntegerGenerator(lo, lo + loaded - 1, spec.hotspotdatafraction, spec.hotspotopnfraction);
      break;
  }
  return Workload(spec, std::move(inserts), std::move(chooser));
}

Workload::Workload(const WorkloadSpec& spec, std::shared_ptr<AcknowledgedCounter> inserts, KeyChooser key_chooser)
    : spec_(spec),
      inserts_(std::move(inserts)),
      key_chooser_(std::move(key_chooser)),
      field_length_(spec.fieldlengthdistribution, spec.minfieldlength, spec.fieldlength, spec.zipfianconstant),
      scan_length_(spec.scanlengthdistribution, spec.minscanlength, spec.maxscanlength, spec.zipfianconstant) {
  const double proportions[kOpKindCount] = {spec.readproportion, spec.updateproportion, spec.insertproportion,
                                            spec.scanproportion, spec.readmodifywriteproportion,
                                            spec.deleteproportion};
  double sum = 0;
  for (double p : proportions) sum += p;
  double running = 0;
  for (int i = 0; i < kOpKindCount; ++i) {
    running += proportions[i];
    op_cumulative_[i] = running / sum;
  }
  // Rounding must not leave a sliver above the last non-empty kind.
  for (int i = kOpKindCount - 1; i >= 0; --i) {
    if (proportions[i] > 0.0) {
      op_cumulative_[i] = 1.0;
      break;
    }
  }
}

uint64_t Workload::next_keynum(Random& rng) {
  if (auto* latest = std::get_if<SkewedLatestGenerator>(&key_chooser_)) {
    return latest->next(rng, inserts_->last());
  }
  // The chooser's range may reach past the inserted keys (zipfian counts on
  // inserts to come); such draws are repeated, as in YCSB.
  const uint64_t limit = inserts_->last();
  uint64_t keynum;
  do {
    keynum = std::visit(
        [&rng](auto& chooser) -> uint64_t {
          if constexpr (std::is_same_v<std::decay_t<decltype(chooser)>, SkewedLatestGenerator>) {
            return 0;  // handled above
          } else {
            return chooser.next(rng);
          }
        },
        key_chooser_);
  } while (keynum > limit);
  return keynum;
}

Op Workload::next_operation(Random& rng) {
  const double u = rng.uniform_double();
  int kind = 0;
  while (kind < kOpKindCount - 1 && u >= op_cumulative_[kind]) ++kind;
  Op op;
  op.kind = static_cast<OpKind>(kind);
  switch (op.kind) {
    case OpKind::kInsert:
      op.keynum = inserts_->next();
      break;
    case OpKind::kScan:
      op.keynum = next_keynum(rng);
      op.scan_length = scan_length_.next(rng);
      break;
    default:
      op.keynum = next_keynum(rng);
      break;
  }
  return op;
}

Workload::RecordPlan Workload::plan_fields(Random& rng, uint64_t keynum, uint32_t fields, size_t cap) {
  // Draw every field's length first, then fill the whole value from one
  // seed: the bytes depend only on (keynum, the client's stream).
  size_t length = 0;
  for (uint32_t f = 0; f < fields; ++f) length += field_length_.next(rng);
  if (length > cap) return {};
  return {rng.next_u64() ^ (keynum * 0x9E3779B97F4A7C15ULL), length};
}

void Workload::fill_planned(const RecordPlan& plan, char* out) { fill_value_bytes(plan.seed, out, plan.length); }

size_t Workload::build_fields(Random& rng, uint64_t keynum, uint32_t fields, char* out, size_t cap) {
  const RecordPlan plan = plan_fields(rng, keynum, fields, cap);
  fill_planned(plan, out);
  return plan.length;
}

size_t Workload::build_record(Random& rng, uint64_t keynum, char* out, size_t cap) {
  return build_fields(rng, keynum, spec_.fieldcount, out, cap);
}

Workload::RecordPlan Workload::plan_record(Random& rng, uint64_t keynum, size_t cap) {
  return plan_fields(rng, keynum, spec_.fieldcount, cap);
}

size_t Workload::build_update_value(Random& rng, uint64_t keynum, char* out, size_t cap) {
  return build_fields(rng, keynum, spec_.writeallfields ? spec_.fieldcount : 1, out, cap);
}

}  // namespace locus::workload
