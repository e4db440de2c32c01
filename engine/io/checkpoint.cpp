#include "engine/io/checkpoint.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <system_error>

#include "engine/io/h5_output.hpp"
#include "engine/io/output_files.hpp"
#include "engine/runtime/build_info.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/watchdog.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "strata-checkpoint-1";
constexpr const char* kPrefix = "step-";
constexpr const char* kSuffix = ".h5";
constexpr const char* kTmpSuffix = ".h5.tmp";

// --- checksums ----------------------------------------------------------------

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;   // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// One element's share of a checkpoint's checksum. Summed (mod 2^64) over
// every element of every item, so it does not depend on which rank wrote
// which element, nor on the order items are read back in.
std::uint64_t element_hash(std::uint64_t name, std::int64_t index, std::uint64_t bits) {
  return splitmix64(name ^ splitmix64(static_cast<std::uint64_t>(index) * 0xd1b54a32d192ed03ULL + bits));
}

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

std::uint64_t bits_of(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// The hashes of item `name`'s consecutive elements from flat index `first`.
std::uint64_t run_hash(const std::string& name, std::int64_t first, std::span<const double> values) {
  const std::uint64_t h = name_hash(name);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    sum += element_hash(h, first + static_cast<std::int64_t>(i), bits_of(values[i]));
  }
  return sum;
}

// --- names ----------------------------------------------------------------------

std::optional<std::int64_t> step_of(const std::string& filename) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (filename.size() <= prefix.size() + suffix.size() || filename.rfind(prefix, 0) != 0 ||
      filename.compare(filename.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  const std::string digits = filename.substr(prefix.size(), filename.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) {
    return std::nullopt;
  }
  return std::stoll(digits);
}

std::string step_name(std::int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%012lld%s", kPrefix, static_cast<long long>(step), kSuffix);
  return name;
}

// Rank 0 does `f`; its failure becomes every rank's (a collective barrier too).
template <class F>
void on_root(const MpiContext& mpi, F&& f, ExitCode code = ExitCode::resources) {
  std::string problem;
  if (mpi.root()) {
    try {
      f();
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  mpi.check_collective(problem, static_cast<int>(code));
}

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// --- writing ----------------------------------------------------------------------

class H5StateWriter final : public StateWriter {
 public:
  H5StateWriter(H5Output& out, const MpiContext& mpi) : out_(out), mpi_(mpi) { out_.group("/state"); }

  void scalar(const std::string& name, std::int64_t value) override {
    out_.attribute("/state", name, value);
    if (mpi_.root()) sum_ += element_hash(name_hash(name), -1, bits_of(value));
  }
  void scalar(const std::string& name, double value) override {
    out_.attribute("/state", name, value);
    if (mpi_.root()) sum_ += element_hash(name_hash(name), -1, bits_of(value));
  }
  void array(const std::string& name, std::span<const double> local, std::int64_t offset,
             std::int64_t global) override {
    out_.rows("/state/" + name, local, offset, global, 0);
    sum_ += run_hash(name, offset, local);
  }
  void box(const std::string& name, std::span<const double> local, std::span<const std::int64_t> global,
           std::span<const std::int64_t> start, std::span<const std::int64_t> count) override {
    out_.slab("/state/" + name, local, global, start, count);
    // Hash by the flat global index, as the verifier reads it back.
    const std::uint64_t h = name_hash(name);
    const std::size_t rank = global.size();
    std::int64_t idx[3] = {0, 0, 0};
    for (std::size_t e = 0; e < local.size(); ++e) {
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < rank; ++d) flat = flat * global[d] + start[d] + idx[d];
      sum_ += element_hash(h, flat, bits_of(local[e]));
      for (std::size_t d = rank; d-- > 0;) {   // odometer, last index fastest
        if (++idx[d] < count[d]) break;
        idx[d] = 0;
      }
    }
  }
  void records(const std::string& name, std::span<const double> local, int width) override {
    long long mine = static_cast<long long>(local.size()) / width, before = 0, total = 0;
    MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, mpi_.comm());
    if (mpi_.root()) before = 0;   // MPI_Exscan leaves rank 0's result undefined
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, mpi_.comm());
    out_.rows("/state/" + name, local, before, total, width);
    sum_ += run_hash(name, before * width, local);
  }

  std::uint64_t checksum() const {
    std::uint64_t local = sum_, total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_UINT64_T, MPI_SUM, mpi_.comm());
    return total;
  }

 private:
  H5Output& out_;
  const MpiContext& mpi_;
  std::uint64_t sum_ = 0;
};

// --- reading (HDF5 C API; ids closed at scope exit) ---------------------------------

[[noreturn]] void unreadable(const std::string& what) { throw Error(ExitCode::bad_input, what); }

std::string read_string_attribute(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) unreadable(std::string("attribute '") + name + "' missing");
  H5Id attr{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  H5Id type{H5Aget_type(attr.id), H5Tclose};
  if (H5Tget_class(type.id) != H5T_STRING) unreadable(std::string("attribute '") + name + "' is not a string");
  if (auto text = string_attribute(obj, name)) return *text;
  unreadable(std::string("attribute '") + name + "' unreadable");
}

template <class T>
T read_number_attribute(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) unreadable(std::string("attribute '") + name + "' missing");
  H5Id attr{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  T v{};
  const hid_t type = std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  if (H5Aread(attr.id, type, &v) < 0) unreadable(std::string("attribute '") + name + "' unreadable");
  return v;
}

std::string read_text_dataset(hid_t file, const char* path) {
  if (H5Lexists(file, path, H5P_DEFAULT) <= 0) unreadable(std::string(path) + " missing");
  H5Id ds{H5Dopen2(file, path, H5P_DEFAULT), H5Dclose};
  H5Id type{H5Dget_type(ds.id), H5Tclose};
  const std::size_t size = H5Tget_size(type.id);
  std::string text(size, '\0');
  if (H5Dread(ds.id, type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) < 0) {
    unreadable(std::string(path) + " unreadable");
  }
  text.resize(std::strlen(text.c_str()));
  return text;
}

std::vector<double> read_all_doubles(hid_t ds) {
  H5Id space{H5Dget_space(ds), H5Sclose};
  const hssize_t n = H5Sget_simple_extent_npoints(space.id);
  std::vector<double> v(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
  if (n > 0 && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) {
    unreadable("state data unreadable");
  }
  return v;
}

struct ChecksumWalk {
  std::uint64_t sum = 0;
  std::string failure;
  std::string prefix;   // path below /state of the group being walked ("" or "fields/")
};

herr_t hash_attribute(hid_t obj, const char* name, const H5A_info_t*, void* data) {
  auto* walk = static_cast<ChecksumWalk*>(data);
  H5Id attr{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  H5Id type{H5Aget_type(attr.id), H5Tclose};
  std::uint64_t bits = 0;
  if (H5Tget_class(type.id) == H5T_FLOAT) {
    double v = 0;
    if (H5Aread(attr.id, H5T_NATIVE_DOUBLE, &v) < 0) return -1;
    bits = bits_of(v);
  } else {
    std::int64_t v = 0;
    if (H5Aread(attr.id, H5T_NATIVE_INT64, &v) < 0) return -1;
    bits = bits_of(v);
  }
  walk->sum += element_hash(name_hash(name), -1, bits);
  return 0;
}

// Datasets are hashed under their path below /state, as the writer named
// them: a grid model's "fields/u" lives in the group /state/fields.
herr_t hash_dataset(hid_t group, const char* name, const H5L_info_t*, void* data) {
  auto* walk = static_cast<ChecksumWalk*>(data);
  try {
    H5Id obj{H5Oopen(group, name, H5P_DEFAULT), H5Oclose};
    if (obj.id < 0) return -1;
    if (H5Iget_type(obj.id) == H5I_GROUP) {
      const std::string outer = walk->prefix;
      walk->prefix = outer + name + "/";
      hsize_t idx = 0;
      const herr_t rc = H5Literate(obj.id, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, hash_dataset, walk);
      walk->prefix = outer;
      return rc < 0 ? -1 : 0;
    }
    walk->sum += run_hash(walk->prefix + name, 0, read_all_doubles(obj.id));
  } catch (const Error& e) {
    walk->failure = std::string(name) + ": " + e.what();
    return -1;
  }
  return 0;
}

CheckpointHeader verify_on_root(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (!fs::exists(path)) unreadable("no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) unreadable("not an HDF5 file (truncated or corrupt)");
  H5Id file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (file.id < 0) unreadable("HDF5 cannot open it (truncated or corrupt)");
  H5Id root{H5Oopen(file.id, "/", H5P_DEFAULT), H5Oclose};
  if (H5Aexists(root.id, "format") <= 0 || read_string_attribute(root.id, "format") != kFormat) {
    unreadable("not a strata checkpoint");
  }
  if (H5Aexists(root.id, "complete") <= 0 || read_number_attribute<std::int64_t>(root.id, "complete") != 1) {
    unreadable("incomplete (the write did not finish)");
  }
  CheckpointHeader h;
  h.model = read_string_attribute(root.id, "model");
  h.precision = read_string_attribute(root.id, "precision");
  h.backend = read_string_attribute(root.id, "backend");
  h.step = read_number_attribute<std::int64_t>(root.id, "step");
  h.steps = read_number_attribute<std::int64_t>(root.id, "steps");
  h.ranks = read_number_attribute<std::int64_t>(root.id, "ranks");
  h.wall_seconds = read_number_attribute<double>(root.id, "wall_seconds");
  h.config_toml = read_text_dataset(file.id, "/config");
  const auto stored = static_cast<std::uint64_t>(read_number_attribute<std::int64_t>(root.id, "checksum"));

  if (H5Lexists(file.id, "/state", H5P_DEFAULT) <= 0) unreadable("/state missing");
  H5Id state{H5Gopen2(file.id, "/state", H5P_DEFAULT), H5Gclose};
  ChecksumWalk walk;
  hsize_t idx = 0;
  if (H5Aiterate2(state.id, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, hash_attribute, &walk) < 0) {
    unreadable("state attributes unreadable");
  }
  idx = 0;
  if (H5Literate(state.id, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, hash_dataset, &walk) < 0) {
    unreadable("state unreadable" + (walk.failure.empty() ? std::string() : " (" + walk.failure + ")"));
  }
  if (walk.sum != stored) unreadable("checksum mismatch (the file was damaged after it was written)");
  return h;
}

// Runs f; an Error becomes one naming the checkpoint item.
template <class F>
auto guarded(const std::string& path, const std::string& name, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(ExitCode::resources, path + ": /state/" + name + ": " + e.what());
  }
}

class H5StateReader final : public StateReader {
 public:
  H5StateReader(const std::string& path, const MpiContext& mpi) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    H5Id fapl{H5Pcreate(H5P_FILE_ACCESS), H5Pclose};
    H5Pset_fapl_mpio(fapl.id, mpi.comm(), MPI_INFO_NULL);
    file_.id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.id);
    if (file_.id < 0) throw Error(ExitCode::resources, path + ": cannot open the checkpoint");
    state_.id = H5Gopen2(file_.id, "/state", H5P_DEFAULT);
    if (state_.id < 0) throw Error(ExitCode::resources, path + ": /state missing");
    path_ = path;
  }

  std::int64_t integer(const std::string& name) override {
    return guarded(path_, name, [&] { return read_number_attribute<std::int64_t>(state_.id, name.c_str()); });
  }
  double real(const std::string& name) override {
    return guarded(path_, name, [&] { return read_number_attribute<double>(state_.id, name.c_str()); });
  }
  void array(const std::string& name, std::span<double> local, std::int64_t offset) override {
    H5Id ds{open(name), H5Dclose};
    H5Id file_space{H5Dget_space(ds.id), H5Sclose};
    const hsize_t start = static_cast<hsize_t>(offset), n = local.size();
    read_block(name, ds.id, file_space.id, 1, &start, &n, local, "slab");
  }
  void box(const std::string& name, std::span<double> local, std::span<const std::int64_t> start,
           std::span<const std::int64_t> count) override {
    H5Id ds{open(name), H5Dclose};
    H5Id file_space{H5Dget_space(ds.id), H5Sclose};
    const int rank = static_cast<int>(start.size());
    if (H5Sget_simple_extent_ndims(file_space.id) != rank) {
      throw Error(ExitCode::resources, path_ + ": /state/" + name + ": stored with another number of dimensions");
    }
    hsize_t first[3], n[3], points = 1;
    for (std::size_t d = 0; d < start.size(); ++d) {
      first[d] = static_cast<hsize_t>(start[d]);
      n[d] = static_cast<hsize_t>(count[d]);
      points *= n[d];
    }
    if (points != local.size()) throw std::logic_error("StateReader::box: local size does not match the box");
    read_block(name, ds.id, file_space.id, rank, first, n, local, "box");
  }
  std::vector<double> records(const std::string& name, int width) override {
    H5Id ds{open(name), H5Dclose};
    std::vector<double> v = guarded(path_, name, [&] { return read_all_doubles(ds.id); });
    if (width <= 0 || v.size() % static_cast<std::size_t>(width) != 0) {
      throw Error(ExitCode::resources, path_ + ": /state/" + name + ": not records of width " + std::to_string(width));
    }
    return v;
  }

 private:
  // Reads the block of `n` values from `first` of dataset `ds` into `local`;
  // `shape` ("slab", "box") names the block when it lies outside the array.
  void read_block(const std::string& name, hid_t ds, hid_t file_space, int rank, const hsize_t* first,
                  const hsize_t* n, std::span<double> local, const char* shape) const {
    H5Id mem{H5Screate_simple(rank, n, nullptr), H5Sclose};
    if (local.empty()) {
      H5Sselect_none(file_space);
      H5Sselect_none(mem.id);
    } else if (H5Sselect_hyperslab(file_space, H5S_SELECT_SET, first, nullptr, n, nullptr) < 0 ||
               H5Sselect_valid(file_space) <= 0) {
      throw Error(ExitCode::resources, path_ + ": /state/" + name + ": " + shape + " outside the stored array");
    }
    if (H5Dread(ds, H5T_NATIVE_DOUBLE, mem.id, file_space, H5P_DEFAULT, local.data()) < 0) {
      throw Error(ExitCode::resources, path_ + ": /state/" + name + ": read failed");
    }
  }
  hid_t open(const std::string& name) {
    const hid_t state = state_.id;
    const hid_t ds = H5Lexists(state, name.c_str(), H5P_DEFAULT) > 0 ? H5Dopen2(state, name.c_str(), H5P_DEFAULT) : -1;
    if (ds < 0) throw Error(ExitCode::resources, path_ + ": /state/" + name + " missing");
    return ds;
  }
  std::string path_;
  H5Id file_{-1, H5Fclose}, state_{-1, H5Gclose};   // state_ closes first
};

}  // namespace

CheckpointStore::CheckpointStore(const std::string& output, const MpiContext& mpi)
    : dir_(checkpoint_dir(output)), mpi_(mpi) {}

std::vector<std::string> CheckpointStore::list() const {
  std::vector<std::pair<std::int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (auto step = step_of(entry.path().filename().string())) found.emplace_back(*step, entry.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

void CheckpointStore::remove_temporaries() {
  on_root(mpi_, [&] {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with(kPrefix) && name.ends_with(kTmpSuffix)) fs::remove(entry.path(), ec);
    }
  });
}

void CheckpointStore::remove_all() {
  remove_temporaries();
  on_root(mpi_, [&] {
    std::error_code ec;
    for (const std::string& f : list()) fs::remove(f, ec);
    fs::remove(dir_, ec);   // only when empty: never someone else's files
  });
}

std::string CheckpointStore::write(const Simulation& sim, const CheckpointHeader& header, int keep) {
  const std::string final_path = (fs::path(dir_) / step_name(header.step)).string();
  const std::string tmp_path = final_path.substr(0, final_path.size() - std::strlen(kSuffix)) + kTmpSuffix;
  on_root(mpi_, [&] {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) throw Error(ExitCode::resources, "cannot create checkpoint directory " + dir_ + " (" + ec.message() + ")");
  });
  // Removed by the watchdog if a peer is lost while this one is written.
  const watchdog::TemporaryFile temporary(tmp_path);
  std::optional<H5Output> out;
  try {
    out.emplace(tmp_path, "checkpoint", mpi_, H5Output::Mode::create, "checkpoint " + final_path);
    out->attribute("/", "format", std::string(kFormat));
    out->attribute("/", "strata_version", std::string(build::version_line()));
    out->attribute("/", "git_sha", std::string(build::git_sha()));
    out->attribute("/", "model", header.model);
    out->attribute("/", "precision", header.precision);
    out->attribute("/", "backend", header.backend);
    out->attribute("/", "step", header.step);
    out->attribute("/", "steps", header.steps);
    out->attribute("/", "ranks", header.ranks);
    out->attribute("/", "wall_seconds", header.wall_seconds);
    out->text("/config", header.config_toml);
    H5StateWriter writer(*out, mpi_);
    sim.save(writer);
    out->attribute("/", "checksum", static_cast<std::int64_t>(writer.checksum()));   // the same 64 bits
    out->attribute("/", "complete", std::int64_t{1});   // last: a file without it is incomplete
    out->close();
  } catch (const Error& e) {
    // The temporary file's space goes first, so that closing it (HDF5
    // writes its cached metadata then) finds room on a full disk; then it
    // goes. The checkpoints before it are untouched.
    on_root(mpi_, [&] { ::truncate(tmp_path.c_str(), 0); });
    out.reset();
    on_root(mpi_, [&] {
      std::error_code ec;
      fs::remove(tmp_path, ec);
    });
    std::string message = e.what();
    if (message.find(final_path) == std::string::npos) message = "checkpoint " + final_path + ": " + message;
    throw Error(ExitCode::resources, message + "; the checkpoints before it are untouched", true);
  }
  on_root(mpi_, [&] {
    // Data on disk before the name changes; then the directory entry.
    fsync_path(tmp_path);
    std::error_code ec;
    fs::rename(tmp_path, final_path, ec);
    if (ec) throw Error(ExitCode::resources, "checkpoint " + final_path + ": rename failed (" + ec.message() + ")");
    fsync_path(dir_);
    const std::vector<std::string> all = list();
    for (std::size_t i = static_cast<std::size_t>(std::max(keep, 1)); i < all.size(); ++i) fs::remove(all[i], ec);
  });
  return final_path;
}

CheckpointHeader verify_checkpoint(const std::string& path, const MpiContext& mpi) {
  CheckpointHeader h;
  on_root(
      mpi, [&] {
        try {
          h = verify_on_root(path);
        } catch (const Error& e) {
          throw Error(ExitCode::bad_input, "checkpoint " + path + ": " + e.what());
        }
      },
      ExitCode::bad_input);
  for (std::string* text : {&h.model, &h.precision, &h.backend, &h.config_toml}) broadcast(mpi.comm(), *text);
  for (std::int64_t* count : {&h.step, &h.steps, &h.ranks}) MPI_Bcast(count, 1, MPI_INT64_T, 0, mpi.comm());
  MPI_Bcast(&h.wall_seconds, 1, MPI_DOUBLE, 0, mpi.comm());
  return h;
}

std::string newest_valid_checkpoint(const CheckpointStore& store, const MpiContext& mpi,
                                    std::vector<std::string>& skipped) {
  // Rank 0's view of the directory, so every rank tries the same files.
  std::vector<std::string> files = mpi.root() ? store.list() : std::vector<std::string>{};
  std::int64_t n = static_cast<std::int64_t>(files.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, 0, mpi.comm());
  files.resize(static_cast<std::size_t>(n));
  for (std::string& f : files) broadcast(mpi.comm(), f);
  for (const std::string& f : files) {
    try {
      verify_checkpoint(f, mpi);
      return f;
    } catch (const Error& e) {
      skipped.push_back(e.what());
    }
  }
  return "";
}

void restore_checkpoint(const std::string& path, Simulation& sim, const MpiContext& mpi) {
  mpi.collective([&] {
    H5StateReader reader(path, mpi);
    sim.restore(reader);
  });
}

}  // namespace strata
