#include "engine/io/output_files.hpp"

#include <hdf5.h>

#include <filesystem>
#include <system_error>

#include "engine/config/config.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata {

namespace fs = std::filesystem;

bool is_strata_file(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  if (H5Fis_hdf5(path.c_str()) <= 0) return false;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return false;
  const bool ours = H5Aexists_by_name(file, "/", "strata_version", H5P_DEFAULT) > 0 &&
                    H5Aexists_by_name(file, "/", "model", H5P_DEFAULT) > 0;
  H5Fclose(file);
  return ours;
}

std::string backup_name(const std::string& path) {
  fs::path p(path);
  const std::string ext = p.extension().string();
  const std::string stem = (p.parent_path() / p.stem()).string();
  for (int n = 1;; ++n) {
    const std::string candidate = stem + ".~" + std::to_string(n) + "~" + ext;
    std::error_code ec;
    if (!fs::exists(candidate, ec)) return candidate;
  }
}

ExistingOutput prepare_fresh_output(const Config& cfg, bool overwrite, const MpiContext& mpi, std::string& backup) {
  const std::string path = cfg.string("run.output");
  const bool keep = cfg.boolean("run.backup");
  int decision = static_cast<int>(ExistingOutput::none);
  mpi.collective([&] {
    if (!mpi.root()) return;
    std::error_code ec;
    if (!fs::exists(path, ec)) return;
    if (keep) {
      backup = backup_name(path);
      fs::rename(path, backup, ec);
      if (ec) cfg.fail("run.output", "cannot keep the existing file as " + backup + " (" + ec.message() + ")");
      decision = static_cast<int>(ExistingOutput::keep_as_backup);
      return;
    }
    if (!overwrite) {
      cfg.fail("run.output",
               "the output file exists; nothing was computed. Use --overwrite to replace it, set run.backup = true "
               "to keep it as " + backup_name(path) + ", or --restart to continue that run from its checkpoint");
    }
    if (!is_strata_file(path)) {
      cfg.fail("run.output",
               "the file exists and is not an HDF5 file written by strata; refusing to replace it, even with "
               "--overwrite (choose another output)");
    }
    decision = static_cast<int>(ExistingOutput::replace);
  });
  MPI_Bcast(&decision, 1, MPI_INT, 0, mpi.comm());
  return static_cast<ExistingOutput>(decision);
}

}  // namespace strata
