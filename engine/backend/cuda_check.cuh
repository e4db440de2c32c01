// For the engine's .cu files: a CUDA runtime status turned into strata's
// errors (defined in cuda_runtime.cu).
#pragma once

#include <cuda_runtime.h>

namespace strata::cuda {

// Throws ResourceError for cudaErrorMemoryAllocation, else Error (internal),
// naming `what` and the CUDA error; returns on cudaSuccess.
void check(cudaError_t e, const char* what);

}  // namespace strata::cuda
