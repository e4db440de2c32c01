#include "engine/runtime/shape_report.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include "engine/io/h5_output.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata {
namespace {

// One line a phase, then one a launch size: tab-separated numbers, then the
// kernel's name (which has no tab or newline) to the end of the line.
std::string to_text(const std::vector<shape::PhaseCounts>& phases) {
  std::ostringstream s;
  s.precision(17);
  for (const auto& p : phases) {
    s << p.phase << '\t' << p.launches << '\t' << p.waits << '\t' << p.allocations << '\t' << p.bytes_to_device
      << '\t' << p.bytes_to_host << '\t' << p.sizes.size() << '\n';
    for (const auto& z : p.sizes)
      s << z.threads << '\t' << z.launches << '\t' << z.bytes << '\t' << z.flops << '\t' << z.int_ops << '\t'
        << z.kernel << '\n';
  }
  return s.str();
}

std::vector<shape::PhaseCounts> from_text(const std::string& text) {
  std::istringstream s(text);
  std::vector<shape::PhaseCounts> phases;
  shape::PhaseCounts p;
  std::size_t sizes = 0;
  while (std::getline(s, p.phase, '\t') &&
         s >> p.launches >> p.waits >> p.allocations >> p.bytes_to_device >> p.bytes_to_host >> sizes) {
    s.ignore(1);   // the newline
    p.sizes.resize(sizes);
    for (auto& z : p.sizes) {
      s >> z.threads >> z.launches >> z.bytes >> z.flops >> z.int_ops;
      s.ignore(1);   // the tab
      std::getline(s, z.kernel);
    }
    phases.push_back(p);
  }
  return phases;
}

}  // namespace

std::vector<shape::PhaseCounts> root_shape_counts(const MpiContext& mpi) {
  std::string text = mpi.root() ? to_text(shape::snapshot()) : std::string();
  broadcast(mpi.comm(), text);
  return from_text(text);
}

void write_shape_counts(H5Output& h5, const std::vector<shape::PhaseCounts>& phases) {
  h5.group("/performance/shape");
  h5.attribute("/performance/shape", "description",
               std::string("what the run asks of a GPU, per timer phase, counted on every backend as the CUDA "
                           "backend launches (rank 0's counts; docs/gpu.md)"));
  for (const auto& p : phases) {
    const std::string g = "/performance/shape/" + p.phase;
    h5.group(g);
    h5.scalar(g + "/launches", p.launches);
    h5.scalar(g + "/waits", p.waits);
    h5.scalar(g + "/allocations", p.allocations);
    h5.scalar(g + "/bytes_to_device", p.bytes_to_device, "byte");
    h5.scalar(g + "/bytes_to_host", p.bytes_to_host, "byte");
    h5.scalar(g + "/threads_min", p.threads_min());
    h5.scalar(g + "/threads_median", p.threads_median());
    std::vector<std::int64_t> threads, launches, kernel;
    std::vector<double> bytes, flops, int_ops;
    std::vector<std::string> names;
    for (const auto& z : p.sizes) {
      const auto at = std::find(names.begin(), names.end(), z.kernel);
      kernel.push_back(at - names.begin());
      if (at == names.end()) names.push_back(z.kernel);
      threads.push_back(z.threads);
      launches.push_back(z.launches);
      bytes.push_back(z.bytes);
      flops.push_back(z.flops);
      int_ops.push_back(z.int_ops);
    }
    // The launches by size: the cost model needs each size's own work.
    h5.array(g + "/size_threads", threads);
    h5.array(g + "/size_launches", launches);
    h5.array(g + "/size_device_bytes", bytes, "byte");
    h5.array(g + "/size_flops", flops);
    h5.array(g + "/size_int_ops", int_ops);
    // Which kernel: an index into the dataset's `names` ("" where none is named).
    h5.array(g + "/size_kernel", kernel);
    if (!names.empty()) h5.attribute(g + "/size_kernel", "names", names);
  }
}

}  // namespace strata
