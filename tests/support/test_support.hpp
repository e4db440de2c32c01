// Shared by the Catch2 executables: the MPI world of the test process and
// the backends every test runs on (the host always, CUDA where a device is
// visible), so one test source covers every backend.
#pragma once

#include <unistd.h>

#include <filesystem>
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

}  // namespace strata::test
