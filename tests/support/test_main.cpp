// Catch2 main for every test executable: MPI is initialised once around the
// whole session, under mpirun or as a singleton.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>

#include "engine/backend/cuda_runtime.hpp"
#include "tests/support/test_support.hpp"

namespace strata::test {
namespace {
std::unique_ptr<MpiContext> g_world;
}

const MpiContext& world() { return *g_world; }

std::vector<Device> devices() {
  std::vector<Device> out;
  out.push_back(select_device("host", world()));
  if (cuda::device_count() > 0) out.push_back(select_device("cuda", world()));
  return out;
}

std::string describe(const Device& d, Precision p) {
  return std::string(to_string(d.backend)) + "/" + std::string(to_string(p));
}

}  // namespace strata::test

int main(int argc, char** argv) {
  // Poisoned fresh Buffers when run by hand too, as ctest runs the suite
  // (tests/CMakeLists.txt); STRATA_POISON_FRESH_MEMORY=0 still turns it off.
  setenv("STRATA_POISON_FRESH_MEMORY", "1", /*overwrite=*/0);
  strata::test::g_world = std::make_unique<strata::MpiContext>(argc, argv);
  const int failed = Catch::Session().run(argc, argv);
  // Every rank must agree on the verdict, or mpirun reports success for a
  // failure seen on one rank only.
  const bool any_failed = strata::test::world().any(failed != 0);
  strata::test::g_world.reset();
  return any_failed ? 1 : 0;
}
