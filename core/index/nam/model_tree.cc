// The NAM index's trees rebuilt for the model (model_tree.h).
#include "core/index/nam/model_tree.h"

#include <cmath>
#include <string>

#include "core/check/models.h"
#include "core/common/random.h"
#include "core/design/record_loader.h"
#include "core/index/nam/protocol.h"
#include "core/index/nam/tree.h"

namespace locus::nam {
namespace {

// Every server's pages, by offset; one page per allocation, as an arena's
// bump cursor gives them.
struct Pages {
  uint32_t page_bytes = 0;
  std::vector<std::vector<std::vector<std::byte>>> by_server;
  std::byte* at(RemotePtr p) {
    auto& pages = by_server.at(p.server());
    const uint64_t i = p.offset() / page_bytes - 1;
    return i < pages.size() ? pages[i].data() : nullptr;
  }
};

// A NodeAccess over Pages: single-threaded (the load runs before any
// client), so a lock is a word compare and a read a copy. Allocation is
// round-robin per level over `servers` (one server: a partition's own).
class ModelAccess final : public NodeAccess {
 public:
  ModelAccess(Pages& pages, std::vector<uint32_t> servers) : pages_(pages), servers_(std::move(servers)) {}
  uint32_t page_bytes() const override { return pages_.page_bytes; }
  Status read(RemotePtr p, Node& out) override {
    LOCUS_ASSIGN_OR_RETURN(std::byte * src, page(p));
    std::copy(src, src + page_bytes(), out.data());
    return Status();
  }
  Status lock(RemotePtr p, uint64_t version) override {
    LOCUS_ASSIGN_OR_RETURN(std::byte * w, page(p));
    Node n(w, page_bytes());
    if (n.word() != version) return Status(StatusCode::kAborted, "nam model: node changed before its lock");
    n.set_word(version | kLockBit);
    return Status();
  }
  Status install(RemotePtr p, const Node& n) override {
    LOCUS_ASSIGN_OR_RETURN(std::byte * dst, page(p));
    std::copy(n.data() + 8, n.data() + page_bytes(), dst + 8);
    return Status();
  }
  Status create(RemotePtr p, const Node& n) override {
    LOCUS_ASSIGN_OR_RETURN(std::byte * dst, page(p));
    std::copy(n.data(), n.data() + page_bytes(), dst);
    return Status();
  }
  Status unlock(RemotePtr p, uint64_t held) override {
    LOCUS_ASSIGN_OR_RETURN(std::byte * w, page(p));
    Node n(w, page_bytes());
    if (n.word() == held) n.set_word(held + 1);
    return Status();
  }
  StatusOr<RemotePtr> allocate(uint8_t level) override {
    if (next_.size() <= level) next_.resize(level + 1, 0);
    const uint32_t server = servers_[next_[level]++ % servers_.size()];
    auto& pages = pages_.by_server.at(server);
    pages.emplace_back(page_bytes());
    return RemotePtr::make(server, pages.size() * page_bytes());
  }
  StatusOr<RemotePtr> root() override { return root_; }
  StatusOr<bool> swap_root(RemotePtr old_root, RemotePtr new_root) override {
    if (!(root_ == old_root)) return false;
    root_ = new_root;
    return true;
  }

 private:
  StatusOr<std::byte*> page(RemotePtr p) {
    std::byte* b = p.null() ? nullptr : pages_.at(p);
    if (b == nullptr) return corruption("nam model: node pointer " + std::to_string(p.raw) + " outside the pages");
    return b;
  }
  Pages& pages_;
  std::vector<uint32_t> servers_;
  std::vector<uint32_t> next_;
  RemotePtr root_;
};

// A hybrid memory server's inner levels (server.cc's find_leaf and
// add_separator) over its own tree.
class ModelUpper final : public UpperLevels {
 public:
  explicit ModelUpper(BlinkTree& inner) : inner_(inner) {}
  StatusOr<RemotePtr> find_leaf(Pair x) override { return inner_.find_child(x, 1); }
  Status add_separator(Pair sep, RemotePtr right) override { return inner_.add_separator(1, sep, right); }
  StatusOr<bool> join_leaves(Pair high, RemotePtr left, RemotePtr right) override {
    return inner_.join_children(1, high, left, right);
  }

 private:
  BlinkTree& inner_;
};

// Walks the subtree at p: adds to reads[server] the lookups (one per pair
// below) that READ each node, and to leaf_reads[server] those of the
// leaves alone, and counts nodes per level; returns the pairs.
StatusOr<uint64_t> walk(Pages& pages, RemotePtr p, std::vector<double>* reads, std::vector<double>* level_nodes,
                        uint8_t stop_level = 0, std::vector<double>* leaf_reads = nullptr) {
  Node n(pages.at(p), pages.page_bytes);
  if (level_nodes->size() <= n.level()) level_nodes->resize(n.level() + 1, 0);
  (*level_nodes)[n.level()] += 1;
  uint64_t pairs = 0;
  if (n.level() == stop_level) {
    if (n.leaf()) {
      for (uint32_t i = 0; i < n.count(); ++i) pairs += n.deleted(i) ? 0 : 1;
    } else {
      pairs = 1;  // a hybrid inner node: the caller weighs its leaves itself
    }
  } else {
    for (uint32_t i = 0; i < n.count(); ++i) {
      LOCUS_ASSIGN_OR_RETURN(uint64_t below, walk(pages, n.child(i), reads, level_nodes, stop_level, leaf_reads));
      pairs += below;
    }
  }
  if (reads != nullptr) (*reads)[p.server()] += static_cast<double>(pairs);
  if (leaf_reads != nullptr && n.leaf()) (*leaf_reads)[p.server()] += static_cast<double>(pairs);
  return pairs;
}

}  // namespace

std::vector<double> normalised(std::vector<double> v) {
  double sum = 0;
  for (double x : v) sum += x;
  for (double& x : v) x = sum > 0 ? x / sum : 0;
  return v;
}

StatusOr<ModelTrees> build_model_trees(const scenario::Scenario& s, const NamConfig& c, uint32_t servers) {
  const uint64_t records = s.workload.effective_insertcount();
  if (records > kMaxModelRecords) {
    return invalid_argument("workload.recordcount: the nam model rebuilds the tree in memory, up to " +
                            std::to_string(kMaxModelRecords) + " records, not " + std::to_string(records));
  }
  std::vector<uint32_t> all(servers);
  for (uint32_t i = 0; i < servers; ++i) all[i] = i;
  Pages pages{c.page_bytes, std::vector<std::vector<std::vector<std::byte>>>(servers)};
  ModelAccess fine_access(pages, all);
  LOCUS_RETURN_IF_ERROR(BlinkTree::create_empty(fine_access));
  BlinkTree fine(fine_access);

  const bool hybrid = c.distribution == Distribution::kHybrid;
  const Partitioner partitioner(c.partitioning, servers, s.workload, c.key_skew);
  std::vector<std::unique_ptr<ModelAccess>> own;  // coarse trees, hybrid inner levels
  std::vector<std::unique_ptr<BlinkTree>> parts, inner;
  std::vector<std::unique_ptr<ModelUpper>> uppers;
  ModelAccess leaf_access(pages, all);  // hybrid leaves
  for (uint32_t i = 0; i < servers; ++i) {
    own.push_back(std::make_unique<ModelAccess>(pages, std::vector<uint32_t>{i}));
    LOCUS_RETURN_IF_ERROR(BlinkTree::create_empty(*own.back(), hybrid));
    if (hybrid) {
      inner.push_back(std::make_unique<BlinkTree>(*own.back()));
      uppers.push_back(std::make_unique<ModelUpper>(*inner.back()));
      parts.push_back(std::make_unique<BlinkTree>(leaf_access, uppers.back().get()));
    } else {
      parts.push_back(std::make_unique<BlinkTree>(*own.back()));
    }
  }
  ModelTrees out;
  out.records = records;
  std::vector<double> keys(servers, 0);
  Random rng(s.run.seed);
  LOCUS_RETURN_IF_ERROR(
      design::load_records(s.workload, rng, [&](std::string_view key, std::string_view value) -> Status {
        LOCUS_ASSIGN_OR_RETURN(uint64_t number, key_number(key));
        const Pair x{partitioner.key_of(number), check::value_digest(value)};
        const uint64_t k = x.key;
        LOCUS_RETURN_IF_ERROR(fine.insert(x));
        const uint32_t t = partitioner.server_of(k);
        keys[t] += 1;
        return parts[t]->insert(x);
      }));

  // The fine tree: every node a lookup READs on its way down.
  std::vector<double> reads(servers, 0), fine_leaf_reads(servers, 0);
  LOCUS_ASSIGN_OR_RETURN(RemotePtr root, fine_access.root());
  LOCUS_RETURN_IF_ERROR(walk(pages, root, &reads, &out.level_nodes, 0, &fine_leaf_reads).status());
  out.fine_height = static_cast<uint32_t>(out.level_nodes.size());
  out.fine_leaves = static_cast<uint64_t>(out.level_nodes[0]);
  for (double n : out.level_nodes) out.fine_nodes += static_cast<uint64_t>(n);
  out.fine_read_share = normalised(reads);
  out.fine_leaf_share = normalised(fine_leaf_reads);

  // The partitions: keys, heights; hybrid leaves by the server holding them.
  out.partition_share = normalised(keys);
  std::vector<double> leaf_reads(servers, 0);
  for (uint32_t i = 0; i < servers; ++i) {
    LOCUS_ASSIGN_OR_RETURN(RemotePtr r, own[i]->root());
    std::vector<double> levels;
    if (hybrid) {
      // The inner levels end at level 1; each of their children is a leaf
      // chain's start (the B-link walk), read once per lookup of its pairs.
      LOCUS_RETURN_IF_ERROR(walk(pages, r, nullptr, &levels, 1).status());
      LOCUS_ASSIGN_OR_RETURN(RemotePtr leftmost, inner[i]->find_child(Pair{0, 0}, 1));
      for (RemotePtr p = leftmost; !p.null();) {
        Node leaf(pages.at(p), pages.page_bytes);
        if (!leaf.head()) {
          double pairs = 0;
          for (uint32_t j = 0; j < leaf.count(); ++j) pairs += leaf.deleted(j) ? 0 : 1;
          leaf_reads[p.server()] += pairs;
          ++out.partition_leaves;
        }
        if (leaf.high_inf()) break;
        p = leaf.sibling();
      }
      out.partition_height.push_back(static_cast<uint32_t>(levels.size()) + 1);
    } else {
      LOCUS_RETURN_IF_ERROR(walk(pages, r, nullptr, &levels).status());
      out.partition_height.push_back(static_cast<uint32_t>(levels.size()));
      out.partition_leaves += static_cast<uint64_t>(levels[0]);
    }
  }
  if (hybrid) out.hybrid_leaf_share = normalised(leaf_reads);
  return out;
}

}  // namespace locus::nam
