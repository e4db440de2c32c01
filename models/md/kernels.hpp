// The md model's kernel list (engine/backend/parallel.hpp).
#pragma once

#include "engine/backend/parallel.hpp"
#include "kernels/particles/atom_sums.hpp"
#include "kernels/particles/comm_kernels.hpp"
#include "kernels/particles/integrate.hpp"
#include "kernels/particles/lennard_jones.hpp"
#include "kernels/particles/neighbour_list.hpp"
#include "kernels/particles/pair_forces.hpp"
#include "kernels/particles/rebuild.hpp"

#define STRATA_MD_KERNELS(M, Real) \
  STRATA_FOR(M, strata::kernels::particles::BinPositions<Real>) \
  STRATA_FOR(M, strata::kernels::particles::PackPositions<Real>) \
  STRATA_FOR(M, strata::kernels::particles::PackAtoms<Real>) \
  STRATA_FOR(M, strata::kernels::particles::BuildNeighbours<Real>) \
  STRATA_FOR(M, strata::kernels::particles::PairForces<strata::kernels::particles::LennardJones<Real>, true>) \
  STRATA_FOR(M, strata::kernels::particles::PairForces<strata::kernels::particles::LennardJones<Real>, false>) \
  STRATA_FOR(M, strata::kernels::particles::KickDrift<Real>) \
  STRATA_FOR(M, strata::kernels::particles::Kick<Real>) \
  STRATA_FOR(M, strata::kernels::particles::LangevinForce<Real>) \
  STRATA_FOR(M, strata::kernels::particles::CopyPositions<Real>) \
  STRATA_FOR(M, strata::kernels::particles::PackRecords<Real>) \
  STRATA_FOR(M, strata::kernels::particles::UnpackRecords<Real>) \
  STRATA_FOR(M, strata::kernels::particles::WrapAtoms<Real>) \
  STRATA_FOR(M, strata::kernels::particles::CellKeys<Real>) \
  STRATA_FOR(M, strata::kernels::particles::RoundKeys<Real>) \
  STRATA_REDUCE(M, strata::kernels::particles::WorstAtom, strata::kernels::particles::WorstAtomOp, \
                strata::kernels::particles::RebuildCheck<Real>) \
  STRATA_ONCE(Real, STRATA_FOR(M, strata::kernels::particles::MigrationCode) \
                    STRATA_FOR(M, strata::kernels::particles::GhostFaces) \
                    STRATA_FOR(M, strata::kernels::particles::CopyGhostKeys) \
                    STRATA_FOR(M, strata::kernels::particles::FlagCodes) \
                    STRATA_FOR(M, strata::kernels::particles::SelectFlagged) \
                    STRATA_FOR(M, strata::kernels::particles::PartitionFlagged) \
                    STRATA_FOR(M, strata::kernels::particles::FlagSides) \
                    STRATA_FOR(M, strata::kernels::particles::SelectSides) \
                    STRATA_FOR(M, strata::kernels::particles::GhostRows) \
                    STRATA_FOR(M, strata::kernels::particles::CellStarts) \
                    STRATA_REDUCE(M, double, strata::kernels::MaxOp, strata::kernels::particles::RowCount)) \
  STRATA_REDUCE(M, double, strata::kernels::MaxOp, strata::kernels::particles::Displacement2<Real>) \
  STRATA_REDUCE(M, double, strata::kernels::MaxOp, strata::kernels::Magnitude<strata::kernels::particles::AtomValue<Real>>) \
  STRATA_REDUCE(M, strata::kernels::Fixed128, strata::kernels::Fixed128Plus, strata::kernels::Quantised<strata::kernels::particles::AtomValue<Real>>) \
  STRATA_REDUCE(M, double, strata::Plus, strata::kernels::particles::NonFiniteAtom<Real>)
STRATA_DECLARE_KERNELS(STRATA_MD_KERNELS)
