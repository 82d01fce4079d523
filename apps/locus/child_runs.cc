// Child processes of `locus reproduce` and `locus sweep`: see child_runs.h.
#include "apps/locus/child_runs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

extern char** environ;

namespace locus::cli {

StatusOr<std::string> self_executable() {
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return internal_error("cannot find this program (/proc/self/exe): " + ec.message());
  return self;
}

StatusOr<pid_t> spawn_child(const ChildRun& run) {
  if (run.argv.empty()) return invalid_argument("spawn_child: no program");
  std::vector<std::string> args = run.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!run.log.empty()) {
    posix_spawn_file_actions_addopen(&fa, 1, run.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  pid_t pid = 0;
  // posix_spawnp searches PATH for a bare name (gnuplot); a path is used as is.
  const int rc = posix_spawnp(&pid, args[0].c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return internal_error(fmt::format("cannot start {}: {}", args[0], std::strerror(rc)));
  return pid;
}

namespace {

Status exit_status(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status) == 0 ? Status() : internal_error(fmt::format("exit status {}", WEXITSTATUS(status)));
  }
  if (WIFSIGNALED(status)) return internal_error(fmt::format("killed by signal {}", WTERMSIG(status)));
  return internal_error("ended abnormally");
}

}  // namespace

Status run_children(const std::vector<ChildRun>& runs, unsigned jobs,
                    const std::function<void(size_t, const Status&)>& done) {
  std::map<pid_t, size_t> running;
  size_t next = 0;
  jobs = std::max(1u, jobs);
  while (next < runs.size() || !running.empty()) {
    while (next < runs.size() && running.size() < jobs) {
      auto pid = spawn_child(runs[next]);
      if (pid.is_ok()) {
        running[*pid] = next;
      } else {
        done(next, pid.status());
      }
      ++next;
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return internal_error(std::string("waitpid: ") + std::strerror(errno));
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const size_t i = it->second;
    running.erase(it);
    done(i, exit_status(status));
  }
  return Status();
}

Status run_child(const ChildRun& run) {
  LOCUS_ASSIGN_OR_RETURN(const pid_t pid, spawn_child(run));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return internal_error(std::string("waitpid: ") + std::strerror(errno));
  }
  return exit_status(status);
}

std::string file_tail(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(std::move(line));
    if (tail.size() > lines) tail.pop_front();
  }
  std::string out;
  for (const std::string& l : tail) out += l + "\n";
  return out;
}

StatusOr<PointSummary> read_point_summary(const std::string& json_path) {
  std::ifstream in(json_path);
  if (!in) return not_found("no result " + json_path);
  PointSummary p;
  try {
    nlohmann::json j;
    in >> j;
    const nlohmann::json& r = j.at("runs").at(0);
    p.ops_per_s = r.at("throughput_ops_per_s").get<double>();
    double sum = 0, n = 0;
    for (const nlohmann::json& op : r.at("ops")) {
      const double c = op.at("count").get<double>();
      sum += c * op.at("latency_ns").at("mean").get<double>();
      n += c;
    }
    p.latency_us_mean = n > 0 ? sum / n / 1e3 : NAN;
    if (r.contains("extra") && r["extra"].contains("server_share"))
      p.server_share = r["extra"]["server_share"].get<double>();
  } catch (const nlohmann::json::exception& e) {
    return corruption(json_path + ": " + e.what());
  }
  return p;
}

}  // namespace locus::cli
