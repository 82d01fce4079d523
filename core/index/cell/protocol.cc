// Encodings of Cell's RPC messages; see protocol.h.
#include "core/index/cell/protocol.h"

#include <algorithm>

namespace locus::cell {
namespace {

bool valid_outcome(uint8_t o) { return o <= static_cast<uint8_t>(Outcome::kBusy); }

}  // namespace

bool is_write(OpKind op) { return op == OpKind::kPut || op == OpKind::kDelete || op == OpKind::kInsertChild; }

NodeId Layout::server_of(uint64_t ptr) const {
  if (ptr == kNullPtr) return bootstrap();
  const RegionInfo* r = region(ptr_region(ptr));
  return r == nullptr ? kInvalidNode : r->server;
}

std::vector<NodeId> Layout::servers() const {
  std::vector<NodeId> out;
  for (const RegionInfo& r : regions) {
    if (r.kind == RegionKind::kNodes && std::find(out.begin(), out.end(), r.server) == out.end()) {
      out.push_back(r.server);
    }
  }
  return out;
}

void encode_layout(const Layout& l, rpc::Writer& w) {
  w.put(l.geometry.node_bytes);
  w.put(l.geometry.key_capacity_bytes);
  w.put(l.geometry.meganode_nodes);
  w.put(l.geometry.meganodes_per_server);
  w.put(l.max_kv_bytes);
  w.put(static_cast<uint32_t>(l.regions.size()));
  for (const RegionInfo& r : l.regions) {
    w.put(static_cast<uint8_t>(r.kind));
    w.put(r.server);
    rpc::put_region(r.remote, w);
  }
}

bool decode_layout(rpc::Reader& r, Layout* l) {
  uint32_t n = 0;
  if (!(r.get(&l->geometry.node_bytes) && r.get(&l->geometry.key_capacity_bytes) &&
        r.get(&l->geometry.meganode_nodes) && r.get(&l->geometry.meganodes_per_server) &&
        r.get(&l->max_kv_bytes) && r.get(&n))) {
    return false;
  }
  if (!l->geometry.validate().is_ok() || n == 0 || n > (1u << 16)) return false;
  l->regions.assign(n, RegionInfo{});
  for (RegionInfo& info : l->regions) {
    uint8_t kind = 0;
    if (!(r.get(&kind) && r.get(&info.server) && rpc::get_region(r, &info.remote)) || kind > 1) return false;
    info.kind = static_cast<RegionKind>(kind);
    // A node region too small for the geometry cannot be read safely.
    if (info.kind == RegionKind::kNodes && info.remote.length < l->geometry.region_bytes()) return false;
  }
  return r.at_end() && l->regions[0].kind == RegionKind::kNodes;
}

void put_bound(rpc::Writer& w, Bound b) {
  w.put<uint8_t>(b.inf ? 1 : 0);
  w.blob(b.inf ? std::string_view() : b.key);
}

bool get_bound(rpc::Reader& r, Bound* b) {
  uint8_t inf = 0;
  if (!r.get(&inf) || inf > 1 || !r.blob(&b->key)) return false;
  b->inf = inf == 1;
  return true;
}

void encode_op_request(const OpRequest& q, rpc::Writer& w) {
  w.put(static_cast<uint8_t>(q.op));
  w.put(q.level);
  w.put(q.start);
  w.blob(q.key);
  if (q.op == OpKind::kPut) w.blob(q.value);
  if (q.op == OpKind::kInsertChild) w.put(q.child);
}

bool decode_op_request(rpc::Reader& r, OpRequest* q) {
  uint8_t op = 0;
  if (!(r.get(&op) && op <= static_cast<uint8_t>(OpKind::kInsertChild) && r.get(&q->level) &&
        r.get(&q->start) && r.blob(&q->key))) {
    return false;
  }
  q->op = static_cast<OpKind>(op);
  if (q->op == OpKind::kPut && !r.blob(&q->value)) return false;
  if (q->op == OpKind::kInsertChild && !r.get(&q->child)) return false;
  return r.at_end();
}

void encode_op_response(const OpResult& res, rpc::Writer& w) {
  w.put(static_cast<uint8_t>(res.outcome));
  w.put(res.next);
  w.put<uint8_t>(res.found ? 1 : 0);
  w.blob(res.value);
  w.put(res.meganode.root);
  w.put(res.meganode.level);
  w.put(res.meganode.height);
  put_bound(w, res.meganode.min);
  put_bound(w, res.meganode.max);
  w.put(res.nodes_visited);
}

bool decode_op_response(rpc::Reader& r, OpResponse* out) {
  uint8_t outcome = 0, found = 0;
  if (!(r.get(&outcome) && valid_outcome(outcome) && r.get(&out->next) && r.get(&found) &&
        r.blob(&out->value) && r.get(&out->meganode.root) && r.get(&out->meganode.level) &&
        r.get(&out->meganode.height) && get_bound(r, &out->meganode.min) &&
        get_bound(r, &out->meganode.max) && r.get(&out->nodes_visited))) {
    return false;
  }
  out->outcome = static_cast<Outcome>(outcome);
  out->found = found != 0;
  return r.at_end();
}

void encode_range_request(const RangeRequest& q, rpc::Writer& w) {
  w.put(q.start);
  w.blob(q.query.start);
  w.put<uint8_t>(q.query.start_exclusive ? 1 : 0);
  w.put<uint8_t>(q.query.has_end ? 1 : 0);
  w.blob(q.query.has_end ? q.query.end : std::string_view());
  w.put(q.query.limit);
}

bool decode_range_request(rpc::Reader& r, RangeRequest* q) {
  uint8_t excl = 0, has_end = 0;
  if (!(r.get(&q->start) && r.blob(&q->query.start) && r.get(&excl) && r.get(&has_end) &&
        r.blob(&q->query.end) && r.get(&q->query.limit))) {
    return false;
  }
  q->query.start_exclusive = excl != 0;
  q->query.has_end = has_end != 0;
  return r.at_end();
}

void encode_range_header(const RangeResult& res, rpc::Writer& w) {
  w.put(static_cast<uint8_t>(res.outcome));
  w.put(res.next);
  w.put<uint8_t>(res.resume_exclusive ? 1 : 0);
  w.blob(res.resume);
  w.put(res.returned);
  w.put(res.nodes_visited);
}

bool decode_range_header(rpc::Reader& r, RangeResult* out) {
  uint8_t outcome = 0, excl = 0;
  if (!(r.get(&outcome) && valid_outcome(outcome) && r.get(&out->next) && r.get(&excl) &&
        r.blob(&out->resume) && r.get(&out->returned) && r.get(&out->nodes_visited))) {
    return false;
  }
  out->outcome = static_cast<Outcome>(outcome);
  out->resume_exclusive = excl != 0;
  return true;
}

void encode_plan(const SplitPlan& p, rpc::Writer& w) {
  w.put(p.meganode);
  w.put(p.root);
  w.put(p.level);
  w.blob(p.split_key);
  put_bound(w, Bound{p.min_key, p.min_inf});
  put_bound(w, Bound{p.max_key, p.max_inf});
  w.put(p.right);
}

bool decode_plan(rpc::Reader& r, SplitPlan* p) {
  std::string_view split;
  Bound min, max;
  if (!(r.get(&p->meganode) && r.get(&p->root) && r.get(&p->level) && r.blob(&split) &&
        get_bound(r, &min) && get_bound(r, &max) && r.get(&p->right) && r.at_end())) {
    return false;
  }
  p->split_key.assign(split);
  p->min_inf = min.inf;
  p->min_key.assign(min.key);
  p->max_inf = max.inf;
  p->max_key.assign(max.key);
  return true;
}

}  // namespace locus::cell
