#include "engine/backend/shape_counts.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace strata::shape {
namespace {

struct Phase {
  PhaseCounts counts;
  std::map<std::int64_t, LaunchSize> sizes;
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
// The graph being recorded on this thread: whether one is, and its kernels so far.
thread_local bool t_graph = false;
thread_local std::int64_t t_graph_kernels = 0;

// What stream capture refuses, refused on every backend.
void outside_graph(const char* what) {
  if (t_graph)
    throw std::logic_error(std::string("shape counts: ") + what +
                           " inside a launch graph (a CUDA graph holds kernel launches only: "
                           "engine/backend/launch_graph.hpp)");
}

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

void launch(std::int64_t threads, Work work) {
  if (t_graph) ++t_graph_kernels;
  count([&](Phase& p) {
    if (t_graph) {
      ++p.counts.graph_kernels;
    } else {
      ++p.counts.launches;
    }
    LaunchSize& s = p.sizes[threads];
    s.threads = threads;
    ++s.launches;
    s.bytes += work.bytes;
    s.flops += work.flops;
    s.int_ops += work.int_ops;
  });
}

void wait() {
  outside_graph("a wait");
  count([](Phase& p) { ++p.counts.waits; });
}

void begin_graph() {
  if (t_graph) throw std::logic_error("shape counts: a launch graph inside another");
  t_graph = true;
  t_graph_kernels = 0;
}

void end_graph() {
  if (!t_graph) throw std::logic_error("shape counts: end_graph without begin_graph");
  t_graph = false;
  if (t_graph_kernels > 0) count([](Phase& p) { ++p.counts.launches; });
}

void abandon_graph() noexcept { t_graph = false; }

bool in_graph() { return t_graph; }

void to_device(std::size_t bytes) {
  outside_graph("a copy to the device");
  count([&](Phase& p) { p.counts.bytes_to_device += static_cast<std::int64_t>(bytes); });
}

void to_host(std::size_t bytes) {
  outside_graph("a copy to the host");
  count([&](Phase& p) { p.counts.bytes_to_host += static_cast<std::int64_t>(bytes); });
}

void allocation() {
  outside_graph("an allocation");
  count([](Phase& p) { ++p.counts.allocations; });
}

void enter(const std::string& phase) { t_phases.push_back(phase); }

void leave() {
  if (!t_phases.empty()) t_phases.pop_back();
}

void mark_background_thread() { t_background = true; }

std::int64_t PhaseCounts::threads_min() const { return sizes.empty() ? 0 : sizes.front().threads; }

std::int64_t PhaseCounts::threads_median() const {
  std::int64_t seen = 0, kernels = 0;
  for (const LaunchSize& s : sizes) kernels += s.launches;
  const std::int64_t half = (kernels + 1) / 2;
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
