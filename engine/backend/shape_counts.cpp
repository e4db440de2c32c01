#include "engine/backend/shape_counts.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace strata::shape {
namespace {

struct Phase {
  PhaseCounts counts;
  std::map<std::pair<std::int64_t, std::string>, LaunchSize, std::less<>> sizes;
};

struct Registry {
  std::mutex lock;
  std::vector<Phase> phases;   // first-use order; few, so found by a scan

  Phase& phase(const std::string& name) {
    for (Phase& p : phases)
      if (p.counts.phase == name) return p;
    phases.emplace_back();
    phases.back().counts.phase = name;
    return phases.back();
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

thread_local std::vector<std::string> t_phases;
thread_local bool t_background = false;

const std::string& current() {
  static const std::string untimed = "untimed", background = "background";
  if (!t_phases.empty()) return t_phases.back();
  return t_background ? background : untimed;
}

template <class F>
void count(F&& add) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> guard(r.lock);
  add(r.phase(current()));
}

}  // namespace

std::string demangled(const char* mangled) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                    std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

void launch(std::int64_t threads, Work work, std::string_view kernel) {
  count([&](Phase& p) {
    ++p.counts.launches;
    LaunchSize& s = p.sizes[{threads, std::string(kernel)}];
    s.threads = threads;
    s.kernel = kernel;
    ++s.launches;
    s.bytes += work.bytes;
    s.flops += work.flops;
    s.int_ops += work.int_ops;
  });
}

void wait() {
  count([](Phase& p) { ++p.counts.waits; });
}

void to_device(std::size_t bytes) {
  count([&](Phase& p) { p.counts.bytes_to_device += static_cast<std::int64_t>(bytes); });
}

void to_host(std::size_t bytes) {
  count([&](Phase& p) { p.counts.bytes_to_host += static_cast<std::int64_t>(bytes); });
}

void allocation() {
  count([](Phase& p) { ++p.counts.allocations; });
}

void enter(const std::string& phase) { t_phases.push_back(phase); }

void leave() {
  if (!t_phases.empty()) t_phases.pop_back();
}

void mark_background_thread() { t_background = true; }

std::int64_t PhaseCounts::threads_min() const { return sizes.empty() ? 0 : sizes.front().threads; }

std::int64_t PhaseCounts::threads_median() const {
  std::int64_t seen = 0;
  const std::int64_t half = (launches + 1) / 2;
  for (const LaunchSize& s : sizes) {
    seen += s.launches;
    if (seen >= half) return s.threads;
  }
  return 0;
}

Work PhaseCounts::work() const {
  Work w;
  for (const LaunchSize& s : sizes) {
    w.bytes += s.bytes;
    w.flops += s.flops;
    w.int_ops += s.int_ops;
  }
  return w;
}

std::vector<PhaseCounts> snapshot() {
  Registry& r = registry();
  const std::lock_guard<std::mutex> guard(r.lock);
  std::vector<PhaseCounts> out;
  for (const Phase& p : r.phases) {
    PhaseCounts c = p.counts;
    c.sizes.clear();
    for (const auto& entry : p.sizes) c.sizes.push_back(entry.second);
    out.push_back(std::move(c));
  }
  return out;
}

void reset() {
  Registry& r = registry();
  const std::lock_guard<std::mutex> guard(r.lock);
  r.phases.clear();
}

}  // namespace strata::shape
