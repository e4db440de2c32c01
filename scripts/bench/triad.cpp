// strata_triad: the memory bandwidth the host can sustain, measured the way
// STREAM does (McCalpin, https://www.cs.virginia.edu/stream/): a[i] = b[i] +
// q c[i] over arrays far larger than the last-level cache, OpenMP static
// schedule with first-touch placement, best of several repetitions, counting
// 3 arrays x 8 bytes per element (the write-allocate read of a is not
// counted, as in STREAM). Also reports copy (a[i] = b[i], 2 x 8 bytes).
// scripts/bench/stencils divides the stencils' achieved bandwidth by it.
//
//   strata_triad [--mib-per-array N] [--reps R]
//
// Prints one line per kernel: "triad_GBps <best> <median>" etc., then the
// array size and thread count.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Times {
  std::vector<double> seconds;
  double best() const { return *std::min_element(seconds.begin(), seconds.end()); }
  double median() {
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  }
};

}  // namespace

int main(int argc, char** argv) {
  long mib = 512;   // per array: 16x a 32 MiB L3
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mib-per-array") == 0 && i + 1 < argc) {
      mib = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: strata_triad [--mib-per-array N] [--reps R]\n");
      return 2;
    }
  }
  if (mib < 1 || reps < 2) {
    std::fprintf(stderr, "strata_triad: --mib-per-array >= 1 and --reps >= 2\n");
    return 2;
  }
  const long n = mib * 1024 * 1024 / static_cast<long>(sizeof(double));
  // Not std::vector: its value-initialisation would touch every page from
  // one thread and place all memory on one NUMA node.
  std::unique_ptr<double[]> a(new double[static_cast<std::size_t>(n)]);
  std::unique_ptr<double[]> b(new double[static_cast<std::size_t>(n)]);
  std::unique_ptr<double[]> c(new double[static_cast<std::size_t>(n)]);
  double* pa = a.get();
  double* pb = b.get();
  double* pc = c.get();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    pa[i] = 1.0;
    pb[i] = 2.0;
    pc[i] = 0.5;
  }
  const double q = 3.0;
  Times triad, copy;
  // The first repetition of each warms the TLB and is dropped.
  for (int r = 0; r <= reps; ++r) {
    double t0 = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) pa[i] = pb[i] + q * pc[i];
    double t1 = now();
    if (r > 0) triad.seconds.push_back(t1 - t0);
    t0 = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) pc[i] = pa[i];
    t1 = now();
    if (r > 0) copy.seconds.push_back(t1 - t0);
  }
  // Keep the results observable so nothing is optimised away.
  double check = 0;
  for (long i = 0; i < n; i += 4096) check += pa[i] + pc[i];
  if (check != check) return 1;

  const double bytes_triad = 3.0 * 8.0 * static_cast<double>(n);
  const double bytes_copy = 2.0 * 8.0 * static_cast<double>(n);
  std::printf("triad_GBps %.3f %.3f\n", bytes_triad / triad.best() / 1e9, bytes_triad / triad.median() / 1e9);
  std::printf("copy_GBps %.3f %.3f\n", bytes_copy / copy.best() / 1e9, bytes_copy / copy.median() / 1e9);
  std::printf("array_MiB %ld\nthreads %d\nrepetitions %d\n", mib, omp_get_max_threads(), reps);
  return 0;
}
