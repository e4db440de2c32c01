// Never clobber a result. A fresh run whose output file (or an earlier
// run's checkpoints beside it) exists stops before computing (exit 2)
// unless told what to do with it: --overwrite replaces it (only if strata
// wrote it), run.backup = true keeps it as NAME.~N~.h5 with its checkpoints
// as NAME.~N~.chk (as GROMACS backs up its outputs), --restart continues it.
#pragma once

#include <string>

namespace strata {

class Config;
class MpiContext;

// The checkpoint directory of an output: "out/run.h5" -> "out/run.chk".
std::string checkpoint_dir(const std::string& output);
// Local: whether `path` is an HDF5 file with strata's root attributes.
bool is_strata_file(const std::string& path);
// "out/run.h5" -> "out/run.~N~.h5" for the first N for which neither that
// nor "out/run.~N~.chk" is taken.
std::string backup_name(const std::string& path);

enum class ExistingOutput { none, replace, keep_as_backup };

struct FreshOutput {
  bool overwrite = false;   // --overwrite
  bool owned = false;       // the caller owns the directory (a sweep point): replace whatever is there
  std::string hint;         // when refused: what the existing files hold and the commands that go on (rank 0)
};

// Collective. Decides what happens to an existing `run.output` and its
// checkpoint directory `checkpoints` before a fresh run: throws InputError
// (naming the file and the ways out) when they must stay; renames them to
// a backup when asked, returning the backup's name in `backup`. The caller
// deletes replaced checkpoints (CheckpointStore::remove_all).
ExistingOutput prepare_fresh_output(const Config& cfg, const std::string& checkpoints, FreshOutput how,
                                    const MpiContext& mpi, std::string& backup);

}  // namespace strata
