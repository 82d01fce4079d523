// Catfish's fast messaging (its paper's sections III-A and IV-B) is the
// RDMA-WRITE messaging below the designs (core/messaging/messaging.h),
// which the NAM index's mailbox transport shares; its names are Catfish's.
#pragma once

#include "core/messaging/heartbeat.h"
#include "core/messaging/messaging.h"

namespace locus::catfish {
using namespace locus::messaging;  // NOLINT(google-build-using-namespace)
}  // namespace locus::catfish
