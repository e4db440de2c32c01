// Running sweep points: one point on all ranks (--index, a Slurm array
// task), or every point not yet done inside one MPI job (--all), with the
// ranks split into groups that take points as they come free; and the
// sweep's summary of the points' outputs.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

namespace strata {

class MpiContext;
class SweepSpec;
struct SweepArgs;

// Runs point `index` on every rank of `world`. Returns 0 (done, or done
// before), 75 (stopped after a checkpoint, or the point is locked by a
// running process); throws the point's collective Error when it fails,
// after writing the point's `failed` marker.
int run_sweep_index(const SweepSpec& spec, const MpiContext& world, std::ostream& out, std::size_t index);

// Runs every point not yet done (and failed ones with --retry-failed), in
// groups of --ranks-per-point ranks or --jobs groups.
// Returns 0 when all points are done, 3 when some failed, 75 when a point
// stopped after a checkpoint (no more points are dealt then) or points are
// still held by another process.
int run_sweep_all(const SweepSpec& spec, const MpiContext& world, std::ostream& out, const SweepArgs& opt);

// The sweep's summary: one row per point (index, swept values, status, every
// numeric scalar result of its output) as OUT.h5 and OUT.csv. Rank 0 reads
// the points' outputs and writes `path` and the .csv beside it; every rank
// calls it (errors are collective). Returns 0.
int collect_sweep(const SweepSpec& spec, const MpiContext& mpi, std::ostream& out, const std::string& path);

}  // namespace strata
