// Fuzz target: Pilaf's layout reply decoder (core/index/pilaf/protocol.cc,
// decode_layout), which a client runs on whatever a server sends back for
// kGetLayout, and the get reply parse of PilafClient::rpc_get. A layout
// it accepts must be one the client can use safely (bucket count a power
// of two, table sized for it, meta and extent header fitting), and must
// encode back to the bytes it came from.
#include <vector>

#include "core/index/pilaf/protocol.h"
#include "tests/fuzz/support/input.h"

using namespace locus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = fuzz::as_bytes(data, size);
  {
    rpc::Reader r(bytes);
    pilaf::Layout layout;
    if (pilaf::decode_layout(r, &layout)) {
      const uint64_t n = layout.bucket_count;
      FUZZ_CHECK(n != 0 && (n & (n - 1)) == 0, "bucket count %llu", static_cast<unsigned long long>(n));
      FUZZ_CHECK(layout.table.length == n * pilaf::kEntryBytes, "table length");
      FUZZ_CHECK(layout.meta.length >= pilaf::kMetaBytes, "meta length");
      std::vector<std::byte> out(size + 64);
      rpc::Writer w(out);
      pilaf::encode_layout(layout, w);
      FUZZ_CHECK(w.ok() && w.size() <= size && std::memcmp(out.data(), data, w.size()) == 0,
                 "layout does not encode back to its bytes");
    }
  }
  {
    // PilafClient::rpc_get: one blob, nothing after it.
    rpc::Reader r(bytes);
    std::string_view value;
    if (r.blob(&value) && r.at_end()) {
      FUZZ_CHECK(value.size() + 4 == size, "get reply of %zu bytes holds a %zu-byte value", size, value.size());
    }
  }
  return 0;
}
