// ZooKeeperMembership: core/membership's interface on a ZooKeeper ensemble
// through its multi-threaded C client (Debian's libzookeeper-mt-dev). It is
// outside core because the C client runs its own I/O and completion
// threads and this class blocks on condition variables, which SimGrid's
// actors (which run core) cannot; no design needs it, they see the
// interface only. Layout under the configured path (docs/membership.md):
//
//   PATH/members/NAME   ephemeral, data = the member's address
//   PATH/values/KEY     persistent, data = the value, version = znode version
//
// Sessions: the client reconnects by itself (to any server of the host
// list) and keeps its watches. When the session expires (cut off longer
// than its timeout) this class opens a new one, re-creates its ephemeral
// registrations, re-arms its watches and tells listeners (Change::kSession).
// A thread of its own handles those events, since the C client forbids
// synchronous calls from its completion thread, where watches fire.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>

#include "core/membership/membership.h"

typedef struct _zhandle zhandle_t;

namespace locus::zookeeper {

struct ZooKeeperTarget {
  std::string hosts;  // "HOST:PORT[,HOST:PORT...]"
  std::string path;   // "/locus": where this cluster's znodes live
};

// Parses "HOST:PORT[,HOST:PORT...][/PATH]" (PATH defaults to /locus);
// errors name the problem.
StatusOr<ZooKeeperTarget> parse_zookeeper_target(const std::string& text);

struct ZooKeeperOptions {
  ZooKeeperTarget target;
  // Asked of the server, which clamps it to [2, 20] of its ticks: how long
  // a dead server stays listed, and how long a cut-off one keeps its name.
  int session_timeout_ms = 6000;
  // How long a call waits for a connection before failing with kUnavailable.
  int connect_timeout_ms = 10'000;
};

class ZooKeeperMembership final : public membership::Membership {
 public:
  // Connects (waiting up to connect_timeout_ms) and creates PATH's znodes.
  static StatusOr<std::unique_ptr<ZooKeeperMembership>> connect(const ZooKeeperOptions& options);
  ~ZooKeeperMembership() override;  // closes the session: its members vanish at once

  // Waits up to the session timeout for a previous holder of the name
  // whose session has not expired yet (a restarted server's old self).
  Status register_member(const membership::Member& member) override;
  StatusOr<std::vector<membership::Member>> members() override;
  StatusOr<membership::Versioned> get(const std::string& key) override;
  StatusOr<int64_t> compare_and_set(const std::string& key, const std::string& value,
                                    int64_t expected_version) override;
  Status watch(const std::string& key) override;

  // The session's id and password (tests expire it from another handle)
  // and how many sessions this object has opened (1 + expiries survived).
  struct Session {
    int64_t id = 0;
    std::string password;
  };
  Session session();
  int sessions_opened();
  int negotiated_timeout_ms();

 private:
  struct Event {
    zhandle_t* zh;  // the session's handle: events of a replaced one are dropped
    int type;
    int state;
    std::string path;
  };
  explicit ZooKeeperMembership(ZooKeeperOptions options);
  static void on_event(zhandle_t* zh, int type, int state, const char* path, void* context);

  Status open_session();  // needs handle_mu_ held exclusively
  // Runs fn(handle) once connected (waiting up to connect_timeout_ms); with
  // `retry`, again after a lost connection or session until that deadline.
  template <typename Call>
  int call(bool retry, Call&& fn);
  StatusOr<membership::Versioned> read(const std::string& path);
  Status ensure_path(const std::string& path);
  std::string fmt_owner(const std::string& name, int64_t owner);
  Status create_member_node(const membership::Member& member, bool wait_for_old);
  Status arm_members_watch();
  Status arm_value_watch(const std::string& key);
  void run_events();
  void renew_session();
  std::string member_path(const std::string& name) const;
  std::string value_path(const std::string& key) const;

  const ZooKeeperOptions options_;
  // Held shared by every call on the handle, exclusively to replace it.
  std::shared_mutex handle_mu_;
  zhandle_t* zh_ = nullptr;
  int sessions_opened_ = 0;

  std::mutex mu_;  // guards the fields below
  std::condition_variable changed_;
  int state_ = 0;  // the last session state (ZOO_CONNECTED_STATE, ...)
  uint64_t events_seen_ = 0;
  std::deque<Event> events_;
  bool stopping_ = false;
  std::map<std::string, std::string> registered_;  // name -> address
  std::set<std::string> watched_;                  // value keys
  std::thread events_thread_;
};

}  // namespace locus::zookeeper
