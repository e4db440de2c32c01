#include "engine/sweep/sweep_runner.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <vector>

#include "engine/config/schema.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/sweep/point_dir.hpp"
#include "engine/sweep/sweep_spec.hpp"

namespace strata {
namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

// The numeric scalar results of one output, by column name, with the
// `units` attribute of each dataset ("" where it has none).
struct Result {
  std::string name;
  double value;
  std::string units;
};
using Results = std::vector<Result>;

// Every scalar integer or float dataset below `group`, except the stored
// input (/config) and the timers (/timers), which describe the run rather
// than its results. Uses only calls that HDF5 1.10 to 1.14 share.
void walk(hid_t group, const std::string& path, Results& out) {
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) return;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len <= 0) continue;
    std::string name(static_cast<std::size_t>(len) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
    name.resize(static_cast<std::size_t>(len));
    const std::string full = path + "/" + name;
    if (full == "/config" || full == "/timers") continue;
    const hid_t obj = H5Oopen(group, name.c_str(), H5P_DEFAULT);
    if (obj < 0) continue;
    const H5I_type_t kind = H5Iget_type(obj);
    if (kind == H5I_GROUP) {
      walk(obj, full, out);
    } else if (kind == H5I_DATASET) {
      const hid_t space = H5Dget_space(obj);
      const hid_t type = H5Dget_type(obj);
      const H5T_class_t cls = H5Tget_class(type);
      double value = 0;
      if (H5Sget_simple_extent_type(space) == H5S_SCALAR && (cls == H5T_INTEGER || cls == H5T_FLOAT) &&
          H5Dread(obj, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) >= 0) {
        std::string column = full.substr(1);
        std::replace(column.begin(), column.end(), '/', '.');
        out.push_back({column, value, string_attribute(obj, "units").value_or("")});
      }
      H5Tclose(type);
      H5Sclose(space);
    }
    H5Oclose(obj);
  }
}

Results read_results(const std::string& file) {
  Results out;
  // Serial read with the default driver: only rank 0 reads.
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return out;
  walk(f, "", out);
  H5Fclose(f);
  return out;
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

int collect_sweep(const SweepSpec& spec, const MpiContext& mpi, std::ostream& out, const std::string& path) {
  const std::string csv_path = std::filesystem::path(path).replace_extension(".csv").string();
  std::size_t n_done = 0, n_columns = 0;
  mpi.collective([&] {
    if (!mpi.root()) return;
    if (csv_path == path)
      throw InputError("--collect " + path + ": name the HDF5 file (OUT.h5); OUT.csv is written beside it");
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const std::size_t n = spec.points();
    std::vector<std::int64_t> index(n);
    std::vector<std::string> status(n);
    std::vector<std::string> columns;  // results, in order of first appearance
    std::map<std::string, std::vector<double>> values;
    std::map<std::string, std::string> units;   // a result's units, from the first output that has them
    for (std::size_t p = 0; p < n; ++p) {
      index[p] = static_cast<std::int64_t>(p);
      const std::string dir = spec.point_dir(p);
      const PointStatus s = point_status(dir);
      status[p] = to_string(s);
      // Only a done point's output is complete; the others' values are NaN.
      if (s != PointStatus::done) continue;
      ++n_done;
      for (const Result& r : read_results(dir + "/output.h5")) {
        auto [it, added] = values.try_emplace(r.name, std::vector<double>(n, kMissing));
        if (added) columns.push_back(r.name);
        it->second[p] = r.value;
        if (units[r.name].empty()) units[r.name] = r.units;
      }
    }
    n_columns = columns.size();

    H5Table table;
    table.columns.push_back({"index", "", index});
    std::vector<std::vector<std::size_t>> coords(n);
    for (std::size_t p = 0; p < n; ++p) coords[p] = spec.coordinates(p);
    for (std::size_t a = 0; a < spec.axes().size(); ++a) {
      const SweepAxis& axis = spec.axes()[a];
      if (axis.numeric()) {
        std::vector<double> v(n);
        for (std::size_t p = 0; p < n; ++p) v[p] = *axis.values[coords[p][a]].number;
        table.columns.push_back({axis.key, spec.unit_of(axis), v});
      } else {
        std::vector<std::string> v(n);
        for (std::size_t p = 0; p < n; ++p) v[p] = axis.values[coords[p][a]].text;
        table.columns.push_back({axis.key, "", v});
      }
    }
    table.columns.push_back({"status", "", status});
    for (const std::string& c : columns) table.columns.push_back({c, units[c], values[c]});

    {
      // Rank 0 alone: its own communicator for the (parallel-HDF5) writer.
      const MpiContext self(MPI_COMM_SELF);
      H5Output h5(path, "--collect", self);
      h5.attribute("/", "sweep_input", spec.input());
      h5.attribute("/", "mode", spec.mode());
      h5.attribute("/", "output_dir", spec.output_dir());
      h5.attribute("/", "points", static_cast<std::int64_t>(n));
      h5.table("/summary", table);
      h5.attribute("/summary", "description",
                   std::string("one row per sweep point (dimension index): swept parameters, status, every "
                               "numeric scalar result of <output_dir>/point-N/output.h5 (NaN where missing), one "
                               "dataset per column; a column's units attribute gives a parameter's unit from the "
                               "input schema and a result's from its dataset"));
    }

    std::ofstream csv(csv_path, std::ios::trunc);
    if (!csv) throw Error(ExitCode::resources, "--collect: cannot write '" + csv_path + "'");
    for (std::size_t c = 0; c < table.columns.size(); ++c) csv << (c ? "," : "") << csv_field(table.columns[c].name);
    csv << "\n";
    for (std::size_t p = 0; p < n; ++p) {
      for (std::size_t c = 0; c < table.columns.size(); ++c) {
        if (c) csv << ",";
        std::visit(
            [&](const auto& v) {
              using V = std::decay_t<decltype(v)>;
              if constexpr (std::is_same_v<V, std::vector<double>>) {
                csv << (std::isnan(v[p]) ? "nan" : shortest_text(v[p]));   // "-nan" too is missing
              } else if constexpr (std::is_same_v<V, std::vector<std::int64_t>>) {
                csv << v[p];
              } else {
                csv << csv_field(v[p]);
              }
            },
            table.columns[c].values);
      }
      csv << "\n";
    }
    csv.flush();
    if (!csv) throw Error(ExitCode::resources, "--collect: cannot write '" + csv_path + "'");
  });
  out << "collected " << spec.points() << " point(s) (" << n_done << " done) with " << spec.axes().size()
      << " parameter(s) and " << n_columns << " result column(s) into " << path << " and " << csv_path << "\n";
  return 0;
}

}  // namespace strata
