// Layout encoding for Pilaf's kGetLayout response.
#include "core/index/pilaf/protocol.h"

namespace locus::pilaf {

void encode_layout(const Layout& layout, rpc::Writer& w) {
  w.put(layout.epoch);
  w.put(layout.bucket_count);
  w.put(layout.max_kv_bytes);
  rpc::put_region(layout.table, w);
  rpc::put_region(layout.extents, w);
  rpc::put_region(layout.meta, w);
}

bool decode_layout(rpc::Reader& r, Layout* layout) {
  if (!(r.get(&layout->epoch) && r.get(&layout->bucket_count) && r.get(&layout->max_kv_bytes) &&
        rpc::get_region(r, &layout->table) && rpc::get_region(r, &layout->extents) &&
        rpc::get_region(r, &layout->meta))) {
    return false;
  }
  // A layout that cannot be right is rejected rather than trusted.
  const uint64_t n = layout->bucket_count;
  return n != 0 && (n & (n - 1)) == 0 && layout->table.length == n * kEntryBytes &&
         layout->meta.length >= kMetaBytes && layout->max_kv_bytes >= kExtentHeaderBytes;
}

}  // namespace locus::pilaf
