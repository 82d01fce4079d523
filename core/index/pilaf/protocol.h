// Pilaf's RPC protocol: request types and the encoding of the layout.
// Put and delete always go to the server; get goes there only in VO
// ("verb-only") mode, the baseline Pilaf is compared against.
#pragma once

#include <cstdint>

#include "core/index/pilaf/layout.h"
#include "core/rpc/message.h"

namespace locus::pilaf {

enum RequestType : uint16_t {
  kGetLayout = 1,  // -> Layout
  kPut = 2,        // blob key, blob value -> ()
  kDelete = 3,     // blob key -> () or NOT_FOUND
  kGet = 4,        // blob key -> blob value or NOT_FOUND (VO mode)
};

void encode_layout(const Layout& layout, rpc::Writer& w);
bool decode_layout(rpc::Reader& r, Layout* layout);

}  // namespace locus::pilaf
