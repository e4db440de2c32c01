// Never clobber a result. A fresh run whose output file exists stops before
// computing (exit 2) unless told what to do with it: --overwrite replaces it
// (only if strata wrote it), run.backup = true keeps it as NAME.~N~.h5 (as
// GROMACS backs up its outputs), --restart continues it.
#pragma once

#include <string>

namespace strata {

class Config;
class MpiContext;

// Local: whether `path` is an HDF5 file with strata's root attributes.
bool is_strata_file(const std::string& path);
// "out/run.h5" -> "out/run.~N~.h5" for the first N not taken.
std::string backup_name(const std::string& path);

enum class ExistingOutput { none, replace, keep_as_backup };

// Collective. Decides what happens to an existing `run.output` of a fresh
// run: throws InputError (naming the file and the ways out) when it must
// stay; renames it to a backup when asked, returning the backup's name in
// `backup`.
ExistingOutput prepare_fresh_output(const Config& cfg, bool overwrite, const MpiContext& mpi, std::string& backup);

}  // namespace strata
