// Reproducible distributed sums. Per-block partial sums (width doubles per
// block) over global blocks [0, n_blocks) are combined along one fixed binary
// tree over the block index: node (level, j) covers blocks
// [j 2^level, (j+1) 2^level) and is the sum of its two children. Every rank
// sums the largest nodes inside its own contiguous range of blocks, rank 0
// finishes the tree, and the result is bitwise the same for any number of
// ranks and any way the blocks were computed (pairwise summation also keeps
// the rounding error O(log n) instead of O(n)).
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

class MpiContext;

// This rank's contiguous share [first, last) of n blocks.
struct BlockRange {
  std::int64_t first = 0, last = 0;
  std::int64_t size() const { return last - first; }
};
BlockRange block_range(std::int64_t n_blocks, int rank, int ranks);

// Streams this rank's blocks in order and keeps only O(log n) partial sums:
// the tree nodes finished so far (a binary counter per node of the rank's
// cover), so memory does not grow with the number of blocks.
class TreeSum {
 public:
  TreeSum(std::int64_t n_blocks, BlockRange mine, int width);
  // Several ranges, streamed in the order given (a restarted run computes
  // what its checkpoint lacks, which need not be contiguous).
  TreeSum(std::int64_t n_blocks, const std::vector<BlockRange>& mine, int width);
  // The next `count` blocks of this rank, block-major (width values each).
  void add(const double* blocks, std::int64_t count);

  // Finished tree nodes this rank holds, as records [level, j, sums...]
  // (width + 2 values each): whole cover nodes and the complete subtrees of
  // the one being filled. Together with the blocks not yet added they
  // determine the final sum exactly, whichever ranks hold them: a checkpoint.
  std::vector<double> nodes() const;
  // Nodes computed elsewhere (records as nodes() gives them), taken into
  // the final tree as they are. Give each node to one rank only.
  void add_known(const std::vector<double>& records);
  // Collective: the width sums over all blocks of all ranks, on every rank.
  std::vector<double> finish(const MpiContext& mpi);

 private:
  struct Node {
    int level;
    std::int64_t j;
  };
  void close_node();
  // sums = top of the stack (left) + sums (right), popping the top.
  void merge_top(std::vector<double>& sums);
  std::int64_t n_;
  int width_;
  std::vector<Node> cover_;          // the largest tree nodes inside this rank's range, in order
  std::size_t current_ = 0;          // cover node being filled
  std::int64_t filled_ = 0;          // blocks of it added so far
  std::vector<std::pair<int, std::vector<double>>> stack_;   // (level, sums) of finished subtrees
  std::vector<double> records_;      // finished cover nodes: [level, j, sums...]
};

// local: blocks [first_block, first_block + local.size()/width) of this rank,
// block-major. Collective; the result (width sums) is returned on every rank.
std::vector<double> tree_sum(const MpiContext& mpi, std::int64_t n_blocks, std::int64_t first_block,
                             const std::vector<double>& local, int width);

}  // namespace strata
