# Shared by scripts/run, scripts/test and .ci/run: install what is missing,
# configure once, build incrementally. Source it; do not run it.

STRATA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STRATA_BUILD_DIR=${STRATA_BUILD_DIR:-$STRATA_ROOT/build}
# Debian's python3 has python3-h5py; an offline GPU machine names its own.
STRATA_PYTHON=${STRATA_PYTHON:-/usr/bin/python3}

# Debian packages (README.md). The CUDA toolkit is not among them: it is used
# where /usr/local/cuda or nvcc already exists.
STRATA_PACKAGES=(cmake g++ make libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools catch2
                 libtomlplusplus-dev libcli11-dev libboost-dev python3-h5py python3-numpy python3-matplotlib)
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

# Configures (first time, or when the CUDA choice changed) and builds.
strata_build() {
  local cuda=${STRATA_CUDA:-}
  if [ -z "$cuda" ]; then
    if strata_gpu_visible; then cuda=ON; else cuda=OFF; fi
  fi
  local cache=$STRATA_BUILD_DIR/CMakeCache.txt
  if [ ! -f "$cache" ] || ! grep -q "^STRATA_CUDA:STRING=$cuda\$" "$cache"; then
    strata_log "configuring $STRATA_BUILD_DIR (CUDA backend: $cuda)"
    cmake -S "$STRATA_ROOT" -B "$STRATA_BUILD_DIR" -DSTRATA_CUDA="$cuda" -DCMAKE_BUILD_TYPE=Release >/dev/null || return 1
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
