// Errors are values with context. Library code throws them; the CLI turns
// each into one message and the exit code of docs/contract.md.
#pragma once

#include <stdexcept>
#include <string>

namespace strata {

// Process exit codes, docs/contract.md "Exit codes".
enum class ExitCode : int {
  ok = 0,
  internal = 1,    // a bug or an unexpected system failure
  bad_input = 2,   // bad input or usage; nothing computed, nothing written
  numerical = 3,   // NaN/Inf or instability, after writing diagnostics
  resources = 4,   // device memory or disk
  stopped = 75,    // checkpointed and stopped on a signal or wall-time limit
  peer_lost = 76,  // a peer stopped answering (the watchdog); continue from the last checkpoint
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message, bool collective = false)
      : std::runtime_error(message), code_(code), collective_(collective) {}
  ExitCode code() const { return code_; }
  // True when every rank holds this same error (MpiContext::collective made
  // it so): ranks can then finish collective work (mark the output failed)
  // instead of aborting the job.
  bool collective() const { return collective_; }

 private:
  ExitCode code_;
  bool collective_;
};

// Bad input: the message names the file, the line, the key and the value.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(ExitCode::bad_input, message) {}
};

class ResourceError : public Error {
 public:
  explicit ResourceError(const std::string& message) : Error(ExitCode::resources, message) {}
};

class NumericalError : public Error {
 public:
  explicit NumericalError(const std::string& message) : Error(ExitCode::numerical, message) {}
};

}  // namespace strata
