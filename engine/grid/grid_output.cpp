#include "engine/grid/grid_output.hpp"

#include <cmath>
#include <filesystem>
#include <span>
#include <sstream>

#include "engine/grid/grid.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/io/xdmf_file.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata::grid {

namespace {

// Objects a grid file has at its root besides the fields (docs/output.md):
// a field of one of these names would clash with them.
constexpr const char* kRootNames[] = {"config", "timers", "performance", "grid", "diagnostics",
                                      "health", "time",   "x",           "y",    "z"};

// CF attributes of the coordinate variable of a Cartesian axis in metres.
struct AxisAttributes {
  const char* axis;           // CF `axis`
  const char* standard_name;  // CF standard name
};

AxisAttributes axis_attributes(const std::string& name) {
  if (name == "x") return {"X", "projection_x_coordinate"};
  if (name == "y") return {"Y", "projection_y_coordinate"};
  return {"Z", "height"};
}

}  // namespace

GridOutput::GridOutput(H5Output* out, const Grid& g, std::vector<Quantity> fields, std::vector<Quantity> diagnostics)
    : out_(out), grid_(g), fields_(std::move(fields)), diagnostics_(std::move(diagnostics)) {
  for (int a = 0; a < g.dims(); ++a) axes_.push_back(g.spec().axes.substr(static_cast<std::size_t>(a), 1));
  for (const Quantity& q : fields_)
    for (const char* name : kRootNames)
      if (q.name == name) throw std::logic_error("GridOutput: a field may not be called " + q.name);
}

void GridOutput::create() {
  if (out_ == nullptr) return;
  write_grid();
  create_series();
  frames_ = rows_ = 0;
  times_.clear();
  grid_.mpi().collective([&] { write_xdmf(); });
}

void GridOutput::write_grid() {
  H5Output& o = *out_;
  const GridSpec& s = grid_.spec();
  o.group("/grid");
  std::vector<double> origin;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    o.attribute("/grid", "n" + axes_[i], static_cast<std::int64_t>(s.n[i]));
    o.attribute("/grid", "d" + axes_[i], s.d[i]);
    o.attribute("/grid", "boundary_" + axes_[i],
                std::string(to_string(s.boundary[i][0])) + " " + to_string(s.boundary[i][1]));
    origin.push_back(s.origin[i]);
  }
  o.attribute("/grid", "origin", origin);
  o.attribute("/grid", "axes", axes_);
  std::vector<std::string> ranks;
  for (std::size_t a = 0; a < axes_.size(); ++a) ranks.push_back(std::to_string(grid_.ranks()[a]));
  o.attribute("/grid", "decomposition", ranks);
  o.attribute("/grid", "halo", static_cast<std::int64_t>(grid_.halo()));
}

void GridOutput::write_coordinates() {
  H5Output& o = *out_;
  const GridSpec& s = grid_.spec();
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const std::string path = "/" + axes_[i];
    if (o.exists(path)) continue;
    // Cell centres: the coordinate variable of the axis's dimension.
    std::vector<double> centres;
    if (grid_.mpi().root())
      for (index_t c = 0; c < s.n[i]; ++c) centres.push_back(s.origin[i] + (static_cast<double>(c) + 0.5) * s.d[i]);
    o.rows(path, centres, 0, s.n[i], 0);
    o.dimension_scale(path, axes_[i]);
    const AxisAttributes cf = axis_attributes(axes_[i]);
    o.attribute(path, "units", std::string("m"));
    o.attribute(path, "axis", std::string(cf.axis));
    o.attribute(path, "standard_name", std::string(cf.standard_name));
    o.attribute(path, "long_name", "cell-centre " + axes_[i] + " coordinate");
    if (axes_[i] == "z") o.attribute(path, "positive", std::string("up"));
  }
}

void GridOutput::create_series() {
  H5Output& o = *out_;
  const std::vector<std::int64_t> shape = detail::global_box(grid_).shape;
  o.attribute("/", "Conventions", std::string("CF-1.10"));
  write_coordinates();
  // Only the series that are missing (a restart may find some and not
  // others), but the attributes and scales of all: a restarted file that
  // an earlier strata wrote has series without them.
  const auto make = [&](const std::string& path, std::span<const std::int64_t> frame, const Quantity& q) {
    if (!o.exists(path)) o.series(path, frame);
    o.attribute(path, "units", q.units);
    o.attribute(path, "long_name", q.long_name);
  };
  // Model seconds from an epoch: CF (and its checker) wants a time axis's
  // units to name one, and 1970 is NumPy's, so xarray decodes it to
  // datetime64 without warnings ("s" is not a CF time unit; "seconds" alone
  // xarray turns into timedelta64). docs/output.md says more.
  const auto make_time = [&](const std::string& path, const std::string& long_name) {
    make(path, {}, {"time", "seconds since 1970-01-01 00:00:00", long_name});
    o.dimension_scale(path, "time");
    o.attribute(path, "axis", std::string("T"));
    o.attribute(path, "standard_name", std::string("time"));
  };
  make_time("/time", "model time of each frame");
  for (const Quantity& q : fields_) {
    const std::string path = "/" + q.name;
    make(path, shape, q);
    o.attach_scale(path, "/time", 0);
    // Dimension d + 1 of a frame is axis axes_[dims - 1 - d] (slowest first).
    for (std::size_t d = 0; d < axes_.size(); ++d)
      o.attach_scale(path, "/" + axes_[axes_.size() - 1 - d], static_cast<unsigned>(d + 1));
  }
  make_time("/diagnostics/time", "model time of each row");
  for (const Quantity& q : diagnostics_) {
    make("/diagnostics/" + q.name, {}, q);
    o.attach_scale("/diagnostics/" + q.name, "/diagnostics/time", 0);
  }
}

// Cells per physical axis in z y x order: a 2-D grid is one cell thick
// along the axis it lacks (see xdmf_entry).
std::array<std::int64_t, 3> GridOutput::mesh_cells() const {
  std::array<std::int64_t, 3> zyx = {1, 1, 1};
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const char name = axes_[i].empty() ? 'x' : axes_[i][0];
    zyx[name == 'z' ? 0 : name == 'y' ? 1 : 2] = grid_.spec().n[i];
  }
  return zyx;
}

// Each field's frames as the mesh's cells (a 2-D frame one cell thick):
// ParaView's XDMF 2 reader reads an attribute by the mesh's shape, its
// XDMF 3 reader needs the dataset's to match the sidecar's.
std::vector<xdmf::Series> GridOutput::shown_series() const {
  const std::array<std::int64_t, 3> cells = mesh_cells();
  std::vector<xdmf::Series> shown;
  for (const Quantity& q : fields_) shown.push_back({q.name, "/" + q.name, {cells.begin(), cells.end()}});
  return shown;
}

void GridOutput::adopt_earlier_layout() {
  H5Output& o = *out_;
  if (!o.exists("/fields")) return;
  // Moved, not copied: the frames keep their place and their bytes.
  if (o.exists("/fields/time") && !o.exists("/time")) o.move("/fields/time", "/time");
  for (const Quantity& q : fields_) {
    const std::string from = "/fields/" + q.name, to = "/" + q.name;
    if (!o.exists(from) || o.exists(to)) continue;
    o.move(from, to);
    o.remove_attribute(to, "dimensions");
  }
  o.remove("/fields");
  for (const std::string& a : axes_) o.remove("/grid/" + a);
}

void GridOutput::resume(std::int64_t frames, std::int64_t rows) {
  if (out_ == nullptr) return;
  H5Output& o = *out_;
  // A file that lost its structure (written anew after the output was
  // deleted, or never flushed before a hard kill) gets it back.
  if (!o.exists("/grid")) write_grid();
  adopt_earlier_layout();
  create_series();
  const std::int64_t before = o.series_length("/time");
  // Exactly the checkpoint's frames and rows: what came after it is dropped
  // (it is computed again); what it counts but the file lacks (written
  // after the file's last flush before a kill, or a lost file) is grown
  // with NaN, time included, so every later frame keeps its index.
  o.series_resize("/time", frames);
  for (const Quantity& q : fields_) o.series_resize("/" + q.name, frames);
  o.series_resize("/diagnostics/time", rows);
  for (const Quantity& q : diagnostics_) o.series_resize("/diagnostics/" + q.name, rows);
  xdmf::restore_views(o, frames, before, shown_series());
  times_ = o.read("/time");
  frames_ = frames;
  rows_ = rows;
  // Each series' time is written last in its frame, so a NaN time marks a
  // frame that never fully reached the disk.
  missing_frames_ = nan_indices(times_);
  missing_rows_ = nan_indices(o.read("/diagnostics/time"));
  record_missing_output(o, missing_frames_, missing_rows_);
  grid_.mpi().collective([&] { write_xdmf(); });
}

void GridOutput::frame(double time, const std::vector<std::vector<double>>& values) {
  if (out_ == nullptr) return;
  if (values.size() != fields_.size()) throw std::logic_error("GridOutput::frame: one value array per field");
  const detail::GlobalBox b = detail::global_box(grid_);
  for (std::size_t f = 0; f < fields_.size(); ++f)
    out_->series_write("/" + fields_[f].name, frames_, values[f], b.start, b.count);
  out_->series_write("/time", frames_, time);
  xdmf::write_views(*out_, frames_, shown_series());
  // On disk, metadata included, before the next step: a hard kill keeps
  // every frame written so far (and the diagnostics rows before it).
  out_->flush();
  ++frames_;
  times_.push_back(time);
  // Not collective: this may run on the background writer's thread, which
  // must not call MPI on the run's communicator. A failure (rank 0's) is
  // made collective where the writer is drained.
  append_xdmf();
}

void GridOutput::diagnostics(double time, const std::vector<double>& values) {
  if (out_ == nullptr) return;
  if (values.size() != diagnostics_.size()) throw std::logic_error("GridOutput::diagnostics: one value per name");
  for (std::size_t d = 0; d < diagnostics_.size(); ++d)
    out_->series_write("/diagnostics/" + diagnostics_[d].name, rows_, values[d]);
  out_->series_write("/diagnostics/time", rows_, time);
  ++rows_;
}

// XDMF 3: a temporal collection with one uniform grid per frame, the
// geometry an origin and spacing, each field a cell-centred attribute
// reading frame f's view of /<name> (xdmf::view_path). The mesh is always
// a 3DCoRectMesh in physical X, Y, Z (node counts, origin and spacing in
// z y x order): a 2-D grid is one cell thick along its missing axis, so
// ParaView puts an x-y model in the x-y plane and euler2d's x-z slice in
// the x-z plane (a 2DCoRectMesh lands in the y-z plane there). Rank 0
// writes it (xdmf::Sidecar: whole at creation and restart, then one entry
// per frame).
std::string GridOutput::xdmf_entry(std::size_t f) const {
  const GridSpec& s = grid_.spec();
  const std::string h5_name = std::filesystem::path(out_->path()).filename().string();
  // Per physical axis X, Y, Z: cells, origin, spacing; a missing axis has
  // one cell as thick as the smallest cell size.
  const std::array<std::int64_t, 3> cells = mesh_cells();
  double o3[3] = {0, 0, 0};
  double d_min = s.d[0];
  for (std::size_t a = 1; a < axes_.size(); ++a) d_min = std::min(d_min, s.d[a]);
  double d3[3] = {d_min, d_min, d_min};
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const char name = axes_[i].empty() ? 'x' : axes_[i][0];
    const int p = name == 'z' ? 2 : name == 'y' ? 1 : 0;
    o3[p] = s.origin[i];
    d3[p] = s.d[i];
  }
  std::string nodes, origin, spacing, frame_cells;
  for (int p = 2; p >= 0; --p) {
    const std::string sep = p == 2 ? "" : " ";
    nodes += sep + std::to_string(cells[static_cast<std::size_t>(2 - p)] + 1);
    frame_cells += sep + std::to_string(cells[static_cast<std::size_t>(2 - p)]);
    origin += sep + xdmf::number(o3[p]);
    spacing += sep + xdmf::number(d3[p]);
  }
  std::ostringstream x;
  x << "      <Grid Name=\"frame " << f << "\" GridType=\"Uniform\">\n"
    << "        <Time Value=\"" << xdmf::number(times_[f]) << "\"/>\n"
    << "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << nodes << "\"/>\n"
    << "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
    << "          <DataItem Name=\"origin\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
       "Format=\"XML\">" << origin << "</DataItem>\n"
    << "          <DataItem Name=\"spacing\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
       "Format=\"XML\">" << spacing << "</DataItem>\n"
    << "        </Geometry>\n";
  for (const Quantity& q : fields_)
    x << "        <Attribute Name=\"" << q.name << "\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
      << "          <DataItem Dimensions=\"" << frame_cells << "\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">"
      << h5_name << ":" << xdmf::view_path(static_cast<std::int64_t>(f), q.name) << "</DataItem>\n"
      << "        </Attribute>\n";
  x << "      </Grid>\n";
  return x.str();
}

void GridOutput::write_xdmf() {
  if (!grid_.mpi().root()) return;
  sidecar_ = xdmf::Sidecar(xdmf::path_for(out_->path()), xdmf::head("fields"), xdmf::kTail);
  std::vector<std::string> entries;
  // A lost frame (NaN time) has nothing to show.
  for (std::size_t f = 0; f < times_.size(); ++f)
    if (!std::isnan(times_[f])) entries.push_back(xdmf_entry(f));
  sidecar_.rewrite(entries);
}

void GridOutput::append_xdmf() {
  if (!grid_.mpi().root()) return;
  if (!sidecar_.append(xdmf_entry(times_.size() - 1))) write_xdmf();
}

}  // namespace strata::grid
