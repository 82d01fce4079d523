// Workload: YCSB CoreWorkload's transaction phase as a stream of operations.
//
// Each client (thread or SimGrid actor) owns one Workload built from the
// shared WorkloadSpec; the clients share one AcknowledgedCounter, which
// hands out insert key numbers and tells the key choosers how far the
// inserted key range reaches. As in YCSB:
//  - the operation is drawn by the six proportions;
//  - read, update, scan, read-modify-write and delete keys come from the request
//    distribution: uniform and hotspot over the loaded range
//    [insertstart, insertstart + insertcount), zipfian scrambled over the
//    loaded range plus 2 * operationcount * insertproportion expected new
//    keys, latest skewed toward the newest acknowledged insert; a draw past
//    the last acknowledged insert is drawn again;
//  - an insert takes the next counter value, and the caller reports it
//    done with acknowledge_insert() once the index has it.
// Keys and values are written into caller buffers: nothing on this path
// allocates. Not thread-safe; one per client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <variant>

#include "core/common/random.h"
#include "core/common/status.h"
#include "core/workload/counters.h"
#include "core/workload/generators.h"
#include "core/workload/keys.h"
#include "core/workload/workload_spec.h"
#include "core/workload/zipfian.h"

namespace locus::workload {

// kDelete comes last so that the others keep their numbers.
enum class OpKind : uint8_t { kRead, kUpdate, kInsert, kScan, kReadModifyWrite, kDelete };
inline constexpr int kOpKindCount = 6;

// YCSB's measurement names: READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE,
// DELETE.
std::string_view op_kind_name(OpKind kind);

struct Op {
  OpKind kind = OpKind::kRead;
  uint64_t keynum = 0;       // the key (the first key of a scan)
  uint32_t scan_length = 0;  // records to scan; 0 unless kind == kScan
};

// Field and scan lengths: constant, uniform or zipfian over [min, max]
// (zipfian favours the short end, as in YCSB).
class LengthGenerator {
 public:
  LengthGenerator(LengthDistribution distribution, uint32_t min, uint32_t max, double theta);
  uint32_t next(Random& rng);
  uint32_t max() const { return max_; }

 private:
  LengthDistribution distribution_;
  uint32_t min_;
  uint32_t max_;
  std::optional<ZipfianGenerator> zipfian_;
};

class Workload {
 public:
  // A counter for the clients of one run to share: insert key numbers
  // start at recordcount, right after the loaded keys.
  static std::shared_ptr<AcknowledgedCounter> make_insert_counter(const WorkloadSpec& spec);

  // Validates `spec`. A null `inserts` makes a counter private to this
  // Workload (fine for one client; several clients must share one).
  static StatusOr<Workload> create(const WorkloadSpec& spec,
                                   std::shared_ptr<AcknowledgedCounter> inserts = nullptr);

  Op next_operation(Random& rng);
  // A key number from the request distribution, within the inserted range.
  uint64_t next_keynum(Random& rng);
  // Reports an insert returned by next_operation() finished (successfully
  // or not, as YCSB does), moving the readable range and 'latest' forward.
  Status acknowledge_insert(uint64_t keynum) { return inserts_->acknowledge(keynum); }

  // The key for `keynum` ("user..."), honouring insertorder and
  // zeropadding; returns its length, or 0 if `cap` < max_key_bytes().
  size_t build_key(uint64_t keynum, char* out, size_t cap) const {
    return workload::build_key(keynum, spec_.insertorder == InsertOrder::kHashed, spec_.zeropadding, out, cap);
  }
  size_t max_key_bytes() const { return workload::max_key_bytes(spec_.zeropadding); }

  // A whole record (all fieldcount fields, each of a drawn field length),
  // for loads and inserts. Returns its length, or 0 if it does not fit.
  size_t build_record(Random& rng, uint64_t keynum, char* out, size_t cap);
  // build_record in two steps: plan_record draws from `rng` what the bytes
  // depend on (their length and seed), fill_planned writes them without
  // the stream. A loader draws every plan in order, then fills records on
  // several threads, byte for byte what build_record makes.
  struct RecordPlan {
    uint64_t seed = 0;
    size_t length = 0;  // 0: does not fit
  };
  RecordPlan plan_record(Random& rng, uint64_t keynum, size_t cap);
  static void fill_planned(const RecordPlan& plan, char* out);
  // The value an update or read-modify-write writes: all fields with
  // writeallfields, otherwise one field (YCSB's default).
  size_t build_update_value(Random& rng, uint64_t keynum, char* out, size_t cap);
  // Enough room for any value from the two calls above.
  size_t max_value_bytes() const { return size_t{spec_.fieldcount} * spec_.fieldlength; }

  const WorkloadSpec& spec() const { return spec_; }
  const AcknowledgedCounter& inserts() const { return *inserts_; }

 private:
  using KeyChooser =
      std::variant<UniformGenerator, ScrambledZipfianGenerator, SkewedLatestGenerator, HotspotIntegerGenerator>;

  Workload(const WorkloadSpec& spec, std::shared_ptr<AcknowledgedCounter> inserts, KeyChooser key_chooser);
  RecordPlan plan_fields(Random& rng, uint64_t keynum, uint32_t fields, size_t cap);
  size_t build_fields(Random& rng, uint64_t keynum, uint32_t fields, char* out, size_t cap);

  WorkloadSpec spec_;
  std::shared_ptr<AcknowledgedCounter> inserts_;
  KeyChooser key_chooser_;
  LengthGenerator field_length_;
  LengthGenerator scan_length_;
  // Cumulative proportions in OpKind order, normalized to end at 1.
  double op_cumulative_[kOpKindCount];
};

}  // namespace locus::workload
