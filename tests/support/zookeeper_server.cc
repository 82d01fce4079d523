// ZooKeeperServer: Debian's ZooKeeper standalone in a child JVM; see
// zookeeper_server.h.
#include "tests/support/zookeeper_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

namespace locus::testing {
namespace {

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

std::string jar_path() { return env_or("LOCUS_ZOOKEEPER_JAR", "/usr/share/java/zookeeper.jar"); }
std::string java_path() { return env_or("JAVA", "/usr/bin/java"); }

// A loopback port nobody listens on now (the kernel's choice for port 0).
// Another process can take it before the server binds: launch() retries.
StatusOr<int> free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return unavailable("socket: cannot create one");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  close(fd);
  if (!ok) return unavailable("cannot bind a loopback port");
  return ntohs(a.sin_port);
}

bool accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

}  // namespace

StatusOr<std::unique_ptr<ZooKeeperServer>> ZooKeeperServer::start() {
  if (access(java_path().c_str(), X_OK) != 0) {
    return unavailable("no Java runtime at " + java_path() + " (set $JAVA; ci/install-deps.sh installs one)");
  }
  if (access(jar_path().c_str(), R_OK) != 0) {
    return unavailable("no ZooKeeper jar at " + jar_path() +
                       " (Debian's `zookeeper` package, ci/install-deps.sh; or set $LOCUS_ZOOKEEPER_JAR)");
  }
  Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {  // the free port may be taken meanwhile
    LOCUS_ASSIGN_OR_RETURN(int port, free_port());
    std::unique_ptr<ZooKeeperServer> server(new ZooKeeperServer(make_temp_dir("locus-zookeeper"), port));
    last = server->launch();
    if (last.is_ok()) return server;
  }
  return last;
}

std::unique_ptr<ZooKeeperServer> ZooKeeperServer::start_or_skip(const std::string& test_name) {
  StatusOr<std::unique_ptr<ZooKeeperServer>> server = start();
  if (server.is_ok()) return std::move(server).value();
  std::cerr << test_name << ": SKIPPED, cannot start a ZooKeeper server: " << server.status().to_string() << "\n";
  std::exit(77);
}

Status ZooKeeperServer::launch() {
  const std::string port = std::to_string(port_);
  // A small heap, no JIT tiers beyond C1 and no admin HTTP server: the
  // tests need a server up fast, not a fast server.
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{java_path(), "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                               "-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=*", "-cp",
                               jar_path(), "org.apache.zookeeper.server.ZooKeeperServerMain", port, dir_ + "/data",
                               std::to_string(kTickMs)},
      dir_ + "/server.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) {
      return unavailable("the ZooKeeper server on port " + port + " ended (" + process_->ending() + "): " + log());
    }
    if (accepts(port_)) return Status();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return timeout_error("the ZooKeeper server on port " + port + " accepted no connection within 20 s: " + log());
}

ZooKeeperServer::~ZooKeeperServer() {
  if (process_ != nullptr) {
    process_->kill(SIGCONT);
    process_->kill(SIGTERM);
    if (process_->wait(10'000) < 0) process_->kill(SIGKILL);
    process_->wait(10'000);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

Status ZooKeeperServer::restart() {
  process_->kill(SIGKILL);
  process_->wait(10'000);
  return launch();
}

void ZooKeeperServer::pause() { process_->kill(SIGSTOP); }
void ZooKeeperServer::resume() { process_->kill(SIGCONT); }
std::string ZooKeeperServer::log() const { return process_ != nullptr ? process_->output() : ""; }

}  // namespace locus::testing
