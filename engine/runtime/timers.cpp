#include "engine/runtime/timers.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "engine/io/h5_output.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata {

void Timers::add(const std::string& phase, double seconds) {
  for (auto& [name, total] : phases_) {
    if (name == phase) {
      total += seconds;
      return;
    }
  }
  phases_.emplace_back(phase, seconds);
}

double Timers::seconds(const std::string& phase) const {
  const auto it = std::ranges::find(phases_, phase, &std::pair<std::string, double>::first);
  return it == phases_.end() ? 0.0 : it->second;
}

std::vector<Timers::Summary> Timers::summarize(const MpiContext& mpi) const {
  std::string names;
  for (const auto& [name, t] : phases_) names += name + '\n';
  broadcast(mpi.comm(), names);

  std::vector<Summary> out;
  std::istringstream in(names);
  for (std::string phase; std::getline(in, phase);) {
    const double mine = seconds(phase);
    out.push_back({phase, mpi.min(mine), mpi.sum(mine) / mpi.size(), mpi.max(mine)});
  }
  return out;
}

std::string Timers::format(const std::vector<Summary>& s) {
  std::string text =
      "timers (seconds over ranks)      min        avg        max   (each without the phases inside it)\n";
  char line[160];
  for (const Summary& t : s) {
    std::snprintf(line, sizeof line, "  %-28s %10.3f %10.3f %10.3f\n", t.phase.c_str(), t.min, t.avg, t.max);
    text += line;
  }
  return text;
}

void Timers::write(H5Output& out, const std::vector<Summary>& s) {
  H5Table table;
  std::vector<std::string> phase;
  std::vector<double> mn, avg, mx;
  for (const Summary& t : s) {
    phase.push_back(t.phase);
    mn.push_back(t.min);
    avg.push_back(t.avg);
    mx.push_back(t.max);
  }
  table.columns = {{"phase", "", phase}, {"min", "s", mn}, {"avg", "s", avg}, {"max", "s", mx}};
  out.table("/timers", table);
  out.attribute(
      "/timers", "description",
      std::string("wall time per phase, min/avg/max over ranks; a phase's time excludes the phases timed inside it "
                  "(diagnostics and output inside compute), so the phases add up"));
}

}  // namespace strata
