// Initial conditions of the nbody model, in N-body (Henon) units G = M = 1
// unless the input says otherwise. Each body is drawn from its own Philox
// stream (seed, subsequence = body index), so the configuration does not
// depend on the number of ranks.
#pragma once

#include <cstdint>
#include <string>

#include "engine/particles/particles.hpp"

namespace strata {
class MpiContext;
}

namespace strata::nbody {

struct InitialSpec {
  std::string kind = "plummer";   // plummer | uniform_sphere | two_body | collision | file
  std::int64_t n = 2048;          // bodies (two_body: 2; file: the file's)
  std::uint64_t seed = 42;
  double G = 1;
  double eccentricity = 0.5, semi_major_axis = 1;                     // two_body
  double separation = 6, impact_parameter = 1, approach_speed = 0.5;  // collision
  std::string file, file_key = "nbody.initial_file";                 // file
  std::int64_t file_n = -1;                                           // file: its bodies, once checked
  std::int64_t file_frame = -1;                                       // file: from 0, or from the end (-1: last)
};

// Collective: this rank's even share of the bodies (index, position,
// velocity, mass), the centre of mass at rest at the origin (file: as read).
// `n` receives the number of bodies.
// file: `read_from` says which frame (and step, time) of which file.
particles::HostParticles initial_bodies(const InitialSpec& spec, const MpiContext& mpi, std::int64_t& n,
                                        std::string* read_from = nullptr);

// Bodies the spec makes (file: file_n, -1 until the file is checked).
std::int64_t initial_count(const InitialSpec& spec);

}  // namespace strata::nbody
