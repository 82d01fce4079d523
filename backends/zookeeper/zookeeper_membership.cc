// ZooKeeperMembership on the C client's synchronous calls; see
// zookeeper_membership.h.
#include "backends/zookeeper/zookeeper_membership.h"

#include <zookeeper/zookeeper.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <vector>

namespace locus::zookeeper {
namespace {

using membership::Change;
using membership::Member;
using membership::Versioned;
using Clock = std::chrono::steady_clock;

// ZooKeeper's default jute.maxbuffer is 1 MiB; a larger write makes the
// server drop the connection rather than answer, so refuse it here.
constexpr size_t kMaxValueBytes = 1'000'000;

Status zk_status(int rc, const std::string& what) {
  const std::string m = what + ": " + zerror(rc);
  if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE ||
      rc == ZCLOSING) {
    return unavailable(m + " (ZooKeeper unreachable or the session was lost; retry)");
  }
  if (rc == ZNONODE) return not_found(m);
  return internal_error(m);
}

// Retrying may help: the client reconnects or this object renews the session.
bool transient(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE;
}

}  // namespace

StatusOr<ZooKeeperTarget> parse_zookeeper_target(const std::string& text) {
  const std::string usage = "'" + text + "': expected HOST:PORT[,HOST:PORT...][/PATH], e.g. 10.0.0.5:2181/locus";
  ZooKeeperTarget t;
  const size_t slash = text.find('/');
  t.hosts = text.substr(0, slash);
  t.path = slash == std::string::npos ? "/locus" : text.substr(slash);
  if (t.hosts.empty()) return invalid_argument(usage + ": no host");
  size_t start = 0;
  while (start <= t.hosts.size()) {
    const size_t comma = std::min(t.hosts.find(',', start), t.hosts.size());
    const std::string host = t.hosts.substr(start, comma - start);
    const size_t colon = host.rfind(':');
    if (colon == std::string::npos || colon == 0) return invalid_argument(usage + ": '" + host + "' has no :PORT");
    const std::string port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) == 0 || std::stoi(port) > 65535) {
      return invalid_argument(usage + ": '" + port + "' is not a port in [1, 65535]");
    }
    start = comma + 1;
  }
  if (t.path.size() > 1 && t.path.back() == '/') t.path.pop_back();
  size_t part = 1;
  while (part < t.path.size()) {
    const size_t next = std::min(t.path.find('/', part), t.path.size());
    const Status st = membership::check_key(t.path.substr(part, next - part));
    if (!st.is_ok()) return invalid_argument(usage + ": path component " + st.message());
    part = next + 1;
  }
  if (t.path == "/") return invalid_argument(usage + ": give a path of its own, not the root '/'");
  return t;
}

ZooKeeperMembership::ZooKeeperMembership(ZooKeeperOptions options) : options_(std::move(options)) {}

StatusOr<std::unique_ptr<ZooKeeperMembership>> ZooKeeperMembership::connect(const ZooKeeperOptions& options) {
  static std::once_flag quiet;
  // The client logs each failed connect attempt at INFO; errors suffice.
  std::call_once(quiet, [] { zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR); });
  std::unique_ptr<ZooKeeperMembership> m(new ZooKeeperMembership(options));
  {
    std::unique_lock handle(m->handle_mu_);
    LOCUS_RETURN_IF_ERROR(m->open_session());
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(options.connect_timeout_ms);
  {
    std::unique_lock lock(m->mu_);
    if (!m->changed_.wait_until(lock, deadline, [&] { return m->state_ == ZOO_CONNECTED_STATE; })) {
      return unavailable("ZooKeeper at " + options.target.hosts + ": no session within " +
                         std::to_string(options.connect_timeout_ms) + " ms (is a server running there?)");
    }
  }
  LOCUS_RETURN_IF_ERROR(m->ensure_path(options.target.path + "/members"));
  LOCUS_RETURN_IF_ERROR(m->ensure_path(options.target.path + "/values"));
  LOCUS_RETURN_IF_ERROR(m->arm_members_watch());
  m->events_thread_ = std::thread([raw = m.get()] { raw->run_events(); });
  return m;
}

ZooKeeperMembership::~ZooKeeperMembership() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (events_thread_.joinable()) events_thread_.join();
  std::unique_lock handle(handle_mu_);
  if (zh_ != nullptr) zookeeper_close(zh_);  // ends the session: ephemeral znodes go at once
}

Status ZooKeeperMembership::open_session() {
  {
    std::lock_guard lock(mu_);
    state_ = 0;
  }
  zh_ = zookeeper_init(options_.target.hosts.c_str(), &ZooKeeperMembership::on_event, options_.session_timeout_ms,
                       nullptr, this, 0);
  if (zh_ == nullptr) {
    return unavailable("ZooKeeper at " + options_.target.hosts + ": cannot start a session: " + std::strerror(errno));
  }
  ++sessions_opened_;
  return Status();
}

void ZooKeeperMembership::on_event(zhandle_t* zh, int type, int state, const char* path, void* context) {
  auto* self = static_cast<ZooKeeperMembership*>(context);
  {
    std::lock_guard lock(self->mu_);
    if (type == ZOO_SESSION_EVENT) self->state_ = state;
    ++self->events_seen_;
    self->events_.push_back({zh, type, state, path != nullptr ? path : ""});
  }
  self->changed_.notify_all();
}

template <typename Call>
int ZooKeeperMembership::call(bool retry, Call&& fn) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.connect_timeout_ms);
  for (;;) {
    {
      std::unique_lock lock(mu_);
      changed_.wait_until(lock, deadline, [&] { return state_ == ZOO_CONNECTED_STATE || stopping_; });
      if (stopping_) return ZCLOSING;
    }
    int rc = ZCONNECTIONLOSS;
    {
      std::shared_lock handle(handle_mu_);
      if (zh_ != nullptr) rc = fn(zh_);
    }
    if (!retry || !transient(rc) || Clock::now() >= deadline) return rc;
    // Connection lost or session expired: wait for the client's reconnect
    // or the renewal (the state changes from CONNECTED first).
    std::unique_lock lock(mu_);
    changed_.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(100)),
                        [&] { return state_ != ZOO_CONNECTED_STATE || stopping_; });
  }
}

Status ZooKeeperMembership::ensure_path(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    const int rc = call(true, [&](zhandle_t* zh) {
      return zoo_create(zh, prefix.c_str(), "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, nullptr, 0);
    });
    if (rc != ZOK && rc != ZNODEEXISTS) return zk_status(rc, "creating " + prefix);
    if (slash == std::string::npos) return Status();
  }
}

std::string ZooKeeperMembership::member_path(const std::string& name) const {
  return options_.target.path + "/members/" + name;
}

std::string ZooKeeperMembership::value_path(const std::string& key) const {
  return options_.target.path + "/values/" + key;
}

Status ZooKeeperMembership::create_member_node(const Member& member, bool wait_for_old) {
  const std::string path = member_path(member.name);
  const auto deadline = Clock::now() + std::chrono::milliseconds(2 * negotiated_timeout_ms() + 1000);
  for (;;) {
    int rc = call(true, [&](zhandle_t* zh) {
      return zoo_create(zh, path.c_str(), member.address.data(), static_cast<int>(member.address.size()),
                        &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, nullptr, 0);
    });
    if (rc == ZOK) return Status();
    if (rc != ZNODEEXISTS) return zk_status(rc, "registering " + member.name);
    uint64_t seen = 0;
    {
      std::lock_guard lock(mu_);
      seen = events_seen_;
    }
    Stat stat{};
    int64_t ours = 0;
    rc = call(true, [&](zhandle_t* zh) {
      ours = zoo_client_id(zh)->client_id;
      return zoo_exists(zh, path.c_str(), 1, &stat);  // watched: its deletion wakes the wait below
    });
    if (rc == ZNONODE) continue;
    if (rc != ZOK) return zk_status(rc, "registering " + member.name);
    if (stat.ephemeralOwner == ours) {  // created by our own earlier attempt, whose reply was lost
      rc = call(true, [&](zhandle_t* zh) {
        return zoo_set(zh, path.c_str(), member.address.data(), static_cast<int>(member.address.size()), -1);
      });
      return rc == ZOK ? Status() : zk_status(rc, "registering " + member.name);
    }
    if (!wait_for_old || Clock::now() >= deadline) {
      return resource_exhausted(fmt_owner(member.name, stat.ephemeralOwner));
    }
    std::unique_lock lock(mu_);
    changed_.wait_until(lock, deadline, [&] { return events_seen_ != seen || stopping_; });
    if (stopping_) return unavailable("registering " + member.name + ": shutting down");
  }
}

std::string ZooKeeperMembership::fmt_owner(const std::string& name, int64_t owner) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(owner));
  return "member " + name + " is registered by another live session (" + hex + ") under " + options_.target.path +
         ": another server uses that name, or a previous one's session has not expired "
         "after " +
         std::to_string(2 * negotiated_timeout_ms() + 1000) + " ms";
}

Status ZooKeeperMembership::register_member(const Member& member) {
  LOCUS_RETURN_IF_ERROR(membership::check_member(member));
  if (member.address.size() > kMaxValueBytes) return invalid_argument("member " + member.name + ": address too long");
  LOCUS_RETURN_IF_ERROR(create_member_node(member, true));
  std::lock_guard lock(mu_);
  registered_[member.name] = member.address;
  return Status();
}

StatusOr<std::vector<Member>> ZooKeeperMembership::members() {
  const std::string dir = options_.target.path + "/members";
  String_vector names{};
  int rc = call(true, [&](zhandle_t* zh) { return zoo_get_children(zh, dir.c_str(), 0, &names); });
  if (rc != ZOK) return zk_status(rc, "listing " + dir);
  std::vector<Member> out;
  for (int32_t i = 0; i < names.count; ++i) out.push_back({names.data[i], ""});
  deallocate_String_vector(&names);
  std::vector<Member> present;
  for (Member& m : out) {
    StatusOr<Versioned> address = read(member_path(m.name));
    if (address.status().code() == StatusCode::kNotFound) continue;  // left meanwhile
    LOCUS_RETURN_IF_ERROR(address.status());
    if (address->version == Versioned::kAbsent) continue;
    m.address = address->value;
    present.push_back(std::move(m));
  }
  std::sort(present.begin(), present.end(), [](const Member& a, const Member& b) { return a.name < b.name; });
  return present;
}

StatusOr<Versioned> ZooKeeperMembership::read(const std::string& path) {
  std::vector<char> buffer(256);
  for (;;) {
    Stat stat{};
    int length = static_cast<int>(buffer.size());
    const int rc = call(true, [&](zhandle_t* zh) {
      length = static_cast<int>(buffer.size());
      return zoo_get(zh, path.c_str(), 0, buffer.data(), &length, &stat);
    });
    if (rc == ZNONODE) return Versioned{};
    if (rc != ZOK) return zk_status(rc, "reading " + path);
    if (stat.dataLength > static_cast<int>(buffer.size())) {  // grew: read it whole
      buffer.resize(static_cast<size_t>(stat.dataLength));
      continue;
    }
    return Versioned{std::string(buffer.data(), static_cast<size_t>(std::max(length, 0))), stat.version};
  }
}

StatusOr<Versioned> ZooKeeperMembership::get(const std::string& key) {
  LOCUS_RETURN_IF_ERROR(membership::check_key(key));
  return read(value_path(key));
}

StatusOr<int64_t> ZooKeeperMembership::compare_and_set(const std::string& key, const std::string& value,
                                                       int64_t expected_version) {
  LOCUS_RETURN_IF_ERROR(membership::check_key(key));
  if (value.size() > kMaxValueBytes) {
    return invalid_argument(key + ": " + std::to_string(value.size()) + " bytes, more than ZooKeeper's " +
                            std::to_string(kMaxValueBytes) + " per znode");
  }
  if (expected_version < Versioned::kAbsent || expected_version > INT_MAX) {
    return invalid_argument(key + ": version " + std::to_string(expected_version) + " out of range");
  }
  const std::string path = value_path(key);
  const std::string stale = key + ": stale version " + std::to_string(expected_version) + " (another writer won)";
  // Not retried after a lost connection: the write may have been applied,
  // and a second attempt would report its own success as stale.
  const std::string unknown = "writing " + path + " (its outcome is unknown: read it again)";
  if (expected_version == Versioned::kAbsent) {
    const int rc = call(false, [&](zhandle_t* zh) {
      return zoo_create(zh, path.c_str(), value.data(), static_cast<int>(value.size()), &ZOO_OPEN_ACL_UNSAFE,
                        ZOO_PERSISTENT, nullptr, 0);
    });
    if (rc == ZNODEEXISTS) return aborted_error(stale);
    if (rc != ZOK) return zk_status(rc, unknown);
    return 0;
  }
  Stat stat{};
  const int rc = call(false, [&](zhandle_t* zh) {
    return zoo_set2(zh, path.c_str(), value.data(), static_cast<int>(value.size()), static_cast<int>(expected_version),
                    &stat);
  });
  if (rc == ZBADVERSION || rc == ZNONODE) return aborted_error(stale);
  if (rc != ZOK) return zk_status(rc, unknown);
  return stat.version;
}

Status ZooKeeperMembership::watch(const std::string& key) {
  LOCUS_RETURN_IF_ERROR(membership::check_key(key));
  {
    std::lock_guard lock(mu_);
    if (!watched_.insert(key).second) return Status();
  }
  return arm_value_watch(key);
}

Status ZooKeeperMembership::arm_members_watch() {
  const std::string dir = options_.target.path + "/members";
  String_vector names{};
  const int rc = call(true, [&](zhandle_t* zh) { return zoo_get_children(zh, dir.c_str(), 1, &names); });
  if (rc == ZOK) deallocate_String_vector(&names);
  return rc == ZOK ? Status() : zk_status(rc, "watching " + dir);
}

Status ZooKeeperMembership::arm_value_watch(const std::string& key) {
  const std::string path = value_path(key);
  Stat stat{};
  // exists() watches a znode's creation as well as its changes and deletion.
  const int rc = call(true, [&](zhandle_t* zh) { return zoo_exists(zh, path.c_str(), 1, &stat); });
  return rc == ZOK || rc == ZNONODE ? Status() : zk_status(rc, "watching " + path);
}

void ZooKeeperMembership::run_events() {
  const std::string members_dir = options_.target.path + "/members";
  const std::string values_prefix = options_.target.path + "/values/";
  for (;;) {
    Event e;
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return stopping_ || !events_.empty(); });
      if (stopping_) return;
      e = std::move(events_.front());
      events_.pop_front();
    }
    {
      std::shared_lock handle(handle_mu_);
      if (e.zh != zh_) continue;  // from a session already replaced
    }
    if (e.type == ZOO_SESSION_EVENT) {
      if (e.state == ZOO_EXPIRED_SESSION_STATE) renew_session();
      continue;
    }
    // A watch fires once: re-arm it before telling listeners, so a change
    // right after theirs reads is not missed. A failure here means the
    // connection went too; the session event that follows re-arms.
    if (e.path == members_dir && e.type == ZOO_CHILD_EVENT) {
      (void)arm_members_watch();
      notify({Change::Kind::kMembers, ""});
    } else if (e.path.starts_with(values_prefix)) {
      const std::string key = e.path.substr(values_prefix.size());
      (void)arm_value_watch(key);
      notify({Change::Kind::kValue, key});
    }
  }
}

void ZooKeeperMembership::renew_session() {
  for (;;) {
    {
      std::unique_lock handle(handle_mu_);
      if (zh_ != nullptr) zookeeper_close(zh_);
      zh_ = nullptr;
      if (!open_session().is_ok()) zh_ = nullptr;
    }
    std::unique_lock lock(mu_);
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.connect_timeout_ms);
    if (changed_.wait_until(lock, deadline, [&] { return state_ == ZOO_CONNECTED_STATE || stopping_; })) break;
  }
  std::map<std::string, std::string> registered;
  std::set<std::string> watched;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    registered = registered_;
    watched = watched_;
  }
  // The old session's ephemeral znodes are gone: announce ours again.
  for (const auto& [name, address] : registered) (void)create_member_node({name, address}, true);
  (void)arm_members_watch();
  for (const std::string& key : watched) (void)arm_value_watch(key);
  notify({Change::Kind::kSession, ""});
}

ZooKeeperMembership::Session ZooKeeperMembership::session() {
  std::shared_lock handle(handle_mu_);
  if (zh_ == nullptr) return {};
  const clientid_t* id = zoo_client_id(zh_);
  return {id->client_id, std::string(id->passwd, sizeof id->passwd)};
}

int ZooKeeperMembership::sessions_opened() {
  std::shared_lock handle(handle_mu_);
  return sessions_opened_;
}

int ZooKeeperMembership::negotiated_timeout_ms() {
  std::shared_lock handle(handle_mu_);
  return zh_ != nullptr ? zoo_recv_timeout(zh_) : options_.session_timeout_ms;
}

}  // namespace locus::zookeeper
