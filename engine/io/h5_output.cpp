#include "engine/io/h5_output.hpp"

#include <fcntl.h>
#include <hdf5_hl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata {
namespace {

// Words from the HDF5 error stack of the calling thread (innermost last).
herr_t collect_error(unsigned, const H5E_error2_t* e, void* data) {
  auto* text = static_cast<std::string*>(data);
  if (e->desc != nullptr && *e->desc != '\0') *text += std::string(text->empty() ? "" : "; ") + e->desc;
  return 0;
}

// Whether a failure was the file system running out of space: errno from
// the write itself, or (MPI-IO keeps errno to itself) the words the
// MPI-IO layer put on HDF5's error stack.
bool out_of_space(int err, const std::string& stack) {
  if (err == ENOSPC || err == EDQUOT) return true;
  for (const char* words : {"No space left", "NO_SPACE", "no space", "out of space", "quota"})
    if (stack.find(words) != std::string::npos) return true;
  return false;
}

// Space a write must leave free: what a failing run still writes (its
// status) and what HDF5 writes when it flushes and closes the file (its
// cached metadata, some KiB per dataset touched). A write that HDF5 itself
// finds the disk full for can leave the ranks in different places inside
// HDF5 (one in a barrier of the metadata flush, one past it), so the disk
// must never fill up under HDF5: writes that would eat into this stop
// first, as a collective "disk full", with the file still whole.
constexpr std::uint64_t kCloseReserve = 1u << 20;
// Below this, flushing the metadata HDF5 caches (attributes, extended
// series) may itself run out of space inside HDF5's collective flush, where
// ranks can be stranded; the file is abandoned instead (see agree()). A
// run's own writes stop at kCloseReserve, so this is met unless the disk
// was full before the file was written, or someone else filled it.
constexpr std::uint64_t kFlushReserve = 256u << 10;

// Test switch STRATA_TEST_NO_SPACE_CHECK=1: writes go ahead whatever the
// space left, so the disk fills up under HDF5 (as when another process
// fills it between the check and the write).
bool skip_space_check() {
  static const bool skip = [] {
    const char* v = std::getenv("STRATA_TEST_NO_SPACE_CHECK");
    return v != nullptr && std::string(v) == "1";
  }();
  return skip;
}

// Bytes this process may still write where `directory` lives; nothing when statvfs fails.
std::optional<std::uint64_t> free_bytes(const std::string& directory) {
  struct statvfs fs {};
  if (::statvfs(directory.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

std::string bytes_text(std::uint64_t b) {
  char text[32];
  const bool mib = b >= (1u << 20);
  std::snprintf(text, sizeof text, mib ? "%.1f MiB" : "%.1f KiB", static_cast<double>(b) / (mib ? 1u << 20 : 1024u));
  return text;
}

hid_t vl_string_type() {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

// A scalar dataspace, or a 1-D one of `*length` entries.
hid_t dataspace(const hsize_t* length) {
  return length != nullptr ? H5Screate_simple(1, length, nullptr) : H5Screate(H5S_SCALAR);
}

hid_t fixed_string_type(std::size_t size, H5T_cset_t cset = H5T_CSET_UTF8) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, size == 0 ? 1 : size);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  H5Tset_cset(t, cset);
  return t;
}

// ASCII where every byte is (what H5MD asks of its strings), else UTF-8.
H5T_cset_t charset_of(const std::vector<std::string>& values) {
  for (const std::string& v : values)
    for (const char c : v)
      if (static_cast<unsigned char>(c) >= 0x80) return H5T_CSET_UTF8;
  return H5T_CSET_ASCII;
}

}  // namespace

std::string udunits_spelling(const std::string& unit) {
  // Units the schema, the figures and the console write in their own words.
  static const std::map<std::string, std::string> spelling = {
      {"1/s", "s-1"}, {"paths/s", "s-1"}, {"1/year", "year-1"}, {"GB/s", "Gbyte/s"}, {"GFLOP/s", "1e9 s-1"},
      {"B", "byte"},  {"paths", "1"},     {"cells", "1"},       {"dates", "1"},      {"frame", "1"},
      {"steps", "1"}, {"currency", ""},   {"1/sqrt(year)", ""}};
  if (const auto it = spelling.find(unit); it != spelling.end()) return it->second;
  // The Greeks' "currency per ...": a ratio of money is a number, the rest has no UDUNITS unit.
  if (unit.starts_with("currency")) return unit == "currency per currency of spot" ? "1" : "";
  return unit;
}

std::string hdf5_version() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  return std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel);
}

std::optional<std::string> string_attribute(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  H5Id attr{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  H5Id type{H5Aget_type(attr.id), H5Tclose};
  if (H5Tget_class(type.id) != H5T_STRING) return std::nullopt;
  H5Id mem{H5Tcopy(H5T_C_S1), H5Tclose};
  H5Tset_cset(mem.id, H5Tget_cset(type.id));   // HDF5 converts no character sets
  if (H5Tis_variable_str(type.id) > 0) {
    H5Tset_size(mem.id, H5T_VARIABLE);
    char* text = nullptr;
    if (H5Aread(attr.id, mem.id, &text) < 0 || text == nullptr) return std::nullopt;
    std::string out(text);
    H5free_memory(text);
    return out;
  }
  const std::size_t size = H5Tget_size(type.id);
  H5Tset_size(mem.id, size);
  std::string buf(size, '\0');
  if (H5Aread(attr.id, mem.id, buf.data()) < 0) return std::nullopt;
  return buf.substr(0, buf.find('\0'));
}

std::size_t H5Table::rows() const {
  if (columns.empty()) return 0;
  return std::visit([](const auto& v) { return v.size(); }, columns.front().values);
}

H5Output::H5Output(const std::string& path, const std::string& key, const MpiContext& mpi, Mode mode,
                   const std::string& name)
    : path_(path),
      name_(name.empty() ? path : name),
      directory_(std::filesystem::path(path).has_parent_path() ? std::filesystem::path(path).parent_path().string()
                                                                  : "."),
      mpi_(mpi) {
  // Rank 0 makes the directory and tries the file with the system's own
  // open(), so the message gives the system's reason (a read-only file
  // system, permissions, a path /proc will not create) rather than what
  // MPI-IO's error handling leaves in errno.
  std::string problem;
  if (mpi.root()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(path);
    if (p.has_parent_path() && !fs::exists(p.parent_path(), ec)) {
      fs::create_directories(p.parent_path(), ec);
      if (ec) {
        problem = "cannot create directory '" + p.parent_path().string() + "' (" + ec.message() + ")";
      } else {
        created_directory_ = p.parent_path().string();
      }
    }
    if (problem.empty() && fs::is_directory(p, ec)) problem = "is a directory";
    if (problem.empty()) {
      const bool existed = fs::exists(fs::symlink_status(p, ec));
      const int fd = ::open(path.c_str(), mode == Mode::append ? O_RDWR : (O_WRONLY | O_CREAT), 0666);
      if (fd < 0) {
        problem = std::string("cannot ") + (mode == Mode::append ? "open" : "create") + " the output file (" +
                  std::strerror(errno) + ")";
      } else {
        ::close(fd);
        if (!existed) ::unlink(path.c_str());   // HDF5 creates it; a failed run leaves nothing
      }
    }
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
  MPI_Comm_dup(mpi.comm(), &comm_);
  xfer_ = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(xfer_, H5FD_MPIO_COLLECTIVE);
  lcpl_ = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl_, 1);
}

H5Output::~H5Output() {
  try {
    close();
  } catch (const Error&) {
    // Reported by whoever called close(); a destructor has no one to tell.
  }
  if (lcpl_ >= 0) H5Pclose(lcpl_);
  if (xfer_ >= 0) H5Pclose(xfer_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

namespace {
std::atomic<bool> g_abandoned{false};
}  // namespace

bool abandoned_hdf5_files() { return g_abandoned.load(); }

void H5Output::agree(bool ok, const std::string& what, bool writing) const {
  const int err = ok ? 0 : errno;
  std::string mine;
  if (!ok) {
    std::string stack;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &stack);
    // MPI-IO reports ENOSPC on its own stderr and keeps errno to itself:
    // a file system left with less than one write's worth is full too.
    const bool full = out_of_space(err, stack) || free_bytes(directory_).value_or(kCloseReserve) < kCloseReserve;
    if (full) {
      mine = "disk full writing " + name_ + " (" + what;
    } else {
      const std::string reason = err != 0 ? std::strerror(err) : stack.empty() ? "HDF5 gave no reason" : stack;
      mine = "cannot write " + name_ + " (" + what + ": " + reason;
    }
    mine += mpi_.size() > 1 ? ", on rank " + std::to_string(mpi_.rank()) + ")" : ")";
    H5Eclear2(H5E_DEFAULT);
  }
  errno = 0;
  settle(mine, writing);
}

void H5Output::settle(const std::string& local_failure, bool abandon) const {
  const auto failure = lowest_failure(comm_, local_failure);
  if (!failure) return;
  if (abandon && file_ >= 0) {
    file_ = -1;   // never closed: see agree()
    g_abandoned = true;
  }
  throw Error(ExitCode::resources, failure->message, true);
}

void H5Output::make_room(std::uint64_t total, const std::string& what) const {
  std::string full;
  if (const auto free = mpi_.root() ? free_bytes(directory_) : std::nullopt;
      free && *free < total + kCloseReserve && !skip_space_check())
    full = "disk full writing " + name_ + " (" + what + ": " + bytes_text(total) + " to write, " + bytes_text(*free) +
           " free on " + directory_ + ", of which " + bytes_text(kCloseReserve) + " stay for closing the file)";
  settle(full);
}

void H5Output::room_to_flush() const {
  std::string full;
  if (const auto free = mpi_.root() ? free_bytes(directory_) : std::nullopt;
      free && *free < kFlushReserve && !skip_space_check())
    full = "disk full writing " + name_ + " (no room to flush it: " + bytes_text(*free) + " free on " + directory_ +
           ")";
  settle(full, /*abandon=*/true);
}

void H5Output::close() {
  if (file_ < 0) return;
  room_to_flush();
  // What HDF5 caches goes out first, where a failure is an answer: an
  // H5Fclose that cannot write leaves HDF5 1.10 holding the file it has
  // already freed, and closing the library at MPI_Finalize frees it again
  // (SIGSEGV). So a file that cannot be flushed is abandoned, not closed.
  check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush");
  check(H5Fclose(file_), "close");   // a failure abandons it: HDF5 may hold it freed
  file_ = -1;
  if (!pending_strings_.empty() || pending_status_) fill_pending_strings();
}

void H5Output::group(const std::string& path) {
  if (H5Lexists(file_, path.c_str(), H5P_DEFAULT) > 0) return;
  H5Id g{check_id(H5Gcreate2(file_, path.c_str(), lcpl_, H5P_DEFAULT, H5P_DEFAULT), "create group " + path), H5Gclose};
}

void H5Output::write_attribute(const std::string& object, const std::string& name, hid_t type, const void* data,
                               const hsize_t* length) {
  H5Id space{dataspace(length), H5Sclose};
  H5Id obj{check_id(H5Oopen(file_, object.c_str(), H5P_DEFAULT), "open " + object), H5Oclose};
  if (H5Aexists(obj.id, name.c_str()) > 0) check(H5Adelete(obj.id, name.c_str()), "replace attribute " + name);
  H5Id attr{check_id(H5Acreate2(obj.id, name.c_str(), type, space.id, H5P_DEFAULT, H5P_DEFAULT),
                       "create attribute " + object + ":" + name),
              H5Aclose};
  check(H5Awrite(attr.id, type, data), "write attribute " + object + ":" + name);
}

void H5Output::attribute(const std::string& object, const std::string& name, const std::string& value) {
  H5Id type{vl_string_type(), H5Tclose};
  const char* p = value.c_str();
  write_attribute(object, name, type.id, &p);
}

void H5Output::attribute(const std::string& object, const std::string& name, const std::vector<std::string>& value) {
  H5Id type{vl_string_type(), H5Tclose};
  const hsize_t n = value.size();
  std::vector<const char*> ptrs;
  for (const auto& s : value) ptrs.push_back(s.c_str());
  write_attribute(object, name, type.id, ptrs.data(), &n);
}

void H5Output::fixed_attribute(const std::string& object, const std::string& name, const std::string& value) {
  H5Id type{fixed_string_type(value.size() + 1, charset_of({value})), H5Tclose};
  write_attribute(object, name, type.id, value.c_str());
}

void H5Output::fixed_attribute(const std::string& object, const std::string& name,
                               const std::vector<std::string>& value) {
  std::size_t longest = 0;
  for (const std::string& v : value) longest = std::max(longest, v.size());
  const std::size_t size = longest + 1;
  std::vector<char> packed(value.size() * size, '\0');
  for (std::size_t k = 0; k < value.size(); ++k) value[k].copy(packed.data() + k * size, value[k].size());
  H5Id type{fixed_string_type(size, charset_of(value)), H5Tclose};
  const hsize_t n = value.size();
  write_attribute(object, name, type.id, packed.data(), &n);
}

void H5Output::attribute(const std::string& object, const std::string& name, std::int64_t value) {
  write_attribute(object, name, H5T_NATIVE_INT64, &value);
}

void H5Output::attribute(const std::string& object, const std::string& name, double value) {
  write_attribute(object, name, H5T_NATIVE_DOUBLE, &value);
}

void H5Output::attribute(const std::string& object, const std::string& name, const std::vector<double>& value) {
  const hsize_t n = value.size();
  write_attribute(object, name, H5T_NATIVE_DOUBLE, value.data(), &n);
}

void H5Output::attribute(const std::string& object, const std::string& name, const std::vector<std::int64_t>& value) {
  const hsize_t n = value.size();
  write_attribute(object, name, H5T_NATIVE_INT64, value.data(), &n);
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

void H5Output::dimension_scale(const std::string& path, const std::string& name) {
  H5Id ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  if (H5DSis_scale(ds.id) > 0) return;
  check(H5DSset_scale(ds.id, name.c_str()), "make " + path + " a dimension scale");
}

void H5Output::attach_scale(const std::string& path, const std::string& scale, unsigned axis) {
  H5Id ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  H5Id dim{check_id(H5Dopen2(file_, scale.c_str(), H5P_DEFAULT), "open dataset " + scale), H5Dclose};
  if (H5DSis_attached(ds.id, dim.id, axis) > 0) return;
  check(H5DSattach_scale(ds.id, dim.id, axis), "attach " + scale + " to " + path);
}

void H5Output::remove(const std::string& path) {
  // A restarted run rewrites its results: replace, never fail on "exists".
  if (exists(path)) check(H5Ldelete(file_, path.c_str(), H5P_DEFAULT), "replace " + path);
}

void H5Output::hard_link(const std::string& target, const std::string& link) {
  if (exists(link)) return;
  check(H5Lcreate_hard(file_, target.c_str(), file_, link.c_str(), lcpl_, H5P_DEFAULT), "link " + link);
}

void H5Output::frame_view(const std::string& view, const std::string& source, std::int64_t index,
                          std::span<const std::int64_t> shape) {
  remove(view);
  H5Id ds{check_id(H5Dopen2(file_, source.c_str(), H5P_DEFAULT), "open dataset " + source), H5Dclose};
  H5Id type{H5Dget_type(ds.id), H5Tclose};
  H5Id space{H5Dget_space(ds.id), H5Sclose};
  const int rank = H5Sget_simple_extent_ndims(space.id);
  hsize_t dims[4] = {0, 0, 0, 0}, first[4] = {static_cast<hsize_t>(index), 0, 0, 0}, count[4] = {1, 1, 1, 1};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  for (int d = 1; d < rank; ++d) count[d] = dims[d];
  // The source's extent as far as the frame: the mapping needs no more, and
  // frames appended later leave it valid.
  dims[0] = first[0] + 1;
  H5Id selected{H5Screate_simple(rank, dims, nullptr), H5Sclose};
  check(H5Sselect_hyperslab(selected.id, H5S_SELECT_SET, first, nullptr, count, nullptr),
        "select a frame of " + source);
  hsize_t reshaped[4] = {1, 1, 1, 1};
  for (std::size_t d = 0; d < shape.size() && d < 4; ++d) reshaped[d] = static_cast<hsize_t>(shape[d]);
  H5Id frame{shape.empty() ? H5Screate_simple(rank - 1, count + 1, nullptr)
                           : H5Screate_simple(static_cast<int>(shape.size()), reshaped, nullptr),
             H5Sclose};
  H5Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
  // "." is this file, whatever its name becomes (a backup renames it).
  check(H5Pset_virtual(dcpl.id, frame.id, ".", source.c_str(), selected.id), "map a frame of " + source);
  H5Id vds{create_dataset(view, type.id, frame.id, dcpl.id), H5Dclose};
}

void H5Output::move(const std::string& from, const std::string& to) {
  check(H5Lmove(file_, from.c_str(), file_, to.c_str(), lcpl_, H5P_DEFAULT), "move " + from + " to " + to);
}

void H5Output::rows(const std::string& path, std::span<const double> local, std::int64_t row_offset,
                    std::int64_t total_rows, int width) {
  const std::int64_t per_row = width > 0 ? width : 1;
  const std::int64_t n_rows = static_cast<std::int64_t>(local.size()) / per_row;
  const std::int64_t global[2] = {total_rows, width}, start[2] = {row_offset, 0}, count[2] = {n_rows, width};
  const std::size_t axes = width > 0 ? 2 : 1;
  slab(path, local, std::span(global, axes), std::span(start, axes), std::span(count, axes));
}

void H5Output::rows(const std::string& path, std::span<const std::int64_t> local, std::int64_t offset,
                    std::int64_t total) {
  remove(path);
  const hsize_t dims = static_cast<hsize_t>(total), first = static_cast<hsize_t>(offset), n = local.size();
  H5Id space{H5Screate_simple(1, &dims, nullptr), H5Sclose};
  H5Id ds{create_dataset(path, H5T_NATIVE_INT64, space.id), H5Dclose};
  write_box(ds.id, path, 1, &first, &n, n, local.data(), H5T_NATIVE_INT64);
}

void H5Output::slab(const std::string& path, std::span<const double> local, std::span<const std::int64_t> global,
                    std::span<const std::int64_t> start, std::span<const std::int64_t> count) {
  remove(path);
  const int rank = static_cast<int>(global.size());
  hsize_t dims[3], first[3], n[3];
  hsize_t points = 1;
  for (std::size_t d = 0; d < global.size(); ++d) {
    dims[d] = static_cast<hsize_t>(global[d]);
    first[d] = static_cast<hsize_t>(start[d]);
    n[d] = static_cast<hsize_t>(count[d]);
    points *= n[d];
  }
  if (points != local.size()) throw std::logic_error("H5Output::slab: " + path + ": local size does not match the box");
  H5Id space{H5Screate_simple(rank, dims, nullptr), H5Sclose};
  H5Id ds{create_dataset(path, H5T_NATIVE_DOUBLE, space.id), H5Dclose};
  write_box(ds.id, path, rank, first, n, points, local.data());
}

void H5Output::series(const std::string& path, std::span<const std::int64_t> frame, const std::string& units) {
  if (exists(path)) return;
  const double fill = std::numeric_limits<double>::quiet_NaN();
  new_series(path, frame, H5T_NATIVE_DOUBLE, &fill);
  write_units(path, units);
}

void H5Output::integer_series(const std::string& path) {
  // -1 marks an entry never written (H5MD steps are >= 0); series_resize
  // writes it into a gap itself, as fill values are never written here.
  const std::int64_t fill = -1;
  if (!exists(path)) new_series(path, {}, H5T_NATIVE_INT64, &fill);
}

void H5Output::new_series(const std::string& path, std::span<const std::int64_t> frame, hid_t type, const void* fill) {
  const int rank = static_cast<int>(frame.size()) + 1;
  hsize_t dims[4] = {0, 0, 0, 0}, max[4] = {H5S_UNLIMITED, 0, 0, 0}, chunk[4] = {1, 1, 1, 1};
  std::size_t bytes = H5Tget_size(type);
  for (std::size_t d = 1; d <= frame.size(); ++d) {
    dims[d] = max[d] = chunk[d] = static_cast<hsize_t>(frame[d - 1]);
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
  H5Id space{H5Screate_simple(rank, dims, max), H5Sclose};
  H5Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
  check(H5Pset_chunk(dcpl.id, rank, chunk), "chunk " + path);
  // The fill is what a reader sees where nothing was written (chunks never
  // allocated). Never written at allocation: parallel HDF5 allocates a
  // frame's chunks when the series grows (H5Dset_extent) and would write
  // the fill there, and a fill write that fails on one rank (a full disk)
  // leaves the others in H5Dset_extent's barrier; every frame is written
  // whole anyway.
  H5Pset_fill_value(dcpl.id, type, fill);
  H5Pset_fill_time(dcpl.id, H5D_FILL_TIME_NEVER);
  H5Pset_alloc_time(dcpl.id, H5D_ALLOC_TIME_INCR);   // parallel HDF5 needs early or incremental
  H5Id ds{create_dataset(path, type, space.id, dcpl.id), H5Dclose};
}

std::int64_t H5Output::series_length(const std::string& path) const {
  H5Id ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  H5Id space{H5Dget_space(ds.id), H5Sclose};
  hsize_t dims[4] = {0, 0, 0, 0};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  return static_cast<std::int64_t>(dims[0]);
}

void H5Output::series_resize(const std::string& path, std::int64_t length) {
  H5Id ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  H5Id space{H5Dget_space(ds.id), H5Sclose};
  hsize_t dims[4] = {0, 0, 0, 0};
  H5Sget_simple_extent_dims(space.id, dims, nullptr);
  if (static_cast<std::int64_t>(dims[0]) == length) return;
  const hsize_t before = dims[0];
  dims[0] = static_cast<hsize_t>(length);
  check(H5Dset_extent(ds.id, dims), "resize " + path);
  // Fill values are never written (a fill inside H5Dset_extent that fails
  // on one rank would hang the others), so a gap left by growing is filled
  // here: NaN, or -1 in an integer series. Rank 0 writes it, in slabs of at
  // most 2^20 values along the second axis.
  if (dims[0] <= before) return;
  const int rank = H5Sget_simple_extent_ndims(space.id);
  H5Id type{H5Dget_type(ds.id), H5Tclose};
  const bool integer = H5Tget_class(type.id) == H5T_INTEGER;
  hsize_t inner = 1;
  for (int d = 2; d < rank; ++d) inner *= dims[d];
  const hsize_t across = rank > 1 ? dims[1] : 1;
  const hsize_t per_slab = (hsize_t{1} << 20) / std::max<hsize_t>(inner, 1);
  const hsize_t slab = std::max<hsize_t>(1, std::min<hsize_t>(across, per_slab));
  const std::vector<double> nan(static_cast<std::size_t>(slab * inner), std::numeric_limits<double>::quiet_NaN());
  const std::vector<std::int64_t> minus_one(static_cast<std::size_t>(slab * inner), -1);
  const void* fill = integer ? static_cast<const void*>(minus_one.data()) : nan.data();
  for (hsize_t k = before; k < dims[0]; ++k) {
    for (hsize_t j = 0; j < across; j += slab) {
      hsize_t first[4] = {k, j, 0, 0}, count[4] = {1, std::min(slab, across - j), 1, 1};
      for (int d = 2; d < rank; ++d) count[d] = dims[d];
      const hsize_t points = mpi_.root() ? count[1] * inner : 0;
      write_box(ds.id, path, rank, first, count, points, fill, integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE);
    }
  }
}

void H5Output::series_write(const std::string& path, std::int64_t index, std::span<const double> local,
                            std::span<const std::int64_t> start, std::span<const std::int64_t> count) {
  series_box(path, index, local.data(), local.size(), H5T_NATIVE_DOUBLE, start, count);
}

void H5Output::series_box(const std::string& path, std::int64_t index, const void* local, std::size_t size, hid_t type,
                          std::span<const std::int64_t> start, std::span<const std::int64_t> count) {
  H5Id ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  H5Id space{H5Dget_space(ds.id), H5Sclose};
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
  for (std::size_t d = 1; d <= count.size(); ++d) {
    first[d] = static_cast<hsize_t>(start[d - 1]);
    n[d] = static_cast<hsize_t>(count[d - 1]);
    points *= n[d];
  }
  if (points != size && size != 0) throw std::logic_error("H5Output::series_write: " + path + ": size");
  if (size == 0) points = 0;
  write_box(ds.id, path, rank, first, n, points, local, type);
}

std::vector<double> H5Output::read(const std::string& path) const {
  H5Id ds{check_id(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), "open dataset " + path), H5Dclose};
  H5Id space{H5Dget_space(ds.id), H5Sclose};
  const hssize_t n = H5Sget_simple_extent_npoints(space.id);
  std::vector<double> out(static_cast<std::size_t>(n > 0 ? n : 0));
  agree(H5Dread(ds.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, xfer_, out.data()) >= 0, "read dataset " + path,
        /*writing=*/false);
  return out;
}

void H5Output::series_write(const std::string& path, std::int64_t index, double value) {
  series_box(path, index, &value, mpi_.root() ? 1 : 0, H5T_NATIVE_DOUBLE, {}, {});
}

void H5Output::series_write(const std::string& path, std::int64_t index, std::int64_t value) {
  series_box(path, index, &value, mpi_.root() ? 1 : 0, H5T_NATIVE_INT64, {}, {});
}

void H5Output::write_box(hid_t dataset, const std::string& path, int rank, const hsize_t* first, const hsize_t* count,
                         hsize_t points, const void* data, hid_t type) {
  H5Id file_sel{H5Dget_space(dataset), H5Sclose};
  // An empty dataset (a checkpoint's records when no rank has any) has no
  // storage to write to; every rank sees the same extent, so every rank
  // skips the collective write alike.
  if (H5Sget_simple_extent_npoints(file_sel.id) == 0) return;
  H5Id mem{H5Screate_simple(rank, count, nullptr), H5Sclose};
  // The ranks' boxes tile the whole dataset, or one frame of a series (an
  // unlimited first axis), so every rank knows the bytes of the write
  // without asking the others.
  hsize_t dims[4] = {0, 0, 0, 0}, max[4] = {0, 0, 0, 0};
  const int dims_n = H5Sget_simple_extent_dims(file_sel.id, dims, max);
  hsize_t region = 1;
  for (int d = dims_n > 0 && max[0] == H5S_UNLIMITED ? 1 : 0; d < dims_n; ++d) region *= dims[d];
  make_room(region * H5Tget_size(type), "dataset " + path);
  // Only ranks with data select a box, so a bad box is settled with the
  // write, which every rank joins (with nothing selected if its box failed).
  const bool selected =
      points == 0 || H5Sselect_hyperslab(file_sel.id, H5S_SELECT_SET, first, nullptr, count, nullptr) >= 0;
  if (points == 0 || !selected) {
    H5Sselect_none(file_sel.id);
    H5Sselect_none(mem.id);
  }
  const herr_t written = H5Dwrite(dataset, type, mem.id, file_sel.id, xfer_, data);
  agree(selected && written >= 0, (selected ? "write dataset " : "select a box of ") + path);
}

void H5Output::write_from_root(const std::string& path, hid_t type, const void* data, const hsize_t* length) {
  remove(path);
  H5Id space{dataspace(length), H5Sclose};
  // Closed here if the write fails: a dataset left open makes H5Fclose fail.
  H5Id ds{create_dataset(path, type, space.id), H5Dclose};
  // Rank 0 writes the data; the others take part with an empty selection.
  if (length != nullptr && *length == 0) return;   // an empty array: nothing to write (MPI-IO fails on it)
  H5Id sel{dataspace(length), H5Sclose};
  if (!mpi_.root()) H5Sselect_none(sel.id);
  make_room(H5Tget_size(type) * (length != nullptr ? *length : 1), "dataset " + path);
  check(H5Dwrite(ds.id, type, sel.id, sel.id, xfer_, data), "write dataset " + path);
}

void H5Output::write_units(const std::string& path, const std::string& units) {
  if (units.empty()) return;
  const std::string cf = udunits_spelling(units);
  if (!cf.empty()) attribute(path, "units", cf);
  if (cf != units && !has_attribute(path, "long_name"))
    attribute(path, "long_name", path.substr(path.find_last_of('/') + 1) + " in " + units);
}

void H5Output::text(const std::string& path, const std::string& value) {
  // Fixed-length: parallel HDF5 cannot write variable-length data collectively.
  H5Id type{fixed_string_type(value.size() + 1), H5Tclose};
  write_from_root(path, type.id, value.c_str());
}

void H5Output::scalar(const std::string& path, double value, const std::string& units) {
  write_from_root(path, H5T_NATIVE_DOUBLE, &value);
  write_units(path, units);
}

void H5Output::scalar(const std::string& path, std::int64_t value, const std::string& units) {
  write_from_root(path, H5T_NATIVE_INT64, &value);
  write_units(path, units);
}

void H5Output::array(const std::string& path, std::span<const double> values, const std::string& units) {
  const hsize_t n = values.size();
  write_from_root(path, H5T_NATIVE_DOUBLE, values.data(), &n);
  write_units(path, units);
}

void H5Output::array(const std::string& path, std::span<const std::int64_t> values, const std::string& units) {
  const hsize_t n = values.size();
  write_from_root(path, H5T_NATIVE_INT64, values.data(), &n);
  write_units(path, units);
}

void H5Output::table(const std::string& path, const H5Table& table) {
  remove(path);  // a restarted run rewrites it (an older strata wrote a compound dataset here)
  std::erase_if(pending_strings_, [&](const auto& p) { return p.first.starts_with(path + "/"); });
  group(path);
  const hsize_t rows = table.rows();
  std::string key;  // the first column: the dimension scale of the rest
  for (const auto& c : table.columns) {
    const std::string column = path + "/" + c.name;
    if (const auto* v = std::get_if<std::vector<double>>(&c.values)) {
      write_from_root(column, H5T_NATIVE_DOUBLE, v->data(), &rows);
    } else if (const auto* v = std::get_if<std::vector<std::int64_t>>(&c.values)) {
      write_from_root(column, H5T_NATIVE_INT64, v->data(), &rows);
    } else {
      // Variable length (netCDF's NC_STRING): netCDF 4.9.0 crashes on
      // fixed-length string datasets. Parallel HDF5 cannot write them, so
      // the dataset is made now and filled in close().
      remove(column);
      H5Id type{vl_string_type(), H5Tclose};
      H5Id space{dataspace(&rows), H5Sclose};
      H5Id ds{create_dataset(column, type.id, space.id), H5Dclose};
      pending_strings_.emplace_back(column, std::get<std::vector<std::string>>(c.values));
    }
    write_units(column, c.units);
    H5Id ds{check_id(H5Dopen2(file_, column.c_str(), H5P_DEFAULT), "open " + column), H5Dclose};
    if (key.empty()) {
      key = column;
      check(H5DSset_scale(ds.id, c.name.c_str()), "make " + column + " a dimension scale");
    } else {
      H5Id scale{check_id(H5Dopen2(file_, key.c_str(), H5P_DEFAULT), "open " + key), H5Dclose};
      check(H5DSattach_scale(ds.id, scale.id, 0), "attach " + key + " to " + column);
    }
  }
  // HDF5 lists a group's datasets by name; the table's own order is this.
  std::vector<std::string> names;
  for (const auto& c : table.columns) names.push_back(c.name);
  attribute(path, "columns", names);
}

void H5Output::fill_pending_strings() {
  // Every rank has closed the file (H5Fclose is collective); rank 0 opens
  // it with HDF5's serial driver, which writes variable-length data.
  MPI_Barrier(comm_);
  std::string problem;
  if (mpi_.root()) {
    const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (file < 0) problem = "cannot reopen " + name_ + " to write its tables' strings";
    H5Id type{vl_string_type(), H5Tclose};
    for (const auto& [column, values] : pending_strings_) {
      if (!problem.empty()) break;
      std::vector<const char*> text;
      for (const auto& v : values) text.push_back(v.c_str());
      H5Id ds{H5Dopen2(file, column.c_str(), H5P_DEFAULT), H5Dclose};
      if (ds.id < 0 || (!text.empty() && H5Dwrite(ds.id, type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) < 0))
        problem = "cannot write " + name_ + " (dataset " + column + ")";
    }
    if (problem.empty() && pending_status_) {
      const char* text = pending_status_->c_str();
      H5Id space{H5Screate(H5S_SCALAR), H5Sclose};
      if (H5Aexists(file, "status") > 0) H5Adelete(file, "status");
      H5Id attr{H5Acreate2(file, "status", type.id, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
      if (attr.id < 0 || H5Awrite(attr.id, type.id, &text) < 0) problem = "cannot write " + name_ + " (status)";
    }
    if (file >= 0 && H5Fclose(file) < 0 && problem.empty()) problem = "cannot close " + name_;
  }
  pending_strings_.clear();
  pending_status_.reset();
  settle(problem);
}

bool H5Output::has_attribute(const std::string& object, const std::string& name) const {
  return H5Aexists_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::string H5Output::string_attribute(const std::string& object, const std::string& name) const {
  if (!has_attribute(object, name)) return "";
  H5Id obj{check_id(H5Oopen(file_, object.c_str(), H5P_DEFAULT), "open " + object), H5Oclose};
  // A stored attribute that does not read as a string is a damaged file, not an empty value.
  if (auto text = strata::string_attribute(obj.id, name.c_str())) return *text;
  check(-1, "read attribute " + object + ":" + name);
  return "";
}

std::vector<std::int64_t> H5Output::integer_attribute(const std::string& object, const std::string& name) const {
  if (!has_attribute(object, name)) return {};
  H5Id attr{check_id(H5Aopen_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                       "open attribute " + object + ":" + name),
              H5Aclose};
  H5Id space{H5Aget_space(attr.id), H5Sclose};
  const hssize_t n = H5Sget_simple_extent_npoints(space.id);
  std::vector<std::int64_t> value(static_cast<std::size_t>(n > 0 ? n : 0));
  if (!value.empty()) check(H5Aread(attr.id, H5T_NATIVE_INT64, value.data()), "read attribute " + object + ":" + name);
  return value;
}

void H5Output::remove_attribute(const std::string& object, const std::string& name) {
  if (has_attribute(object, name))
    check(H5Adelete_by_name(file_, object.c_str(), name.c_str(), H5P_DEFAULT), "remove attribute " + name);
}

void H5Output::set_status(const std::string& status) {
  if (!pending_strings_.empty()) {
    pending_status_ = status;
    return;
  }
  attribute("/", "status", status);
  flush();
}

std::vector<std::int64_t> nan_indices(const std::vector<double>& times) {
  std::vector<std::int64_t> lost;
  for (std::size_t k = 0; k < times.size(); ++k)
    if (std::isnan(times[k])) lost.push_back(static_cast<std::int64_t>(k));
  return lost;
}

void record_missing_output(H5Output& out, const std::vector<std::int64_t>& frames,
                           const std::vector<std::int64_t>& rows) {
  for (const auto& [name, lost] : {std::pair{"missing_frames", &frames}, std::pair{"missing_rows", &rows}}) {
    if (lost->empty()) {
      out.remove_attribute("/", name);
    } else {
      out.attribute("/", name, *lost);
    }
  }
}

namespace {

// "0-3, 7, 9-10" for {0, 1, 2, 3, 7, 9, 10} (sorted).
std::string index_ranges(const std::vector<std::int64_t>& v) {
  std::ostringstream text;
  for (std::size_t k = 0; k < v.size();) {
    std::size_t end = k;
    while (end + 1 < v.size() && v[end + 1] == v[end] + 1) ++end;
    if (k > 0) text << ", ";
    text << v[k];
    if (end > k) text << '-' << v[end];
    k = end + 1;
  }
  return text.str();
}

}  // namespace

std::string describe_missing_output(const H5Output& out) {
  const auto frames = out.integer_attribute("/", "missing_frames");
  const auto rows = out.integer_attribute("/", "missing_rows");
  std::ostringstream text;
  if (!frames.empty()) text << "frames " << index_ranges(frames);
  if (!frames.empty() && !rows.empty()) text << " and ";
  if (!rows.empty()) text << "rows " << index_ranges(rows);
  return text.str();
}

void H5Output::flush() {
  room_to_flush();
  check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush " + path_);
}

}  // namespace strata
