# strata_kernel_list(<target> <header> <list>): <header> (a path from the
# project root) defines the kernel list <list>, an X-macro of the functors
# launched through parallel_for / parallel_reduce (engine/backend/parallel.hpp).
# In a CUDA build their explicit instantiations are compiled into <target>
# from a .cu generated from engine/backend/kernels_cuda.cu.in, so a functor
# is named once, in its list, for both builds.
function(strata_kernel_list target header list)
  if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${header})
    message(FATAL_ERROR "strata_kernel_list: ${header} (for ${list}) does not exist")
  endif()
  set_property(GLOBAL APPEND PROPERTY STRATA_KERNEL_LISTS "${header}|${list}")   # for kernel_checks
  if(NOT STRATA_HAVE_CUDA)
    return()
  endif()
  set(STRATA_LIST_HEADER ${header})
  set(STRATA_LIST ${list})
  set(generated ${STRATA_GENERATED_DIR}/kernels/${list}_cuda.cu)
  configure_file(${PROJECT_SOURCE_DIR}/engine/backend/kernels_cuda.cu.in ${generated} @ONLY)
  target_sources(${target} PRIVATE ${generated})
endfunction()
