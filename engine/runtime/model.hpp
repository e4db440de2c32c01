// What a model is to the engine. A model lives in models/<name>/, declares
// its parameters, and registers itself with STRATA_REGISTER_MODEL; adding a
// model touches no engine file.
#pragma once

#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"

namespace strata {

class MpiContext;
class H5Output;
class Timers;
class DeviceHealth;
class Simulation;

// Everything a model run needs from the engine.
struct RunContext {
  const MpiContext& mpi;
  const Config* config;   // null in `validate`, which runs built-in cases
  Device device;
  Precision precision;
  Timers& timers;
  H5Output* output;        // nullptr on --dry-run and in `validate`
  std::ostream& out;       // rank 0: stdout; other ranks: a null stream
  // start() is followed by Simulation::restore(): the output file is a
  // restarted run's, so the model must not write its initial output again.
  bool restarting = false;
  DeviceHealth* health = nullptr;   // the NVML sampler of `strata run` (warnings each step)
};

// One line of `strata validate`: an analytic self-check and its verdict.
struct CheckResult {
  std::string name;
  double value = 0, reference = 0, tolerance = 0;   // pass: |value - reference| <= tolerance
  bool pass = false;
  std::string detail;                               // how the tolerance was derived

  static CheckResult within(std::string name, double value, double reference, double tolerance, std::string detail) {
    return {std::move(name), value, reference, tolerance, std::fabs(value - reference) <= tolerance, std::move(detail)};
  }
};

// Figures the run reports in /performance and the summary.
struct Performance {
  struct Figure {
    std::string name, units;
    double value;
  };
  std::vector<Figure> figures;
};

// Memory one rank will allocate, predicted before anything is allocated so
// that a run too big for the machine stops at once with exit 4.
struct MemoryPlan {
  std::size_t host_bytes = 0;     // this rank's host memory
  std::size_t device_bytes = 0;   // this rank's device memory (0 on the host backend)
  std::string hint;               // what to change when it does not fit

  // Memory that lives where the kernels run: the device's on CUDA, the
  // host's on the host backend.
  void add(const Device& device, std::size_t bytes) { (device.on_cuda() ? device_bytes : host_bytes) += bytes; }
  // `kernel_bytes` where the kernels run and `host_only` more on the host.
  static MemoryPlan of(const Device& device, std::size_t kernel_bytes, std::size_t host_only, std::string hint) {
    MemoryPlan m{host_only, 0, std::move(hint)};
    m.add(device, kernel_bytes);
    return m;
  }
};

// What a node offers a MemoryPlan: its free host memory, shared by the
// ranks on the node, and on CUDA its devices' free memory, each shared by
// the ranks that run on it.
struct MemoryAvailable {
  std::size_t host_bytes = 0;          // MemAvailable of the node; 0: unknown, not checked
  int ranks_on_node = 1;
  std::size_t device_free_bytes = 0;   // free on this rank's device (CUDA only)
  int devices_on_node = 1;
};

// Why `plan` does not fit (the sizes needed and available, then the plan's
// hint), or "" when it does. The host bytes are checked on every backend,
// the device bytes on CUDA. Pure, so tests check both backends' plans on
// any machine; `run` throws it as a ResourceError (exit 4).
std::string memory_shortfall(const MemoryPlan& plan, const Device& device, const MemoryAvailable& available);

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  // Declares the keys of the model's own table ([<name>]).
  virtual void declare(Schema& schema) const = 0;
  // Checks across keys (references, uniqueness); throws InputError via Config::fail.
  virtual void check(const Config& config) const = 0;
  // --dry-run: what would be computed, on what, in how many pieces, with what memory.
  virtual void plan(const RunContext& ctx) const = 0;
  virtual MemoryPlan memory(const RunContext& ctx) const = 0;
  // Sets up a run (collective); the engine's step loop drives it to the end
  // (engine/runtime/simulation.hpp). ctx outlives the Simulation.
  virtual std::unique_ptr<Simulation> start(RunContext& ctx) const = 0;
  // `strata validate`: analytic self-checks on the chosen backend and precision.
  virtual std::vector<CheckResult> self_checks(RunContext& ctx) const = 0;
};

// A model whose input is one parameter struct P, read (and checked) by Read,
// with the keys Declare declares: it states its plan, memory and start for
// the parameters, and the entry points above read them.
template <class P, P (*Read)(const Config&), void (*Declare)(Schema&)>
class ModelOf : public Model {
 public:
  void declare(Schema& schema) const final { Declare(schema); }
  void check(const Config& config) const final { (void)Read(config); }
  void plan(const RunContext& ctx) const final { plan(ctx, Read(*ctx.config)); }
  MemoryPlan memory(const RunContext& ctx) const final { return memory(ctx, Read(*ctx.config)); }
  std::unique_ptr<Simulation> start(RunContext& ctx) const final { return start(ctx, Read(*ctx.config)); }

 protected:
  virtual void plan(const RunContext& ctx, const P& params) const = 0;
  virtual MemoryPlan memory(const RunContext& ctx, const P& params) const = 0;
  virtual std::unique_ptr<Simulation> start(RunContext& ctx, const P& params) const = 0;
};

// A simulation class template Sim<T> started in the run's precision.
template <template <class> class Sim, class Params>
std::unique_ptr<Simulation> start_in_precision(RunContext& ctx, const Params& params) {
  if (ctx.precision == Precision::fp32) return std::make_unique<Sim<float>>(ctx, params);
  return std::make_unique<Sim<double>>(ctx, params);
}

class ModelRegistry {
 public:
  static ModelRegistry& instance();
  void add(std::unique_ptr<Model> model);
  const Model* find(std::string_view name) const;
  std::vector<const Model*> models() const;   // by name
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<Model>> models_;
};

// The [run] table, common to every model.
void declare_run_schema(Schema& schema);
// Engine keys plus the named model's; throws InputError naming the models
// that exist when `model` is not one of them.
Schema schema_for(const std::string& model);

template <class M>
struct ModelRegistrar {
  ModelRegistrar() { ModelRegistry::instance().add(std::make_unique<M>()); }
};

}  // namespace strata

#define STRATA_REGISTER_MODEL(Type) \
  static const ::strata::ModelRegistrar<Type> strata_model_registrar_##Type {}
