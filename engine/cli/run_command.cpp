#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>

#include "engine/backend/backend.hpp"
#include "engine/cli/commands.hpp"
#include "engine/config/config.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/runtime/build_info.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/timers.hpp"

namespace strata {
namespace {

std::string iso8601_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char date[32], zone[8];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  std::strftime(zone, sizeof zone, "%z", &tm);   // +0100; ISO 8601 extended wants +01:00
  char text[48];
  std::snprintf(text, sizeof text, "%s%.3s:%.2s", date, zone, zone + 3);
  return text;
}

std::vector<Override> overrides_from(const RunArgs& a) {
  std::vector<Override> o;
  for (const auto& s : a.set) o.push_back(parse_override(s));
  // The CLI shortcuts are overrides too, so they land in the stored config.
  if (a.output_given) o.push_back({"run.output", "\"" + a.output + "\"", "-o " + a.output});
  if (!a.backend.empty()) o.push_back({"run.backend", a.backend, "--backend " + a.backend});
  if (!a.precision.empty()) o.push_back({"run.precision", a.precision, "--precision " + a.precision});
  return o;
}

void write_header(H5Output& h5, const Config& cfg, const MpiContext& mpi, const Device& device, Precision precision) {
  h5.attribute("/", "strata_version", std::string(build::version_line()));
  h5.attribute("/", "git_sha", std::string(build::git_sha()));
  h5.attribute("/", "model", cfg.model());
  h5.attribute("/", "precision", std::string(to_string(precision)));
  h5.attribute("/", "backend", std::string(to_string(device.backend)));
  h5.attribute("/", "ranks", static_cast<std::int64_t>(mpi.size()));
  h5.attribute("/", "devices", mpi.gather_strings(device.name));
  h5.attribute("/", "created", iso8601_now());
  h5.attribute("/", "input_file", cfg.path());
  h5.text("/config", cfg.to_toml());
  h5.attribute("/config", "description", std::string("resolved input (defaults, file, --set), TOML"));
  h5.set_status("running");
}

void write_performance(H5Output& h5, const Performance& perf) {
  h5.group("/performance");
  for (const auto& f : perf.figures) h5.scalar("/performance/" + f.name, f.value, f.units);
}

}  // namespace

int run_command(const MpiContext& mpi, std::ostream& out, const RunArgs& args) {
  // Everything before the output file exists is checked on every rank, and
  // failures are made collective: exit 2 with nothing written.
  std::optional<Config> cfg;
  const Model* model = nullptr;
  Device device;
  mpi.collective([&] {
    cfg.emplace(Config::load(args.input, overrides_from(args), schema_for));
    model = ModelRegistry::instance().find(cfg->model());
    if (cfg->string("run.output").empty()) cfg->fail("run.output", "must name the output file");
    model->check(*cfg);
  });
  const Precision precision = cfg->string("run.precision") == "fp32" ? Precision::fp32 : Precision::fp64;
  mpi.collective([&] {
    try {
      device = select_device(cfg->string("run.backend"), mpi);
    } catch (const InputError& e) {
      cfg->fail("run.backend", e.what());
    }
  });

  out << build::version_line() << "\n"
      << "model " << cfg->model() << " | input " << cfg->path() << " | " << mpi.size() << " rank(s) ("
      << mpi.launcher() << ") | " << device.name << " | "
      << to_string(precision) << "\n";

  Timers timers;
  if (args.dry_run) {
    out << "\n# resolved configuration\n" << cfg->to_toml() << "\n";
    RunContext ctx{mpi, &*cfg, device, precision, timers, nullptr, out};
    mpi.collective([&] { model->plan(ctx); });
    out << "dry run: nothing computed, nothing written (output would be " << cfg->string("run.output") << ")\n";
    return 0;
  }

  std::optional<H5Output> h5;
  {
    auto t = timers.scope("setup");
    h5.emplace(cfg->string("run.output"), "run.output", mpi);
    write_header(*h5, *cfg, mpi, device, precision);
  }
  out << "output " << h5->path() << "\n";

  RunContext ctx{mpi, &*cfg, device, precision, timers, &*h5, out};
  Performance perf;
  try {
    mpi.collective([&] { perf = model->run(ctx); });
    const auto summary = timers.summarize(mpi);
    Timers::write(*h5, summary);
    write_performance(*h5, perf);
    h5->set_status("complete");
    out << "\n" << Timers::format(summary);
    for (const auto& f : perf.figures) out << "  " << f.name << " = " << f.value << " " << f.units << "\n";
  } catch (const Error& e) {
    if (e.collective()) {
      try {
        h5->set_status(std::string("failed: ") + e.what());
      } catch (const Error&) {
        // The file system itself failed; the original error is the one to report.
      }
    }
    throw;
  }
  return 0;
}

}  // namespace strata
