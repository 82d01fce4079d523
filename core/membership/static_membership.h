// StaticMembership: membership from the static cluster file, for setups
// without ZooKeeper. The member list is fixed (a server that dies stays
// listed: clients find out by timing out) and values live in this process
// only, so a region map written here is seen by this process alone; every
// process derives the same map from the same file. Versions and
// compare-and-set behave as with ZooKeeper, so code above cannot tell.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/membership/membership.h"

namespace locus::membership {

class StaticMembership final : public Membership {
 public:
  // Fails on a bad or repeated member name (check_member).
  static StatusOr<std::unique_ptr<StaticMembership>> create(std::vector<Member> members);

  // Accepts only a member of the list, at its listed address.
  Status register_member(const Member& member) override;
  StatusOr<std::vector<Member>> members() override;
  StatusOr<Versioned> get(const std::string& key) override;
  StatusOr<int64_t> compare_and_set(const std::string& key, const std::string& value,
                                    int64_t expected_version) override;
  Status watch(const std::string& key) override;

 private:
  explicit StaticMembership(std::vector<Member> members) : members_(std::move(members)) {}

  const std::vector<Member> members_;
  ShortMutex mu_;
  std::map<std::string, Versioned> values_;
};

}  // namespace locus::membership
