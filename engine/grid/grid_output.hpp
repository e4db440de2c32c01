// Output of a grid model into the run's HDF5 file, as docs/output.md lays it out
// (CF-1.10, readable as netCDF-4): /grid attributes; at the root the
// cell-centre coordinates /x, /y[, /z] and the frames' /time, dimension
// scales attached to the fields /<name>, time series [n_out, (nz,) ny, nx]
// written collectively (each rank its box) into chunked, extendible
// datasets; /diagnostics/<name> time series with their own
// /diagnostics/time; CF `units` and `long_name` attributes; and an XDMF
// sidecar OUT.xmf (a temporal collection of
// CoRectMesh grids) that ParaView and VisIt open. A frame is on disk when
// frame() returns; GridSimulation calls it from its BackgroundWriter, so
// frame() and diagnostics() make no MPI calls of their own beyond HDF5's.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/xdmf_file.hpp"

namespace strata {
class H5Output;
}

namespace strata::grid {

class Grid;

struct Quantity {
  std::string name;        // dataset name: "h", "mass"
  std::string units;       // UDUNITS text: "m", "m s-1", "1" for dimensionless
  std::string long_name;   // "fluid depth"
};

class GridOutput {
 public:
  // `out` may be null (a dry run): then nothing is written. The file
  // names the grid's axes as GridSpec::axes does (x, y, z; euler2d: x, z).
  // A field named as another root object (time, x, grid, config, ...) is a
  // logic_error.
  GridOutput(H5Output* out, const Grid& g, std::vector<Quantity> fields, std::vector<Quantity> diagnostics);

  // A fresh run: /grid, the coordinates, empty series. Collective.
  void create();
  // A restarted run: keeps the first `frames` field frames and `rows`
  // diagnostic rows (what its checkpoint had written) and drops the rest.
  // Frames and rows the checkpoint counts but the file lacks (lost in a
  // hard kill, or the whole file lost) become NaN, time included, and are
  // listed by missing_frames()/missing_rows(); what is missing of the
  // file's structure is created, and a file in the layout before CF (an
  // earlier strata's) is moved into this one. Collective.
  void resume(std::int64_t frames, std::int64_t rows);
  // After resume(): indices of the frames and rows the file lacks.
  const std::vector<std::int64_t>& missing_frames() const { return missing_frames_; }
  const std::vector<std::int64_t>& missing_rows() const { return missing_rows_; }

  // Appends a frame: values[f] is this rank's owned cells of field f
  // (packed on the device: grid::pack_owned). Collective (HDF5 only); rank 0 appends it to
  // the XDMF sidecar.
  void frame(double time, const std::vector<std::vector<double>>& values);
  // Appends a row of diagnostics (every rank holds the same values).
  void diagnostics(double time, const std::vector<double>& values);

  std::int64_t frames() const { return frames_; }
  std::int64_t rows() const { return rows_; }

 private:
  void write_grid();         // /grid's attributes
  void write_coordinates();  // the axes' dimension scales that do not exist yet
  void create_series();      // Conventions, the coordinates and empty series that do not exist yet
  // A file of an earlier strata (fields in /fields, coordinates in /grid):
  // its series moved to the root, where a restart continues them.
  void adopt_earlier_layout();
  std::array<std::int64_t, 3> mesh_cells() const;  // the XDMF mesh's cells, z y x
  std::vector<xdmf::Series> shown_series() const;  // the fields, a view per frame
  std::string xdmf_entry(std::size_t frame) const;
  void write_xdmf();    // the whole sidecar (rank 0)
  void append_xdmf();   // the newest frame's entry (rank 0)
  H5Output* out_;
  const Grid& grid_;
  std::vector<Quantity> fields_, diagnostics_;
  std::vector<std::string> axes_;
  std::vector<double> times_;   // of the frames, for the XDMF sidecar
  xdmf::Sidecar sidecar_;
  std::int64_t frames_ = 0, rows_ = 0;
  std::vector<std::int64_t> missing_frames_, missing_rows_;
};

}  // namespace strata::grid
