// strata: one binary, every model. Parses the command line, runs the
// subcommand, and turns errors into one message and the exit code of docs/contract.md.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cli/commands.hpp"
#include "engine/cli/completion.hpp"
#include "engine/cli/help_format.hpp"
#include "engine/config/schema.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/runtime/build_info.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/stop_request.hpp"
#include "engine/runtime/thread_layout.hpp"

namespace {

int report(const strata::MpiContext& mpi, const std::string& message, int code, bool collective) {
  const char* kind = code == 2 ? "input error" : code == 75 ? "stopped" : "error";
  if (collective || mpi.size() == 1) {
    if (mpi.root()) std::cerr << "strata: " << kind << ": " << message << std::endl;
    return code;
  }
  // Only this rank knows: say so, and take the job down rather than hang it.
  std::cerr << "strata: rank " << mpi.rank() << ": " << kind << ": " << message << std::endl;
  MPI_Abort(mpi.comm(), code);
  return code;
}

// How the user started `strata run`, for the commands its messages suggest.
// scripts/run names itself (STRATA_RUN_COMMAND); otherwise the program as
// typed (argv[0]: "strata" from PATH, "build/strata", an absolute path),
// behind mpirun when several ranks were started by it (a restart may use
// any rank count, but the user's own is the one that fits their machine).
std::string run_prefix(const strata::MpiContext& mpi, const char* argv0) {
  if (const char* s = std::getenv("STRATA_RUN_COMMAND"); s != nullptr && *s != '\0') return s;
  std::string prefix = strata::shell_quote(argv0) + " run";
  if (mpi.launcher() == "mpirun" && mpi.size() > 1) {
    std::string mpirun = "mpirun -np " + std::to_string(mpi.size());
    // Open MPI refuses more ranks than cores without it; it was given if set.
    if (const char* o = std::getenv("OMPI_MCA_rmaps_base_oversubscribe"); o != nullptr && std::string_view(o) == "1")
      mpirun += " --oversubscribe";
    prefix = mpirun + " " + prefix;
  }
  return prefix;
}

// The names of app's commands.
std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> known;
  for (const CLI::App* sub : app.get_subcommands({})) known.push_back(sub->get_name());
  return known;
}

bool is_command(const CLI::App& app, const std::string& name) {
  const std::vector<std::string> known = command_names(app);
  return std::ranges::find(known, name) != known.end();
}

// Says that `given` is no command of app (rank 0) and returns exit code 2.
int unknown_command(const strata::MpiContext& mpi, const CLI::App& app, const std::string& given) {
  const std::vector<std::string> known = command_names(app);
  const auto near = strata::nearest_word(given, known, 2);
  if (mpi.root()) {
    std::cerr << "strata: unknown command '" << given << "'" << (near ? "; did you mean '" + *near + "'?" : "")
              << " (commands: " << strata::comma_list(known) << ")\n";
  }
  return static_cast<int>(strata::ExitCode::bad_input);
}

// For an option CLI11 did not expect ("--precission"), the nearest option
// of the subcommand given (or of strata itself): a line naming both, or "".
std::string option_hint(const CLI::App& app, int argc, char** argv) {
  const CLI::App* scope = &app;
  if (argc > 1) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == argv[1]) scope = sub;
    }
  }
  std::vector<std::string> known;
  for (const CLI::Option* o : scope->get_options()) {
    for (const std::string& name : o->get_lnames()) known.push_back("--" + name);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--")) continue;
    const std::string given(arg.substr(0, arg.find('=')));
    if (std::ranges::find(known, given) != known.end()) continue;
    if (const auto near = strata::nearest_word(given, known, 2))
      return "strata: unknown option '" + given + "'; did you mean '" + *near + "'?\n";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything starts OpenMP (thread_layout.hpp); may start strata anew.
  strata::prefer_passive_waiting(argv);
  // A batch system may signal the job while MPI is still starting; install the
  // stop handlers first so such a signal becomes a checkpoint-and-exit at the
  // first step boundary instead of killing the run. Only for the commands that
  // run steps: everywhere else Ctrl-C should stop at once.
  if (argc > 1 && (std::string_view(argv[1]) == "run" || std::string_view(argv[1]) == "sweep"))
    strata::install_stop_handlers();
  strata::MpiContext mpi(argc, argv);
  // Ranks other than 0 print nothing unless something fails: a stream
  // without a buffer is bad from the start and writes nothing.
  std::ostream null_stream(nullptr);
  std::ostream& out = mpi.root() ? std::cout : null_stream;

  CLI::App app{"strata: GPU simulation engine for batch experiments (pricing, particles, stencils)", "strata"};
  app.formatter(strata::help_formatter());
  app.set_version_flag("--version", strata::build::version_line());
  app.set_help_all_flag("--help-all", "Print this help message and every command's options, then exit");
  app.require_subcommand(1);

  strata::RunArgs run_args;
  auto* run = app.add_subcommand("run", "run the model of an input file, writing one HDF5 file");
  // Not required() here: `run --restart IN.toml` gives CLI11 the input as
  // --restart's value, and the check below puts it back.
  run->add_option("INPUT", run_args.input, "input file (TOML); required")->type_name("FILE.toml");
  run->add_option("--set", run_args.set, "override an input key: --set pricing.paths=1e7 (repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  run->add_option("-o,--output", run_args.output, "output file (overrides run.output)")->type_name("FILE.h5");
  run->add_option("--backend", run_args.backend, "where the kernels run (overrides run.backend)")
      ->type_name("auto|cuda|host");
  run->add_option("--precision", run_args.precision, "floating-point precision (overrides run.precision)")
      ->type_name("fp64|fp32");
  run->add_flag("--dry-run", run_args.dry_run, "print the resolved configuration and the plan; compute nothing");
  run->add_option("--restart", run_args.restart_file,
                  "continue from a checkpoint: the given file (.h5), or (no value) the newest valid one beside the "
                  "output")
      ->expected(0, 1)
      ->type_name("FILE.h5");
  run->add_flag("--overwrite", run_args.overwrite, "replace an existing output file written by strata");
  run->add_option("--max-walltime", run_args.max_walltime,
                  "HH:MM:SS or D-HH:MM:SS: checkpoint and exit 75 before this much wall time has passed "
                  "(overrides checkpoint.max_walltime)")
      ->type_name("HH:MM:SS");

  std::string model_name;
  bool markdown = false;
  auto* models = app.add_subcommand("models", "list models, or every parameter of one model");
  models->add_option("NAME", model_name, "model")->type_name("MODEL");
  models->add_flag("--markdown", markdown, "print the whole input reference (docs/inputs.md)");

  bool probe = false;
  auto* doctor = app.add_subcommand("doctor", "devices, driver and runtime, MPI, HDF5, build flags");
  doctor->add_flag("--probe", probe,
                   "also measure copy bandwidth, FMA rates and host-device transfers (host and rank 0's GPU), "
                   "beside the peaks the device reports");

  std::string val_backend, val_precision = "fp64";
  auto* validate = app.add_subcommand("validate", "analytic self-checks of every model: a pass/fail table");
  validate->add_option("--backend", val_backend, "auto | cuda | host")->check(CLI::IsMember({"auto", "cuda", "host"}));
  validate->add_option("--precision", val_precision, "fp64 | fp32")->check(CLI::IsMember({"fp64", "fp32"}));

  strata::SweepArgs sweep_args;
  auto* sweep = app.add_subcommand("sweep", "parameter sweep of an input's [sweep] table: list, run, status, collect");
  sweep->add_option("INPUT", sweep_args.input, "input file with a [sweep] table (TOML)")
      ->required()
      ->type_name("FILE.toml");
  sweep->add_option("--set", sweep_args.set, "override an input key of every point (repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  sweep->add_flag("--list", sweep_args.list, "print the points: index, status, parameters");
  sweep->add_option("--index", sweep_args.index, "run point I on all ranks (a Slurm array task: $SLURM_ARRAY_TASK_ID)")
      ->check(CLI::NonNegativeNumber);
  sweep->add_flag("--all", sweep_args.all, "run every point not yet done, ranks split into groups");
  sweep->add_option("--ranks-per-point", sweep_args.ranks_per_point, "with --all: ranks per group (default 1)")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--jobs", sweep_args.jobs, "with --all: number of groups (instead of --ranks-per-point)")
      ->check(CLI::PositiveNumber);
  sweep->add_flag("--retry-failed", sweep_args.retry_failed, "with --all: run failed points again");
  sweep->add_flag("--status", sweep_args.status, "done / running / failed / pending counts, and the failures");
  sweep->add_option("--collect", sweep_args.collect, "write OUT.h5 and OUT.csv: one row per point")
      ->type_name("FILE.h5");

  std::string help_topic;
  auto* help = app.add_subcommand("help", "this help, or a command's: strata help run (the same as run --help)");
  help->add_option("COMMAND", help_topic, "the command to explain")->type_name("COMMAND");

  std::string shell;
  auto* completion =
      app.add_subcommand("completion", "print the shell completion script: source <(strata completion bash)");
  completion->add_option("SHELL", shell, "the shell")->required()->check(CLI::IsMember({"bash"}));

  // CLI11 only says "A subcommand is required" for a misspelt one; name it.
  if (argc > 1 && argv[1][0] != '-' && !is_command(app, argv[1])) return unknown_command(mpi, app, argv[1]);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and --version exit 0; every usage error exits 2 (docs/contract.md).
    if (mpi.root()) {
      app.exit(e);
      if (argc == 1) std::cerr << '\n' << app.help();  // a bare `strata`: what it can do
      std::cerr << option_hint(app, argc, argv);
    }
    return e.get_exit_code() == 0 ? 0 : static_cast<int>(strata::ExitCode::bad_input);
  }

  if (*help) {
    const CLI::App* topic = &app;
    std::string usage = app.get_name();
    if (!help_topic.empty()) {
      if (!is_command(app, help_topic)) return unknown_command(mpi, app, help_topic);
      topic = app.get_subcommand(help_topic);
      usage += " " + help_topic;
    }
    out << topic->get_formatter()->make_help(topic, usage, CLI::AppFormatMode::Normal);
    return 0;
  }
  if (*completion) {
    strata::write_bash_completion(out, app);
    return 0;
  }

  run_args.output_given = run->count("--output") > 0;
  run_args.restart = run->count("--restart") > 0;
  if (*run) {
    // --restart's value is optional, so `run --restart IN.toml` hands it the
    // input. A checkpoint is never TOML: a .toml there is the input.
    if (run_args.restart_file.ends_with(".toml")) {
      if (!run_args.input.empty()) {
        if (mpi.root()) {
          std::cerr << "strata: input error: --restart " << run_args.restart_file
                    << ": a checkpoint is an HDF5 file (NAME.chk/step-N.h5), not an input; give --restart alone to "
                       "continue from the newest checkpoint\n";
        }
        return static_cast<int>(strata::ExitCode::bad_input);
      }
      run_args.input = run_args.restart_file;
      run_args.restart_file.clear();
    }
    if (run_args.input.empty()) {
      if (mpi.root()) std::cerr << "strata: input error: run: INPUT is required (strata run INPUT.toml)\n";
      return static_cast<int>(strata::ExitCode::bad_input);
    }
    run_args.run_prefix = run_prefix(mpi, argv[0]);
  }
  int code = 0;
  try {
    if (*run) code = strata::run_command(mpi, out, run_args);
    if (*models) code = strata::models_command(out, model_name, markdown, strata::shell_quote(argv[0]));
    if (*doctor) code = strata::doctor_command(mpi, out, probe);
    if (*validate) code = strata::validate_command(mpi, out, val_backend, val_precision);
    if (*sweep) code = strata::sweep_command(mpi, out, sweep_args);
  } catch (const strata::Error& e) {
    code = report(mpi, e.what(), static_cast<int>(e.code()), e.collective());
  } catch (const std::exception& e) {
    code = report(mpi, e.what(), static_cast<int>(strata::ExitCode::internal), false);
  }
  if (strata::abandoned_hdf5_files()) {
    // A file HDF5 could not finish writing is still open, and HDF5 would
    // close it inside MPI_Finalize (a hang or a crash there): every rank
    // has said why already, so the job ends here, with the run's code.
    std::cout.flush();
    std::cerr.flush();
    MPI_Abort(mpi.comm(), code);
  }
  return code;
}
