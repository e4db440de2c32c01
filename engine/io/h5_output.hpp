// The run's one HDF5 file, written collectively by all ranks through the
// MPI-IO driver (parallel HDF5, never file-per-rank). Every call here is
// collective: all ranks call it with the same arguments; rank 0 supplies the
// data of small datasets and the other ranks select nothing.
//
// A failure is collective too. A write that fails on one rank (a full disk
// fails on whichever rank writes the bytes that do not fit) must not leave
// the others inside the next collective HDF5 call, so the ranks agree on
// the result of every HDF5 call that can touch the file, over a
// communicator of the file's own (the background writer's thread may be
// the caller), and a failure anywhere throws the same Error (exit 4) on
// every rank: "disk full writing FILE (what)" when the file system ran out
// of space, else "cannot write FILE (what: reason)".
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace strata {

class MpiContext;

// An HDF5 id, closed at scope exit.
struct H5Id {
  hid_t id = -1;
  herr_t (*close)(hid_t) = nullptr;
  H5Id() = default;
  H5Id(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  ~H5Id() {
    if (id >= 0 && close != nullptr) close(id);
  }
};

// A table: a group holding one 1-D dataset per column, all along one
// dimension whose HDF5 dimension scale is the first column (the row key:
// a timer phase, an instrument name, a sweep point index), so netCDF tools
// and xarray read it as variables over that dimension. Each column's unit
// is its dataset's `units` attribute.
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
  // created or opened, before anything is written, with the system's
  // reason. `name` is how messages call the file (default: its path).
  H5Output(const std::string& path, const std::string& key, const MpiContext& mpi, Mode mode = Mode::create,
           const std::string& name = "");
  ~H5Output();   // closes quietly (close() reports)
  H5Output(const H5Output&) = delete;
  H5Output& operator=(const H5Output&) = delete;

  const std::string& path() const { return path_; }
  // Rank 0: the parent directory the constructor created ("" if it existed).
  const std::string& created_directory() const { return created_directory_; }

  // Writes what HDF5 still caches and closes the file; then, where tables
  // have string columns, rank 0 reopens it alone to fill them, and only
  // then writes the last status set_status() was given (so a file never
  // says `complete` before its tables are whole). Collective; a failure is
  // every rank's Error. After a failure the file is closed only if that
  // can succeed (see ~H5Output).
  void close();

  // Attributes on an existing object ("/" or a group/dataset path).
  void attribute(const std::string& object, const std::string& name, const std::string& value);
  void attribute(const std::string& object, const std::string& name, const std::vector<std::string>& value);
  void attribute(const std::string& object, const std::string& name, std::int64_t value);
  void attribute(const std::string& object, const std::string& name, double value);
  void attribute(const std::string& object, const std::string& name, const std::vector<double>& value);
  void attribute(const std::string& object, const std::string& name, const std::vector<std::int64_t>& value);
  // Fixed-length string attributes, as H5MD 1.1 has its strings: a scalar,
  // or a 1-D array padded to its longest entry; character set ASCII where
  // every byte is, else UTF-8.
  void fixed_attribute(const std::string& object, const std::string& name, const std::string& value);
  void fixed_attribute(const std::string& object, const std::string& name, const std::vector<std::string>& value);

  // Datasets; missing parent groups are created. `units` becomes an attribute.
  void text(const std::string& path, const std::string& value);
  void scalar(const std::string& path, double value, const std::string& units = "");
  void scalar(const std::string& path, std::int64_t value, const std::string& units = "");
  // A 1-D dataset of rank 0's values (every rank calls it, with the same length).
  void array(const std::string& path, std::span<const double> values, const std::string& units = "");
  void array(const std::string& path, std::span<const std::int64_t> values, const std::string& units = "");
  // Writes `table` as the group `path` (replacing what is there). String
  // columns are variable-length UTF-8 datasets, which parallel HDF5 cannot
  // write: they are created here and filled by rank 0 alone when the file
  // is closed (see close()).
  void table(const std::string& path, const H5Table& table);
  // The `units` attribute of `path` in UDUNITS' spelling of `units` (see
  // udunits_spelling); where that differs from `units` (or is none), a
  // `long_name` "<name> in <units>" keeps strata's words, unless the
  // object has a long_name already. Nothing for "".
  void write_units(const std::string& path, const std::string& units);
  void group(const std::string& path);
  bool exists(const std::string& path) const;
  // netCDF-4 dimensions (HDF5 dimension scales, which netCDF tools, h5netcdf
  // and xarray read as named dimensions and coordinate variables): makes the
  // 1-D dataset `path` a dimension scale named `name`, unless it is one.
  void dimension_scale(const std::string& path, const std::string& name);
  // Attaches the dimension scale `scale` to axis `axis` (0 slowest) of the
  // dataset `path`. Collective.
  void attach_scale(const std::string& path, const std::string& scale, unsigned axis);
  // Unlinks a group or dataset if it exists (collective).
  void remove(const std::string& path);
  // A hard link `link` to the existing object `target`, unless `link`
  // exists (collective).
  void hard_link(const std::string& target, const std::string& link);
  // Moves a group or dataset to `to` (collective).
  void move(const std::string& from, const std::string& to);

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
  // A virtual dataset at `view` (made anew) that reads frame `index` of the
  // series `source` of this file: the frame's shape, no data of its own. For
  // readers that take whole datasets only (ParaView's XDMF 3 reader cannot
  // read a frame of a series through a HyperSlab). Collective.
  // `shape` (slowest first) reshapes it to as many values as a frame holds
  // (a 2-D frame as a 3-D mesh one cell thick); empty: the frame's shape.
  void frame_view(const std::string& view, const std::string& source, std::int64_t index,
                  std::span<const std::int64_t> shape = {});
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

  // Root attribute `status`; held back until close() while string columns
  // wait to be filled.
  void set_status(const std::string& status);
  // Writes HDF5's cached metadata and everything written so far to the file
  // (H5Fflush, global scope, which also syncs through MPI-IO), so a process
  // killed afterwards leaves a file that opens and holds all of it.
  // Collective.
  void flush();

 private:
  // Collective: every rank says whether its part of `what` worked; a
  // failure on any rank throws the lowest failing rank's Error on all.
  // A write that HDF5 itself could not finish (`writing`) may have left
  // the ranks' HDF5 states apart (one past a barrier inside HDF5, one
  // before it), so the file is abandoned: no HDF5 call touches it again,
  // not even to close it (see abandoned_files()).
  void agree(bool ok, const std::string& what, bool writing = true) const;
  // Collective: throws `local_failure` of the lowest rank that has one on
  // every rank; returns when no rank has one.
  void settle(const std::string& local_failure, bool abandon = false) const;
  // Collective, before a write of `bytes` (all ranks' together): a
  // collective "disk full" unless the file system keeps room to close the
  // file after it (rank 0 asks the file system).
  void make_room(std::uint64_t bytes, const std::string& what) const;
  // Collective, before a flush: abandons the file (a collective "disk
  // full") when the file system has too little room left to flush it.
  void room_to_flush() const;
  herr_t check(herr_t status, const std::string& what) const {
    agree(status >= 0, what);
    return status;
  }
  hid_t check_id(hid_t id, const std::string& what) const {
    agree(id >= 0, what);
    return id;
  }
  // `length`: a 1-D attribute or dataset of that many entries; null: a scalar.
  void write_attribute(const std::string& object, const std::string& name, hid_t type, const void* data,
                       const hsize_t* length = nullptr);
  // A small dataset, replacing any at `path`: rank 0's data is written.
  void write_from_root(const std::string& path, hid_t type, const void* data, const hsize_t* length = nullptr);
  // An empty extendible series (see series()) of `type`, with its fill value.
  void new_series(const std::string& path, std::span<const std::int64_t> frame, hid_t type, const void* fill);
  // A new dataset at `path` (collective; a failure throws on every rank).
  hid_t create_dataset(const std::string& path, hid_t type, hid_t space, hid_t dcpl = H5P_DEFAULT) const {
    return check_id(H5Dcreate2(file_, path.c_str(), type, space, lcpl_, dcpl, H5P_DEFAULT), "create dataset " + path);
  }
  // Collective write of this rank's box [first, first + count) of a dataset
  // of doubles (points == 0: this rank selects nothing).
  void write_box(hid_t dataset, const std::string& path, int rank, const hsize_t* first, const hsize_t* count,
                 hsize_t points, const void* data, hid_t type = H5T_NATIVE_DOUBLE);
  // series_write's frame `index` in any type: this rank's `size` values (0: none).
  void series_box(const std::string& path, std::int64_t index, const void* local, std::size_t size, hid_t type,
                  std::span<const std::int64_t> start, std::span<const std::int64_t> count);
  std::string path_, name_, directory_, created_directory_;
  const MpiContext& mpi_;
  MPI_Comm comm_ = MPI_COMM_NULL;   // the ranks' agreement on results (see the top)
  mutable hid_t file_ = -1;         // -1 once closed or abandoned
  hid_t xfer_ = -1;   // collective transfer property list
  hid_t lcpl_ = -1;   // creates intermediate groups
  // String columns created by table() that rank 0 fills in close(): dataset path, values.
  std::vector<std::pair<std::string, std::vector<std::string>>> pending_strings_;
  std::optional<std::string> pending_status_;
  // Rank 0 reopens the closed file alone and writes the pending columns and status. Collective.
  void fill_pending_strings();
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

// The `units` attribute strata writes for a unit as its schema and console
// say it: the UDUNITS-2 spelling ("GB/s" -> "Gbyte/s", "1/s" -> "s-1",
// counts such as "paths" -> "1"), or "" where UDUNITS has no unit for it
// (money, 1/sqrt(year)): the attribute is then left out and the dataset's
// `long_name` says what the number is. md's Lennard-Jones reduced units
// (sigma, tau, epsilon, ...) pass as they are: they name, for people, the
// units /h5md/modules/units declares, and UDUNITS has none of them.
std::string udunits_spelling(const std::string& unit);

// The string attribute `name` of `obj` (variable or fixed length), or none
// where it is missing, not a string or unreadable. Local, for readers.
std::optional<std::string> string_attribute(hid_t obj, const char* name);

// Whether this process abandoned an HDF5 file (H5Output::agree). HDF5
// closes what is open when MPI_Finalize ends the library, and closing such
// a file can hang in a collective or free it twice (HDF5 1.10), so the
// process must end with MPI_Abort, after its message, instead.
bool abandoned_hdf5_files();

}  // namespace strata
