# cmake -DWHAT=completion|man -DSTRATA_BIN=... -DOUT=... [-DHELP2MAN=... -DVERSION=... -DINCLUDE=...] -P this
# Runs the built strata to write its bash completion script or (through
# help2man) its man page. strata starts MPI for every command, and Open MPI
# refuses root (an admin's build, a container) unless told.
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
if(WHAT STREQUAL "completion")
  execute_process(COMMAND ${STRATA_BIN} completion bash OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
elseif(WHAT STREQUAL "man")
  # --help-all: the page describes every command's options, not only the list of commands.
  execute_process(COMMAND ${HELP2MAN} --no-info --help-option=--help-all --version-string=${VERSION}
                          "--name=GPU simulation engine for batch experiments (pricing, particles, stencils)"
                          --section=1 --include=${INCLUDE} --output=${OUT}.tmp ${STRATA_BIN}
                  RESULT_VARIABLE rc)
else()
  message(FATAL_ERROR "WHAT=${WHAT}: expected completion or man")
endif()
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${STRATA_BIN} could not write ${OUT} (${rc})")
endif()
file(RENAME ${OUT}.tmp ${OUT})
