// The layout guard's host half (engine/backend/layout_report.hpp): the
// leaves it reports for a type are that type's scalars, at the offsets
// the compiler gave them, in member order; arrays are unrolled and empty
// members hold no bytes. (The device half is read from nvcc's PTX by
// scripts/gpu/layout-guard in the CUDA build; tests/cli/test_layout_guard.py
// checks that script.)
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "engine/backend/layout_report.hpp"

namespace {

struct Empty {};
struct Inner {
  float w[2];
  bool flag;
};
enum class Side : short { lower, upper };
struct Outer {
  const double* p;
  Inner inner[2];
  Empty nothing;
  Side side;
  long n;
};

// The leaves' offsets, sizes and paths, as the report prints them.
struct Leaves {
  std::vector<std::ptrdiff_t> offset;
  std::vector<std::size_t> size;
  std::vector<std::string> path;
  std::string current;
  std::vector<std::size_t> stack;
  const char* root;
  template <class M>
  void enter(int index) {
    stack.push_back(current.size());
    current += strata::format(".%d", index);
  }
  void leave() {
    current.resize(stack.back());
    stack.pop_back();
  }
  template <class L>
  void leaf(const L& x) {
    offset.push_back(reinterpret_cast<const char*>(&x) - root);
    size.push_back(sizeof(L));
    path.push_back(current);
  }
};

}  // namespace

TEST_CASE("the layout guard's leaves are each scalar at its own offset, in member order", "[layout]") {
  STATIC_REQUIRE(strata::layout::field_count<Outer>() == 5);
  STATIC_REQUIRE(strata::layout::field_count<Inner>() == 2);
  STATIC_REQUIRE(strata::layout::field_count<Empty>() == 0);
  const Outer o{};
  Leaves l{};
  l.root = reinterpret_cast<const char*>(&o);
  strata::layout::for_each_leaf(o, l);
  const std::ptrdiff_t in = offsetof(Outer, inner), iw = offsetof(Inner, w), ifl = offsetof(Inner, flag);
  const std::vector<std::ptrdiff_t> expected = {
      offsetof(Outer, p),
      in + iw, in + iw + 4, in + ifl,
      in + static_cast<std::ptrdiff_t>(sizeof(Inner)) + iw, in + static_cast<std::ptrdiff_t>(sizeof(Inner)) + iw + 4,
      in + static_cast<std::ptrdiff_t>(sizeof(Inner)) + ifl,
      offsetof(Outer, side), offsetof(Outer, n)};
  CHECK(l.offset == expected);
  CHECK(l.size == std::vector<std::size_t>{8, 4, 4, 1, 4, 4, 1, 2, 8});
  // Member 2 (the empty one) has no leaf; array elements are numbered.
  CHECK(l.path == std::vector<std::string>{".0", ".1.0.0.0", ".1.0.0.1", ".1.0.1", ".1.1.0.0", ".1.1.0.1", ".1.1.1",
                                           ".3", ".4"});
}

TEST_CASE("the layout report names each type and leaf with its path", "[layout]") {
  strata::layout::Report out;
  strata::layout::report<Inner>(out);
  const std::string name = strata::layout::type_name<Inner>();
  CHECK(name == "(anonymous namespace)::Inner");
  CHECK(out.lines() == std::vector<std::string>{strata::format("type\t%s\t12\t4", name.c_str()),
                                                "leaf\t0\t4\t.0:float [2].0:float",
                                                "leaf\t4\t4\t.0:float [2].1:float", "leaf\t8\t1\t.1:bool"});
}
