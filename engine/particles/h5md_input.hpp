// Reading a starting configuration from an H5MD file (`initial = "file"`),
// whichever code wrote it: one frame (the last unless asked otherwise) of
// /particles/all/position/value and velocity/value ([frames, N, 3], any
// float type) with its step and time where position/step and time exist,
// the box edges (/particles/all/box/edges: [3], a diagonal [3, 3], or
// edges/value), the ids when present (/particles/all/id [N] or id/value;
// particles are then numbered by ascending id) and the masses when present
// (/particles/all/mass [N] or mass/value). A time-dependent id, mass or
// edges element is read at the same frame when it has as many frames as
// the positions, else at its first frame.
#pragma once

#include <cstdint>
#include <string>

#include "engine/particles/particles.hpp"

namespace strata::particles {

// Which frame to read: index >= 0 counts from the first (0), index < 0
// from the end (-1: the last). key names the parameter in errors.
struct FrameRequest {
  std::int64_t index = -1;
  std::string key;
};

struct H5mdSnapshot {
  std::int64_t n = 0;           // particles in the file
  std::int64_t frame = 0, frames = 1;   // the frame read (from 0) of how many
  bool has_step = false, has_time = false;   // position/step and position/time were there
  std::int64_t step = 0;        // that frame's step and time, where stored
  double time = 0;
  HostParticles particles;      // this rank's even share of the global index, sorted
  bool has_box = false;         // /particles/all/box/edges was there
  Box box;                      // edges and boundary from the file (origin 0)
  bool has_mass = false;
};

// Collective: every rank reads an even share of the rows and receives the
// even share of the global index. Any problem (no such file, a dataset
// missing or of the wrong shape, duplicate ids) is an Error with exit code
// 2 on every rank whose message names `key`, the file and the dataset.
// A frame outside the file names frame.key, the index and the frame count.
H5mdSnapshot read_h5md(const std::string& path, const std::string& key, const FrameRequest& frame,
                       const MpiContext& mpi);

// "frame 4 of 5 (the last; step 400, time 2) of PATH", for the run's log.
std::string describe_frame(const H5mdSnapshot& snap, const std::string& path);

// Local, metadata only: throws InputError (naming `key`, the file and the
// dataset) if read_h5md would find the file unreadable or a dataset
// missing or misshapen; returns the number of particles. For Model::check
// and the memory plan, before any output is created.
std::int64_t check_h5md(const std::string& path, const std::string& key, const FrameRequest& frame);

}  // namespace strata::particles
