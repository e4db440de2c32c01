# Shared by scripts/run, scripts/test and .ci/run: install what is missing,
# configure once, build incrementally. Source it; do not run it.

STRATA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STRATA_BUILD_DIR=${STRATA_BUILD_DIR:-$STRATA_ROOT/build}
# The Python of the tests and of the scripts they run (CMake's STRATA_PYTHON):
# Debian's python3 has python3-h5py; a machine whose h5py lives in another
# Python names that one.
STRATA_PYTHON=${STRATA_PYTHON:-/usr/bin/python3}

# Debian packages (README.md). The CUDA toolkit is not among them: it is used
# where /usr/local/cuda or nvcc already exists. help2man builds the man page
# (skipped, with a message, where it is missing); man-db renders it in the
# tests (tests/cli/test_install.py).
STRATA_PACKAGES=(cmake g++ make libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools catch2
                 libtomlplusplus-dev libcli11-dev libboost-dev python3-h5py python3-numpy python3-matplotlib
                 python3-xarray python3-netcdf4 python3-h5netcdf python3-pandas netcdf-bin udunits-bin
                 help2man man-db)
# tests/cli/test_mdanalysis.py installs MDAnalysis from PyPI into a virtual
# environment under the build folder (skipped where PyPI is out of reach).
STRATA_PACKAGES+=(python3-venv)
# tests/cli/test_paraview.py opens every family's XDMF sidecar in pvpython
# (ParaView 5.11), as ParaView itself picks the reader.
STRATA_PACKAGES+=(python3-paraview)
# tests/cluster/ builds its simulated nodes with ip and tc (iproute2) and
# enters them with nsenter and unshare (util-linux).
STRATA_PACKAGES+=(iproute2 util-linux)
# For the Slurm tests and scripts/slurm/ (installed by scripts/test and by the
# test cluster, tests/slurm/slurm_cluster.py). slurm-wlm-basic-plugins holds
# Slurm's mpi/pmix plugin (mpi_pmix_v4.so), which dlopen()s the unversioned
# libpmix.so that only libpmix-dev ships; without it `srun --mpi=pmix` fails.
STRATA_SLURM_PACKAGES=(slurm-wlm slurm-wlm-basic-plugins munge libpmix-dev)

strata_log() { printf 'strata: %s\n' "$*" >&2; }

# Installs the packages that are not installed yet; silent when none is missing.
# STRATA_NO_APT=1 (an offline machine whose dependencies come from a private
# prefix, scripts/gpu/build-and-test) skips it.
strata_ensure_packages() {
  [ "${STRATA_NO_APT:-0}" = 1 ] && return 0
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      strata_log "missing Debian packages: ${missing[*]}"
      strata_log "install them as root: apt-get install ${missing[*]}"
      return 1
    fi
  fi
  strata_log "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq >/dev/null || return 1
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null || return 1
}

# Whether a GPU is visible (then the CUDA backend is worth building).
strata_gpu_visible() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'
}

# The source tree a build folder was configured for (its CMakeCache.txt's
# CMAKE_HOME_DIRECTORY), symlinks resolved; empty when that tree is gone.
strata_build_source() {
  local home
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt" 2>/dev/null) || true
  if [ -n "$home" ]; then (cd "$home" 2>/dev/null && pwd -P) || true; fi
}

# A checkout moved or copied with its build/ would otherwise go on building
# (and running) the tree that build/ was configured for: reconfigure it for
# this one. A build folder given in STRATA_BUILD_DIR that belongs to another
# checkout still there is that checkout's: refuse rather than take it over.
strata_check_build_source() {
  [ -f "$STRATA_BUILD_DIR/CMakeCache.txt" ] || return 0
  local here source
  here=$(cd "$STRATA_ROOT" && pwd -P)
  source=$(strata_build_source "$STRATA_BUILD_DIR")
  [ "$source" = "$here" ] && return 0
  local recorded
  recorded=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$STRATA_BUILD_DIR/CMakeCache.txt")
  local build
  build=$(cd "$STRATA_BUILD_DIR" && pwd -P)
  if [ -n "$source" ] && [ "${build#"$here"/}" = "$build" ]; then
    strata_log "$STRATA_BUILD_DIR is the build folder of the checkout at $recorded, not of this one ($STRATA_ROOT)"
    strata_log "point STRATA_BUILD_DIR at a build folder of this checkout, or unset it to use $STRATA_ROOT/build"
    return 2
  fi
  strata_log "$STRATA_BUILD_DIR was configured for the source tree at $recorded (a moved or copied checkout);" \
    "reconfiguring it for this one, $STRATA_ROOT"
  rm -rf "$STRATA_BUILD_DIR/CMakeCache.txt" "$STRATA_BUILD_DIR/CMakeFiles"
}

# Configures (first time, when the CUDA choice changed, or when the build
# folder was configured for another source tree) and builds.
strata_build() {
  local cuda=${STRATA_CUDA:-}
  if [ -z "$cuda" ]; then
    if strata_gpu_visible; then cuda=ON; else cuda=OFF; fi
  fi
  strata_check_build_source || return
  local cache=$STRATA_BUILD_DIR/CMakeCache.txt
  if [ ! -f "$cache" ] || ! grep -q "^STRATA_CUDA:STRING=$cuda\$" "$cache" ||
     [ "$(sed -n 's/^STRATA_PYTHON:[A-Z]*=//p' "$cache")" != "$STRATA_PYTHON" ]; then
    strata_log "configuring $STRATA_BUILD_DIR (CUDA backend: $cuda; tests with $STRATA_PYTHON)"
    cmake -S "$STRATA_ROOT" -B "$STRATA_BUILD_DIR" -DSTRATA_CUDA="$cuda" -DSTRATA_PYTHON="$STRATA_PYTHON" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null || return 1
  fi
  # Quiet when all is well; the whole log when the build fails.
  local log=$STRATA_BUILD_DIR/build.log
  if ! cmake --build "$STRATA_BUILD_DIR" -j "$(nproc)" >"$log" 2>&1; then
    cat "$log" >&2
    strata_log "build failed (log: $log)"
    return 1
  fi
  grep -A3 -E 'warning' "$log" >&2 || true
}

# Open MPI refuses root unless told so; containers and CI run as root.
strata_mpi_env() {
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}

# A filter for mpiexec's stderr. When a rank exits with one of strata's own
# codes (1 to 4, 75), strata has already printed why in one line; Open MPI
# then adds its banners (a job "terminated normally, but 1 process returned
# a non-zero exit code", "mpirun detected that one or more processes exited
# with non-zero status", "MPI_ABORT was invoked ... with errorcode N", about
# ten lines under dashed rules) that bury that line. Drops those banners for
# strata's codes only; every other line, and every other banner (a rank
# killed by a signal, a launch failure), passes unchanged and at once.
strata_quiet_mpi_banners() {
  awk '
    function ours(code) { return code == 1 || code == 2 || code == 3 || code == 4 || code == 75 }
    function flush_block(   drop, code) {
      drop = 0
      if (block ~ /Primary job +terminated normally, but [0-9]+ process(es)? returned/) drop = 1
      if (block ~ /exited with non-zero status/ && match(block, /Exit code: *[0-9]+/)) {
        code = substr(block, RSTART, RLENGTH); sub(/[^0-9]*/, "", code); drop = ours(code + 0)
      }
      if (block ~ /MPI_ABORT was invoked/ && match(block, /errorcode -?[0-9]+/)) {
        code = substr(block, RSTART + 10, RLENGTH - 10); drop = ours(code + 0); aborted = drop
      }
      if (!drop) { printf "%s", block; fflush() }
      block = ""; inside = 0
    }
    /^--------------------+$/ {
      if (inside) { block = block $0 "\n"; flush_block(); next }
      inside = 1; block = $0 "\n"; next
    }
    inside { block = block $0 "\n"; next }
    # Open MPI aggregates the abort banner of further ranks into these lines.
    aborted && /has sent help message help-mpi-api.txt \/ mpi-abort/ { next }
    aborted && /Set MCA parameter "orte_base_help_aggregate" to 0/ { next }
    { print; fflush() }
    END { if (inside) printf "%s", block }
  '
}

# Runs `mpiexec -np N CMD...` with its stderr through strata_quiet_mpi_banners
# and returns its exit code once the filter has printed everything (so the
# last lines come before the shell's prompt). The signals that stop a run,
# sent to this script, are passed on to mpiexec (which forwards SIGUSR1 and
# SIGUSR2 to the ranks); the filter ignores them and outlives mpiexec.
strata_run_mpi() {
  local np=$1
  shift
  exec 3> >(trap '' INT TERM USR1 USR2 HUP; strata_quiet_mpi_banners >&2)
  local filter=$!
  # shellcheck disable=SC2086 # -x only when set (scripts/run sets it)
  mpiexec -np "$np" --oversubscribe ${STRATA_RUN_COMMAND:+-x STRATA_RUN_COMMAND} "$@" 2>&3 3>&- &
  local mpi=$! sig rc
  exec 3>&-
  for sig in USR1 USR2 TERM HUP; do
    # shellcheck disable=SC2064 # expanded now: the pid and signal are fixed
    trap "kill -s $sig $mpi 2>/dev/null" "$sig"
  done
  # Ctrl-C reaches mpiexec and the ranks from the terminal; this shell only
  # waits for them.
  trap : INT
  while :; do
    wait "$mpi" && rc=0 || rc=$?
    kill -0 "$mpi" 2>/dev/null || break   # a trapped signal interrupted the wait
  done
  trap - USR1 USR2 TERM HUP INT
  wait "$filter" 2>/dev/null || true
  return "$rc"
}
