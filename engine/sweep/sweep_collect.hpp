// The sweep's summary: one row per point (index, swept values, status, every
// numeric scalar result of its output) as OUT.h5 and OUT.csv.
#pragma once

#include <ostream>
#include <string>

namespace strata {

class MpiContext;
class SweepSpec;

// Rank 0 reads the points' outputs and writes `path` and the .csv beside
// it; every rank calls it (errors are collective). Returns 0.
int collect_sweep(const SweepSpec& spec, const MpiContext& mpi, std::ostream& out, const std::string& path);

}  // namespace strata
