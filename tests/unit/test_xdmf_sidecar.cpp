// The XDMF sidecar grows by appending: after any mix of rewrites and
// appends the file is exactly head + entries + tail, and a file changed
// behind its back is refused so the caller rewrites it whole.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/io/xdmf_file.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("an XDMF sidecar appended frame by frame equals one written whole", "[xdmf]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "strata_test_xdmf_sidecar";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "out.xmf").string();
  const std::string head = strata::xdmf::head("fields"), tail = strata::xdmf::kTail;
  strata::xdmf::Sidecar sidecar(path, head, tail);
  sidecar.rewrite({"<a/>\n"});
  REQUIRE(sidecar.append("<bb/>\n"));
  REQUIRE(sidecar.append("<ccc/>\n"));
  CHECK(slurp(path) == head + "<a/>\n<bb/>\n<ccc/>\n" + tail);

  // Another writer changed it: refused, untouched; a rewrite recovers.
  { std::ofstream(path, std::ios::app) << "x"; }
  CHECK_FALSE(sidecar.append("<d/>\n"));
  CHECK(slurp(path) == head + "<a/>\n<bb/>\n<ccc/>\n" + tail + "x");
  sidecar.rewrite({"<a/>\n", "<d/>\n"});
  REQUIRE(sidecar.append("<e/>\n"));
  CHECK(slurp(path) == head + "<a/>\n<d/>\n<e/>\n" + tail);

  std::filesystem::remove(path);
  CHECK_FALSE(sidecar.append("<f/>\n"));
  std::filesystem::remove_all(dir);
}
