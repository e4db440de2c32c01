#include "engine/io/h5_output.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata {
namespace {

void check(herr_t status, const std::string& what) {
  if (status < 0) throw Error(ExitCode::resources, "HDF5: " + what + " failed (disk full or file system error?)");
}

hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw Error(ExitCode::resources, "HDF5: " + what + " failed (disk full or file system error?)");
  return id;
}

// Closes an HDF5 id at scope exit.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Handle() {
    if (id >= 0) close(id);
  }
};

hid_t vl_string_type() {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

hid_t fixed_string_type(std::size_t size) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, size == 0 ? 1 : size);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

}  // namespace

std::string hdf5_version() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  return std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel);
}

std::size_t H5Table::rows() const {
  if (columns.empty()) return 0;
  return std::visit([](const auto& v) { return v.size(); }, columns.front().values);
}

H5Output::H5Output(const std::string& path, const std::string& key, const MpiContext& mpi, Mode mode)
    : path_(path), mpi_(mpi) {
  // Rank 0 makes the directory and reports why it cannot, so the message is
  // about the path rather than an HDF5 error stack.
  std::string problem;
  if (mpi.root()) {
    std::error_code ec;
    const std::filesystem::path p(path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) problem = "cannot create directory '" + p.parent_path().string() + "' (" + ec.message() + ")";
    if (problem.empty() && std::filesystem::is_directory(p, ec)) problem = "is a directory";
  }
  mpi.check_collective(problem.empty() ? "" : key + " = \"" + path + "\": " + problem, 2);

  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions with our own words
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, mpi.comm(), MPI_INFO_NULL);
  H5Pset_all_coll_metadata_ops(fapl, true);
  H5Pset_coll_metadata_write(fapl, true);
  errno = 0;
  if (mode == Mode::append) {
    file_ = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
  } else {
    file_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  }
  H5Pclose(fapl);
  if (file_ < 0) {
    const int err = errno;
    throw Error(ExitCode::bad_input,
                key + " = \"" + path + "\": cannot " + (mode == Mode::append ? "open" : "create") +
                    " the output file (" + (err != 0 ? std::strerror(err) : "not a readable HDF5 file") + ")",
                true);
  }
  xfer_ = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(xfer_, H5FD_MPIO_COLLECTIVE);
  lcpl_ = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl_, 1);
}

H5Output::~H5Output() {
  if (lcpl_ >= 0) H5Pclose(lcpl_);
  if (xfer_ >= 0) H5Pclose(xfer_);
  if (file_ >= 0) H5Fclose(file_);
}

void H5Output::group(const std::string& path) {
  if (H5Lexists(file_, path.c_str(), H5P_DEFAULT) > 0) return;
  Handle g{check_id(H5Gcreate2(file_, path.c_str(), lcpl_, H5P_DEFAULT, H5P_DEFAULT), "create group " + path), H5Gclose};
}

namespace {

void write_attribute(hid_t file, const std::string& object, const std::string& name, hid_t type, hid_t space,
                     const void* data) {
  Handle obj{check_id(H5Oopen(file, object.c_str(), H5P_DEFAULT), "open " + object), H5Oclose};
  if (H5Aexists(obj.id, name.c_str()) > 0) check(H5Adelete(obj.id, name.c_str()), "replace attribute " + name);
  Handle attr{check_id(H5Acreate2(obj.id, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                       "create attribute " + object + ":" + name),
              H5Aclose};
  check(H5Awrite(attr.id, type, data), "write attribute " + object + ":" + name);
}

}  // namespace

void H5Output::attribute(const std::string& object, const std::string& name, const std::string& value) {
  Handle type{vl_string_type(), H5Tclose};
  Handle space{H5Screate(H5S_SCALAR), H5Sclose};
  const char* p = value.c_str();
  write_attribute(file_, object, name, type.id, space.id, &p);
}

void H5Output::attribute(const std::string& object, const std::string& name, const std::vector<std::string>& value) {
  Handle type{vl_string_type(), H5Tclose};
  const hsize_t n = value.size();
  Handle space{H5Screate_simple(1, &n, nullptr), H5Sclose};
  std::vector<const char*> ptrs;
  for (const auto& s : value) ptrs.push_back(s.c_str());
  write_attribute(file_, object, name, type.id, space.id, ptrs.data());
}

void H5Output::attribute(const std::string& object, const std::string& name, std::int64_t value) {
  Handle space{H5Screate(H5S_SCALAR), H5Sclose};
  write_attribute(file_, object, name, H5T_NATIVE_INT64, space.id, &value);
}

void H5Output::attribute(const std::string& object, const std::string& name, double value) {
  Handle space{H5Screate(H5S_SCALAR), H5Sclose};
  write_attribute(file_, object, name, H5T_NATIVE_DOUBLE, space.id, &value);
}

void H5Output::attribute(const std::string& object, const std::string& name, const std::vector<double>& value) {
  const hsize_t n = value.size();
  Handle space{H5Screate_simple(1, &n, nullptr), H5Sclose};
  write_attribute(file_, object, name, H5T_NATIVE_DOUBLE, space.id, value.data());
}

void H5Output::attribute(const std::string& object, const std::string& name, const std::vector<std::int64_t>& value) {
  const hsize_t n = value.size();
  Handle space{H5Screate_simple(1, &n, nullptr), H5Sclose};
  write_attribute(file_, object, name, H5T_NATIVE_INT64, space.id, value.data());
}

bool H5Output::exists(const std::string& path) const {
  // H5Lexists needs every intermediate link to exist: walk the path.
  std::size_t pos = 0;
  while (true) {
    pos = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, pos);
    if (!prefix.empty() && prefix != "/" && H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (pos == std::string::npos) return true;
  }
}

void H5Output::unlink_existing(const std::string& path) {
  // A restarted run rewrites its results: replace, never fail on "exists".
  if (exists(path)) check(H5Ldelete(file_, path.c_str(), H5P_DEFAULT), "replace " + path);
}

void H5Output::rows(const std::string& path, std::span<const double> local, std::int64_t row_offset,
                    std::int64_t total_rows, int width) {
  const std::int64_t per_row = width > 0 ? width : 1;
  const std::int64_t n_rows = static_cast<std::int64_t>(local.size()) / per_row;
  if (width > 0) {
    const std::int64_t global[2] = {total_rows, width}, start[2] = {row_offset, 0}, count[2] = {n_rows, width};
    slab(path, local, global, start, count);
  } else {
    slab(path, local, std::span<const std::int64_t>(&total_rows, 1), std::span<const std::int64_t>(&row_offset, 1),
         std::span<const std::int64_t>(&n_rows, 1));
  }
}

void H5Output::rows(const std::string& path, std::span<const std::int64_t> local, std::int64_t offset,
                    std::int64_t total) {
  unlink_existing(path);
  const hsize_t dims = static_cast<hsize_t>(total), first = static_cast<hsize_t>(offset), n = local.size();
  Handle space{H5Screate_simple(1, &dims, nullptr), H5Sclose};
  Handle ds{check_id(H5Dcreate2(file_, path.c_str(), H5T_NATIVE_INT64, space.id, lcpl_, H5P_DEFAULT, H5P_DEFAULT),
                     "create dataset " + path),
            H5Dclose};
  write_box(ds.id, path, 1, &first, &n, n, local.data(), H5T_NATIVE_INT64);
}

void H5Output::slab(const std::string& path, std::span<const double> local, std::span<const std::int64_t> global,
                    std::span<const std::int64_t> start, std::span<const std::int64_t> count) {
  unlink_existing(path);
  const int rank = static_cast<int>(global.size());
  hsize_t dims[3], first[3], n[3];
  hsize_t points = 1;
  for (int d = 0; d < rank; ++d) {
    dims[d] = static_cast<hsize_t>(global[static_cast<std::size_t>(d)]);
    first[d] = static_cast<hsize_t>(start[static_cast<std::size_t>(d)]);
    n[d] = static_cast<hsize_t>(count[static_cast<std::size_t>(d)]);
    points *= n[d];
  }
  if (points != local.size()) throw std::logic_error("H5Output::slab: " + path + ": local size does not match the box");
  Handle space{H5Screate_simple(rank, dims, nullptr), H5Sclose};
  Handle ds{check_id(H5Dcreate2(file_, path.c_str(), H5T_NATIVE_DOUBLE, space.id, lcpl_, H5P_DEFAULT, H5P_DEFAULT),
                     "create dataset " + path),
            H5Dclose};
  write_box(ds.id, path, rank, first, n, points, local.data());
}

void H5Output::series(const std::string& path, std::span<const std::int64_t> frame, const std::string& units) {
  if (exists(path)) return;
  const int rank = static_cast<int>(frame.size()) + 1;
  hsize_t dims[4] = {0, 0, 0, 0}, max[4] = {H5S_UNLIMITED, 0, 0, 0}, chunk[4] = {1, 1, 1, 1};
  std::size_t bytes = sizeof(double);
  for (int d = 1; d < rank; ++d) {
    dims[d] = max[d] = chunk[d] = static_cast<hsize_t>(frame[static_cast<std::size_t>(d - 1)]);
    bytes *= chunk[d];
  }
  // A chunk is one frame, halved along its slowest axes until it is at most
  // 4 MiB (HDF5's chunk cache is 1 MiB by default and chunks must stay below
  // 4 GiB); 1-D series grow in chunks of 1024 entries.
  if (rank == 1) chunk[0] = 1024;
  for (int d = 1; d < rank && bytes > (4u << 20); ++d) {
    while (chunk[d] > 1 && bytes > (4u << 20)) {
      bytes = bytes / chunk[d] * ((chunk[d] + 1) / 2);
      chunk[d] = (chunk[d] + 1) / 2;
    }
  }
  Handle space{H5Screate_simple(rank, dims, max), H5Sclose};
  Handle dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
  check(H5Pset_chunk(dcpl.id, rank, chunk), "chunk " + path);
  const double fill = std::numeric_limits<double>::quiet_NaN();
  H5Pset_fill_value(dcpl.id, H5T_NATIVE_DOUBLE, &fill);
  H5Pset_alloc_time(dcpl.id, H5D_ALLOC_TIME_INCR);   // parallel HDF5 needs early or incremental
  Handle ds{check_id(H5Dcreate2(file_, path.c_str(), H5T_NATIVE_DOUBLE, space.id, lcpl_, dcpl.id, H5P_DEFAULT),
                     "create dataset " + path),
            H5Dclose};
  if (!units.empty()) attribute(path, "units", units);
}

void H5Output::integer_series(const std::string& path) {
  if (exists(path)) return;
  const hsize_t dims = 0, max = H5S_UNLIMITED, chunk = 1024;
  Handle space{H5Screate_simple(1, &dims, &max), H5Sclose};
  Handle dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
  check(H5Pset_chunk(dcpl.id, 1, &chunk), "chunk " + path);
  H5Pset_alloc_time(dcpl.id, H5D_ALLOC_TIME_INCR);
  Handle ds{check_id(H5Dcreate2(file_, path.c_str(), H5T_NATIVE_INT64, space.id, lcpl_, dcpl.id, H5P_DEFAULT),
                     "create dataset " + path),
            H5Dclose};
}

std::int64_t H5Output::series_length(const std::string& path) const {
  Handle ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  Handle space{H5Dget_space(ds.id), H5Sclose};
  hsize_t dims[4] = {0, 0, 0, 0};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  return static_cast<std::int64_t>(dims[0]);
}

void H5Output::series_truncate(const std::string& path, std::int64_t length) {
  Handle ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  Handle space{H5Dget_space(ds.id), H5Sclose};
  hsize_t dims[4] = {0, 0, 0, 0};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  if (static_cast<std::int64_t>(dims[0]) <= length) return;
  dims[0] = static_cast<hsize_t>(length);
  check(H5Dset_extent(ds.id, dims), "truncate " + path);
}

void H5Output::series_write(const std::string& path, std::int64_t index, std::span<const double> local,
                            std::span<const std::int64_t> start, std::span<const std::int64_t> count) {
  Handle ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  Handle space{H5Dget_space(ds.id), H5Sclose};
  const int rank = H5Sget_simple_extent_ndims(space.id);
  if (rank != static_cast<int>(count.size()) + 1) throw std::logic_error("H5Output::series_write: " + path + ": rank");
  hsize_t dims[4] = {0, 0, 0, 0};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  if (dims[0] < static_cast<hsize_t>(index) + 1) {
    dims[0] = static_cast<hsize_t>(index) + 1;
    check(H5Dset_extent(ds.id, dims), "extend " + path);
  }
  hsize_t first[4] = {static_cast<hsize_t>(index), 0, 0, 0}, n[4] = {1, 1, 1, 1};
  hsize_t points = 1;
  for (int d = 1; d < rank; ++d) {
    first[d] = static_cast<hsize_t>(start[static_cast<std::size_t>(d - 1)]);
    n[d] = static_cast<hsize_t>(count[static_cast<std::size_t>(d - 1)]);
    points *= n[d];
  }
  if (points != local.size() && !(local.empty())) throw std::logic_error("H5Output::series_write: " + path + ": size");
  if (local.empty()) points = 0;
  write_box(ds.id, path, rank, first, n, points, local.data());
}

std::vector<double> H5Output::read(const std::string& path) const {
  Handle ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  Handle space{H5Dget_space(ds.id), H5Sclose};
  const hssize_t n = H5Sget_simple_extent_npoints(space.id);
  std::vector<double> out(static_cast<std::size_t>(n > 0 ? n : 0));
  check(H5Dread(ds.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, xfer_, out.data()), "read dataset " + path);
  return out;
}

void H5Output::series_write(const std::string& path, std::int64_t index, double value) {
  std::span<const double> local;
  if (mpi_.root()) local = std::span<const double>(&value, 1);
  series_write(path, index, local, {}, {});
}

void H5Output::series_write(const std::string& path, std::int64_t index, std::int64_t value) {
  Handle ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  Handle space{H5Dget_space(ds.id), H5Sclose};
  hsize_t dims = 0;
  H5Sget_simple_extent_dims(space.id, &dims, nullptr);
  if (dims < static_cast<hsize_t>(index) + 1) {
    dims = static_cast<hsize_t>(index) + 1;
    check(H5Dset_extent(ds.id, &dims), "extend " + path);
  }
  const hsize_t first = static_cast<hsize_t>(index), n = 1;
  write_box(ds.id, path, 1, &first, &n, mpi_.root() ? 1 : 0, &value, H5T_NATIVE_INT64);
}

void H5Output::write_box(hid_t dataset, const std::string& path, int rank, const hsize_t* first, const hsize_t* count,
                         hsize_t points, const void* data, hid_t type) {
  Handle file_sel{H5Dget_space(dataset), H5Sclose};
  // An empty dataset (a checkpoint's records when no rank has any) has no
  // storage to write to; every rank sees the same extent, so every rank
  // skips the collective write alike.
  if (H5Sget_simple_extent_npoints(file_sel.id) == 0) return;
  Handle mem{H5Screate_simple(rank, count, nullptr), H5Sclose};
  if (points == 0) {
    H5Sselect_none(file_sel.id);
    H5Sselect_none(mem.id);
  } else {
    check(H5Sselect_hyperslab(file_sel.id, H5S_SELECT_SET, first, nullptr, count, nullptr), "select " + path);
  }
  check(H5Dwrite(dataset, type, mem.id, file_sel.id, xfer_, data), "write dataset " + path);
}

hid_t H5Output::write_scalar(const std::string& path, hid_t type, const void* value) {
  unlink_existing(path);
  Handle space{H5Screate(H5S_SCALAR), H5Sclose};
  hid_t ds = check_id(H5Dcreate2(file_, path.c_str(), type, space.id, lcpl_, H5P_DEFAULT, H5P_DEFAULT),
                      "create dataset " + path);
  // Rank 0 writes the value; the others take part with an empty selection.
  Handle sel{H5Screate(H5S_SCALAR), H5Sclose};
  if (!mpi_.root()) H5Sselect_none(sel.id);
  check(H5Dwrite(ds, type, sel.id, sel.id, xfer_, value), "write dataset " + path);
  return ds;
}

void H5Output::text(const std::string& path, const std::string& value) {
  // Fixed-length: parallel HDF5 cannot write variable-length data collectively.
  Handle type{fixed_string_type(value.size() + 1), H5Tclose};
  Handle ds{write_scalar(path, type.id, value.c_str()), H5Dclose};
}

void H5Output::scalar(const std::string& path, double value, const std::string& units) {
  Handle ds{write_scalar(path, H5T_NATIVE_DOUBLE, &value), H5Dclose};
  if (!units.empty()) attribute(path, "units", units);
}

void H5Output::scalar(const std::string& path, std::int64_t value, const std::string& units) {
  Handle ds{write_scalar(path, H5T_NATIVE_INT64, &value), H5Dclose};
  if (!units.empty()) attribute(path, "units", units);
}

void H5Output::table(const std::string& path, const H5Table& table) {
  // Lay the rows out as packed records matching one compound type.
  std::vector<std::size_t> offsets, sizes;
  std::vector<hid_t> types;
  std::size_t record = 0;
  for (const auto& c : table.columns) {
    hid_t t;
    if (std::holds_alternative<std::vector<double>>(c.values)) {
      t = H5Tcopy(H5T_NATIVE_DOUBLE);
    } else if (std::holds_alternative<std::vector<std::int64_t>>(c.values)) {
      t = H5Tcopy(H5T_NATIVE_INT64);
    } else {
      std::size_t longest = 1;
      for (const auto& s : std::get<std::vector<std::string>>(c.values)) longest = std::max(longest, s.size() + 1);
      t = fixed_string_type(longest);
    }
    offsets.push_back(record);
    sizes.push_back(H5Tget_size(t));
    types.push_back(t);
    record += sizes.back();
  }
  const std::size_t rows = table.rows();
  std::vector<unsigned char> bytes(rows * record, 0);
  Handle compound{H5Tcreate(H5T_COMPOUND, record), H5Tclose};
  for (std::size_t k = 0; k < table.columns.size(); ++k) {
    const auto& c = table.columns[k];
    H5Tinsert(compound.id, c.name.c_str(), offsets[k], types[k]);
    for (std::size_t r = 0; r < rows; ++r) {
      unsigned char* dst = bytes.data() + r * record + offsets[k];
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::vector<std::string>>) {
              std::memcpy(dst, v[r].data(), std::min(v[r].size(), sizes[k] - 1));
            } else {
              std::memcpy(dst, &v[r], sizeof(v[r]));
            }
          },
          c.values);
    }
  }
  for (hid_t t : types) H5Tclose(t);

  const hsize_t n = rows;
  unlink_existing(path);
  Handle space{H5Screate_simple(1, &n, nullptr), H5Sclose};
  Handle ds{check_id(H5Dcreate2(file_, path.c_str(), compound.id, space.id, lcpl_, H5P_DEFAULT, H5P_DEFAULT),
                     "create dataset " + path),
            H5Dclose};
  Handle sel{H5Screate_simple(1, &n, nullptr), H5Sclose};
  if (!mpi_.root()) H5Sselect_none(sel.id);
  check(H5Dwrite(ds.id, compound.id, sel.id, sel.id, xfer_, bytes.data()), "write dataset " + path);
  for (const auto& c : table.columns) {
    if (!c.units.empty()) attribute(path, c.name + "_units", c.units);
  }
}

void H5Output::set_status(const std::string& status) {
  attribute("/", "status", status);
  flush();
}

void H5Output::flush() { check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush " + path_); }

}  // namespace strata
