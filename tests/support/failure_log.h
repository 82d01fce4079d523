// FailureLog: failures seen on actor threads. Boost.Test assertions are not
// thread-safe (and SimGrid actors run on their own stacks), so actors
// record here and the test thread asserts the log is empty after run().
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace locus::testing {

class FailureLog {
 public:
  void fail(std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    errors_.push_back(std::move(what));
  }
  bool empty() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_.empty();
  }
  // The first failure, or "" (safe inside an assertion message).
  std::string first() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_.empty() ? std::string() : errors_.front();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> errors_;
};

}  // namespace locus::testing
