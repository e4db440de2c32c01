#include "engine/particles/h5md_input.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <numeric>
#include <vector>

#include "engine/io/h5_output.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/format.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata::particles {

namespace {

class File {
 public:
  File(const std::string& path, const std::string& key) : path_(path), key_(key), file_(-1, H5Fclose) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    if (H5Fis_hdf5(path.c_str()) <= 0) fail("", "not an HDF5 file (or no such file)");
    file_.id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file_.id < 0) fail("", "HDF5 cannot open it");
  }

  [[noreturn]] void fail(const std::string& dataset, const std::string& why) const {
    throw InputError(key_ + " = \"" + path_ + "\"" + (dataset.empty() ? "" : ": " + dataset) + ": " + why);
  }

  const std::string& path() const { return path_; }

  bool has(const std::string& path) const {
    std::size_t pos = 0;
    while ((pos = path.find('/', pos + 1)) != std::string::npos)
      if (H5Lexists(file_.id, path.substr(0, pos).c_str(), H5P_DEFAULT) <= 0) return false;
    return H5Lexists(file_.id, path.c_str(), H5P_DEFAULT) > 0;
  }
  bool is_dataset(const std::string& path) const {
    if (!has(path)) return false;
    H5Id obj{H5Oopen(file_.id, path.c_str(), H5P_DEFAULT), H5Oclose};
    return obj.id >= 0 && H5Iget_type(obj.id) == H5I_DATASET;
  }

  // An H5MD element: the dataset itself (time-independent) or its `value`
  // (time series, then `time_series` is true).
  std::string element(const std::string& path, bool& time_series) const {
    if (is_dataset(path)) {
      time_series = false;
      return path;
    }
    if (is_dataset(path + "/value")) {
      time_series = true;
      return path + "/value";
    }
    return "";
  }

  std::vector<hsize_t> shape(const std::string& dataset) const {
    H5Id ds{H5Dopen2(file_.id, dataset.c_str(), H5P_DEFAULT), H5Dclose};
    if (ds.id < 0) fail(dataset, "cannot be opened");
    H5Id space{H5Dget_space(ds.id), H5Sclose};
    const int rank = H5Sget_simple_extent_ndims(space.id);
    std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
    if (rank > 0) H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
    return dims;
  }

  // The box [start, start + count) of a dataset, converted to T.
  template <class T>
  std::vector<T> read(const std::string& dataset, const std::vector<hsize_t>& start,
                      const std::vector<hsize_t>& count) const {
    H5Id ds{H5Dopen2(file_.id, dataset.c_str(), H5P_DEFAULT), H5Dclose};
    H5Id type{H5Dget_type(ds.id), H5Tclose};
    const H5T_class_t cls = H5Tget_class(type.id);
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) fail(dataset, "is not numeric");
    hsize_t points = 1;
    for (hsize_t c : count) points *= c;
    std::vector<T> out(static_cast<std::size_t>(points));
    if (points == 0) return out;
    H5Id file_sel{H5Dget_space(ds.id), H5Sclose};
    H5Sselect_hyperslab(file_sel.id, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    H5Id mem{H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose};
    const hid_t mem_type = std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
    if (H5Dread(ds.id, mem_type, mem.id, file_sel.id, H5P_DEFAULT, out.data()) < 0) fail(dataset, "unreadable");
    return out;
  }

 // A string-array attribute (variable or fixed length); empty when absent.
  std::vector<std::string> strings(const std::string& object, const char* name) const {
    std::vector<std::string> out;
    if (!has(object)) return out;
    H5Id obj{H5Oopen(file_.id, object.c_str(), H5P_DEFAULT), H5Oclose};
    if (obj.id < 0 || H5Aexists(obj.id, name) <= 0) return out;
    H5Id attr{H5Aopen(obj.id, name, H5P_DEFAULT), H5Aclose};
    H5Id type{H5Aget_type(attr.id), H5Tclose};
    H5Id space{H5Aget_space(attr.id), H5Sclose};
    const hssize_t n = H5Sget_simple_extent_npoints(space.id);
    if (H5Tget_class(type.id) != H5T_STRING || n <= 0) return out;
    if (H5Tis_variable_str(type.id) > 0) {
      std::vector<char*> p(static_cast<std::size_t>(n), nullptr);
      H5Id mem{H5Tcopy(H5T_C_S1), H5Tclose};
      H5Tset_size(mem.id, H5T_VARIABLE);
      H5Tset_cset(mem.id, H5Tget_cset(type.id));
      if (H5Aread(attr.id, mem.id, p.data()) < 0) fail(object, std::string("attribute ") + name + " unreadable");
      for (char* c : p) out.emplace_back(c != nullptr ? c : "");
      H5Dvlen_reclaim(mem.id, space.id, H5P_DEFAULT, p.data());
    } else {
      const std::size_t size = H5Tget_size(type.id);
      std::vector<char> buf(size * static_cast<std::size_t>(n) + 1, '\0');
      if (H5Aread(attr.id, type.id, buf.data()) < 0) fail(object, std::string("attribute ") + name + " unreadable");
      for (hssize_t k = 0; k < n; ++k) {
        const char* c = buf.data() + static_cast<std::size_t>(k) * size;
        out.emplace_back(c, strnlen(c, size));
      }
    }
    return out;
  }

 private:
  std::string path_, key_;
  H5Id file_;
};

// Rows [first, first + count) of a per-particle element of `width` values
// ([N] or [N, width]; time series [frames, N(, width)], at `frame`).
void check_rows(const File& f, const std::string& dataset, bool time_series, std::int64_t n, int width) {
  std::vector<hsize_t> dims = f.shape(dataset);
  const std::size_t lead = time_series ? 1 : 0;
  const std::size_t want = lead + 1 + (width > 1 ? 1 : 0);
  if (dims.size() != want || (time_series && dims[0] < 1) || dims[lead] != static_cast<hsize_t>(n) ||
      (width > 1 && dims[lead + 1] != static_cast<hsize_t>(width))) {
    std::string got;
    for (hsize_t d : dims) got += (got.empty() ? "" : ", ") + std::to_string(d);
    f.fail(dataset, "has shape [" + got + "], expected " + (time_series ? "[frames >= 1, " : "[") +
                        std::to_string(n) + (width > 1 ? ", " + std::to_string(width) : "") + "]");
  }
}

template <class T>
std::vector<T> read_rows(const File& f, const std::string& dataset, bool time_series, std::int64_t n, int width,
                         std::int64_t first, std::int64_t count, std::int64_t frame = 0) {
  check_rows(f, dataset, time_series, n, width);
  std::vector<hsize_t> start, size;
  if (time_series) {
    start.push_back(static_cast<hsize_t>(frame));
    size.push_back(1);
  }
  start.push_back(static_cast<hsize_t>(first));
  size.push_back(static_cast<hsize_t>(count));
  if (width > 1) {
    start.push_back(0);
    size.push_back(static_cast<hsize_t>(width));
  }
  return f.read<T>(dataset, start, size);
}

const char* const kPosition = "/particles/all/position/value";
const char* const kVelocity = "/particles/all/velocity/value";

// Where a file keeps what read_h5md needs, every shape checked.
struct Layout {
  std::int64_t n = 0;
  std::int64_t frames = 0, frame = 0;   // position frames, and the one to read
  std::string id, mass, edges;   // empty: absent
  bool id_series = false, mass_series = false, edges_series = false;
};

// The frames of a time series (its leading extent).
std::int64_t frames_of(const File& f, const std::string& dataset) {
  return static_cast<std::int64_t>(f.shape(dataset).front());
}

// The frame of the same index in an element with as many frames as the
// positions, else its first (a time-independent quantity stored as a
// series of another cadence).
std::int64_t frame_in(const File& f, const std::string& dataset, bool time_series, const Layout& l) {
  return time_series && frames_of(f, dataset) == l.frames ? l.frame : 0;
}

Layout check_layout(const File& f, const FrameRequest& request) {
  Layout l;
  if (!f.is_dataset(kPosition)) f.fail(kPosition, "missing (an H5MD particle file needs positions)");
  if (!f.is_dataset(kVelocity)) f.fail(kVelocity, "missing (an H5MD particle file needs velocities)");
  const std::vector<hsize_t> dims = f.shape(kPosition);
  if (dims.size() != 3 || dims[0] < 1 || dims[2] != 3) f.fail(kPosition, "is not [frames >= 1, N, 3]");
  l.n = static_cast<std::int64_t>(dims[1]);
  l.frames = static_cast<std::int64_t>(dims[0]);
  if (l.n < 1) f.fail(kPosition, "holds no particles");
  l.frame = request.index < 0 ? l.frames + request.index : request.index;
  if (l.frame < 0 || l.frame >= l.frames) {
    throw InputError(request.key + " = " + std::to_string(request.index) + ": \"" + f.path() + "\" " + kPosition +
                     " holds " + std::to_string(l.frames) + " frame(s): use 0 to " + std::to_string(l.frames - 1) +
                     ", or -1 (the last) to -" + std::to_string(l.frames));
  }
  check_rows(f, kVelocity, true, l.n, 3);
  if (frames_of(f, kVelocity) <= l.frame)
    f.fail(kVelocity, "has " + std::to_string(frames_of(f, kVelocity)) + " frame(s), fewer than the positions' " +
                          std::to_string(l.frames) + ": frame " + std::to_string(l.frame) + " has no velocities");
  l.id = f.element("/particles/all/id", l.id_series);
  if (!l.id.empty()) check_rows(f, l.id, l.id_series, l.n, 1);
  l.mass = f.element("/particles/all/mass", l.mass_series);
  if (!l.mass.empty()) check_rows(f, l.mass, l.mass_series, l.n, 1);
  l.edges = f.element("/particles/all/box/edges", l.edges_series);
  if (!l.edges.empty()) {
    const std::vector<hsize_t> e = f.shape(l.edges);
    const std::size_t lead = l.edges_series ? 1 : 0;
    const bool vector = e.size() == lead + 1 && e[lead] == 3;
    const bool matrix = e.size() == lead + 2 && e[lead] == 3 && e[lead + 1] == 3;
    if (!(vector || matrix) || (l.edges_series && e[0] < 1)) f.fail(l.edges, "is not a 3-vector or a 3 x 3 matrix");
  }
  return l;
}

H5mdSnapshot read_local(const std::string& path, const std::string& key, const FrameRequest& frame,
                        const MpiContext& mpi) {
  const File f(path, key);
  const Layout l = check_layout(f, frame);
  H5mdSnapshot snap;
  snap.n = l.n;
  snap.frames = l.frames;
  snap.frame = l.frame;
  const Share mine = even_share(snap.n, mpi.rank(), mpi.size());
  // The frame's step and time, where the file has them (one per frame).
  const auto per_frame = [&](const std::string& d) {
    return f.is_dataset(d) && f.shape(d).size() == 1 && frames_of(f, d) == l.frames;
  };
  const std::string step = "/particles/all/position/step", time = "/particles/all/position/time";
  const std::vector<hsize_t> at{static_cast<hsize_t>(l.frame)};
  snap.has_step = per_frame(step);
  if (snap.has_step) snap.step = f.read<std::int64_t>(step, at, {1}).front();
  snap.has_time = per_frame(time);
  if (snap.has_time) snap.time = f.read<double>(time, at, {1}).front();

  HostParticles rows;
  rows.position = read_rows<double>(f, kPosition, true, snap.n, 3, mine.first, mine.count, l.frame);
  rows.velocity = read_rows<double>(f, kVelocity, true, snap.n, 3, mine.first, mine.count, l.frame);
  const auto finite = [](double v) { return std::isfinite(v); };
  const auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  if (!std::ranges::all_of(rows.position, finite)) f.fail(kPosition, "holds a NaN or Inf");
  if (!std::ranges::all_of(rows.velocity, finite)) f.fail(kVelocity, "holds a NaN or Inf");

  // Ids: every rank reads them all to number the particles by ascending id.
  rows.index.resize(static_cast<std::size_t>(mine.count));
  if (!l.id.empty()) {
    const std::vector<std::int64_t> ids =
        read_rows<std::int64_t>(f, l.id, l.id_series, snap.n, 1, 0, snap.n, frame_in(f, l.id, l.id_series, l));
    std::vector<std::int64_t> order(ids.size());
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return ids[static_cast<std::size_t>(a)] < ids[static_cast<std::size_t>(b)];
    });
    std::vector<std::int64_t> index_of_row(ids.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (k > 0 && ids[static_cast<std::size_t>(order[k])] == ids[static_cast<std::size_t>(order[k - 1])])
        f.fail(l.id, "holds id " + std::to_string(ids[static_cast<std::size_t>(order[k])]) + " twice");
      index_of_row[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
    }
    for (std::int64_t r = 0; r < mine.count; ++r) {
      rows.index[static_cast<std::size_t>(r)] = index_of_row[static_cast<std::size_t>(mine.first + r)];
      rows.id.push_back(ids[static_cast<std::size_t>(mine.first + r)]);
    }
  } else {
    std::iota(rows.index.begin(), rows.index.end(), mine.first);
  }

  if (!l.mass.empty()) {
    rows.mass = read_rows<double>(f, l.mass, l.mass_series, snap.n, 1, mine.first, mine.count,
                                  frame_in(f, l.mass, l.mass_series, l));
    if (!std::ranges::all_of(rows.mass, positive)) f.fail(l.mass, "holds a mass that is not positive and finite");
    snap.has_mass = true;
  }

  if (!l.edges.empty()) {
    std::vector<hsize_t> count = f.shape(l.edges), start(count.size(), 0);
    if (l.edges_series) {
      count[0] = 1;
      start[0] = static_cast<hsize_t>(frame_in(f, l.edges, true, l));
    }
    const std::vector<double> v = f.read<double>(l.edges, start, count);
    snap.box.edges = v.size() == 3 ? std::array<double, 3>{v[0], v[1], v[2]}
                                   : std::array<double, 3>{v[0], v[4], v[8]};   // a diagonal box matrix
    if (!std::ranges::all_of(snap.box.edges, positive))
      f.fail(l.edges, "holds an edge that is not positive and finite");
    snap.has_box = true;
    // H5MD: boundary is an attribute of the box group; periodic unless "none".
    const std::vector<std::string> boundary = f.strings("/particles/all/box", "boundary");
    snap.box.periodic = std::none_of(boundary.begin(), boundary.end(), [](const std::string& b) { return b == "none"; });
  }
  snap.particles = std::move(rows);
  return snap;
}

}  // namespace

H5mdSnapshot read_h5md(const std::string& path, const std::string& key, const FrameRequest& frame,
                       const MpiContext& mpi) {
  H5mdSnapshot snap;
  mpi.collective([&] { snap = read_local(path, key, frame, mpi); });
  snap.particles = to_even_share(mpi, snap.particles, snap.n);
  return snap;
}

std::string describe_frame(const H5mdSnapshot& snap, const std::string& path) {
  std::string out = format("frame %lld of %lld (%s", static_cast<long long>(snap.frame),
                           static_cast<long long>(snap.frames),
                           snap.frame + 1 == snap.frames ? "the last" : "counting from 0");
  if (snap.has_step) out += "; step " + std::to_string(snap.step);
  if (snap.has_time) out += format("%stime %.6g", snap.has_step ? ", " : "; ", snap.time);
  return out + ") of " + path;
}

std::int64_t check_h5md(const std::string& path, const std::string& key, const FrameRequest& frame) {
  const File f(path, key);
  return check_layout(f, frame).n;
}

}  // namespace strata::particles
