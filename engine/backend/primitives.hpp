// The two data-parallel primitives beside parallel_for and parallel_reduce
// that compaction and sorting need, with the same result on every backend:
// an exclusive prefix sum of ints, and a stable sort of 64-bit keys carrying
// int values (the host: serial loops; CUDA: CUB, primitives.cu).
#pragma once

#include <cstdint>

#include "engine/backend/backend.hpp"

namespace strata {

// out[i] = in[0] + ... + in[i-1] for i in [0, n); returns the total. in != out.
int exclusive_scan(const Device& device, const int* in, int* out, std::int64_t n);

// (keys, values) sorted by key into (keys_out, values_out), equal keys in
// their input order; only the low `bits` bits of a key may be set. keys and
// values are scratch afterwards.
void sort_pairs(const Device& device, std::uint64_t* keys, int* values, std::uint64_t* keys_out, int* values_out,
                std::int64_t n, int bits);

namespace cuda {   // primitives.cu (cuda_stub.cpp in a host build)
int exclusive_scan(const int* in, int* out, std::int64_t n);
void sort_pairs(std::uint64_t* keys, int* values, std::uint64_t* keys_out, int* values_out, std::int64_t n, int bits);
}  // namespace cuda

}  // namespace strata
