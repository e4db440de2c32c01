// Shared by the Catch2 executables: the MPI world of the test process and
// the backends every test runs on (the host always, CUDA where a device is
// visible), so one test source covers every backend.
#pragma once

#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata::test {

const MpiContext& world();
std::vector<Device> devices();     // host first, then CUDA if present
std::string describe(const Device& d, Precision p);

}  // namespace strata::test
