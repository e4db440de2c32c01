// The run's one HDF5 file, written collectively by all ranks through the
// MPI-IO driver (parallel HDF5, never file-per-rank). Every call here is
// collective: all ranks call it with the same arguments; rank 0 supplies the
// data of small datasets and the other ranks select nothing.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace strata {

class MpiContext;

// A compound table (one HDF5 compound dataset, a structured array in h5py).
struct H5Table {
  struct Column {
    std::string name;
    std::string units;
    std::variant<std::vector<double>, std::vector<std::int64_t>, std::vector<std::string>> values;
  };
  std::vector<Column> columns;
  std::size_t rows() const;
};

class H5Output {
 public:
  enum class Mode {
    create,   // create or truncate (the caller has made sure nothing of value is lost)
    append,   // open an existing file read-write (a restarted run continues its output)
  };
  // Opens `path`, making missing parent directories. Throws InputError
  // naming `key` (the input key that gave the path) when the file cannot be
  // created or opened, before anything is written.
  H5Output(const std::string& path, const std::string& key, const MpiContext& mpi, Mode mode = Mode::create);
  ~H5Output();
  H5Output(const H5Output&) = delete;
  H5Output& operator=(const H5Output&) = delete;

  const std::string& path() const { return path_; }

  // Attributes on an existing object ("/" or a group/dataset path).
  void attribute(const std::string& object, const std::string& name, const std::string& value);
  void attribute(const std::string& object, const std::string& name, const std::vector<std::string>& value);
  void attribute(const std::string& object, const std::string& name, std::int64_t value);
  void attribute(const std::string& object, const std::string& name, double value);
  void attribute(const std::string& object, const std::string& name, const std::vector<double>& value);
  void attribute(const std::string& object, const std::string& name, const std::vector<std::int64_t>& value);

  // Datasets; missing parent groups are created. `units` becomes an attribute.
  void text(const std::string& path, const std::string& value);
  void scalar(const std::string& path, double value, const std::string& units = "");
  void scalar(const std::string& path, std::int64_t value, const std::string& units = "");
  void table(const std::string& path, const H5Table& table);
  void group(const std::string& path);
  bool exists(const std::string& path) const;
  // Unlinks a group or dataset if it exists (collective).
  void remove(const std::string& path) { unlink_existing(path); }

  // A distributed 2-D dataset [total_rows, width] (1-D [total_rows] when
  // width is 0): this rank writes rows [row_offset, row_offset + rows) from
  // `local` (rows * max(width, 1) values). Collective; ranks may hold none.
  void rows(const std::string& path, std::span<const double> local, std::int64_t row_offset,
            std::int64_t total_rows, int width);
  // A distributed 1-D dataset of integers (particle ids): this rank writes
  // entries [offset, offset + local.size()) of `total`. Collective.
  void rows(const std::string& path, std::span<const std::int64_t> local, std::int64_t offset, std::int64_t total);
  // A distributed N-D dataset (N = global.size(), 1 to 3; slowest index
  // first, as HDF5 and h5py see it): this rank writes the box [start,
  // start + count) from `local` (row-major, last index fastest). Collective.
  void slab(const std::string& path, std::span<const double> local, std::span<const std::int64_t> global,
            std::span<const std::int64_t> start, std::span<const std::int64_t> count);

  // Time series: an extendible dataset [length, frame...] (frame of 0 to 3
  // dimensions, slowest first), chunked by frame, grown one frame at a
  // time. series() creates it empty unless it exists (a restarted run).
  void series(const std::string& path, std::span<const std::int64_t> frame, const std::string& units = "");
  // A 1-D extendible series of integers (H5MD's `step`), empty unless it exists.
  void integer_series(const std::string& path);
  std::int64_t series_length(const std::string& path) const;
  // Makes the series exactly `length` frames long: drops the frames beyond
  // it (a restart discards what came after its checkpoint), or grows it
  // with the fill value (NaN for doubles, -1 for integers) where frames a
  // restart's checkpoint counts were lost before they reached the disk.
  void series_resize(const std::string& path, std::int64_t length);
  // Writes frame `index`, extending the dataset to index + 1 frames when
  // shorter: this rank's box [start, start + count) of the frame. Collective.
  void series_write(const std::string& path, std::int64_t index, std::span<const double> local,
                    std::span<const std::int64_t> start, std::span<const std::int64_t> count);
  // The whole of a dataset of doubles, on every rank (small datasets: a series' times).
  std::vector<double> read(const std::string& path) const;
  // A 1-D series' entry `index`: rank 0's value is written.
  void series_write(const std::string& path, std::int64_t index, double value);
  // An integer series' entry `index` (integer_series): rank 0's value is written.
  void series_write(const std::string& path, std::int64_t index, std::int64_t value);

  // A string attribute of an existing object, "" when it has none. Collective.
  std::string string_attribute(const std::string& object, const std::string& name) const;
  bool has_attribute(const std::string& object, const std::string& name) const;
  // An integer (array) attribute, empty when absent. Collective.
  std::vector<std::int64_t> integer_attribute(const std::string& object, const std::string& name) const;
  void remove_attribute(const std::string& object, const std::string& name);

  void set_status(const std::string& status);   // root attribute `status`
  // Writes HDF5's cached metadata and everything written so far to the file
  // (H5Fflush, global scope, which also syncs through MPI-IO), so a process
  // killed afterwards leaves a file that opens and holds all of it.
  // Collective.
  void flush();

 private:
  hid_t write_scalar(const std::string& path, hid_t type, const void* value);
  // Collective write of this rank's box [first, first + count) of a dataset
  // of doubles (points == 0: this rank selects nothing).
  void write_box(hid_t dataset, const std::string& path, int rank, const hsize_t* first, const hsize_t* count,
                 hsize_t points, const void* data, hid_t type = H5T_NATIVE_DOUBLE);
  void unlink_existing(const std::string& path);
  std::string path_;
  const MpiContext& mpi_;
  hid_t file_ = -1;
  hid_t xfer_ = -1;   // collective transfer property list
  hid_t lcpl_ = -1;   // creates intermediate groups
};

// Indices of the NaN entries of a series' times: the frames a series'
// fill value stands in for (a frame's time is written last).
std::vector<std::int64_t> nan_indices(const std::vector<double>& times);

// A restart whose checkpoint counts output frames (and diagnostics or
// observable rows) that the file lacks records their indices in the root
// attributes `missing_frames` and `missing_rows` (absent when none).
// Collective.
void record_missing_output(H5Output& out, const std::vector<std::int64_t>& frames,
                           const std::vector<std::int64_t>& rows);
// What those attributes say, as "frames 0-3, 7 and rows 0-3"; "" when the
// output lacks nothing. Collective.
std::string describe_missing_output(const H5Output& out);

std::string hdf5_version();

}  // namespace strata
