// Registers the conformance checks for one backend as Boost.Test cases at
// run time: master / transport_conformance / <backend name> / <check>.
// Run-time registration (rather than BOOST_AUTO_TEST_CASE) is what lets one
// list of checks be instantiated for every backend and every backend
// configuration, each under its own name so failures say which.
#include "tests/support/conformance/transport_conformance.h"

#include <boost/test/unit_test.hpp>

#include "tests/support/conformance/conformance_checks.h"

namespace locus::conformance {
namespace {

namespace utf = boost::unit_test;

struct CheckEntry {
  const char* name;
  void (*fn)(const BackendUnderTest&);
};

// Every check, in the order they run. Add new checks here.
constexpr CheckEntry kChecks[] = {
    {"write_then_read_exact", check_write_then_read_exact},
    {"zero_length_read_write", check_zero_length_read_write},
    {"large_transfer_exact", check_large_transfer_exact},
    {"end_of_region", check_end_of_region},
    {"cas_success_and_failure", check_cas_success_and_failure},
    {"faa_returns_old_and_adds", check_faa_returns_old_and_adds},
    {"concurrent_faa_sums_exactly", check_concurrent_faa_sums_exactly},
    {"concurrent_cas_increments", check_concurrent_cas_increments},
    {"misaligned_atomics", check_misaligned_atomics},
    {"send_recv_delivers", check_send_recv_delivers},
    {"send_zero_length_and_max_size", check_send_zero_length_and_max_size},
    {"write_with_imm", check_write_with_imm},
    {"message_longer_than_receive", check_message_longer_than_receive},
    {"send_without_receive", check_send_without_receive},
    {"receive_posted_late", check_receive_posted_late},
    {"writes_then_read_in_order", check_writes_then_read_in_order},
    {"receives_in_send_order", check_receives_in_send_order},
    {"out_of_bounds", check_out_of_bounds},
    {"wrong_rkey", check_wrong_rkey},
    {"deregistered_region", check_deregistered_region},
    {"missing_rights", check_missing_rights},
    {"crashed_peer", check_crashed_peer},
    {"fenced_peer", check_fenced_peer},
    {"bad_local_buffer_rejected", check_bad_local_buffer_rejected},
    {"bad_receive_buffer_rejected", check_bad_receive_buffer_rejected},
    {"send_batch_bounds", check_send_batch_bounds},
    {"send_queue_reuse", check_send_queue_reuse},
    {"unsignaled_completions", check_unsignaled_completions},
    {"poll_and_wait", check_poll_and_wait},
};

// The shared parent suite, created by the first registration.
utf::test_suite& conformance_root() {
  utf::master_test_suite_t& master = utf::framework::master_test_suite();
  const utf::test_unit_id id = master.get("transport_conformance");
  if (id != utf::INV_TEST_UNIT_ID) return utf::framework::get<utf::test_suite>(id);
  auto* root = new utf::test_suite("transport_conformance", __FILE__, __LINE__);
  master.add(root);
  return *root;
}

}  // namespace

utf::test_suite* register_transport_conformance(const BackendUnderTest& backend) {
  // Test cases outlive this call; each holds its own copy of the backend.
  auto shared = std::make_shared<const BackendUnderTest>(backend);
  auto* suite = new utf::test_suite(backend.name, __FILE__, __LINE__);
  for (const CheckEntry& check : kChecks) {
    auto fn = check.fn;
    suite->add(utf::make_test_case([shared, fn] { fn(*shared); }, check.name, __FILE__, __LINE__));
  }
  conformance_root().add(suite);
  return suite;
}

}  // namespace locus::conformance
