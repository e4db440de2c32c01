#include "engine/runtime/thread_layout.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <thread>

namespace strata {
namespace {

int env_int(const char* name) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return end != s && v > 0 && v < 1'000'000 ? static_cast<int>(v) : 0;
}

// Ranks on this node as the launcher tells them before MPI starts: Open MPI,
// MPICH/Hydra, Slurm (one job step's tasks on this node); 1 without one.
int ranks_on_node_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_TASKS_PER_NODE"}) {
    if (const int n = env_int(name); n > 0) return n;
  }
  return 1;
}

}  // namespace

int affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

namespace {

bool bound_to_part_of_the_machine(int mask) {
  return mask < static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

int cores_per_rank(int ranks_on_node) {
  const int mask = affinity_cores();
  if (bound_to_part_of_the_machine(mask)) return mask;
  return std::max(1, mask / std::max(1, ranks_on_node));
}

ThreadLayout thread_layout(int ranks_on_node) {
  ThreadLayout l;
  l.ranks_on_node = ranks_on_node > 0 ? ranks_on_node : ranks_on_node_from_environment();
  l.mask = affinity_cores();
  l.bound = bound_to_part_of_the_machine(l.mask);
  l.cores = cores_per_rank(l.ranks_on_node);
  // OMP_NUM_THREADS's outer level ("4" of "4,2"), else the cores (select_device's choice).
  l.threads = env_int("OMP_NUM_THREADS");
  if (l.threads <= 0) l.threads = l.cores;
  return l;
}

void prefer_passive_waiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice, or ours already
  if (!thread_layout().oversubscribed()) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv("STRATA_PASSIVE_WAIT", "1", 1);
  execv("/proc/self/exe", argv);
  // exec failed (no /proc): go on spinning rather than not at all.
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("STRATA_PASSIVE_WAIT");
}

std::string describe_thread_layout(const ThreadLayout& l) {
  std::string text = "  cores         " + std::to_string(l.cores) + " per rank (affinity mask of " +
                     std::to_string(affinity_cores()) + ", " + std::to_string(l.ranks_on_node) +
                     " rank(s) on this node)\n";
  if (!l.oversubscribed()) return text;
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const bool ours = std::getenv("STRATA_PASSIVE_WAIT") != nullptr;
  text += "  oversubscribed " + (l.bound ? std::string() : std::to_string(l.ranks_on_node) + " rank(s) x ") +
          std::to_string(l.threads) + " OpenMP thread(s) per rank on " + std::to_string(l.mask) + " core(s): ";
  if (policy != nullptr && std::string_view(policy) == "passive") {
    text += std::string("threads wait passively (OMP_WAIT_POLICY=passive") + (ours ? ", set by strata" : "") + ")" +
            (l.threads > l.cores ? "; OMP_NUM_THREADS=" + std::to_string(l.cores) + " would still be faster" : "") +
            "\n";
  } else {
    text += std::string("waiting threads spin (OMP_WAIT_POLICY=") + (policy != nullptr ? policy : "") +
            ") and slow every thread: set OMP_WAIT_POLICY=passive" +
            (l.threads > l.cores ? " or OMP_NUM_THREADS=" + std::to_string(l.cores) : "") + "\n";
  }
  return text;
}

}  // namespace strata
