// The verbs backend's wr_id encoding (verbs_common.h), which needs no RDMA
// device: a completion is matched to its slot's current request by the 31
// generation bits the wr_id carries, so a slot used 2^31 times and more
// still recognises its completions (issue 16, defect 1: compared with the
// slot's whole 32-bit counter, they all looked stale and were dropped),
// while a late completion of the slot's previous request stays stale.
#include <cstdint>

#include <boost/test/unit_test.hpp>

#include "backends/verbs/verbs_common.h"

namespace locus::verbs {
namespace {

BOOST_AUTO_TEST_SUITE(verbs_wr_id)

BOOST_AUTO_TEST_CASE(a_slot_recognises_its_completions_past_two_to_the_31_uses) {
  for (uint32_t generation : {0u, 1u, 0x7ffffffeu, 0x7fffffffu, 0x80000000u, 0x80000005u, 0xfffffffeu, 0xffffffffu}) {
    for (bool recv : {false, true}) {
      const uint64_t id = encode_wr_id(recv, generation, 4242);
      BOOST_TEST(wr_id_is_recv(id) == recv);
      BOOST_TEST(wr_id_index(id) == 4242u);
      BOOST_TEST(wr_id_of_generation(id, generation), "generation " << generation);
      // The slot moved on (its request retired): the old completion is stale.
      BOOST_TEST(!wr_id_of_generation(id, generation + 1), "generation " << generation);
    }
  }
}

BOOST_AUTO_TEST_CASE(index_and_direction_survive_every_generation_bit) {
  const uint64_t id = encode_wr_id(false, 0xffffffffu, 0xffffffffu);
  BOOST_TEST(!wr_id_is_recv(id));
  BOOST_TEST(wr_id_index(id) == 0xffffffffu);
  BOOST_TEST(wr_id_generation(id) == kGenerationMask);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace locus::verbs
