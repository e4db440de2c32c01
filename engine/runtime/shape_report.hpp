// The shape counts of a run (engine/backend/shape_counts.hpp) in its output
// file, /performance/shape/<phase>/ (docs/output.md): rank 0's counts, the
// same calls as every other rank's in these SPMD models up to the odd extra
// launch of an uneven split.
#pragma once

#include <string>
#include <vector>

#include "engine/backend/shape_counts.hpp"

namespace strata {

class H5Output;
class MpiContext;

// Collective: rank 0's counts, known on every rank.
std::vector<shape::PhaseCounts> root_shape_counts(const MpiContext& mpi);
void write_shape_counts(H5Output& h5, const std::vector<shape::PhaseCounts>& phases);

}  // namespace strata
