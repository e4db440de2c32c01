// Checkpoint files: a model's state (through StateWriter) plus the resolved
// configuration and where the run stood, in one HDF5 file written
// collectively. Written the GROMACS way: to a temporary name, flushed and
// fsync'ed, then renamed over nothing, so a crash or a second signal during
// the write never harms the last good checkpoint; the newest `keep` are kept.
//
// For output `out/run.h5` they live in `out/run.chk/step-000000000042.h5`.
// Each carries a checksum of its state (an order-independent sum of
// per-element hashes, so it does not depend on how the state was
// distributed), checked before a restart uses it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

class MpiContext;
class Simulation;

// What a checkpoint says about the run that wrote it.
struct CheckpointHeader {
  std::string model, precision, backend;   // backend as resolved: host | cuda
  std::string config_toml;                 // the resolved configuration
  std::int64_t step = 0, steps = 0;        // steps done, of steps
  std::int64_t ranks = 0;
  double wall_seconds = 0;                 // compute time so far, all segments
};

class CheckpointStore {
 public:
  // The checkpoints of the run that writes `output`.
  CheckpointStore(const std::string& output, const MpiContext& mpi);
  const std::string& directory() const { return dir_; }

  // Collective: writes `sim`'s state as checkpoint `header.step`, then keeps
  // the newest `keep`. Returns the file's path. Throws Error (resources) if
  // the file system fails; the previous checkpoints are untouched then.
  std::string write(const Simulation& sim, const CheckpointHeader& header, int keep);

  // Checkpoint files beside the output, newest (highest step) first. Local.
  std::vector<std::string> list() const;
  // Collective: deletes every checkpoint and leftover temporary file (a
  // fresh run replacing an output must not restart from its predecessor's).
  void remove_all();
  // Collective: deletes temporary files left by a crash mid-write.
  void remove_temporaries();

 private:
  std::string dir_;
  const MpiContext& mpi_;
};

// Rank 0 opens the file and checks it (HDF5 readable, a strata checkpoint,
// written to the end, checksum equal); collective. Throws Error naming the
// file and the reason for a bad one.
CheckpointHeader verify_checkpoint(const std::string& path, const MpiContext& mpi);

// Collective: the newest checkpoint in `store` that verifies; the others
// tried are reported in `skipped` ("path: reason"). Empty path if none.
std::string newest_valid_checkpoint(const CheckpointStore& store, const MpiContext& mpi,
                                    std::vector<std::string>& skipped);

// Collective: restores `sim` from a verified checkpoint.
void restore_checkpoint(const std::string& path, Simulation& sim, const MpiContext& mpi);

}  // namespace strata
