#include "engine/particles/h5md_output.hpp"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "engine/config/config.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/io/xdmf_file.hpp"
#include "engine/runtime/build_info.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/watchdog.hpp"

namespace strata::particles {

namespace {
const char* const kAll = "/particles/all";
const char* const kEdges = "/particles/all/box/edges";
// Vertex k is particle k: the Polyvertex cells of the XDMF sidecar.
const std::string kVertices = std::string(xdmf::kViews) + "/vertices";
}  // namespace

std::string run_author(const Config* config) {
  // Self-checks (strata validate) run without an input: no key then.
  const std::string key = config != nullptr ? config->string("run.author") : std::string();
  if (!key.empty()) return key;
  for (const char* name : {"USER", "LOGNAME"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return v;
  }
  // Batch jobs and containers may set neither: the account itself.
  const passwd* pw = getpwuid(getuid());
  if (pw != nullptr && pw->pw_name != nullptr && *pw->pw_name != '\0') return pw->pw_name;
  return "unknown";
}

H5mdOutput::H5mdOutput(H5Output* out, const MpiContext& mpi, std::int64_t n, const Box& box, const Units& units,
                       std::string author, std::vector<Observable> observables)
    : out_(out), mpi_(mpi), n_(n), box_(box), units_(units), author_(std::move(author)),
      observables_(std::move(observables)) {}

// An H5MD time-dependent element: a group with step (int64), time and
// value; only what does not exist yet (a restart may find some of it).
// No H5MD `unit`: the values are in the reduced units /h5md/modules/units
// names (CF's `units` says which, for people).
void H5mdOutput::create_element(const std::string& path, const std::vector<std::int64_t>& frame,
                                const std::string& units, const std::string& long_name) {
  H5Output& o = *out_;
  o.group(path);
  o.integer_series(path + "/step");
  o.series(path + "/time", {}, units_.time);
  if (!o.exists(path + "/value")) {
    o.series(path + "/value", frame, units);
    o.attribute(path + "/value", "long_name", long_name);
  }
}

void H5mdOutput::create(const HostParticles& p) {
  if (out_ == nullptr) return;
  write_static(p);
  create_series();
  frames_ = rows_ = 0;
  times_.clear();
  mpi_.collective([&] { write_xdmf(); });
}

void H5mdOutput::write_static(const HostParticles& p) {
  H5Output& o = *out_;
  o.group("/h5md");
  o.attribute("/h5md", "version", std::vector<std::int64_t>{1, 1});
  // H5MD 1.1's strings are fixed-length.
  o.group("/h5md/creator");
  o.fixed_attribute("/h5md/creator", "name", std::string("strata"));
  o.fixed_attribute("/h5md/creator", "version", build::version_line());
  o.group("/h5md/author");
  o.fixed_attribute("/h5md/author", "name", author_);
  if (!units_.system.empty()) {
    o.group("/h5md/modules");
    o.group("/h5md/modules/units");
    o.attribute("/h5md/modules/units", "version", std::vector<std::int64_t>{1, 0});
    o.fixed_attribute("/h5md/modules/units", "system", units_.system);
    o.fixed_attribute("/h5md/modules/units", "description", units_.description);
  }

  const std::string box = std::string(kAll) + "/box";
  o.group(box);
  o.attribute(box, "dimension", std::int64_t{3});
  const std::string boundary = box_.periodic ? "periodic" : "none";
  o.fixed_attribute(box, "boundary", std::vector<std::string>(3, boundary));
  std::vector<double> origin(box_.origin.begin(), box_.origin.end());
  // Not H5MD: where the box starts (H5MD boxes have no origin).
  o.attribute(box, "origin", origin);

  const HostParticles share = to_even_share(mpi_, p, n_);
  const Share mine = even_share(n_, mpi_.rank(), mpi_.size());
  o.rows(std::string(kAll) + "/id", share.id.empty() ? share.index : share.id, mine.first, n_);
  o.attribute(std::string(kAll) + "/id", "long_name", std::string("particle id"));
  write_vertices();
  has_mass_ = Record::of(share).agreed(mpi_.comm()).mass;
  if (has_mass_) {
    o.rows(std::string(kAll) + "/mass", share.mass, mine.first, n_, 0);
    o.attribute(std::string(kAll) + "/mass", "units", units_.mass);
    o.attribute(std::string(kAll) + "/mass", "long_name", std::string("particle mass"));
  }
}

// The sidecar's Polyvertex cells: vertex k is particle k (without them the
// XDMF 3 reader gives the points no cells, and ParaView draws nothing).
void H5mdOutput::write_vertices() {
  const Share mine = even_share(n_, mpi_.rank(), mpi_.size());
  std::vector<std::int64_t> vertices(static_cast<std::size_t>(mine.count));
  for (std::int64_t k = 0; k < mine.count; ++k) vertices[static_cast<std::size_t>(k)] = mine.first + k;
  out_->rows(kVertices, vertices, mine.first, n_);
}

std::vector<xdmf::Series> H5mdOutput::shown_series() {
  return {{"position", std::string(kAll) + "/position/value"}, {"velocity", std::string(kAll) + "/velocity/value"}};
}

bool H5mdOutput::create_series() {
  const std::vector<std::int64_t> frame{n_, 3};
  const std::string position = std::string(kAll) + "/position";
  create_element(position, frame, units_.length, "position");
  create_element(std::string(kAll) + "/velocity", frame, units_.velocity, "velocity");
  // The box is H5MD's time-dependent element, as readers that want a box
  // per frame take it (MDAnalysis reads edges/value): one row per frame,
  // at the frames' steps and times (hard links to position's, as H5MD
  // asks). An output written before held a fixed dataset `edges` instead.
  H5Output& o = *out_;
  const bool fixed_box = o.exists(kEdges) && !o.exists(std::string(kEdges) + "/value");
  if (fixed_box) o.remove(kEdges);
  o.group(kEdges);
  o.hard_link(position + "/step", std::string(kEdges) + "/step");
  o.hard_link(position + "/time", std::string(kEdges) + "/time");
  if (!o.exists(std::string(kEdges) + "/value")) {
    o.series(std::string(kEdges) + "/value", std::vector<std::int64_t>{3}, units_.length);
    o.attribute(std::string(kEdges) + "/value", "long_name", std::string("box edge lengths"));
  }
  out_->group("/observables");
  for (const Observable& ob : observables_) {
    std::vector<std::int64_t> shape;
    if (ob.width > 0) shape.push_back(ob.width);
    create_element("/observables/" + ob.name, shape, ob.units, ob.long_name);
  }
  return fixed_box;
}

void H5mdOutput::write_box(std::int64_t frame) {
  const std::int64_t start = 0, count = 3;
  std::span<const double> local;
  if (mpi_.root()) local = box_.edges;
  out_->series_write(std::string(kEdges) + "/value", frame, local, std::span<const std::int64_t>(&start, 1),
                     std::span<const std::int64_t>(&count, 1));
}

void H5mdOutput::resume(std::int64_t frames, std::int64_t rows, const HostParticles& p) {
  if (out_ == nullptr) return;
  H5Output& o = *out_;
  // A file that lost its structure (written anew after the output was
  // deleted, or never flushed before a hard kill) gets it back.
  if (!o.exists(std::string(kAll) + "/id")) write_static(p);
  has_mass_ = o.exists(std::string(kAll) + "/mass");
  const bool fixed_box = create_series();
  const std::int64_t before = o.series_length(std::string(kAll) + "/position/value");
  // Exactly the checkpoint's frames and rows: what came after it is dropped
  // (it is computed again); what it counts but the file lacks is grown with
  // the fill values (NaN time and value, step -1), so every later frame
  // keeps its index.
  for (const char* e : {"position", "velocity"})
    for (const char* part : {"step", "time", "value"})
      o.series_resize(std::string(kAll) + "/" + e + "/" + part, frames);
  o.series_resize(std::string(kEdges) + "/value", frames);  // its step and time are position's
  // The fixed box of an older file, once per frame it kept (the box never changes).
  if (fixed_box)
    for (std::int64_t f = 0; f < frames; ++f) write_box(f);
  for (const Observable& ob : observables_)
    for (const char* part : {"step", "time", "value"}) o.series_resize("/observables/" + ob.name + "/" + part, rows);
  if (!o.exists(kVertices)) write_vertices();
  xdmf::restore_views(o, frames, before, shown_series());
  times_ = o.read(std::string(kAll) + "/position/time");
  frames_ = frames;
  rows_ = rows;
  // A frame's time is written after its values: a NaN time (the fill
  // value) marks a frame that never fully reached the disk. The XDMF
  // sidecar leaves out a frame either element lacks.
  const std::vector<double> velocity_times = o.read(std::string(kAll) + "/velocity/time");
  for (std::size_t k = 0; k < times_.size(); ++k)
    if (std::isnan(velocity_times[k])) times_[k] = velocity_times[k];
  std::vector<double> row_times(static_cast<std::size_t>(rows), 0.0);
  for (const Observable& ob : observables_) {
    const std::vector<double> t = o.read("/observables/" + ob.name + "/time");
    for (std::size_t k = 0; k < row_times.size(); ++k)
      if (std::isnan(t[k])) row_times[k] = t[k];
  }
  missing_frames_ = nan_indices(times_);
  missing_rows_ = nan_indices(row_times);
  record_missing_output(o, missing_frames_, missing_rows_);
  mpi_.collective([&] { write_xdmf(); });
}

void H5mdOutput::frame(std::int64_t step, double time, const HostParticles& p) {
  if (out_ == nullptr) return;
  watchdog::PhaseScope phase(watchdog::Phase::output);
  // A slow file system, for the fault tests: before any of the frame's collectives.
  if (test_delay_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(test_delay_));
  const HostParticles share = to_even_share(mpi_, p, n_);
  const Share mine = even_share(n_, mpi_.rank(), mpi_.size());
  const std::int64_t start[2] = {mine.first, 0}, count[2] = {mine.count, 3};
  write_box(frames_);
  for (const char* e : {"position", "velocity"}) {
    const std::string path = std::string(kAll) + "/" + e;
    out_->series_write(path + "/value", frames_, e[0] == 'p' ? share.position : share.velocity, start, count);
    out_->series_write(path + "/step", frames_, step);
    out_->series_write(path + "/time", frames_, time);
  }
  xdmf::write_views(*out_, frames_, shown_series());
  // On disk, metadata included, before the next step: a hard kill keeps
  // every frame written so far (and the observable rows before it).
  out_->flush();
  ++frames_;
  times_.push_back(time);
  mpi_.collective([&] { append_xdmf(); });
}

void H5mdOutput::observables(std::int64_t step, double time, const std::vector<std::vector<double>>& values) {
  if (out_ == nullptr) return;
  watchdog::PhaseScope phase(watchdog::Phase::output);
  if (values.size() != observables_.size()) throw std::logic_error("H5mdOutput::observables: one entry per name");
  for (std::size_t k = 0; k < observables_.size(); ++k) {
    const Observable& ob = observables_[k];
    const std::string path = "/observables/" + ob.name;
    if (ob.width > 0) {
      const std::int64_t start = 0, count = ob.width;
      std::span<const double> local;
      if (mpi_.root()) local = values[k];
      out_->series_write(path + "/value", rows_, local, std::span<const std::int64_t>(&start, 1),
                         std::span<const std::int64_t>(&count, 1));
    } else {
      out_->series_write(path + "/value", rows_, values[k].at(0));
    }
    out_->series_write(path + "/step", rows_, step);
    out_->series_write(path + "/time", rows_, time);
  }
  ++rows_;
}

// XDMF 3: a temporal collection with one Polyvertex grid per frame, a
// vertex cell per particle (/xdmf/vertices); the geometry and the velocity
// (a node vector) are frame f's views of position/value and velocity/value
// (xdmf::view_path), id and mass node scalars. Rank 0 writes it
// (xdmf::Sidecar: whole at creation and restart, then one entry per frame).
std::string H5mdOutput::xdmf_entry(std::size_t f) const {
  const std::string h5 = std::filesystem::path(out_->path()).filename().string();
  const std::string n = std::to_string(n_);
  const auto item = [&](const std::string& dims, const char* type, const std::string& dataset) {
    return "          <DataItem Dimensions=\"" + dims + "\" NumberType=\"" + type +
           "\" Precision=\"8\" Format=\"HDF\">" + h5 + ":" + dataset + "</DataItem>\n";
  };
  const auto frame = [&](const std::string& name) {
    return item(n + " 3", "Float", xdmf::view_path(static_cast<std::int64_t>(f), name));
  };
  std::ostringstream x;
  x << "      <Grid Name=\"frame " << f << "\" GridType=\"Uniform\">\n"
    << "        <Time Value=\"" << xdmf::number(times_[f]) << "\"/>\n"
    << "        <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << n << "\" NodesPerElement=\"1\">\n"
    << item(n, "Int", kVertices) << "        </Topology>\n"
    << "        <Geometry GeometryType=\"XYZ\">\n"
    << frame("position") << "        </Geometry>\n"
    << "        <Attribute Name=\"velocity\" AttributeType=\"Vector\" Center=\"Node\">\n"
    << frame("velocity") << "        </Attribute>\n"
    << "        <Attribute Name=\"id\" AttributeType=\"Scalar\" Center=\"Node\">\n"
    << item(n, "Int", std::string(kAll) + "/id") << "        </Attribute>\n";
  if (has_mass_)
    x << "        <Attribute Name=\"mass\" AttributeType=\"Scalar\" Center=\"Node\">\n"
      << item(n, "Float", std::string(kAll) + "/mass") << "        </Attribute>\n";
  x << "      </Grid>\n";
  return x.str();
}

void H5mdOutput::write_xdmf() {
  if (!mpi_.root()) return;
  sidecar_ = xdmf::Sidecar(xdmf::path_for(out_->path()), xdmf::head("particles"), xdmf::kTail);
  std::vector<std::string> entries;
  // A lost frame (NaN time) has nothing to show.
  for (std::size_t f = 0; f < times_.size(); ++f)
    if (!std::isnan(times_[f])) entries.push_back(xdmf_entry(f));
  sidecar_.rewrite(entries);
}

void H5mdOutput::append_xdmf() {
  if (!mpi_.root()) return;
  if (!sidecar_.append(xdmf_entry(times_.size() - 1))) write_xdmf();
}

}  // namespace strata::particles
