// The subcommands of the strata binary. Each returns the process exit code
// or throws strata::Error; main() turns errors into messages.
#pragma once

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
};

int run_command(const MpiContext& mpi, std::ostream& out, const RunArgs& args);
int models_command(std::ostream& out, const std::string& name, bool markdown);
int doctor_command(const MpiContext& mpi, std::ostream& out);
int validate_command(const MpiContext& mpi, std::ostream& out, const std::string& backend,
                     const std::string& precision);

}  // namespace strata
