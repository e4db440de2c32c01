// strata sweep INPUT: one input, many runs (docs/contract.md). Every mode
// first expands the [sweep] table and validates every point on every rank,
// so a bad value is exit 2 before any point runs or any directory exists.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "engine/cli/commands.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/sweep/point_dir.hpp"
#include "engine/sweep/sweep_runner.hpp"
#include "engine/sweep/sweep_spec.hpp"

namespace strata {
namespace {

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string shape(const SweepSpec& spec) {
  std::string text = spec.mode() + " of ";
  for (std::size_t a = 0; a < spec.axes().size(); ++a) {
    text += (a ? (spec.mode() == "zip" ? ", " : " x ") : "") + std::to_string(spec.axes()[a].values.size());
  }
  return text;
}

void list_points(const SweepSpec& spec, std::ostream& out) {
  out << "sweep " << spec.input() << ": " << spec.points() << " points (" << shape(spec) << "), output_dir "
      << spec.output_dir() << "\n";
  std::vector<std::size_t> widths{5, 7};
  for (const SweepAxis& a : spec.axes()) {
    std::size_t w = a.key.size();
    for (const SweepValue& v : a.values) w = std::max(w, v.text.size());
    widths.push_back(w);
  }
  // The last column is not padded: no trailing blanks.
  auto cell = [&](const std::string& s, std::size_t column) {
    return column + 1 == widths.size() ? s : pad(s, widths[column]);
  };
  out << cell("index", 0) << "  " << cell("status", 1);
  for (std::size_t a = 0; a < spec.axes().size(); ++a) out << "  " << cell(spec.axes()[a].key, a + 2);
  out << "\n";
  for (std::size_t p = 0; p < spec.points(); ++p) {
    const std::vector<std::size_t> c = spec.coordinates(p);
    out << cell(std::to_string(p), 0) << "  " << cell(to_string(point_status(spec.point_dir(p))), 1);
    for (std::size_t a = 0; a < spec.axes().size(); ++a) out << "  " << cell(spec.axes()[a].values[c[a]].text, a + 2);
    out << "\n";
  }
}

void print_status(const SweepSpec& spec, std::ostream& out) {
  std::size_t count[4] = {0, 0, 0, 0};
  std::vector<std::size_t> failed;
  for (std::size_t p = 0; p < spec.points(); ++p) {
    const PointStatus s = point_status(spec.point_dir(p));
    ++count[static_cast<int>(s)];
    if (s == PointStatus::failed) failed.push_back(p);
  }
  out << "sweep " << spec.input() << ": " << spec.points() << " points in " << spec.output_dir() << ": "
      << count[static_cast<int>(PointStatus::done)] << " done, " << count[static_cast<int>(PointStatus::running)]
      << " running, " << count[static_cast<int>(PointStatus::failed)] << " failed, "
      << count[static_cast<int>(PointStatus::pending)] << " pending\n";
  if (!failed.empty()) out << "failed:\n";
  for (std::size_t p : failed) {
    out << "  " << spec.point_name(p) << " (" << spec.describe(p) << "): " << failure_message(spec.point_dir(p))
        << "\n";
  }
}

}  // namespace

int sweep_command(const MpiContext& mpi, std::ostream& out, const SweepArgs& args) {
  std::optional<SweepSpec> spec;
  mpi.collective([&] {
    const int modes =
        int(args.list) + int(args.index >= 0) + int(args.all) + int(args.status) + int(!args.collect.empty());
    if (modes != 1) {
      throw InputError("strata sweep: give exactly one of --list, --index I, --all, --status, --collect OUT.h5");
    }
    if (!args.all && (args.ranks_per_point > 0 || args.jobs > 0 || args.retry_failed)) {
      throw InputError("strata sweep: --ranks-per-point, --jobs and --retry-failed go with --all");
    }
    spec.emplace(SweepSpec::load(args.input, args.set));
    if (args.index >= 0 && static_cast<std::size_t>(args.index) >= spec->points()) {
      throw InputError("--index " + std::to_string(args.index) + ": the sweep has " + std::to_string(spec->points()) +
                       " points (0 to " + std::to_string(spec->points() - 1) + ")");
    }
  });
  spec->validate(mpi);

  // Reading the markers is rank 0's business; the others print nothing anyway.
  if (args.list) {
    if (mpi.root()) list_points(*spec, out);
    return 0;
  }
  if (args.status) {
    if (mpi.root()) print_status(*spec, out);
    return 0;
  }
  if (!args.collect.empty()) return collect_sweep(*spec, mpi, out, args.collect);
  if (args.index >= 0) return run_sweep_index(*spec, mpi, out, static_cast<std::size_t>(args.index));
  return run_sweep_all(*spec, mpi, out, args);
}

}  // namespace strata
