#include "engine/runtime/tree_sum.hpp"

#include <map>
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

// Sum of node (level, j) from block values held in `blocks` (first block `first`).
void node_sum(const Tree& t, int level, std::int64_t j, const std::vector<double>& blocks, std::int64_t first,
              double* out) {
  if (level == 0) {
    const double* b = blocks.data() + (j - first) * t.width;
    for (int k = 0; k < t.width; ++k) out[k] = b[k];
    return;
  }
  node_sum(t, level - 1, 2 * j, blocks, first, out);
  if (t.lo(level - 1, 2 * j + 1) < t.n) {
    std::vector<double> right(static_cast<std::size_t>(t.width));
    node_sum(t, level - 1, 2 * j + 1, blocks, first, right.data());
    for (int k = 0; k < t.width; ++k) out[k] += right[static_cast<std::size_t>(k)];
  }
}

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

void finish(const Tree& t, int level, std::int64_t j, const NodeMap& known, double* out) {
  if (auto it = known.find({level, j}); it != known.end()) {
    for (int k = 0; k < t.width; ++k) out[k] = it->second[static_cast<std::size_t>(k)];
    return;
  }
  finish(t, level - 1, 2 * j, known, out);
  if (t.lo(level - 1, 2 * j + 1) < t.n) {
    std::vector<double> right(static_cast<std::size_t>(t.width));
    finish(t, level - 1, 2 * j + 1, known, right.data());
    for (int k = 0; k < t.width; ++k) out[k] += right[static_cast<std::size_t>(k)];
  }
}

}  // namespace

BlockRange block_range(std::int64_t n_blocks, int rank, int ranks) {
  // floor(n_blocks * r / ranks) without overflow: n = q ranks + m.
  const std::int64_t q = n_blocks / ranks, m = n_blocks % ranks;
  const auto share = [&](int r) { return q * r + m * r / ranks; };
  return {share(rank), share(rank + 1)};
}

std::vector<double> tree_sum_serial(const std::vector<double>& blocks, int width) {
  const Tree t{static_cast<std::int64_t>(blocks.size()) / width, width};
  std::vector<double> out(static_cast<std::size_t>(width), 0.0);
  if (t.n > 0) node_sum(t, t.top_level(), 0, blocks, 0, out.data());
  return out;
}

std::vector<double> tree_sum(const MpiContext& mpi, std::int64_t n_blocks, std::int64_t first_block,
                             const std::vector<double>& local, int width) {
  const Tree t{n_blocks, width};
  const std::int64_t n_local = static_cast<std::int64_t>(local.size()) / width;

  // This rank's nodes as records [level, j, width sums...].
  std::vector<std::pair<int, std::int64_t>> nodes;
  if (n_local > 0) cover(t, t.top_level(), 0, first_block, first_block + n_local, nodes);
  const int record = width + 2;
  std::vector<double> mine;
  mine.reserve(nodes.size() * static_cast<std::size_t>(record));
  std::vector<double> sum(static_cast<std::size_t>(width));
  for (const auto& [level, j] : nodes) {
    node_sum(t, level, j, local, first_block, sum.data());
    mine.push_back(level);
    mine.push_back(static_cast<double>(j));   // exact: j < 2^53 blocks
    mine.insert(mine.end(), sum.begin(), sum.end());
  }

  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(mpi.size())), displs(counts.size(), 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, mpi.comm());
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<double> all(mpi.root() ? static_cast<std::size_t>(total) : 0);
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, mpi.comm());

  std::vector<double> result(static_cast<std::size_t>(width), 0.0);
  if (mpi.root() && n_blocks > 0) {
    NodeMap known;
    for (std::size_t i = 0; i < all.size(); i += static_cast<std::size_t>(record)) {
      known[{static_cast<int>(all[i]), static_cast<std::int64_t>(all[i + 1])}] =
          std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(i + 2),
                              all.begin() + static_cast<std::ptrdiff_t>(i + static_cast<std::size_t>(record)));
    }
    finish(t, t.top_level(), 0, known, result.data());
  }
  MPI_Bcast(result.data(), width, MPI_DOUBLE, 0, mpi.comm());
  return result;
}

}  // namespace strata
