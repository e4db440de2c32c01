// Shared by the Catch2 executables: the MPI world of the test process and
// the backends every test runs on (the host always, CUDA where a device is
// visible), so one test source covers every backend.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata::test {

const MpiContext& world();
std::vector<Device> devices();     // host first, then CUDA if present
std::string describe(const Device& d, Precision p);

// A directory every rank agrees on, removed at the end.
struct SharedTempDir {
  std::string path;
  const MpiContext& mpi;
  explicit SharedTempDir(const MpiContext& m) : mpi(m) {
    long id = static_cast<long>(getpid());
    MPI_Bcast(&id, 1, MPI_LONG, 0, mpi.comm());
    path = (std::filesystem::temp_directory_path() / ("strata-chk-test-" + std::to_string(id))).string();
    if (mpi.root()) std::filesystem::create_directories(path);
    MPI_Barrier(mpi.comm());
  }
  ~SharedTempDir() {
    MPI_Barrier(mpi.comm());
    if (mpi.root()) std::filesystem::remove_all(path);
  }
};

// TreeSum's tree on one process, from its definition: node (level, j) is
// block j at level 0, else its left child plus its right one where that
// holds any block. The reference the reduction tests compare with.
inline std::vector<double> tree_sum_serial(const std::vector<double>& blocks, int width) {
  const std::int64_t n = static_cast<std::int64_t>(blocks.size()) / width;
  int top = 0;
  while ((std::int64_t{1} << top) < n) ++top;
  std::function<std::vector<double>(int, std::int64_t)> node = [&](int level, std::int64_t j) {
    if (level == 0) return std::vector<double>(blocks.begin() + j * width, blocks.begin() + (j + 1) * width);
    std::vector<double> sums = node(level - 1, 2 * j);
    if (((2 * j + 1) << (level - 1)) < n) {
      const std::vector<double> right = node(level - 1, 2 * j + 1);
      for (std::size_t k = 0; k < sums.size(); ++k) sums[k] += right[k];
    }
    return sums;
  };
  return n > 0 ? node(top, 0) : std::vector<double>(static_cast<std::size_t>(width), 0.0);
}

}  // namespace strata::test
