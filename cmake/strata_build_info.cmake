# build_config.hpp: the options of this build as constants (configure time).
# git_sha.cpp: the commit, refreshed at every build without re-running cmake.
set(STRATA_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
string(TOUPPER "${CMAKE_BUILD_TYPE}" _bt)
set(STRATA_CXX_FLAGS_ALL "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_bt}} ${STRATA_HOST_CXX_FLAGS}")
string(STRIP "${STRATA_CXX_FLAGS_ALL}" STRATA_CXX_FLAGS_ALL)
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_config.hpp.in
               ${STRATA_GENERATED_DIR}/build_config.hpp @ONLY)

add_custom_target(strata_git_sha
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUT=${STRATA_GENERATED_DIR}/git_sha.cpp
          -P ${CMAKE_CURRENT_LIST_DIR}/git_sha.cmake
  BYPRODUCTS ${STRATA_GENERATED_DIR}/git_sha.cpp
  COMMENT "" VERBATIM)
