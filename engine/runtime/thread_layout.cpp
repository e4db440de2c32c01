#include "engine/runtime/thread_layout.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
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

int busy_elsewhere(int ours) {
  std::array<int, 5> samples{};
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (i > 0) usleep(2000);
    std::FILE* f = std::fopen("/proc/stat", "r");
    if (f == nullptr) return 0;
    char line[256];
    int running = 0;
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::sscanf(line, "procs_running %d", &running) == 1) break;
    }
    std::fclose(f);
    samples[i] = running;
  }
  std::nth_element(samples.begin(), samples.begin() + 2, samples.end());
  return std::max(0, samples[2] - ours);
}

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
  l.online = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  // Sampled only where it can matter: one thread a rank never waits for another.
  if (l.threads > 1) l.others = busy_elsewhere(l.ranks_on_node);
  return l;
}

void prefer_passive_waiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice, or ours already
  const ThreadLayout l = thread_layout();
  std::string why;
  if (l.oversubscribed()) {
    why = "oversubscribed";
  } else if (l.crowded()) {
    why = "crowded " + std::to_string(l.others);
  } else {
    return;
  }
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv("STRATA_PASSIVE_WAIT", why.c_str(), 1);
  execv("/proc/self/exe", argv);
  // exec failed (no /proc): go on spinning rather than not at all.
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("STRATA_PASSIVE_WAIT");
}

namespace {

// What the threads do while they wait, and what would help (`fewer`: the
// thread count that would fit).
std::string waiting(const ThreadLayout& l, int fewer) {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const bool ours = std::getenv("STRATA_PASSIVE_WAIT") != nullptr;
  const std::string fit = fewer < l.threads ? "OMP_NUM_THREADS=" + std::to_string(std::max(1, fewer)) : "";
  if (policy != nullptr && std::string_view(policy) == "passive") {
    return std::string("threads wait passively (OMP_WAIT_POLICY=passive") + (ours ? ", set by strata" : "") + ")" +
           (fit.empty() ? "" : "; " + fit + " would still be faster") + "\n";
  }
  return std::string("waiting threads spin (OMP_WAIT_POLICY=") + (policy != nullptr ? policy : "") +
         ") and slow every thread: set OMP_WAIT_POLICY=passive" + (fit.empty() ? "" : " or " + fit) + "\n";
}

}  // namespace

std::string describe_thread_layout(const ThreadLayout& l) {
  std::string text = "  cores         " + std::to_string(l.cores) + " per rank (affinity mask of " +
                     std::to_string(affinity_cores()) + ", " + std::to_string(l.ranks_on_node) +
                     " rank(s) on this node)\n";
  // The reason strata chose passive waiting as it started, else now's.
  const char* chosen = std::getenv("STRATA_PASSIVE_WAIT");
  const std::string_view why = chosen != nullptr ? chosen : "";
  if (l.oversubscribed() || why == "oversubscribed") {
    return text + "  oversubscribed " + (l.bound ? std::string() : std::to_string(l.ranks_on_node) + " rank(s) x ") +
           std::to_string(l.threads) + " OpenMP thread(s) per rank on " + std::to_string(l.mask) +
           " core(s): " + waiting(l, l.cores);
  }
  int others = l.others;
  if (why.starts_with("crowded ")) others = std::atoi(chosen + 8);
  if (!l.crowded() && !why.starts_with("crowded ")) return text;
  const int free_cores = (l.online - others) / std::max(1, l.ranks_on_node);
  return text + "  shared node   " + std::to_string(others) + " other runnable task(s) on the node's " +
         std::to_string(l.online) + " core(s) beside " + std::to_string(l.ranks_on_node) + " rank(s) x " +
         std::to_string(l.threads) + " OpenMP thread(s): " + waiting(l, free_cores);
}

}  // namespace strata
