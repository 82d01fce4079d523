// WorkloadSpec parsing and validation. One table maps each YCSB property
// name to a member of WorkloadSpec, so set_property, to_properties and the
// error messages cannot drift apart when a property is added.
#include "core/workload/workload_spec.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

namespace locus::workload {

std::string_view request_distribution_name(RequestDistribution d) {
  switch (d) {
    case RequestDistribution::kUniform: return "uniform";
    case RequestDistribution::kZipfian: return "zipfian";
    case RequestDistribution::kLatest: return "latest";
    case RequestDistribution::kHotspot: return "hotspot";
  }
  return "?";
}

std::string_view insert_order_name(InsertOrder o) {
  return o == InsertOrder::kHashed ? "hashed" : "ordered";
}

std::string_view length_distribution_name(LengthDistribution d) {
  switch (d) {
    case LengthDistribution::kConstant: return "constant";
    case LengthDistribution::kUniform: return "uniform";
    case LengthDistribution::kZipfian: return "zipfian";
  }
  return "?";
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

Status bad_value(std::string_view name, std::string_view value, std::string_view expected) {
  return invalid_argument(
      fmt::format("workload property '{}': expected {}, got '{}'", name, expected, value));
}

// Looks `value` up in a fixed list of (text, enumerator) pairs.
template <typename E, size_t N>
Status parse_enum(std::string_view name, std::string_view value,
                  const std::array<std::pair<std::string_view, E>, N>& choices, E& out,
                  std::string_view expected) {
  for (const auto& [text, e] : choices) {
    if (value == text) {
      out = e;
      return Status::ok();
    }
  }
  return bad_value(name, value, expected);
}

constexpr std::array<std::pair<std::string_view, RequestDistribution>, 4> kRequestDistributions{{
    {"uniform", RequestDistribution::kUniform},
    {"zipfian", RequestDistribution::kZipfian},
    {"latest", RequestDistribution::kLatest},
    {"hotspot", RequestDistribution::kHotspot},
}};
constexpr std::array<std::pair<std::string_view, InsertOrder>, 2> kInsertOrders{{
    {"hashed", InsertOrder::kHashed},
    {"ordered", InsertOrder::kOrdered},
}};
constexpr std::array<std::pair<std::string_view, LengthDistribution>, 3> kLengthDistributions{{
    {"constant", LengthDistribution::kConstant},
    {"uniform", LengthDistribution::kUniform},
    {"zipfian", LengthDistribution::kZipfian},
}};

// Parses `value` into the member M of WorkloadSpec, by the member's type.
// Every double property of CoreWorkload is a proportion or fraction in [0, 1].
template <auto M>
Status set_member(WorkloadSpec& spec, std::string_view name, std::string_view value) {
  auto& field = spec.*M;
  using T = std::remove_cvref_t<decltype(field)>;
  const char* first = value.data();
  const char* last = value.data() + value.size();
  if constexpr (std::is_same_v<T, bool>) {
    if (value == "true") field = true;
    else if (value == "false") field = false;
    else return bad_value(name, value, "true or false");
  } else if constexpr (std::is_integral_v<T>) {
    uint64_t parsed = 0;
    auto [ptr, ec] = std::from_chars(first, last, parsed);
    if (ec != std::errc() || ptr != last || value.empty()) {
      return bad_value(name, value, "a non-negative integer");
    }
    if (parsed > std::numeric_limits<T>::max()) {
      return bad_value(name, value, fmt::format("an integer <= {}", std::numeric_limits<T>::max()));
    }
    field = static_cast<T>(parsed);
  } else if constexpr (std::is_floating_point_v<T>) {
    double parsed = 0;
    auto [ptr, ec] = std::from_chars(first, last, parsed);
    if (ec != std::errc() || ptr != last || value.empty() || !std::isfinite(parsed)) {
      return bad_value(name, value, "a number");
    }
    if (parsed < 0.0 || parsed > 1.0) return bad_value(name, value, "a number in [0, 1]");
    field = parsed;
  } else if constexpr (std::is_same_v<T, RequestDistribution>) {
    return parse_enum(name, value, kRequestDistributions, field, "uniform, zipfian, latest or hotspot");
  } else if constexpr (std::is_same_v<T, InsertOrder>) {
    return parse_enum(name, value, kInsertOrders, field, "hashed or ordered");
  } else {
    static_assert(std::is_same_v<T, LengthDistribution>);
    return parse_enum(name, value, kLengthDistributions, field, "constant, uniform or zipfian");
  }
  return Status::ok();
}

template <auto M>
std::string get_member(const WorkloadSpec& spec) {
  const auto& field = spec.*M;
  using T = std::remove_cvref_t<decltype(field)>;
  if constexpr (std::is_same_v<T, bool>) return field ? "true" : "false";
  else if constexpr (std::is_arithmetic_v<T>) return fmt::format("{}", field);  // shortest round trip
  else if constexpr (std::is_same_v<T, RequestDistribution>) return std::string(request_distribution_name(field));
  else if constexpr (std::is_same_v<T, InsertOrder>) return std::string(insert_order_name(field));
  else return std::string(length_distribution_name(field));
}

struct Property {
  std::string_view name;
  Status (*set)(WorkloadSpec&, std::string_view, std::string_view);
  std::string (*get)(const WorkloadSpec&);
};

#define LOCUS_WORKLOAD_PROPERTY(member) \
  Property { #member, &set_member<&WorkloadSpec::member>, &get_member<&WorkloadSpec::member> }

const std::array kProperties{
    LOCUS_WORKLOAD_PROPERTY(recordcount),
    LOCUS_WORKLOAD_PROPERTY(operationcount),
    LOCUS_WORKLOAD_PROPERTY(insertstart),
    LOCUS_WORKLOAD_PROPERTY(insertcount),
    LOCUS_WORKLOAD_PROPERTY(readproportion),
    LOCUS_WORKLOAD_PROPERTY(updateproportion),
    LOCUS_WORKLOAD_PROPERTY(insertproportion),
    LOCUS_WORKLOAD_PROPERTY(scanproportion),
    LOCUS_WORKLOAD_PROPERTY(readmodifywriteproportion),
    LOCUS_WORKLOAD_PROPERTY(deleteproportion),
    LOCUS_WORKLOAD_PROPERTY(requestdistribution),
    LOCUS_WORKLOAD_PROPERTY(zipfianconstant),
    LOCUS_WORKLOAD_PROPERTY(hotspotdatafraction),
    LOCUS_WORKLOAD_PROPERTY(hotspotopnfraction),
    LOCUS_WORKLOAD_PROPERTY(insertorder),
    LOCUS_WORKLOAD_PROPERTY(zeropadding),
    LOCUS_WORKLOAD_PROPERTY(fieldcount),
    LOCUS_WORKLOAD_PROPERTY(fieldlength),
    LOCUS_WORKLOAD_PROPERTY(minfieldlength),
    LOCUS_WORKLOAD_PROPERTY(fieldlengthdistribution),
    LOCUS_WORKLOAD_PROPERTY(readallfields),
    LOCUS_WORKLOAD_PROPERTY(writeallfields),
    LOCUS_WORKLOAD_PROPERTY(minscanlength),
    LOCUS_WORKLOAD_PROPERTY(maxscanlength),
    LOCUS_WORKLOAD_PROPERTY(scanlengthdistribution),
};

#undef LOCUS_WORKLOAD_PROPERTY

Status invalid_property(std::string_view name, std::string what) {
  return invalid_argument(fmt::format("workload property '{}': {}", name, what));
}

}  // namespace

Status set_property(WorkloadSpec& spec, std::string_view name, std::string_view value) {
  name = trim(name);
  for (const Property& p : kProperties) {
    if (p.name == name) return p.set(spec, name, trim(value));
  }
  return invalid_argument(fmt::format("unknown workload property '{}'", name));
}

std::vector<std::pair<std::string, std::string>> to_properties(const WorkloadSpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(kProperties.size());
  for (const Property& p : kProperties) out.emplace_back(std::string(p.name), p.get(spec));
  return out;
}

Status WorkloadSpec::validate() const {
  if (recordcount == 0) return invalid_property("recordcount", "must be > 0");
  if (operationcount == 0) return invalid_property("operationcount", "must be > 0");
  if (insertstart >= recordcount) {
    return invalid_property("insertstart", fmt::format("{} is not below recordcount {}", insertstart, recordcount));
  }
  if (insertstart + effective_insertcount() > recordcount) {
    return invalid_property("insertcount", fmt::format("insertstart {} + insertcount {} exceeds recordcount {}",
                                                       insertstart, effective_insertcount(), recordcount));
  }
  const std::pair<std::string_view, double> proportions[] = {{"readproportion", readproportion},
                                                             {"updateproportion", updateproportion},
                                                             {"insertproportion", insertproportion},
                                                             {"scanproportion", scanproportion},
                                                             {"readmodifywriteproportion", readmodifywriteproportion},
                                                             {"deleteproportion", deleteproportion}};
  double sum = 0;
  for (const auto& [name, p] : proportions) {
    if (!(p >= 0.0 && p <= 1.0)) return invalid_property(name, fmt::format("{} is not in [0, 1]", p));
    sum += p;
  }
  if (std::fabs(sum - 1.0) > 1e-6) {
    return invalid_argument(
        fmt::format("workload properties readproportion + updateproportion + insertproportion + scanproportion + "
                    "readmodifywriteproportion + deleteproportion sum to {}, not 1",
                    sum));
  }
  if (!(zipfianconstant > 0.0 && zipfianconstant < 1.0)) {
    // Gray et al.'s closed form divides by (1 - theta).
    return invalid_property("zipfianconstant", fmt::format("{} is not in (0, 1)", zipfianconstant));
  }
  if (!(hotspotdatafraction >= 0.0 && hotspotdatafraction <= 1.0)) {
    return invalid_property("hotspotdatafraction", "is not in [0, 1]");
  }
  if (!(hotspotopnfraction >= 0.0 && hotspotopnfraction <= 1.0)) {
    return invalid_property("hotspotopnfraction", "is not in [0, 1]");
  }
  if (zeropadding > 64) return invalid_property("zeropadding", "must be <= 64");
  if (fieldcount == 0) return invalid_property("fieldcount", "must be > 0");
  if (fieldlength == 0) return invalid_property("fieldlength", "must be > 0");
  if (fieldlengthdistribution != LengthDistribution::kConstant &&
      (minfieldlength == 0 || minfieldlength > fieldlength)) {
    return invalid_property("minfieldlength",
                            fmt::format("{} must be in [1, fieldlength {}]", minfieldlength, fieldlength));
  }
  if (scanlengthdistribution == LengthDistribution::kConstant) {
    return invalid_property("scanlengthdistribution", "must be uniform or zipfian");
  }
  if (minscanlength == 0 || minscanlength > maxscanlength) {
    return invalid_property("minscanlength",
                            fmt::format("{} must be in [1, maxscanlength {}]", minscanlength, maxscanlength));
  }
  return Status::ok();
}

StatusOr<WorkloadSpec> standard_workload(char letter) {
  WorkloadSpec spec;
  spec.recordcount = 1000;
  spec.operationcount = 1000;
  spec.readallfields = true;
  spec.readproportion = 0;
  spec.updateproportion = 0;
  spec.insertproportion = 0;
  spec.scanproportion = 0;
  spec.readmodifywriteproportion = 0;
  spec.requestdistribution = RequestDistribution::kZipfian;
  switch (letter) {
    case 'a': case 'A':  // update heavy: session store
      spec.readproportion = 0.5;
      spec.updateproportion = 0.5;
      break;
    case 'b': case 'B':  // read mostly: photo tagging
      spec.readproportion = 0.95;
      spec.updateproportion = 0.05;
      break;
    case 'c': case 'C':  // read only: profile cache
      spec.readproportion = 1.0;
      break;
    case 'd': case 'D':  // read latest: status updates
      spec.readproportion = 0.95;
      spec.insertproportion = 0.05;
      spec.requestdistribution = RequestDistribution::kLatest;
      break;
    case 'e': case 'E':  // short ranges: threaded conversations
      spec.scanproportion = 0.95;
      spec.insertproportion = 0.05;
      spec.maxscanlength = 100;
      spec.scanlengthdistribution = LengthDistribution::kUniform;
      break;
    case 'f': case 'F':  // read-modify-write: user database
      spec.readproportion = 0.5;
      spec.readmodifywriteproportion = 0.5;
      break;
    default:
      return invalid_argument(fmt::format("no standard YCSB workload '{}': expected A to F", letter));
  }
  return spec;
}

}  // namespace locus::workload
