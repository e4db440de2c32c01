#include "engine/io/xdmf_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/runtime/error.hpp"

namespace strata::xdmf {

std::string path_for(const std::string& h5_path) {
  return std::filesystem::path(h5_path).replace_extension(".xmf").string();
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    file << text;
    file.flush();
    if (!file) throw ResourceError(tmp + ": cannot write the XDMF sidecar (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw ResourceError(path + ": cannot rename the XDMF sidecar into place (" + ec.message() + ")");
}

}  // namespace strata::xdmf
