// The individual conformance checks, one function per Boost.Test case.
// Each builds its own World (a fresh Runtime), so checks are independent and
// an error completion in one (which on verbs would move a queue pair to the
// error state) cannot disturb another. Within a check, every request that
// is expected to fail is posted from a client node of its own for the same
// reason. transport_conformance.cc lists them and registers them.
#pragma once

#include "tests/support/conformance/transport_conformance.h"

namespace locus::conformance {

// checks_one_sided.cc: READ and WRITE semantics.
void check_write_then_read_exact(const BackendUnderTest& b);
void check_zero_length_read_write(const BackendUnderTest& b);
void check_large_transfer_exact(const BackendUnderTest& b);
void check_end_of_region(const BackendUnderTest& b);

// checks_atomics.cc: CAS and FAA.
void check_cas_success_and_failure(const BackendUnderTest& b);
void check_faa_returns_old_and_adds(const BackendUnderTest& b);
void check_concurrent_faa_sums_exactly(const BackendUnderTest& b);
void check_concurrent_cas_increments(const BackendUnderTest& b);
void check_misaligned_atomics(const BackendUnderTest& b);

// checks_messaging.cc: SEND/RECV and WRITE_WITH_IMM.
void check_send_recv_delivers(const BackendUnderTest& b);
void check_send_zero_length_and_max_size(const BackendUnderTest& b);
void check_write_with_imm(const BackendUnderTest& b);
void check_message_longer_than_receive(const BackendUnderTest& b);
void check_send_without_receive(const BackendUnderTest& b);
void check_receive_posted_late(const BackendUnderTest& b);

// checks_ordering.cc: per-peer ordering of execution and completions.
void check_writes_then_read_in_order(const BackendUnderTest& b);
void check_receives_in_send_order(const BackendUnderTest& b);

// checks_remote_errors.cc: bounds, keys, registrations, rights, dead peers.
void check_out_of_bounds(const BackendUnderTest& b);
void check_wrong_rkey(const BackendUnderTest& b);
void check_deregistered_region(const BackendUnderTest& b);
void check_missing_rights(const BackendUnderTest& b);
void check_crashed_peer(const BackendUnderTest& b);
void check_fenced_peer(const BackendUnderTest& b);

// checks_local.cc: local validation, queue bounds, completion delivery.
void check_bad_local_buffer_rejected(const BackendUnderTest& b);
void check_bad_receive_buffer_rejected(const BackendUnderTest& b);
void check_send_batch_bounds(const BackendUnderTest& b);
void check_send_queue_reuse(const BackendUnderTest& b);
void check_unsignaled_completions(const BackendUnderTest& b);
void check_poll_and_wait(const BackendUnderTest& b);

}  // namespace locus::conformance
