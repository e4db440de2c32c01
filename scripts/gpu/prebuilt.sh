# Shared by scripts/gpu/prebuild (development machine) and
# scripts/gpu/build-and-test (GPU machine): what a packed build records and
# how its test lists are moved. Source it; do not run it.

# A hash of what the packed executables and test lists were built from:
# every file the build compiles or configures (C++, CUDA, CMake) and the
# names of the Python tests (the test list is globbed at configure time;
# their contents are read when they run, so they may change). The same
# command on both machines, over the tree as it travels.
prebuilt_sources_hash() {
  (cd "$1" && {
    find CMakeLists.txt cmake engine models kernels tests scripts/bench -type f \
      \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.in' \
         -o -name '*.cmake' -o -name CMakeLists.txt \) -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    find tests -name 'test_*.py' | LC_ALL=C sort
  } | sha256sum | cut -c1-16)
}

# Replaces the literal text OLD by NEW in every test list (CTestTestfile.cmake)
# under PACK: prebuilt_replace PACK OLD NEW. Nothing when OLD is empty or
# equal to NEW.
prebuilt_replace() {
  local pack=$1 old=$2 new=$3 f text
  [ -n "$old" ] && [ "$old" != "$new" ] || return 0
  while IFS= read -r -d '' f; do
    text=$(<"$f")
    printf '%s\n' "${text//"$old"/"$new"}" >"$f"
  done < <(find "$pack" -name CTestTestfile.cmake -print0)
}
