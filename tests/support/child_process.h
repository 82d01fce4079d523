// A child process for the multi-process tests: `locus serve` and `locus
// run` in the verbs tier, a ZooKeeper server in the membership tests. They
// run as real processes (so a client can really die), with their output
// captured in files that failing tests print.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace locus::testing {

class ChildProcess {
 public:
  // Starts argv[0] with argv; stdout and stderr go to `log_path`.
  ChildProcess(const std::vector<std::string>& argv, std::string log_path);
  ~ChildProcess();  // kills (SIGKILL) and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void kill(int signal);
  // Waits up to timeout_ms; returns the exit status, 128+signal if killed,
  // or -1 if still running at the deadline.
  int wait(int timeout_ms);
  // How the child ended, for failure messages: "exit status 1", "signal 11
  // (Segmentation fault)", or "still running" before wait() saw it end.
  std::string ending() const;
  std::string output() const;

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string log_path_;
};

// A fresh directory under $TMPDIR (or /tmp) for one test's files.
std::string make_temp_dir(const std::string& prefix);
// Writes `text` to `path` (a cluster file for a child).
void write_file(const std::string& path, const std::string& text);
// Polls until `path` exists and is non-empty; returns its first line or "".
std::string wait_for_file(const std::string& path, int timeout_ms);
// Polls until `path` has `count` non-empty lines (a ready file listing
// several listening addresses); returns them, or {} at the deadline.
// ... or until `writer`, when given, has exited (it will write no more).
std::vector<std::string> wait_for_lines(const std::string& path, size_t count, int timeout_ms,
                                        ChildProcess* writer = nullptr);

}  // namespace locus::testing
