#include "engine/runtime/build_info.hpp"

#include <sstream>

#include "build_config.hpp"

namespace strata::build {

std::string version_line() {
  std::ostringstream s;
  s << "strata " << kVersion << " (git " << git_sha() << ", " << kBuildType << ", CUDA backend "
    << (kHaveCuda ? "built" : "not built") << ")";
  return s.str();
}

std::string build_flags_report() {
  std::ostringstream s;
  s << "  version       " << kVersion << " (git " << git_sha() << ")\n"
    << "  build type    " << kBuildType << "\n"
    << "  C++ compiler  " << kCxxCompiler << "  flags: " << kCxxFlags << "\n";
  if (kHaveCuda) {
    s << "  CUDA          " << kCudaCompiler << "  archs: " << kCudaArchs << "\n";
  } else {
    s << "  CUDA          not built (configure with STRATA_CUDA=ON where nvcc exists)\n";
  }
  return s.str();
}

}  // namespace strata::build
