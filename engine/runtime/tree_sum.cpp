#include "engine/runtime/tree_sum.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/runtime/mpi_context.hpp"

namespace strata {
namespace {

struct Tree {
  std::int64_t n;   // blocks
  int width;

  std::int64_t lo(int level, std::int64_t j) const { return j << level; }
  std::int64_t hi(int level, std::int64_t j) const {
    const std::int64_t h = (j + 1) << level;
    return h < n ? h : n;
  }
  int top_level() const {
    int level = 0;
    while ((std::int64_t{1} << level) < n) ++level;
    return level;
  }
};

// The largest tree nodes that lie inside [a, b), as (level, j).
void cover(const Tree& t, int level, std::int64_t j, std::int64_t a, std::int64_t b,
           std::vector<std::pair<int, std::int64_t>>& nodes) {
  const std::int64_t lo = t.lo(level, j), hi = t.hi(level, j);
  if (lo >= t.n || hi <= a || lo >= b) return;
  if (lo >= a && hi <= b) {
    nodes.emplace_back(level, j);
    return;
  }
  cover(t, level - 1, 2 * j, a, b, nodes);
  cover(t, level - 1, 2 * j + 1, a, b, nodes);
}

using NodeMap = std::map<std::pair<int, std::int64_t>, std::vector<double>>;

void finish_tree(const Tree& t, int level, std::int64_t j, const NodeMap& known, double* out) {
  if (auto it = known.find({level, j}); it != known.end()) {
    std::copy_n(it->second.begin(), t.width, out);
    return;
  }
  if (level == 0) throw std::logic_error("TreeSum: block " + std::to_string(j) + " was computed by no rank");
  finish_tree(t, level - 1, 2 * j, known, out);
  if (t.lo(level - 1, 2 * j + 1) < t.n) {
    std::vector<double> right(static_cast<std::size_t>(t.width));
    finish_tree(t, level - 1, 2 * j + 1, known, right.data());
    for (std::size_t k = 0; k < right.size(); ++k) out[k] += right[k];
  }
}

}  // namespace

BlockRange block_range(std::int64_t n_blocks, int rank, int ranks) {
  // floor(n_blocks * r / ranks) without overflow: n = q ranks + m.
  const std::int64_t q = n_blocks / ranks, m = n_blocks % ranks;
  const auto share = [&](int r) { return q * r + m * r / ranks; };
  return {share(rank), share(rank + 1)};
}

TreeSum::TreeSum(std::int64_t n_blocks, BlockRange mine, int width)
    : TreeSum(n_blocks, std::vector<BlockRange>{mine}, width) {}

TreeSum::TreeSum(std::int64_t n_blocks, const std::vector<BlockRange>& mine, int width) : n_(n_blocks), width_(width) {
  const Tree t{n_blocks, width};
  for (const BlockRange& r : mine) {
    std::vector<std::pair<int, std::int64_t>> nodes;
    if (r.size() > 0) cover(t, t.top_level(), 0, r.first, r.last, nodes);
    for (const auto& [level, j] : nodes) cover_.push_back({level, j});
  }
}

std::vector<double> TreeSum::nodes() const {
  std::vector<double> out = records_;
  if (current_ < cover_.size()) {
    // The binary counter's subtrees start at the cover node's (aligned)
    // first block and are themselves aligned: each is a tree node.
    const Tree t{n_, width_};
    std::int64_t first = t.lo(cover_[current_].level, cover_[current_].j);
    for (const auto& [level, sums] : stack_) {
      out.push_back(level);
      out.push_back(static_cast<double>(first >> level));
      out.insert(out.end(), sums.begin(), sums.end());
      first += std::int64_t{1} << level;
    }
  }
  return out;
}

void TreeSum::add_known(const std::vector<double>& records) {
  records_.insert(records_.end(), records.begin(), records.end());
}

void TreeSum::add(const double* blocks, std::int64_t count) {
  const Tree t{n_, width_};
  for (std::int64_t b = 0; b < count; ++b) {
    // A binary counter: equal-level neighbours merge (left + right), which
    // is the tree's order for the aligned subtrees of a cover node.
    std::vector<double> sums(blocks + b * width_, blocks + (b + 1) * width_);
    int level = 0;
    for (; !stack_.empty() && stack_.back().first == level; ++level) merge_top(sums);
    stack_.emplace_back(level, std::move(sums));
    const Node& node = cover_[current_];
    if (++filled_ == t.hi(node.level, node.j) - t.lo(node.level, node.j)) close_node();
  }
}

void TreeSum::merge_top(std::vector<double>& sums) {
  std::vector<double>& left = stack_.back().second;
  for (int k = 0; k < width_; ++k) left[static_cast<std::size_t>(k)] += sums[static_cast<std::size_t>(k)];
  sums = std::move(left);
  stack_.pop_back();
}

void TreeSum::close_node() {
  // A node cut short by the end of the blocks holds subtrees of decreasing
  // size; its tree sum is e0 + (e1 + (e2 + ...)) (the tree's right spine).
  std::vector<double> sums = std::move(stack_.back().second);
  stack_.pop_back();
  while (!stack_.empty()) merge_top(sums);
  const Node& node = cover_[current_];
  records_.push_back(node.level);
  records_.push_back(static_cast<double>(node.j));   // exact: j < 2^53
  records_.insert(records_.end(), sums.begin(), sums.end());
  ++current_;
  filled_ = 0;
}

std::vector<double> TreeSum::finish(const MpiContext& mpi) {
  if (current_ != cover_.size()) throw std::logic_error("TreeSum::finish before every block was added");
  const Tree t{n_, width_};
  const int record = width_ + 2;
  int count = static_cast<int>(records_.size());
  std::vector<int> counts(static_cast<std::size_t>(mpi.size())), displs(counts.size(), 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, mpi.comm());
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
  const int total = displs.back() + counts.back();
  std::vector<double> all(mpi.root() ? static_cast<std::size_t>(total) : 0);
  MPI_Gatherv(records_.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
              mpi.comm());

  std::vector<double> result(static_cast<std::size_t>(width_), 0.0);
  if (mpi.root() && n_ > 0) {
    NodeMap known;
    for (std::size_t i = 0; i < all.size(); i += static_cast<std::size_t>(record)) {
      known[{static_cast<int>(all[i]), static_cast<std::int64_t>(all[i + 1])}] =
          std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(i + 2),
                              all.begin() + static_cast<std::ptrdiff_t>(i + static_cast<std::size_t>(record)));
    }
    finish_tree(t, t.top_level(), 0, known, result.data());
  }
  MPI_Bcast(result.data(), width_, MPI_DOUBLE, 0, mpi.comm());
  return result;
}

std::vector<double> tree_sum(const MpiContext& mpi, std::int64_t n_blocks, std::int64_t first_block,
                             const std::vector<double>& local, int width) {
  const std::int64_t n_local = static_cast<std::int64_t>(local.size()) / width;
  TreeSum sum(n_blocks, {first_block, first_block + n_local}, width);
  sum.add(local.data(), n_local);
  return sum.finish(mpi);
}

}  // namespace strata
