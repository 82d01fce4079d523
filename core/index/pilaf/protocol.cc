// Layout encoding for Pilaf's kGetLayout response.
#include "core/index/pilaf/protocol.h"

namespace locus::pilaf {
namespace {

void put_region(const RemoteRegion& r, rpc::Writer& w) {
  w.put(r.node);
  w.put(r.region);
  w.put(r.rkey);
  w.put(r.base_addr);
  w.put(r.length);
}

bool get_region(rpc::Reader& r, RemoteRegion* out) {
  return r.get(&out->node) && r.get(&out->region) && r.get(&out->rkey) && r.get(&out->base_addr) &&
         r.get(&out->length);
}

}  // namespace

void encode_layout(const Layout& layout, rpc::Writer& w) {
  w.put(layout.epoch);
  w.put(layout.bucket_count);
  w.put(layout.max_kv_bytes);
  put_region(layout.table, w);
  put_region(layout.extents, w);
  put_region(layout.meta, w);
}

bool decode_layout(rpc::Reader& r, Layout* layout) {
  if (!(r.get(&layout->epoch) && r.get(&layout->bucket_count) && r.get(&layout->max_kv_bytes) &&
        get_region(r, &layout->table) && get_region(r, &layout->extents) &&
        get_region(r, &layout->meta))) {
    return false;
  }
  // A layout that cannot be right is rejected rather than trusted.
  const uint64_t n = layout->bucket_count;
  return n != 0 && (n & (n - 1)) == 0 && layout->table.length == n * kEntryBytes &&
         layout->meta.length >= kMetaBytes && layout->max_kv_bytes >= kExtentHeaderBytes;
}

}  // namespace locus::pilaf
