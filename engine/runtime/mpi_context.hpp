// The MPI world of one strata process: works under mpirun, srun and as a
// singleton. Rank 0 prints; node-local ranks pick GPUs and host threads.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/error.hpp"

namespace strata {

// Throws an internal Error naming `what` and MPI's message unless rc is MPI_SUCCESS.
void throw_mpi(int rc, const char* what);

// Collective on comm: the lowest rank of comm whose local_failure is not
// empty, with its message, on every rank (so every rank throws the same);
// nothing when no rank failed.
struct Failure { int rank; std::string message; };
std::optional<Failure> lowest_failure(MPI_Comm comm, const std::string& local_failure);

// Collective on comm: `text` as rank `root` holds it, on every rank.
void broadcast(MPI_Comm comm, std::string& text, int root = 0);

class MpiContext {
 public:
  MpiContext(int& argc, char**& argv);
  // Wraps an existing communicator of an initialised MPI (tests use
  // MPI_COMM_SELF for single-rank references inside an MPI job).
  explicit MpiContext(MPI_Comm comm);
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }   // rank among the ranks of this node
  int local_size() const { return local_size_; }
  bool root() const { return rank_ == 0; }
  const std::string& launcher() const { return launcher_; }   // mpirun | srun | singleton
  std::string library_version() const;
  // Whether MPI runs MPI_THREAD_MULTIPLE (any thread may call MPI; the
  // background output writer needs it).
  bool thread_multiple() const;

  // Collective helpers (every rank must call them).
  double max(double v) const { return allreduce(v, MPI_MAX); }
  double min(double v) const { return allreduce(v, MPI_MIN); }
  double sum(double v) const { return allreduce(v, MPI_SUM); }
  double allreduce(double v, MPI_Op op) const;
  bool any(bool v) const;
  std::vector<std::string> gather_strings(const std::string& mine) const;  // result on every rank

  // Runs `phase` on every rank; if it throws on any rank, every rank throws
  // the same collective Error (the lowest failing rank's message and code).
  template <class F>
  void collective(F&& phase) const {
    std::string message;
    int code = 0;
    bool name_rank = true;
    try {
      phase();
    } catch (const Error& e) {
      message = e.what();
      code = static_cast<int>(e.code());
      name_rank = !e.collective();   // every rank has it: no rank to name
    } catch (const std::exception& e) {
      message = e.what();
      code = static_cast<int>(ExitCode::internal);
    }
    check_collective(message, code, name_rank);
  }
  // name_rank: prefix "rank N: " to the message when there are several
  // ranks (the failing rank's choice, so every rank's message is the same).
  void check_collective(const std::string& local_error, int exit_code, bool name_rank = true) const;

 private:
  void init_ranks();
  MPI_Comm comm_ = MPI_COMM_WORLD;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string launcher_;
  bool finalize_ = false;
};

}  // namespace strata
