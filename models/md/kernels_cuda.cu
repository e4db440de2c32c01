// CUDA instantiations of the md model's kernels.
#include "engine/backend/cuda_parallel.cuh"
#include "kernels/particles/atom_sums.hpp"
#include "kernels/particles/comm_kernels.hpp"
#include "kernels/particles/integrate.hpp"
#include "kernels/particles/lennard_jones.hpp"
#include "kernels/particles/neighbour_list.hpp"
#include "kernels/particles/pair_forces.hpp"

using namespace strata::kernels::particles;

#define STRATA_MD_INSTANTIATE(T)                                                          \
  STRATA_CUDA_INSTANTIATE_FOR(BinPositions<T>)                                            \
  STRATA_CUDA_INSTANTIATE_FOR(BuildNeighbours<T>)                                         \
  STRATA_CUDA_INSTANTIATE_FOR(PairForces<LennardJones<T>, true>)                          \
  STRATA_CUDA_INSTANTIATE_FOR(PairForces<LennardJones<T>, false>)                         \
  STRATA_CUDA_INSTANTIATE_FOR(KickDrift<T>)                                               \
  STRATA_CUDA_INSTANTIATE_FOR(Kick<T>)                                                    \
  STRATA_CUDA_INSTANTIATE_FOR(LangevinForce<T>)                                           \
  STRATA_CUDA_INSTANTIATE_FOR(CopyPositions<T>)                                           \
  STRATA_CUDA_INSTANTIATE_REDUCE(double, Displacement2<T>, strata::kernels::MaxOp)                         \
  STRATA_CUDA_INSTANTIATE_REDUCE(double, AbsOf<AtomValue<T>>, strata::kernels::MaxOp)                      \
  STRATA_CUDA_INSTANTIATE_REDUCE(Fixed128, QuantisedAtom<AtomValue<T>>, Fixed128Plus)     \
  STRATA_CUDA_INSTANTIATE_REDUCE(double, NonFiniteAtom<T>, strata::Plus)

STRATA_MD_INSTANTIATE(double)
STRATA_MD_INSTANTIATE(float)
