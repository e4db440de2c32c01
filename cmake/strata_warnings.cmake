# Warnings on for every strata target, for both compilers.
function(strata_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-fopenmp --expt-relaxed-constexpr>)
endfunction()
