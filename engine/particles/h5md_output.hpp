// Output of a particle model into the run's HDF5 file in the H5MD 1.1 layout
// (docs/output.md; https://www.nongnu.org/h5md/h5md.html), plus an XDMF sidecar
// OUT.xmf that ParaView opens:
//
//   /h5md                    attribute version = [1, 1]; groups creator
//                            (name = "strata", version) and author (name)
//   /particles/all/box       attributes dimension = 3, boundary = 3 x
//                            "periodic" | "none"; element edges {step,
//                            time (position's, hard links), value [F, 3]}
//   /particles/all/id        [N] int64, fixed (time-independent), row = global index
//   /particles/all/mass      [N] float64, fixed, when the model has masses
//   /particles/all/position  {step [F] int64, time [F], value [F, N, 3]}
//   /particles/all/velocity  the same
//   /observables/<name>      {step [R] int64, time [R], value [R] or [R, 3]}
//
// Every frame is in global-index order whatever the decomposition: rows are
// routed to the even share of their index and each rank writes its block
// collectively. Values are float64 in the file for FP32 runs too. H5MD's
// strings are fixed-length. The units are the reduced ones of the system
// /h5md/modules/units names, so no dataset carries H5MD's `unit` (whose
// grammar has no reduced units); they carry, as the grid output does, CF's
// `units` (the reduced unit's name, for people) and `long_name`. Output
// is synchronous: a frame is on disk (flushed, metadata included) when
// frame() returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/test_switches.hpp"
#include "engine/io/xdmf_file.hpp"
#include "engine/particles/particles.hpp"

namespace strata {
class Config;
class H5Output;
}

namespace strata::particles {

struct Units {
  std::string length, velocity, time, mass;  // the reduced unit's name ("sigma", "1"), CF's `units`
  // The unit system, named in /h5md/modules/units (H5MD's units module,
  // attribute `system`) with a `description` of what its units are: "lj"
  // (Lennard-Jones reduced units), "nbody" (G = M = 1).
  std::string system, description;
};

// The run's author for /h5md/author: run.author when set, else the user
// running strata ($USER, $LOGNAME, then the password database), else
// "unknown".
std::string run_author(const Config* config);

struct Observable {
  std::string name;        // group below /observables: "total_energy"
  std::string units;       // "1", "J"
  std::string long_name;   // "total energy"
  int width = 0;           // 0: a scalar per row; 3: a vector (momentum)
};

class H5mdOutput {
 public:
  // `out` may be null (dry run, validate): nothing is written then.
  // `n`: particles in the whole system; `box`: H5MD's box (edges, boundary).
  // `author`: /h5md/author's name (run_author()).
  H5mdOutput(H5Output* out, const MpiContext& mpi, std::int64_t n, const Box& box, const Units& units,
             std::string author, std::vector<Observable> observables);

  // A fresh run: /h5md, the box, id and (when `p` carries masses) mass, and
  // empty series. `p`: this rank's particles, any subset and order.
  // Collective.
  void create(const HostParticles& p);
  // A restarted run: keeps the first `frames` trajectory frames and `rows`
  // observable rows (what its checkpoint had written), drops the rest.
  // Frames and rows the checkpoint counts but the file lacks (lost in a
  // hard kill, or the whole file lost) get the fill values (NaN time and
  // value, step -1) and are listed by missing_frames()/missing_rows() and
  // in the root attributes missing_frames/missing_rows; what is missing of
  // the file's structure is created, the static part (id, mass) from `p`
  // as create() does. Collective.
  void resume(std::int64_t frames, std::int64_t rows, const HostParticles& p);
  const std::vector<std::int64_t>& missing_frames() const { return missing_frames_; }
  const std::vector<std::int64_t>& missing_rows() const { return missing_rows_; }

  // Appends a trajectory frame (position and velocity of every particle).
  // Collective; appends it to OUT.xmf.
  void frame(std::int64_t step, double time, const HostParticles& p);
  // Appends a row of observables: values[k] holds max(width, 1) numbers of
  // observables()[k]; every rank passes the same (rank 0's are written).
  void observables(std::int64_t step, double time, const std::vector<std::vector<double>>& values);

  std::int64_t frames() const { return frames_; }
  std::int64_t rows() const { return rows_; }

 private:
  void write_static(const HostParticles& p);   // /h5md, box, id, mass
  // The time-dependent elements not there yet; true where it replaced an
  // older file's fixed box, whose frames then need their rows.
  bool create_series();
  void write_box(std::int64_t frame);  // the box's row of a frame
  void write_vertices();               // the sidecar's vertex cells
  static std::vector<xdmf::Series> shown_series();  // the series with a view per frame
  void create_element(const std::string& path, const std::vector<std::int64_t>& frame, const std::string& units,
                      const std::string& long_name);
  std::string xdmf_entry(std::size_t frame) const;
  void write_xdmf();    // the whole sidecar (rank 0)
  void append_xdmf();   // the newest frame's entry (rank 0)
  H5Output* out_;
  const MpiContext& mpi_;
  std::int64_t n_;
  Box box_;
  Units units_;
  std::string author_;
  std::vector<Observable> observables_;
  std::vector<double> times_;   // of the frames, for the XDMF sidecar
  bool has_mass_ = false;
  xdmf::Sidecar sidecar_;
  std::int64_t frames_ = 0, rows_ = 0;
  double test_delay_ = test_switches::output_delay();  // seconds; test_switches.hpp
  std::vector<std::int64_t> missing_frames_, missing_rows_;
};

}  // namespace strata::particles
