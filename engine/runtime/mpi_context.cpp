#include "engine/runtime/mpi_context.hpp"

#include <cstdlib>
#include <limits>
#include <numeric>

#include "engine/runtime/error.hpp"

namespace strata {

void throw_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ExitCode::internal, std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

MpiContext::MpiContext(int& argc, char**& argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Open MPI's MPI-IO (OMPIO) opens a shared-file-pointer component with
    // every file. Across nodes that is `lockedfile`, which puts
    // OUT.h5-<job>-<pid>.lock beside the output and removes it only on a
    // clean close, so a lost node or a kill -9 leaves it behind (and
    // `individual` would leave OUT.h5.data.<rank> files). HDF5 never uses
    // shared file pointers: only `sm` stays, which serves the ranks of one
    // node and declines across nodes (OMPIO opens files without a component
    // that accepts, but not with none loaded). A user's own choice wins;
    // other MPIs ignore the name.
    setenv("OMPI_MCA_sharedfp", "sm", 0);
    // Halo messages overlap the interior's update only if they travel while
    // the ranks compute. Over TCP, Open MPI sends a message above its eager
    // limit (64 KiB) only once the receiver has matched it in an MPI call,
    // which it makes after the interior: diffusion's 512 KiB faces at
    // 1 Gbit/s waited 11.7 ms a step after 8.2 ms of compute. With the limit
    // at 1 MiB, MPI_Isend hands such a face to the socket at once (1.8 ms
    // exposed). The cost is memory: the transport's fragment lists hold
    // fragments of this size (a few MiB a rank), and a message that arrives
    // before its receive is posted is buffered. Larger faces still wait;
    // docs/cluster.md says how to raise it. Only the TCP transport reads
    // these; a user's own values win.
    for (const char* name :
         {"OMPI_MCA_btl_tcp_eager_limit", "OMPI_MCA_btl_tcp_rndv_eager_limit", "OMPI_MCA_btl_tcp_max_send_size"}) {
      setenv(name, "1048576", 0);
    }
    int provided = 0;
    // MULTIPLE: OpenMP threads compute and never call MPI; the main thread
    // talks MPI, and so does the background output writer's thread (MPI-IO
    // inside HDF5). With less, the writer runs synchronously.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    finalize_ = true;
  }
  init_ranks();

  // Cosmetic (printed by doctor and in the run header): how we were started.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) {
    launcher_ = "mpirun";
  } else if (std::getenv("SLURM_PROCID") != nullptr && std::getenv("SLURM_STEP_ID") != nullptr) {
    launcher_ = "srun";
  } else {
    launcher_ = "singleton";
  }
}

MpiContext::MpiContext(MPI_Comm comm) : comm_(comm), launcher_("communicator") { init_ranks(); }

void MpiContext::init_ranks() {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

MpiContext::~MpiContext() {
  if (finalize_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
}

bool MpiContext::thread_multiple() const {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided == MPI_THREAD_MULTIPLE;
}

std::string MpiContext::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  if (auto cut = s.find_first_of(",\n"); cut != std::string::npos) s.resize(cut);
  return s;
}

double MpiContext::allreduce(double v, MPI_Op op) const {
  double r = v;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, op, comm_);
  return r;
}

bool MpiContext::any(bool v) const {
  int in = v ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, comm_);
  return out != 0;
}

std::vector<std::string> MpiContext::gather_strings(const std::string& mine) const {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size_));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_);
  std::vector<int> displs(lens.size());
  std::exclusive_scan(lens.begin(), lens.end(), displs.begin(), 0);
  const int total = displs.back() + lens.back();
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm_);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    out.push_back(all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(lens[i])));
  }
  return out;
}

std::optional<Failure> lowest_failure(MPI_Comm comm, const std::string& local_failure) {
  int first = std::numeric_limits<int>::max();
  if (!local_failure.empty()) MPI_Comm_rank(comm, &first);
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == std::numeric_limits<int>::max()) return std::nullopt;
  std::string message = local_failure;
  broadcast(comm, message, first);
  return Failure{first, message};
}

void broadcast(MPI_Comm comm, std::string& text, int root) {
  int len = static_cast<int>(text.size());
  MPI_Bcast(&len, 1, MPI_INT, root, comm);
  text.resize(static_cast<std::size_t>(len));
  MPI_Bcast(text.data(), len, MPI_CHAR, root, comm);
}

void MpiContext::check_collective(const std::string& local_error, int exit_code, bool name_rank) const {
  // The lowest failing rank's message and code win, so every rank throws the same.
  auto failure = lowest_failure(comm_, local_error);
  if (!failure) return;
  int code_and_naming[2] = {exit_code, name_rank ? 1 : 0};
  MPI_Bcast(code_and_naming, 2, MPI_INT, failure->rank, comm_);
  const int code = code_and_naming[0];
  name_rank = code_and_naming[1] != 0;
  std::string& message = failure->message;
  if (name_rank && size_ > 1 && code != static_cast<int>(ExitCode::bad_input) && message.rfind("rank ", 0) != 0) {
    message = "rank " + std::to_string(failure->rank) + ": " + message;
  }
  throw Error(static_cast<ExitCode>(code), message, true);
}

}  // namespace strata
