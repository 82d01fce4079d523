// MemFiles: see mem_files.h.
#include "core/log/mem_files.h"

#include <algorithm>
#include <cstring>

namespace locus::log {
namespace {

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Declared before a method's lock, so it reports the change after the lock is released.
struct Notify {
  const MemFiles& fs;
  std::string_view op;
  const std::string& path;
  ~Notify() { fs.changed(op, path); }
};

}  // namespace

class MemAppendFile final : public AppendFile {
 public:
  MemAppendFile(MemFiles& fs, std::string path) : fs_(fs), path_(std::move(path)) {}
  Status append(std::span<const std::byte> bytes) override {
    return fs_.append(path_, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  Status sync() override { return fs_.sync(path_); }
  uint64_t size_bytes() const override { return fs_.size_of(path_); }

 private:
  MemFiles& fs_;
  std::string path_;
};

class MemReadFile final : public ReadFile {
 public:
  explicit MemReadFile(std::string data) : data_(std::move(data)) {}
  StatusOr<size_t> read_at(uint64_t offset, std::span<std::byte> out) override {
    if (offset >= data_.size()) return size_t{0};
    const size_t n = std::min<uint64_t>(out.size(), data_.size() - offset);
    std::memcpy(out.data(), data_.data() + offset, n);
    return n;
  }
  uint64_t size_bytes() const override { return data_.size(); }

 private:
  std::string data_;  // a snapshot: replay reads what was there when it opened
};

StatusOr<std::unique_ptr<AppendFile>> MemFiles::open_append(const std::string& path) {
  bool created = false;
  {
    std::lock_guard<ShortMutex> lock(mu_);
    if (!files_.count(path)) {
      files_[path] = std::make_shared<File>();
      created = true;
    }
  }
  if (created) changed("create", path);
  return std::unique_ptr<AppendFile>(new MemAppendFile(*this, path));
}

StatusOr<std::unique_ptr<ReadFile>> MemFiles::open_read(const std::string& path) {
  std::lock_guard<ShortMutex> lock(mu_);
  auto it = files_.find(path);
  if (it == files_.end()) return not_found("open " + path + ": no such file");
  return std::unique_ptr<ReadFile>(new MemReadFile(it->second->data));
}

Status MemFiles::truncate(const std::string& path, uint64_t size_bytes) {
  const Notify notify{*this, "truncate", path};
  std::lock_guard<ShortMutex> lock(mu_);
  auto it = files_.find(path);
  if (it == files_.end()) return not_found("truncate " + path + ": no such file");
  File& f = *it->second;
  f.data.resize(size_bytes);
  f.durable_bytes = std::min(f.durable_bytes, size_bytes);
  return Status();
}

Status MemFiles::rename(const std::string& from, const std::string& to) {
  const Notify notify{*this, "rename", to};
  std::lock_guard<ShortMutex> lock(mu_);
  auto it = files_.find(from);
  if (it == files_.end()) return not_found("rename " + from + ": no such file");
  auto file = it->second;
  files_.erase(it);
  file->entry_durable = false;  // until the directory is synced
  files_[to] = file;
  return Status();
}

Status MemFiles::remove(const std::string& path) {
  const Notify notify{*this, "remove", path};
  std::lock_guard<ShortMutex> lock(mu_);
  if (files_.erase(path) == 0) return not_found("remove " + path + ": no such file");
  return Status();
}

bool MemFiles::exists(const std::string& path) {
  std::lock_guard<ShortMutex> lock(mu_);
  return files_.count(path) != 0;
}

StatusOr<std::vector<std::string>> MemFiles::list(const std::string& dir) {
  std::lock_guard<ShortMutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [path, file] : files_) {
    if (parent_of(path) == dir) names.push_back(path.substr(dir.size() + 1));
  }
  return names;
}

Status MemFiles::make_dirs(const std::string&) { return Status(); }

Status MemFiles::sync_dir(const std::string& dir) {
  const Notify notify{*this, "sync_dir", dir};
  std::lock_guard<ShortMutex> lock(mu_);
  if (failing_dir_syncs_ > 0) {
    --failing_dir_syncs_;
    return unavailable("fsync directory " + dir + ": input/output error (injected)");
  }
  for (auto& [path, file] : files_) {
    if (parent_of(path) == dir) file->entry_durable = true;
  }
  return Status();
}

Status MemFiles::append(const std::string& path, std::string_view bytes) {
  const Notify notify{*this, "append", path};
  std::lock_guard<ShortMutex> lock(mu_);
  auto it = files_.find(path);
  if (it == files_.end()) return unavailable("write " + path + ": file was removed");
  if (tear_at_ >= 0) {
    const auto keep = std::min<uint64_t>(static_cast<uint64_t>(tear_at_), bytes.size());
    it->second->data.append(bytes.substr(0, keep));
    tear_at_ = -1;
    return unavailable("write " + path + ": torn after " + std::to_string(keep) + " bytes (injected)");
  }
  it->second->data.append(bytes);
  return Status();
}

Status MemFiles::sync(const std::string& path) {
  const Notify notify{*this, "sync", path};
  std::lock_guard<ShortMutex> lock(mu_);
  auto it = files_.find(path);
  if (it == files_.end()) return unavailable("fdatasync " + path + ": file was removed");
  if (failing_syncs_ > 0) {
    --failing_syncs_;
    return unavailable("fdatasync " + path + ": input/output error (injected)");
  }
  it->second->durable_bytes = it->second->data.size();
  ++syncs_;
  return Status();
}

uint64_t MemFiles::size_of(const std::string& path) {
  std::lock_guard<ShortMutex> lock(mu_);
  auto it = files_.find(path);
  return it == files_.end() ? 0 : it->second->data.size();
}

void MemFiles::tear_next_append(uint64_t keep_bytes) {
  std::lock_guard<ShortMutex> lock(mu_);
  tear_at_ = static_cast<int64_t>(keep_bytes);
}

void MemFiles::fail_syncs(uint32_t count) {
  std::lock_guard<ShortMutex> lock(mu_);
  failing_syncs_ = count;
}

void MemFiles::fail_dir_syncs(uint32_t count) {
  std::lock_guard<ShortMutex> lock(mu_);
  failing_dir_syncs_ = count;
}

std::unique_ptr<MemFiles> MemFiles::crashed_copy() const {
  auto copy = std::make_unique<MemFiles>();
  {
    std::lock_guard<ShortMutex> lock(mu_);
    for (const auto& [path, file] : files_) copy->files_[path] = std::make_shared<File>(*file);
  }
  copy->crash();
  return copy;
}

void MemFiles::crash() {
  std::lock_guard<ShortMutex> lock(mu_);
  for (auto it = files_.begin(); it != files_.end();) {
    if (!it->second->entry_durable) {
      it = files_.erase(it);
      continue;
    }
    it->second->data.resize(it->second->durable_bytes);
    ++it;
  }
  tear_at_ = -1;
  failing_syncs_ = 0;
  failing_dir_syncs_ = 0;
}

Status MemFiles::corrupt(const std::string& path, uint64_t offset) {
  std::lock_guard<ShortMutex> lock(mu_);
  auto it = files_.find(path);
  if (it == files_.end() || offset >= it->second->data.size()) {
    return out_of_range("corrupt " + path + ": no byte at " + std::to_string(offset));
  }
  it->second->data[offset] = static_cast<char>(it->second->data[offset] ^ 0x5A);
  return Status();
}

std::string MemFiles::contents(const std::string& path) {
  std::lock_guard<ShortMutex> lock(mu_);
  auto it = files_.find(path);
  return it == files_.end() ? std::string() : it->second->data;
}

uint64_t MemFiles::syncs() const {
  std::lock_guard<ShortMutex> lock(mu_);
  return syncs_;
}

}  // namespace locus::log
