// `strata run`: load and check the input, decide between a fresh run and a
// restart, protect existing results, predict memory, then hand the model's
// Simulation to the engine's step loop and write what it returns.
#include <hdf5.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda_runtime.hpp"
#include "engine/cli/commands.hpp"
#include "engine/config/config.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/io/output_files.hpp"
#include "engine/runtime/build_info.hpp"
#include "engine/runtime/device_health.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/format.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/shape_report.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/step_loop.hpp"
#include "engine/runtime/stop_request.hpp"
#include "engine/runtime/timers.hpp"
#include "engine/runtime/watchdog.hpp"

namespace strata {

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                                              "_@%+=:,./-") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

namespace {

// --- hints: commands the user can paste -------------------------------------------

// This run's command as the user gave it (prefix, input, --set, -o, --backend,
// --precision, --max-walltime), with `output` instead of the user's output
// when given, then `extra`. --restart, --overwrite and --dry-run are left to
// the caller: they are what the hint is about.
std::string command_line(const RunArgs& a, const std::string& extra, const std::string& output = "") {
  std::string c = (a.run_prefix.empty() ? std::string("strata run") : a.run_prefix) + " " + shell_quote(a.input);
  for (const std::string& s : a.set) c += " --set " + shell_quote(s);
  if (!output.empty()) {
    c += " -o " + shell_quote(output);   // applied after every --set run.output
  } else if (a.output_given) {
    c += " -o " + shell_quote(a.output);
  }
  if (!a.backend.empty()) c += " --backend " + shell_quote(a.backend);
  if (!a.precision.empty()) c += " --precision " + shell_quote(a.precision);
  if (!a.max_walltime.empty()) c += " --max-walltime " + shell_quote(a.max_walltime);
  return extra.empty() ? c : c + " " + extra;
}

// "out/run.h5" -> "out/run-2.h5", the first of -2, -3, ... taken by neither an
// output nor its checkpoints.
std::string free_output_name(const std::string& output) {
  const std::filesystem::path p(output);
  const std::string ext = p.has_extension() ? p.extension().string() : ".h5";
  const std::string stem = (p.parent_path() / p.stem()).string();
  for (int n = 2;; ++n) {
    const std::string candidate = stem + "-" + std::to_string(n) + ext;
    std::error_code ec;
    if (!std::filesystem::exists(candidate, ec) && !std::filesystem::exists(stem + "-" + std::to_string(n) + ".chk", ec))
      return candidate;
  }
}

// The root `status` attribute of a strata output ("complete", "stopped:
// checkpointed", "failed: ...", "running"), or "" when unreadable. Local.
std::string output_status(const std::string& path) {
  if (!is_strata_file(path)) return "";
  H5Id file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  return file.id < 0 ? "" : string_attribute(file.id, "status").value_or("");
}

// Why a fresh run cannot simply write `output`, and the commands that go on
// from there, each on its own indented line (rank 0; empty elsewhere, where
// nothing is printed). --restart is offered only where an unfinished run has
// checkpoints to continue from (`checkpoints_usable`: false when a restart
// has just found none of them valid).
std::string existing_output_hint(const RunArgs& a, const std::string& output, const CheckpointStore& store,
                                 const MpiContext& mpi, bool checkpoints_usable = true) {
  if (!mpi.root()) return "";
  std::error_code ec;
  const bool exists = std::filesystem::exists(output, ec);
  const bool checkpoints = checkpoints_usable && !store.list().empty();
  const std::string status = exists ? output_status(output) : "";
  std::string state, ways;
  std::vector<std::string> commands;
  if (exists && status.empty()) {
    state = "it is not a result of strata";
  } else if (status == "complete") {
    state = "it holds a finished run (status \"complete\"), which has nothing to continue";
  } else if (exists) {
    state = "it holds an unfinished run (status \"" + status + "\")" +
            (checkpoints ? " with checkpoints in " + store.directory() : ", with no checkpoint to continue from");
  } else {
    state = "the output they belong to is missing";
  }
  if (checkpoints && status != "complete") {
    ways = "continue that run (--restart), or ";
    commands.push_back(command_line(a, "--restart"));
  }
  ways += "write a new file (-o), ";
  commands.push_back(command_line(a, "", free_output_name(output)));
  if (!exists || !status.empty()) {
    ways += "replace " + std::string(exists ? "it" : "them") + " (--overwrite), ";
    commands.push_back(command_line(a, "--overwrite"));
  }
  // Without the output only the checkpoints move: to the backup's .chk.
  const std::string backup = exists ? backup_name(output) : checkpoint_dir(backup_name(output));
  ways += "or keep " + std::string(exists ? "it" : "them") + " as " + backup + " (run.backup = true)";
  // Only the setting that helps: a --set run.backup the user gave goes.
  RunArgs keep = a;
  std::erase_if(keep.set, [](const std::string& s) { return s.starts_with("run.backup="); });
  commands.push_back(command_line(keep, "--set run.backup=true"));
  std::string text = state + ". To " + ways + ":";
  for (const std::string& c : commands) text += "\n  " + c;
  return text;
}

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

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

void write_header(H5Output& h5, const Config& cfg, const MpiContext& mpi, const Device& device, Precision precision,
                  const std::string& restarted_from) {
  h5.attribute("/", "strata_version", std::string(build::version_line()));
  h5.attribute("/", "git_sha", std::string(build::git_sha()));
  h5.attribute("/", "model", cfg.model());
  h5.attribute("/", "precision", std::string(to_string(precision)));
  h5.attribute("/", "backend", std::string(to_string(device.backend)));
  h5.attribute("/", "ranks", static_cast<std::int64_t>(mpi.size()));
  h5.attribute("/", "devices", mpi.gather_strings(device.name));
  // Which node ran which rank: on a cluster, the first thing to look up
  // when one rank is slow or one node misbehaves.
  h5.attribute("/", "hosts", mpi.gather_strings(host_name()));
  if (restarted_from.empty()) {
    h5.attribute("/", "created", iso8601_now());
  } else {
    // A restart continues the file: `created` stays, the restart is noted.
    h5.attribute("/", "restarted", iso8601_now());
    h5.attribute("/", "restarted_from", restarted_from);
  }
  h5.attribute("/", "input_file", cfg.path());
  h5.text("/config", cfg.to_toml());
  h5.attribute("/config", "description", std::string("resolved input (defaults, file, --set), TOML"));
  h5.set_status("running");
}

void write_performance(H5Output& h5, const Performance& perf) {
  h5.group("/performance");
  for (const auto& f : perf.figures) h5.scalar("/performance/" + f.name, f.value, f.units);
}

// --- restart compatibility -------------------------------------------------------

// Removes key `dotted` from `t` where `t` has it (keys inside lists of tables never are).
void remove_key(toml::table& t, const std::string& dotted) {
  const std::size_t dot = dotted.rfind('.');
  toml::table* parent = dot == std::string::npos ? &t : t.at_path(dotted.substr(0, dot)).as_table();
  if (parent != nullptr) parent->erase(dotted.substr(dot == std::string::npos ? 0 : dot + 1));
}

std::string node_text(const toml::node& n) {
  std::ostringstream s;
  n.visit([&s](const auto& v) { s << v; });
  return s.str();
}

bool same_value(const toml::node& a, const toml::node& b) {
  return a.visit([&b](const auto& x) {
    const auto* y = b.as<std::remove_cvref_t<decltype(x)>>();
    return y != nullptr && x == *y;
  });
}

// The first key whose value differs, as "key: now X, in the checkpoint Y".
std::optional<std::string> first_difference(const toml::node& now, const toml::node& then, const std::string& key) {
  if (const auto* a = now.as_table(); a != nullptr && then.is_table()) {
    const auto* b = then.as_table();
    auto sub = [&](const toml::key& k) {
      return key.empty() ? std::string(k.str()) : key + "." + std::string(k.str());
    };
    for (auto&& [k, v] : *a) {
      const toml::node* other = b->get(k.str());
      if (other == nullptr) return sub(k) + ": " + node_text(v) + " now, absent in the checkpoint";
      if (auto d = first_difference(v, *other, sub(k))) return d;
    }
    for (auto&& [k, v] : *b) {
      if (!a->contains(k.str())) return sub(k) + ": absent now, " + node_text(v) + " in the checkpoint";
    }
    return std::nullopt;
  }
  if (const auto* a = now.as_array(); a != nullptr && then.is_array()) {
    const auto* b = then.as_array();
    if (a->size() != b->size()) {
      return key + ": " + std::to_string(a->size()) + " entries now, " + std::to_string(b->size()) +
             " in the checkpoint";
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (auto d = first_difference(*a->get(i), *b->get(i), key + "." + std::to_string(i))) return d;
    }
    return std::nullopt;
  }
  if (!same_value(now, then)) return key + ": " + node_text(now) + " now, " + node_text(then) + " in the checkpoint";
  return std::nullopt;
}

// Throws InputError when `chk` cannot continue this run bitwise.
void check_compatible(const CheckpointHeader& chk, const std::string& path, const Config& cfg, const Device& device,
                      Precision precision) {
  const std::string where = "--restart " + path + ": ";
  if (chk.model != cfg.model()) {
    throw InputError(where + "the checkpoint is of model '" + chk.model + "', this input runs '" + cfg.model() + "'");
  }
  if (chk.precision != to_string(precision)) {
    throw InputError(where + "the checkpoint was computed in " + chk.precision + ", this run is " +
                     std::string(to_string(precision)) + " (set run.precision = \"" + chk.precision + "\")");
  }
  if (chk.backend != to_string(device.backend)) {
    throw InputError(where + "the checkpoint was computed on the " + chk.backend + " backend, this run uses " +
                     std::string(to_string(device.backend)) + "; results are bitwise reproducible on one backend only "
                     "(use --backend " + chk.backend + ")");
  }
  toml::table then, now = cfg.table();
  try {
    then = toml::parse(chk.config_toml);
  } catch (const toml::parse_error&) {
    throw InputError(where + "the checkpoint's stored configuration is not valid TOML");
  }
  for (const Param& p : cfg.schema().params()) {
    if (p.restart_safe) {
      remove_key(now, p.key);
      remove_key(then, p.key);
    }
  }
  if (auto d = first_difference(now, then, "")) {
    throw InputError(where + "the input differs from the checkpoint's in " + *d +
                     " (only keys marked 'may change on --restart' in docs/inputs.md may differ)");
  }
}

// --- memory -------------------------------------------------------------------------

std::size_t host_memory_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) return static_cast<std::size_t>(std::stoull(line.substr(13))) * 1024;
  }
  return 0;   // unknown: do not predict
}

std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

// Throws ResourceError (collectively) when the plan does not fit.
void check_memory(const MemoryPlan& plan, const Device& device, const MpiContext& mpi) {
  mpi.collective([&] {
    MemoryAvailable available;
    available.host_bytes = host_memory_available();
    available.ranks_on_node = mpi.local_size();
    if (device.on_cuda()) {
      available.device_free_bytes = cuda::free_memory();
      available.devices_on_node = cuda::device_count();
    }
    if (const std::string why = memory_shortfall(plan, device, available); !why.empty()) throw ResourceError(why);
  });
}

}  // namespace

int run_command(const MpiContext& mpi, std::ostream& out, const RunArgs& args) {
  install_stop_handlers();
  // Everything before the output file exists is checked on every rank, and
  // failures are made collective: exit 2 with nothing written.
  std::optional<Config> cfg;
  const Model* model = nullptr;
  Device device;
  LoopSettings settings;
  mpi.collective([&] {
    cfg.emplace(Config::load(args.input, overrides_from(args), schema_for));
    model = ModelRegistry::instance().find(cfg->model());
    if (cfg->string("run.output").empty()) cfg->fail("run.output", "must name the output file");
    model->check(*cfg);
    settings = LoopSettings::from(*cfg, args.max_walltime, mpi.size());
  });
  // From here on, a peer that stops answering ends the run (exit 76)
  // rather than hanging it; the watchdog stops as this function returns.
  // One rank alone has no peer to lose.
  watchdog::Settings watch;
  watch.floor_seconds = mpi.size() > 1 ? cfg->real("run.watchdog_floor") : 0.0;
  watch.rank = mpi.rank();
  // A sweep point is continued by running the sweep again.
  watch.restart_hint = args.resume_if_possible ? "the same sweep command" : command_line(args, "--restart");
  watch.fresh_hint = args.resume_if_possible ? "the same sweep command" : command_line(args, "--overwrite");
  const watchdog::Watchdog watchdog(watch);
  const Precision precision = cfg->string("run.precision") == "fp32" ? Precision::fp32 : Precision::fp64;
  mpi.collective([&] {
    try {
      device = select_device(cfg->string("run.backend"), mpi);
    } catch (const InputError& e) {
      cfg->fail("run.backend", e.what());
    }
  });
  const std::string output = cfg->string("run.output");

  out << build::version_line() << "\n"
      << "model " << cfg->model() << " | input " << cfg->path() << " | " << mpi.size() << " rank(s) ("
      << mpi.launcher() << ") | " << device.name << " | " << to_string(precision) << "\n";

  Timers timers;
  shape::reset();   // a sweep runs its points in one process
  RunContext plan_ctx{mpi, &*cfg, device, precision, timers, nullptr, out};
  MemoryPlan memory;
  mpi.collective([&] { memory = model->memory(plan_ctx); });

  // Restart or fresh start.
  CheckpointStore store(output, mpi);
  std::string checkpoint;
  CheckpointHeader restored;
  if (args.restart || args.resume_if_possible) {
    if (!args.restart_file.empty()) {
      restored = verify_checkpoint(args.restart_file, mpi);
      checkpoint = args.restart_file;
    } else {
      std::vector<std::string> skipped;
      checkpoint = newest_valid_checkpoint(store, mpi, skipped);
      for (const std::string& s : skipped) out << "warning: skipping " << s << "\n";
      if (checkpoint.empty() && args.restart) {
        std::error_code ec;
        const std::string why =
            "--restart: no valid checkpoint of " + output + " in " + store.directory() +
            (skipped.empty() ? "" : " (" + std::to_string(skipped.size()) + " damaged, see above)");
        // Without the output there is nothing in the way of a fresh run;
        // with it, say what it holds and which ways remain.
        if (!std::filesystem::exists(output, ec)) {
          throw Error(ExitCode::bad_input, why + "; start afresh:\n  " + command_line(args, ""), true);
        }
        throw Error(ExitCode::bad_input,
                    why + ", and " + existing_output_hint(args, output, store, mpi, false),
                    true);
      }
      if (!checkpoint.empty()) restored = verify_checkpoint(checkpoint, mpi);
    }
    if (!checkpoint.empty()) {
      mpi.collective([&] { check_compatible(restored, checkpoint, *cfg, device, precision); });
    }
  }

  if (args.dry_run) {
    out << "\n# resolved configuration\n" << cfg->to_toml() << "\n";
    mpi.collective([&] { model->plan(plan_ctx); });
    out << "memory per rank: " << gib(memory.host_bytes) << " host, " << gib(memory.device_bytes) << " device\n";
    // The check the run makes before it allocates, with its message.
    try {
      check_memory(memory, device, mpi);
    } catch (const Error& e) {
      if (e.code() != ExitCode::resources) throw;
      out << "memory: does not fit: " << e.what() << "\nthe run would stop before allocating (exit 4)\n";
    }
    if (!checkpoint.empty()) {
      out << "would restart from " << checkpoint << " (step " << restored.step << " of " << restored.steps << ")\n";
    }
    out << "dry run: nothing computed, nothing written (output would be " << output << ")\n";
    return 0;
  }
  check_memory(memory, device, mpi);

  H5Output::Mode mode = H5Output::Mode::create;
  if (!checkpoint.empty()) {
    // A restart continues its output; one that vanished is written anew,
    // but a file that is not strata's is never taken over.
    int state = 0;   // 0 missing, 1 strata's, 2 someone else's
    if (mpi.root()) state = is_strata_file(output) ? 1 : std::filesystem::exists(output) ? 2 : 0;
    MPI_Bcast(&state, 1, MPI_INT, 0, mpi.comm());
    if (state == 2) {
      mpi.collective([&] {
        cfg->fail("run.output", "the file exists and is not an HDF5 file written by strata (or is too damaged to "
                                "open); cannot continue it. Move it aside: --restart then writes the output anew, "
                                "its frames before the checkpoint marked missing");
      });
    }
    if (state == 1) mode = H5Output::Mode::append;
    if (state == 0) out << "note: " << output << " is missing; the restarted run writes it anew\n";
  } else {
    std::string backup;
    FreshOutput how{args.overwrite, args.resume_if_possible, ""};
    if (!args.overwrite && !args.resume_if_possible) how.hint = existing_output_hint(args, output, store, mpi);
    const ExistingOutput existing = prepare_fresh_output(*cfg, store.directory(), how, mpi, backup);
    if (existing == ExistingOutput::keep_as_backup) out << "kept the existing output as " << backup << "\n";
    if (existing == ExistingOutput::replace) out << "replacing " << output << " and its checkpoints\n";
    // Checkpoints of a replaced run must never be restarted into this one.
    store.remove_all();
  }
  store.remove_temporaries();

  std::optional<H5Output> h5;
  // A restart that continues an existing file changes nothing of its header
  // (status included) until the state is restored: a restart that fails
  // before that leaves the file as it was.
  bool header_written = false;
  {
    auto t = timers.scope("setup");
    h5.emplace(output, "run.output", mpi, mode);
    if (!h5->created_directory().empty())
      out << "note: created the directory " << h5->created_directory() << " for run.output\n";
    if (mode == H5Output::Mode::append) {
      const std::string there = h5->string_attribute("/", "model");
      mpi.collective([&] {
        if (there != cfg->model())
          cfg->fail("run.output", "the file holds a run of model '" + there + "', this input runs '" + cfg->model() +
                                      "'; cannot continue it (choose another output with -o)");
      });
    } else {
      try {
        write_header(*h5, *cfg, mpi, device, precision, checkpoint);
        header_written = true;
      } catch (const Error& e) {
        // A new file that cannot even take its header (a full disk) is
        // nothing anyone can use, and would stop the next run as "not
        // strata's": it goes.
        if (!e.collective()) throw;
        h5.reset();
        if (mpi.root()) std::filesystem::remove(output);
        throw;
      }
    }
  }
  out << "output " << h5->path() << "\n";

  RunContext ctx{mpi, &*cfg, device, precision, timers, &*h5, out};
  ctx.restarting = !checkpoint.empty();
  DeviceHealth health(device, settings.device_every_seconds);
  ctx.health = &health;
  std::unique_ptr<Simulation> sim;
  try {
    test_switches_before_setup(settings, mpi, out);
    mpi.collective([&] { sim = model->start(ctx); });
    CheckpointHeader header{cfg->model(), std::string(to_string(precision)), std::string(to_string(device.backend)),
                            cfg->to_toml(), 0, 0, mpi.size(), 0.0};
    if (!checkpoint.empty()) {
      restore_checkpoint(checkpoint, *sim, mpi);
      watchdog::note_checkpoint(checkpoint);
      sim->resume_step_count(restored.steps);
      header.wall_seconds = restored.wall_seconds;
      out << "restarted from " << checkpoint << " (written by " << restored.ranks << " rank(s)): step "
          << sim->steps_done() << " of " << sim->steps() << "\n";
      if (!header_written) {
        write_header(*h5, *cfg, mpi, device, precision, checkpoint);
        header_written = true;
      }
      const std::string lost = describe_missing_output(*h5);
      if (!lost.empty()) {
        out << "warning: " << output << " lacks output " << lost << " that " << checkpoint
            << " counts (lost in a hard kill before they reached the disk, or with the file itself); they cannot "
               "be computed again from the checkpoint, so they stay NaN (time included), are listed in the "
               "file's root attributes missing_frames and missing_rows, and the run ends with status "
               "'incomplete output'. For a complete file, run afresh with --overwrite\n";
      }
    }
    const LoopResult loop = run_steps(*sim, ctx, store, header, settings);
    const watchdog::PhaseScope finishing(watchdog::Phase::finish);
    if (loop.stopped) {
      health.write(*h5, mpi);
      Timers::write(*h5, timers.summarize(mpi));
      h5->set_status("stopped: checkpointed");
      h5->close();
      out << "\nstopped on " << loop.reason << " at step " << sim->steps_done() << " of " << sim->steps();
      // How much of a job's --signal lead time the stop took.
      if (loop.answer_seconds > 0) out << format(", %.2f s after it arrived", loop.answer_seconds);
      out << "; checkpoint " << loop.checkpoint << " (exit 75)\n";
      // A sweep point is continued by running the sweep again (it says so).
      if (!args.resume_if_possible) out << "continue with:\n  " << command_line(args, "--restart") << "\n";
      return static_cast<int>(ExitCode::stopped);
    }
    Performance perf;
    mpi.collective([&] { perf = sim->finish(); });
    const auto summary = timers.summarize(mpi);
    health.write(*h5, mpi);
    Timers::write(*h5, summary);
    write_performance(*h5, perf);
    write_shape_counts(*h5, root_shape_counts(mpi));
    // Never `complete` over frames a restart could not give back.
    const std::string lost = describe_missing_output(*h5);
    h5->set_status(lost.empty() ? std::string("complete")
                                : "incomplete output: the run finished, but output " + lost +
                                      " were lost before a restart (NaN; root attributes missing_frames, "
                                      "missing_rows)");
    if (!lost.empty()) out << "warning: output " << lost << " of " << output << " were lost before a restart\n";
    h5->close();   // a failure here is still the run's (exit 4), not the destructor's to swallow
    out << "\n" << Timers::format(summary);
    for (const auto& f : perf.figures) out << "  " << f.name << " = " << f.value << " " << f.units << "\n";
    if (loop.checkpoints > 0) out << "checkpoints in " << store.directory() << "\n";
  } catch (const Error& e) {
    if (e.collective() && header_written) {
      try {
        // What the model has at the failure (a grid model: a last frame and
        // diagnostics row, NaN and all), then the verdict; output still in
        // flight lands before either.
        if (sim) sim->flush_output(false);
        if (sim && e.code() == ExitCode::numerical) sim->record_failure();
        if (sim) sim->flush_output(false);
        health.write(*h5, mpi);
        // A signal during set-up (stopped_during_setup) is a stop, not a failure.
        h5->set_status(std::string(e.code() == ExitCode::stopped ? "stopped: " : "failed: ") + e.what());
      } catch (const Error&) {
        // The file system itself failed; the original error is the one to report.
      }
    }
    // A stop before the first step left no checkpoint: the way on is to
    // start again, over the stopped file where there is one (a sweep point
    // is started again by running the sweep again).
    if (e.code() == ExitCode::stopped && !args.resume_if_possible) {
      throw Error(
          ExitCode::stopped,
          std::string(e.what()) + "; run again with:\n  " + command_line(args, header_written ? "--overwrite" : ""),
          e.collective());
    }
    throw;
  }
  return 0;
}

}  // namespace strata
