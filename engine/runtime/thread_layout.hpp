// How a rank's OpenMP threads sit on the cores it may use. Threads that
// outnumber their cores and spin while they wait (libgomp spins for a
// while at every barrier unless OMP_WAIT_POLICY=passive) steal the cores
// the other threads need: on a shared 2-core node a 2-thread run was two
// orders of magnitude slower than a 1-thread one. libgomp reads
// OMP_WAIT_POLICY once, as the program loads, so strata sets it by
// starting itself again with it (prefer_passive_waiting). The same holds
// when the cores are enough for the run but other processes keep them
// busy: at a load of 10 on 2 cores, a 2-thread shallow_water step took
// 100x longer spinning than waiting passively.
#pragma once

#include <string>

namespace strata {

struct ThreadLayout {
  int mask = 1;        // cores in this process's affinity mask
  bool bound = false;  // the mask is part of the machine: the launcher bound this rank to its own cores
  int cores = 1;       // cores this rank may use (its mask, or an even share of a common one)
  int ranks_on_node = 1;
  int threads = 1;  // OpenMP threads per rank: OMP_NUM_THREADS, else strata's own choice
  int online = 1;   // the node's online cores
  int others = 0;   // runnable tasks on the node that are not this run's ranks (busy_elsewhere)
  // Threads that share the mask, against its cores.
  int sharing() const { return threads * (bound ? 1 : ranks_on_node); }
  bool oversubscribed() const { return sharing() > mask; }
  // Cores enough for the run, but not beside the work already running:
  // several threads a rank would wait for threads that lost their core.
  bool crowded() const { return threads > 1 && others + threads * ranks_on_node > online; }
};

// Runnable tasks on the node now, less `ours` (this run's ranks, each
// running its main thread): the median of a few samples of /proc/stat's
// procs_running over about 10 ms, so a kernel thread's blink does not
// count; 0 where /proc/stat cannot be read.
int busy_elsewhere(int ours);

// The cores of this process's affinity mask (sched_getaffinity), at least 1.
int affinity_cores();
// Cores for one of `ranks_on_node` ranks: its whole mask where the launcher
// bound it to part of the machine (the mask is its own), else an even share
// of the mask the ranks have in common.
int cores_per_rank(int ranks_on_node);
// The layout of this rank: ranks_on_node from MPI, or before MPI starts
// from the launcher's environment (ranks_on_node = 0).
ThreadLayout thread_layout(int ranks_on_node = 0);

// Call first in main, before anything starts OpenMP: when the layout puts
// more threads on a rank than it has cores, or the node is crowded, and
// OMP_WAIT_POLICY is unset, starts this program again with
// OMP_WAIT_POLICY=passive (and STRATA_PASSIVE_WAIT naming why:
// "oversubscribed" or "crowded <others>"). Returns only otherwise.
void prefer_passive_waiting(char** argv);

// For `strata doctor`: the layout and what strata does about it, as lines
// indented as doctor prints them.
std::string describe_thread_layout(const ThreadLayout& layout);

}  // namespace strata
