// Reading a starting configuration from an H5MD file (`initial = "file"`),
// whichever code wrote it: the first frame of /particles/all/position/value
// and velocity/value ([frames, N, 3], any float type), the box edges
// (/particles/all/box/edges: [3], a diagonal [3, 3], or edges/value, first
// frame), the ids when present (/particles/all/id [N] or id/value, first
// frame; particles are then numbered by ascending id) and the masses when
// present (/particles/all/mass [N] or mass/value).
#pragma once

#include <cstdint>
#include <string>

#include "engine/particles/particles.hpp"

namespace strata::particles {

struct H5mdSnapshot {
  std::int64_t n = 0;           // particles in the file
  HostParticles particles;      // this rank's even share of the global index, sorted
  bool has_box = false;         // /particles/all/box/edges was there
  Box box;                      // edges and boundary from the file (origin 0)
  bool has_mass = false;
};

// Collective: every rank reads an even share of the rows and receives the
// even share of the global index. Any problem (no such file, a dataset
// missing or of the wrong shape, duplicate ids) is an Error with exit code
// 2 on every rank whose message names `key`, the file and the dataset.
H5mdSnapshot read_h5md(const std::string& path, const std::string& key, const MpiContext& mpi);

}  // namespace strata::particles
