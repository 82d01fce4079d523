// Tests for core/common/crc64: that it is the CRC-64/XZ variant Pilaf's
// entries are checked with, that piecewise computation matches one-shot
// (entries are verified field by field), and that the corruption a torn
// RDMA READ produces is caught.
#include "core/common/crc64.h"

#include <cstring>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <rapidcheck/boost_test.h>

#include "core/common/random.h"

namespace {

std::vector<unsigned char> random_bytes(locus::Random& rng, size_t len) {
  std::vector<unsigned char> bytes(len);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng.next_u64());
  return bytes;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(crc64_suite)

// The catalogued check value of CRC-64/XZ (a.k.a. CRC-64/GO-ECMA):
// poly 0x42F0E1EBA9EA3693, reflected, init and xorout all ones.
BOOST_AUTO_TEST_CASE(check_value_is_crc64_xz) {
  const char* check = "123456789";
  const uint64_t crc = locus::crc64(check, 9);
  BOOST_TEST_MESSAGE("isa-l crc64_ecma_refl(0, \"123456789\") = 0x" << std::hex << crc);
  BOOST_TEST(crc == 0x995DC9BBDF1939FAULL);
  BOOST_TEST(locus::crc64(std::string_view(check)) == 0x995DC9BBDF1939FAULL);
}

BOOST_AUTO_TEST_CASE(empty_input_returns_the_seed) {
  BOOST_TEST(locus::crc64(nullptr, 0) == 0u);
  BOOST_TEST(locus::crc64(nullptr, 0, 0x1234) == 0x1234u);
  BOOST_TEST(locus::crc64_extend(0xDEADBEEF, "", 0) == 0xDEADBEEFu);
}

BOOST_AUTO_TEST_CASE(incremental_equals_one_shot_at_every_split) {
  locus::Random rng(0xC4C64);
  const auto bytes = random_bytes(rng, 300);
  const uint64_t whole = locus::crc64(bytes.data(), bytes.size());
  for (size_t split = 0; split <= bytes.size(); ++split) {
    const uint64_t head = locus::crc64(bytes.data(), split);
    BOOST_TEST(locus::crc64_extend(head, bytes.data() + split, bytes.size() - split) == whole);
  }
}

BOOST_AUTO_TEST_CASE(accumulator_matches_one_shot) {
  struct Fields {
    uint64_t key_bytes;
    uint64_t value_bytes;
  };
  const std::string key = "user4711";
  const std::string value(1000, 'v');
  const Fields fields{key.size(), value.size()};

  std::string flat = key + value;
  flat.append(reinterpret_cast<const char*>(&fields), sizeof(fields));

  locus::Crc64Accumulator acc;
  acc.add(key).add(value).add_value(fields);
  BOOST_TEST(acc.value() == locus::crc64(flat));
}

BOOST_AUTO_TEST_CASE(every_single_bit_flip_is_detected) {
  locus::Random rng(42);
  for (size_t len : {1, 8, 63, 64, 65, 1024}) {
    auto bytes = random_bytes(rng, len);
    const uint64_t good = locus::crc64(bytes.data(), bytes.size());
    for (size_t bit = 0; bit < len * 8; ++bit) {
      bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
      BOOST_TEST_REQUIRE(locus::crc64(bytes.data(), bytes.size()) != good, "len " << len << " bit " << bit);
      bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    }
    BOOST_TEST(locus::crc64(bytes.data(), bytes.size()) == good);
  }
}

// A torn read in Pilaf looks like a prefix of new bytes over old ones.
BOOST_AUTO_TEST_CASE(torn_overwrite_is_detected) {
  locus::Random rng(7);
  const auto old_bytes = random_bytes(rng, 256);
  const auto new_bytes = random_bytes(rng, 256);
  const uint64_t new_crc = locus::crc64(new_bytes.data(), new_bytes.size());
  for (size_t torn_at = 0; torn_at < new_bytes.size(); ++torn_at) {
    auto mixed = old_bytes;
    std::memcpy(mixed.data(), new_bytes.data(), torn_at);
    BOOST_TEST_REQUIRE(locus::crc64(mixed.data(), mixed.size()) != new_crc);
  }
}

RC_BOOST_PROP(split_anywhere_matches_one_shot, (const std::vector<unsigned char>& bytes, size_t split_seed)) {
  const size_t split = bytes.empty() ? 0 : split_seed % (bytes.size() + 1);
  const uint64_t whole = locus::crc64(bytes.data(), bytes.size());
  const uint64_t head = locus::crc64(bytes.data(), split);
  RC_ASSERT(locus::crc64_extend(head, bytes.data() + split, bytes.size() - split) == whole);
}

RC_BOOST_PROP(single_bit_flip_changes_crc, (std::vector<unsigned char> bytes, size_t bit_seed)) {
  RC_PRE(!bytes.empty());
  const uint64_t good = locus::crc64(bytes.data(), bytes.size());
  const size_t bit = bit_seed % (bytes.size() * 8);
  bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  RC_ASSERT(locus::crc64(bytes.data(), bytes.size()) != good);
}

BOOST_AUTO_TEST_SUITE_END()
