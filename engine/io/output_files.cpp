#include "engine/io/output_files.hpp"

#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "engine/config/config.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata {

namespace fs = std::filesystem;

namespace {

bool has_checkpoints(const std::string& dir) {
  std::error_code ec;
  return std::ranges::any_of(fs::directory_iterator(dir, ec),
                             [](const auto& e) { return e.path().filename().string().rfind("step-", 0) == 0; });
}

}  // namespace

std::string checkpoint_dir(const std::string& output) {
  fs::path p(output);
  if (p.extension() == ".h5") p.replace_extension("");
  return p.string() + ".chk";
}

bool is_strata_file(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  if (H5Fis_hdf5(path.c_str()) <= 0) return false;
  H5Id file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  return file.id >= 0 && H5Aexists_by_name(file.id, "/", "strata_version", H5P_DEFAULT) > 0 &&
         H5Aexists_by_name(file.id, "/", "model", H5P_DEFAULT) > 0;
}

std::string backup_name(const std::string& path) {
  fs::path p(path);
  const std::string ext = p.extension().string();
  const std::string stem = (p.parent_path() / p.stem()).string();
  for (int n = 1;; ++n) {
    const std::string candidate = stem + ".~" + std::to_string(n) + "~" + ext;
    std::error_code ec;
    if (!fs::exists(candidate, ec) && !fs::exists(checkpoint_dir(candidate), ec)) return candidate;
  }
}

ExistingOutput prepare_fresh_output(const Config& cfg, const std::string& checkpoints, FreshOutput how,
                                    const MpiContext& mpi, std::string& backup) {
  const std::string path = cfg.string("run.output");
  int decision = static_cast<int>(ExistingOutput::none);
  mpi.collective([&] {
    if (!mpi.root()) return;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    const bool output = fs::exists(status);
    const bool earlier = has_checkpoints(checkpoints);
    if (!output && !earlier) return;
    if (how.owned) {
      decision = static_cast<int>(ExistingOutput::replace);
      return;
    }
    // Only a file strata wrote is ever replaced or moved aside; anything
    // else at the path (a directory, a device, someone's data) stays where
    // it is, and no way round that is suggested.
    std::string foreign;
    if (output && fs::is_directory(status)) {
      foreign = "is a directory";
    } else if (output && !fs::is_regular_file(status)) {
      foreign = "is not a regular file (a device, pipe or socket)";
    } else if (output && !is_strata_file(path)) {
      foreign = "is not an HDF5 file written by strata";
    }
    if (!foreign.empty()) {
      cfg.fail("run.output", "the path exists and " + foreign +
                                 "; strata never replaces or moves it (--overwrite and run.backup apply only to "
                                 "output files strata wrote): choose another output");
    }
    if (cfg.boolean("run.backup")) {
      backup = backup_name(path);
      if (output) fs::rename(path, backup, ec);
      if (!ec && earlier) fs::rename(checkpoints, checkpoint_dir(backup), ec);
      if (ec) cfg.fail("run.output", "cannot keep the existing output as " + backup + " (" + ec.message() + ")");
      decision = static_cast<int>(ExistingOutput::keep_as_backup);
      return;
    }
    const std::string what = output ? "the output file exists" : "checkpoints of an earlier run exist in " + checkpoints;
    if (!how.overwrite && !how.hint.empty()) cfg.fail("run.output", what + "; nothing was computed: " + how.hint);
    if (!how.overwrite) {
      cfg.fail("run.output", what +
                                 "; nothing was computed. Use --overwrite to replace it, set run.backup = true to "
                                 "keep it as " +
                                 backup_name(path) + ", or --restart to continue that run from its checkpoint");
    }
    decision = static_cast<int>(ExistingOutput::replace);
  });
  MPI_Bcast(&decision, 1, MPI_INT, 0, mpi.comm());
  return static_cast<ExistingOutput>(decision);
}

}  // namespace strata
