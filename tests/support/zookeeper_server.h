// A real ZooKeeper server for the membership tests: Debian's `zookeeper`
// package (ci/install-deps.sh) run standalone on a free loopback port with
// its data in a fresh temporary directory, so tests exercise the real
// protocol, sessions and watches rather than a fake. Starting takes about
// half a second (a JVM); the tick is short so that session timeouts, and
// with them the tests of expiry, take well under a second.
#pragma once

#include <memory>
#include <string>

#include "core/common/status.h"
#include "tests/support/child_process.h"

namespace locus::testing {

class ZooKeeperServer {
 public:
  // The server's tick: ZooKeeper clamps session timeouts to [2, 20] ticks.
  static constexpr int kTickMs = 200;

  // Starts a server; fails with the reason when there is no Java runtime or
  // no ZooKeeper jar ($LOCUS_ZOOKEEPER_JAR, default Debian's path) or the
  // server does not accept connections within 20 s.
  static StatusOr<std::unique_ptr<ZooKeeperServer>> start();
  // start(), or, when the server cannot run here, prints why and exits with
  // status 77, which CTest reports as skipped (SKIP_RETURN_CODE).
  static std::unique_ptr<ZooKeeperServer> start_or_skip(const std::string& test_name);

  ~ZooKeeperServer();  // stops the server and removes its directory
  ZooKeeperServer(const ZooKeeperServer&) = delete;
  ZooKeeperServer& operator=(const ZooKeeperServer&) = delete;

  // "127.0.0.1:PORT", for the C client's host list.
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // Stops the server (SIGKILL: no goodbye to clients) and starts it again on
  // the same port and data directory: sessions survive when it is back
  // within their timeout, as with a real ensemble's failover.
  Status restart();
  // Stops it answering (SIGSTOP) and resumes it (SIGCONT).
  void pause();
  void resume();
  std::string log() const;

 private:
  ZooKeeperServer(std::string dir, int port) : dir_(std::move(dir)), port_(port) {}
  Status launch();

  std::string dir_;
  int port_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace locus::testing
