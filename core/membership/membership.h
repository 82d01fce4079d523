// Membership: which servers are up and where they listen, and the few
// values every process must agree on (Cell's region map: region id ->
// server, and the tree's root pointer), behind one interface so a
// deployment chooses where they live: ZooKeeper (backends/zookeeper, whose
// ephemeral znodes vanish when a server's session ends and whose watches
// tell clients at once) or the static cluster file (StaticMembership: a
// fixed list, values held in this process). Cell, section 2.6: "we use
// ZooKeeper to keep track of membership and the region-to-server map".
//
// Values are versioned: compare_and_set writes only over the version the
// writer read, so two survivors taking over the same dead server's regions
// cannot both win (docs/membership.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/common/status.h"

namespace locus::membership {

// A server as announced: a name unique in the cluster ("server-0") and the
// address clients connect to ("10.0.0.1:7471", rdma_cm's address and port).
struct Member {
  std::string name;
  std::string address;
  bool operator==(const Member&) const = default;
};

// A value with the version compare_and_set checks; kAbsent when unset.
struct Versioned {
  static constexpr int64_t kAbsent = -1;
  std::string value;
  int64_t version = kAbsent;
};

// What changed, for listeners: the member list, one value, or the session
// (ZooKeeper's session was lost and re-established: anything may have
// changed meanwhile).
struct Change {
  enum class Kind { kMembers, kValue, kSession };
  Kind kind;
  std::string key;  // kValue: the value's key
};

class Membership {
 public:
  using Listener = std::function<void(const Change&)>;
  virtual ~Membership() = default;

  // Announces `member` for as long as this object lives (ZooKeeper: an
  // ephemeral znode, re-created if the session is lost and renewed).
  // Fails if another live process holds the name.
  virtual Status register_member(const Member& member) = 0;
  // The members announced now, sorted by name.
  virtual StatusOr<std::vector<Member>> members() = 0;
  // A value by key (letters, digits, '-', '_', '.'): its version is kAbsent
  // when it was never written.
  virtual StatusOr<Versioned> get(const std::string& key) = 0;
  // Writes `value` if the stored version is `expected_version` (kAbsent:
  // only if unset); returns the new version. A stale version fails with
  // kAborted and changes nothing: read again and retry.
  virtual StatusOr<int64_t> compare_and_set(const std::string& key, const std::string& value,
                                            int64_t expected_version) = 0;
  // Asks for kValue changes of `key` (kMembers changes always come).
  virtual Status watch(const std::string& key) = 0;

  // Listeners run on the implementation's own thread (or the writer's, for
  // StaticMembership), one notification at a time: they must return
  // quickly, may read through this object, but must not add or remove
  // listeners or write a StaticMembership's values (that would wait on
  // the notification running them).
  int add_listener(Listener listener);
  // Once this returns the listener is not running and will not run again.
  void remove_listener(int id);

 protected:
  void notify(const Change& change);

 private:
  ShortMutex calls_mu_;  // held while listeners run
  ShortMutex listeners_mu_;
  std::vector<std::pair<int, Listener>> listeners_;
  int next_listener_ = 0;
};

// Keys of the values locus keeps (docs/membership.md).
inline constexpr const char* kRegionMapKey = "region-map";
inline constexpr const char* kRootPointerKey = "root-pointer";

// Checks a value key: non-empty, at most 200 of [A-Za-z0-9._-], not "." or "..".
Status check_key(const std::string& key);
// Checks a member name (the same alphabet as keys) and a non-empty address.
Status check_member(const Member& member);

}  // namespace locus::membership
