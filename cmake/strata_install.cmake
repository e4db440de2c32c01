# `cmake --install BUILD --prefix PREFIX`: the tree a cluster admin hands to
# users (a module's root), in GNUInstallDirs paths:
#   bin/strata
#   share/strata/inputs/...                  the example inputs
#   share/strata/scripts/{slurm,plot,convert}  Slurm templates, plot scripts, converters
#   share/strata/python/                     the reader package the plot scripts import
#   share/bash-completion/completions/strata
#   share/man/man1/strata.1
# The scripts keep their places relative to each other (share/strata plays
# the checkout's root), so they find one another and PREFIX/bin/strata.
include(GNUInstallDirs)
set(STRATA_INSTALL_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/strata)

# The completion script and the man page come from the built binary (its
# own command line and schema), so neither can drift from it.
set(STRATA_COMPLETION_FILE ${CMAKE_BINARY_DIR}/share/bash-completion/completions/strata)
add_custom_command(OUTPUT ${STRATA_COMPLETION_FILE}
  COMMAND ${CMAKE_COMMAND} -DWHAT=completion -DSTRATA_BIN=$<TARGET_FILE:strata> -DOUT=${STRATA_COMPLETION_FILE}
          -P ${CMAKE_CURRENT_LIST_DIR}/strata_generate_docs.cmake
  DEPENDS strata ${CMAKE_CURRENT_LIST_DIR}/strata_generate_docs.cmake
  COMMENT "Generating the bash completion script" VERBATIM)
set(_strata_generated ${STRATA_COMPLETION_FILE})

find_program(STRATA_HELP2MAN help2man)
if(STRATA_HELP2MAN)
  set(STRATA_MAN_PAGE ${CMAKE_BINARY_DIR}/share/man/man1/strata.1)
  add_custom_command(OUTPUT ${STRATA_MAN_PAGE}
    COMMAND ${CMAKE_COMMAND} -DWHAT=man -DSTRATA_BIN=$<TARGET_FILE:strata> -DOUT=${STRATA_MAN_PAGE}
            -DHELP2MAN=${STRATA_HELP2MAN} -DVERSION=${PROJECT_VERSION}
            -DINCLUDE=${PROJECT_SOURCE_DIR}/docs/strata.h2m
            -P ${CMAKE_CURRENT_LIST_DIR}/strata_generate_docs.cmake
    DEPENDS strata ${PROJECT_SOURCE_DIR}/docs/strata.h2m ${CMAKE_CURRENT_LIST_DIR}/strata_generate_docs.cmake
    COMMENT "Generating the man page (help2man)" VERBATIM)
  list(APPEND _strata_generated ${STRATA_MAN_PAGE})
else()
  message(STATUS "strata: help2man not found (Debian: help2man): no man page is built or installed")
endif()
add_custom_target(strata_install_docs ALL DEPENDS ${_strata_generated})

install(TARGETS strata RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/inputs/ DESTINATION ${STRATA_INSTALL_SHARE_DIR}/inputs
        USE_SOURCE_PERMISSIONS PATTERN __pycache__ EXCLUDE)
foreach(dir slurm plot convert)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/${dir}/ DESTINATION ${STRATA_INSTALL_SHARE_DIR}/scripts/${dir}
          USE_SOURCE_PERMISSIONS PATTERN __pycache__ EXCLUDE)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ DESTINATION ${STRATA_INSTALL_SHARE_DIR}/python
        PATTERN __pycache__ EXCLUDE PATTERN "*.egg-info" EXCLUDE PATTERN build EXCLUDE)
install(FILES ${STRATA_COMPLETION_FILE} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
if(STRATA_HELP2MAN)
  install(FILES ${STRATA_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
