// LoadGate: a node's Cpu and lock primitives for an index whose records
// are loaded before the run, outside any actor, where SimGrid can neither
// charge CPU nor block on a mutex (core/index/cell/driver.cc). No-ops while loading
// (nothing else runs then), the node's own once the gate opens for the run.
#pragma once

#include <memory>
#include <string_view>

#include "core/transport/env.h"

namespace locus::design {

class LoadGate final : public Cpu, public SyncFactory {
 public:
  explicit LoadGate(Env node) : node_(node) {}
  void open() { open_ = true; }
  Env env() {
    Env e = node_;
    e.cpu = this;
    e.sync = this;
    return e;
  }

  void charge(Nanos d) override {
    if (open_) node_.cpu->charge(d);
  }
  void charge_work(std::string_view name, Nanos native_ns, uint64_t bytes) override {
    if (open_) node_.cpu->charge_work(name, native_ns, bytes);
  }
  bool uses_native_time() const override { return node_.cpu->uses_native_time(); }
  std::unique_ptr<Mutex> new_mutex() override { return std::make_unique<GatedMutex>(open_, node_.sync->new_mutex()); }
  std::unique_ptr<CondVar> new_condvar() override {
    return std::make_unique<GatedCondVar>(open_, node_.sync->new_condvar());
  }

 private:
  struct GatedMutex final : Mutex {
    GatedMutex(const bool& open, std::unique_ptr<Mutex> inner) : open(open), inner(std::move(inner)) {}
    void lock() override {
      if (open) inner->lock();
    }
    void unlock() override {
      if (open) inner->unlock();
    }
    const bool& open;
    std::unique_ptr<Mutex> inner;
  };
  // Waits happen only in actors, after the gate opened.
  struct GatedCondVar final : CondVar {
    GatedCondVar(const bool& open, std::unique_ptr<CondVar> inner) : open(open), inner(std::move(inner)) {}
    void wait(Mutex& mu) override { inner->wait(*static_cast<GatedMutex&>(mu).inner); }
    bool wait_for(Mutex& mu, Nanos timeout) override {
      return inner->wait_for(*static_cast<GatedMutex&>(mu).inner, timeout);
    }
    void notify_one() override {
      if (open) inner->notify_one();
    }
    void notify_all() override {
      if (open) inner->notify_all();
    }
    const bool& open;
    std::unique_ptr<CondVar> inner;
  };

  Env node_;
  bool open_ = false;
};

}  // namespace locus::design
