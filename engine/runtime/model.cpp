#include "engine/runtime/model.hpp"

#include <algorithm>

#include "engine/runtime/error.hpp"
#include "engine/runtime/format.hpp"

namespace strata {

namespace {
std::string gib(std::size_t bytes) { return format("%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0)); }
}  // namespace

std::string memory_shortfall(const MemoryPlan& plan, const Device& device, const MemoryAvailable& available) {
  const int ranks = std::max(1, available.ranks_on_node);
  const std::size_t host = available.host_bytes / static_cast<std::size_t>(ranks);
  if (host > 0 && plan.host_bytes > host) {
    return "the run needs " + gib(plan.host_bytes) + " of host memory per rank; " + gib(host) +
           " is available per rank (MemAvailable shared by " + std::to_string(ranks) +
           " rank(s) on this node). Nothing was computed. Hint: " + plan.hint;
  }
  if (device.on_cuda() && plan.device_bytes > 0) {
    const int devices = std::max(1, available.devices_on_node);
    const auto sharing = static_cast<std::size_t>((ranks + devices - 1) / devices);
    const std::size_t free = available.device_free_bytes / sharing;
    if (plan.device_bytes > free) {
      return "the run needs " + gib(plan.device_bytes) + " of device memory per rank on " + device.name + "; " +
             gib(free) + " is free per rank (" + std::to_string(sharing) +
             " rank(s) share the device). Nothing was computed. Hint: " + plan.hint;
    }
  }
  return {};
}

ModelRegistry& ModelRegistry::instance() {
  static ModelRegistry registry;
  return registry;
}

void ModelRegistry::add(std::unique_ptr<Model> model) { models_.push_back(std::move(model)); }

const Model* ModelRegistry::find(std::string_view name) const {
  const auto m = std::ranges::find_if(models_, [&](const auto& model) { return model->name() == name; });
  return m == models_.end() ? nullptr : m->get();
}

std::vector<const Model*> ModelRegistry::models() const {
  std::vector<const Model*> out;
  for (const auto& m : models_) out.push_back(m.get());
  std::sort(out.begin(), out.end(), [](const Model* a, const Model* b) { return a->name() < b->name(); });
  return out;
}

std::vector<std::string> ModelRegistry::names() const {
  std::vector<std::string> out;
  for (const Model* m : models()) out.emplace_back(m->name());
  return out;
}

void declare_run_schema(Schema& s) {
  s.choice("run.model", "", ModelRegistry::instance().names(), "the model to run");
  s.choice("run.precision", "fp64", {"fp64", "fp32"}, "floating-point precision of the kernels");
  s.choice("run.backend", "auto", {"auto", "cuda", "host"},
           "where kernels run: auto takes CUDA where a device is visible, else the host (OpenMP)");
  s.integer("run.seed", 42, "", Range{0.0, {}},
            "seed of the counter-based random numbers (Philox4x32-10 key)");
  s.string("run.output", "out/run.h5", "output HDF5 file, written collectively by all ranks").restart_safe = true;
  s.string("run.author", "",
           "the author named in particle outputs (/h5md/author); empty: the user running strata ($USER, $LOGNAME, "
           "else the account's name)");
  s.boolean("run.backup", false,
            "an existing output file is kept as NAME.~N~.h5 (N = 1, 2, ...) instead of stopping the run; "
            "without it (or --overwrite) an existing output stops the run before anything is computed. Only a "
            "file strata wrote is moved: anything else at the path (a directory, a device, another file) stops "
            "the run")
      .restart_safe = true;
  s.boolean("run.async_output", true,
            "grid models write output frames from a background thread while the steps go on (needs "
            "MPI_THREAD_MULTIPLE, else synchronous); the compute waits for the file system at most one frame")
      .restart_safe = true;
  s.real("run.watchdog_floor", 300.0, "s", Range{0.0, 1e6},
         "with several ranks, a rank that waits this long in one phase (a halo exchange, a collective, an output "
         "or checkpoint write) takes a peer for lost (a cut link, a hung or stopped process) and ends the run with "
         "exit 76, naming the rank, the phase and the peer; a step's phases may also take 30 x the slowest of the "
         "last 16 steps, the set-up 10 x the floor (docs/faults.md); 0 = no watchdog")
      .restart_safe = true;
  // The run's backend as written; a restart also checks the backend it resolved to.
  s.find_mut("run.backend").restart_safe = true;

  s.integer("checkpoint.every_steps", 0, "steps", Range{0.0, {}},
            "write a checkpoint every N steps (pricing: about 0.25 s each unless pricing.chunk_paths fixes them; "
            "prefer checkpoint.every_seconds); 0 = off")
      .restart_safe = true;
  s.real("checkpoint.every_seconds", 600.0, "s", Range{0.0, {}},
         "write a checkpoint when this much wall time has passed since the last one; 0 = off")
      .restart_safe = true;
  s.integer("checkpoint.keep", 2, "", Range{1.0, 1000.0}, "newest checkpoints kept beside the output")
      .restart_safe = true;
  s.string("checkpoint.max_walltime", "0",
           "wall-time limit of the job, HH:MM:SS or D-HH:MM:SS, counted from the start of the process: "
           "checkpoint and exit 75 before it, leaving the measured time of a step and of a checkpoint as margin; "
           "\"0\" = none")
      .restart_safe = true;
  s.integer("health.every_steps", 100, "steps", Range{0.0, {}},
            "all-reduced NaN/Inf check of the model's state every N steps (and always at the end); 0 = only at "
            "the end")
      .restart_safe = true;
  s.real("health.device_every_seconds", 10.0, "s", Range{0.0, 86400.0},
         "sample each rank's GPU through NVML (utilization, memory used, temperature, power, SM clock, clock-event "
         "(throttle) reasons, ECC counts) every this many seconds into /health/<rank> of the output, and warn on the "
         "progress line when a GPU throttles or reports new ECC errors; 0 = off. Absent without a GPU or an NVIDIA "
         "driver")
      .restart_safe = true;
}

Schema schema_for(const std::string& model) {
  const Model* m = ModelRegistry::instance().find(model);
  if (m == nullptr) {
    const std::vector<std::string> names = ModelRegistry::instance().names();
    const auto near = nearest_word(model, names, 2);
    throw InputError("unknown model; available: " + comma_list(names) +
                     (near ? "; did you mean '" + *near + "'?" : ""));
  }
  Schema s;
  declare_run_schema(s);
  m->declare(s);
  return s;
}

}  // namespace strata
