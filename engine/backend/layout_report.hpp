// The host side of the layout guard (cmake/strata_layout.cmake): each
// kernel-list entry's size, alignment and leaves as this compiler lays
// them out, one line each, for scripts/gpu/layout-guard to compare with
// nvcc's host pass and with the device code:
//   type <TAB> name <TAB> size <TAB> alignment
//   leaf <TAB> offset <TAB> size <TAB> path
// The path names the member indices and their types from the entry down
// (".1:HeatStep<double>.0:FieldView<double>.1:long").
#pragma once

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <typeinfo>
#include <vector>

#include "engine/backend/layout_probe.hpp"
#include "engine/runtime/format.hpp"

namespace strata::layout {

template <class T>
std::string type_name() {
  int status = 0;
  char* text = abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status);
  std::string name = status == 0 ? text : typeid(T).name();
  std::free(text);
  return name;
}

class Report {
 public:
  void add(std::string line) { lines_.push_back(std::move(line)); }
  const std::vector<std::string>& lines() const { return lines_; }
  int print() const {
    for (const std::string& line : lines_) std::printf("%s\n", line.c_str());
    return std::fflush(stdout) == 0 ? 0 : 1;
  }

 private:
  std::vector<std::string> lines_;
};

// Visits one entry, recording each leaf's offset from the entry's first byte.
class LeafRecorder {
 public:
  LeafRecorder(const void* root, Report& out) : root_(static_cast<const char*>(root)), out_(out) {}
  template <class M>
  void enter(int index) {
    stack_.push_back(path_.size());
    path_ += format(".%d:%s", index, type_name<M>().c_str());
  }
  void leave() {
    path_.resize(stack_.back());
    stack_.pop_back();
  }
  template <class L>
  void leaf(const L& x) {
    const auto offset = reinterpret_cast<const char*>(&x) - root_;
    out_.add(format("leaf\t%td\t%zu\t%s", offset, sizeof(L), path_.empty() ? "." : path_.c_str()));
  }

 private:
  const char* root_;
  Report& out_;
  std::string path_;
  std::vector<std::size_t> stack_;
};

template <class T>
void report(Report& out) {
  out.add(format("type\t%s\t%zu\t%zu", type_name<T>().c_str(), sizeof(T), alignof(T)));
  const T object{};
  LeafRecorder recorder(&object, out);
  for_each_leaf(object, recorder);
}

}  // namespace strata::layout
