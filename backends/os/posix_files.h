// PosixFiles: the Files seam (core/transport/files.h) on the local file
// system through POSIX calls, for the backends that run on real OS threads
// (loopback and verbs) and for `locus bench --micro log`. sync() is
// fdatasync: the log needs its bytes durable, not its timestamps.
// Header-only like the rest of backends/os: both backends include it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "core/transport/files.h"

namespace locus::os {

inline Status errno_status(const std::string& what, const std::string& path, int err) {
  const std::string text = what + " " + path + ": " + std::strerror(err);
  return err == ENOENT ? not_found(text) : unavailable(text);
}

class PosixFd {
 public:
  explicit PosixFd(int fd) : fd_(fd) {}
  ~PosixFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  PosixFd(const PosixFd&) = delete;
  PosixFd& operator=(const PosixFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

class PosixAppendFile final : public AppendFile {
 public:
  PosixAppendFile(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  Status append(std::span<const std::byte> bytes) override {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_.get(), bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno_status("write", path_, errno);
      size_ += static_cast<uint64_t>(n);
      bytes = bytes.subspan(static_cast<size_t>(n));
    }
    return Status();
  }
  Status sync() override {
    if (::fdatasync(fd_.get()) != 0) return errno_status("fdatasync", path_, errno);
    return Status();
  }
  uint64_t size_bytes() const override { return size_; }

 private:
  std::string path_;
  PosixFd fd_;
  uint64_t size_;
};

class PosixReadFile final : public ReadFile {
 public:
  PosixReadFile(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  StatusOr<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::pread(fd_.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno_status("read", path_, errno);
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    return done;
  }
  uint64_t size_bytes() const override { return size_; }

 private:
  std::string path_;
  PosixFd fd_;
  uint64_t size_;
};

class PosixFiles final : public Files {
 private:
  template <typename Base, typename File>
  static StatusOr<std::unique_ptr<Base>> open_as(const std::string& path, int flags) {
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) return errno_status("open", path, errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return errno_status("stat", path, err);
    }
    return std::unique_ptr<Base>(new File(path, fd, static_cast<uint64_t>(st.st_size)));
  }

 public:
  StatusOr<std::unique_ptr<AppendFile>> open_append(const std::string& path) override {
    return open_as<AppendFile, PosixAppendFile>(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC);
  }
  StatusOr<std::unique_ptr<ReadFile>> open_read(const std::string& path) override {
    return open_as<ReadFile, PosixReadFile>(path, O_RDONLY | O_CLOEXEC);
  }
  Status truncate(const std::string& path, uint64_t size_bytes) override {
    if (::truncate(path.c_str(), static_cast<off_t>(size_bytes)) != 0) return errno_status("truncate", path, errno);
    return Status();
  }
  Status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return errno_status("rename to " + to, from, errno);
    return Status();
  }
  Status remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return errno_status("remove", path, errno);
    return Status();
  }
  bool exists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }
  StatusOr<std::vector<std::string>> list(const std::string& dir) override {
    std::error_code ec;
    std::vector<std::string> names;
    for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
    if (ec == std::errc::no_such_file_or_directory) return not_found("list " + dir + ": " + ec.message());
    if (ec) return unavailable("list " + dir + ": " + ec.message());
    return names;
  }
  Status make_dirs(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return unavailable("create directory " + dir + ": " + ec.message());
    return Status();
  }
  Status sync_dir(const std::string& dir) override {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno_status("open directory", dir, errno);
    PosixFd closer(fd);
    if (::fsync(fd) != 0) return errno_status("fsync directory", dir, errno);
    return Status();
  }
};

}  // namespace locus::os
