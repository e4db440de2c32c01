// The subcommands of the strata binary. Each returns the process exit code
// or throws strata::Error; main() turns errors into messages.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace strata {

class MpiContext;

struct RunArgs {
  std::string input;
  std::vector<std::string> set;    // "key=value"
  std::string output, backend, precision;
  bool output_given = false;       // -o was given (possibly empty, which is an error)
  bool dry_run = false;
  bool overwrite = false;          // --overwrite: replace an existing strata output file
  // --restart [FILE]: continue from FILE, or (empty) from the newest valid
  // checkpoint beside the output.
  bool restart = false;
  std::string restart_file;
  // Sweeps: restart when a checkpoint exists beside the output, otherwise
  // start afresh, replacing an unfinished output (the point directory is the
  // sweep's own).
  bool resume_if_possible = false;
  std::string max_walltime;        // --max-walltime HH:MM:SS (overrides checkpoint.max_walltime)
  // How the user started this command, up to the input: "strata run",
  // "build/strata run", "mpirun -np 2 strata run", "scripts/run -np 4". The
  // commands strata suggests (continue, run again) begin with it, so they
  // work when pasted in the same directory.
  std::string run_prefix;
};

// `word` as one shell word: unchanged when it has no character the shell
// treats specially, else in single quotes.
std::string shell_quote(const std::string& word);

// Runs one model on the ranks of `mpi` (the world, or a sweep group's
// communicator). Returns the exit code: 0 done, 75 stopped after a
// checkpoint; throws strata::Error (collective where every rank knows) for
// the rest.
int run_command(const MpiContext& mpi, std::ostream& out, const RunArgs& args);
// `program`: strata as the user typed it, for the command a hint suggests.
int models_command(std::ostream& out, const std::string& name, bool markdown, const std::string& program = "strata");
int doctor_command(const MpiContext& mpi, std::ostream& out, bool probe = false);
int validate_command(const MpiContext& mpi, std::ostream& out, const std::string& backend,
                     const std::string& precision);


// strata sweep INPUT: exactly one of --list, --index, --all, --status, --collect.
struct SweepArgs {
  std::string input;
  std::vector<std::string> set;    // "key=value", applied to every point ("sweep.output_dir=..." to the sweep)
  bool list = false, all = false, status = false;
  std::int64_t index = -1;         // --index I; -1 when not given
  std::string collect;             // --collect OUT.h5 (and OUT.csv)
  int ranks_per_point = 0;         // --all: ranks per group (0: one)
  int jobs = 0;                    // --all: number of groups instead (0: not given)
  bool retry_failed = false;       // --all: run failed points again
};

// Returns the exit code: see docs/contract.md and docs/output.md.
int sweep_command(const MpiContext& mpi, std::ostream& out, const SweepArgs& args);

}  // namespace strata
