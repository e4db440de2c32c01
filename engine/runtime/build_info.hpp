// What this binary is: version, commit and the options it was built with.
#pragma once

#include <string>

namespace strata::build {

const char* git_sha();              // generated at build time (cmake/git_sha.cmake)
std::string version_line();         // "strata 0.1.0 (git abc123, Release, CUDA on)"
std::string build_flags_report();   // multi-line, for `strata doctor`

}  // namespace strata::build
