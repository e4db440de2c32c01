// Bit-for-bit comparison of strata::rng's Philox against cuRAND's device API.
//
// For every (seed, subsequence, offset) case, a cuRAND state made by
// curand_init (optionally moved on with skipahead) produces 64 draws each of
// curand, curand_uniform, curand_uniform_double, curand4 and
// curand_uniform2_double on the device. PhiloxStream reproduces each of them
// on the device and on the host; all three must agree bit for bit. The
// uint32 -> floating point maps are also compared on edge words,
// philox_normals is compared host against device within libm tolerance, and
// philox_normal against philox_normals on the device bit for bit.
//
// Exit status: 0 all passed, 1 a mismatch, 2 a CUDA error, 77 no device
// (ctest's SKIP_RETURN_CODE).
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/rng/normal.hpp"
#include "kernels/rng/philox.hpp"

namespace {

using strata::rng::PhiloxCounter;
using strata::rng::PhiloxStream;

constexpr int kDraws = 64;

enum Kind : int { kU32, kUniform, kUniformDouble, kCurand4, kUniform2Double, kKinds };
const char* const kKindNames[kKinds] = {"curand", "curand_uniform", "curand_uniform_double", "curand4",
                                        "curand_uniform2_double"};

// skipahead by 2^64 - 4 elements moves the counter by 2^62 - 1 blocks and
// leaves the word unchanged; four of them reach the top of the 64-bit block
// range, where cuRAND's counter carries into the subsequence words.
constexpr unsigned long long kSkipStride = 0xFFFFFFFFFFFFFFFCull;
constexpr std::uint64_t kSkipBlocks = kSkipStride / 4;

struct Case {
  std::uint64_t seed;
  std::uint64_t subsequence;
  std::uint64_t offset;
  unsigned skips;             // skipahead(kSkipStride) calls after curand_init
  PhiloxCounter start_block;  // where strata starts when skips > 0
  std::uint32_t start_word;
};

STRATA_HD std::uint64_t bits_of(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

STRATA_HD std::uint64_t bits_of(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}

STRATA_HD std::size_t slot(int kind, int n_cases, int c, int i) {
  return (static_cast<std::size_t>(kind) * n_cases + c) * kDraws + i;
}

// ---- cuRAND side -----------------------------------------------------------

__device__ void start_curand(const Case& cs, curandStatePhilox4_32_10_t* state) {
  curand_init(cs.seed, cs.subsequence, cs.offset, state);
  for (unsigned k = 0; k < cs.skips; ++k) skipahead(kSkipStride, state);
}

__global__ void curand_draws(const Case* cases, int n_cases, std::uint64_t* out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n_cases) return;
  const Case cs = cases[c];
  curandStatePhilox4_32_10_t state;

  start_curand(cs, &state);
  for (int i = 0; i < kDraws; ++i) out[slot(kU32, n_cases, c, i)] = curand(&state);

  start_curand(cs, &state);
  for (int i = 0; i < kDraws; ++i) out[slot(kUniform, n_cases, c, i)] = bits_of(curand_uniform(&state));

  start_curand(cs, &state);
  for (int i = 0; i < kDraws; ++i) out[slot(kUniformDouble, n_cases, c, i)] = bits_of(curand_uniform_double(&state));

  start_curand(cs, &state);
  for (int i = 0; i < kDraws; i += 4) {
    const uint4 w = curand4(&state);
    out[slot(kCurand4, n_cases, c, i + 0)] = w.x;
    out[slot(kCurand4, n_cases, c, i + 1)] = w.y;
    out[slot(kCurand4, n_cases, c, i + 2)] = w.z;
    out[slot(kCurand4, n_cases, c, i + 3)] = w.w;
  }

  start_curand(cs, &state);
  for (int i = 0; i < kDraws; i += 2) {
    const double2 u = curand_uniform2_double(&state);
    out[slot(kUniform2Double, n_cases, c, i + 0)] = bits_of(u.x);
    out[slot(kUniform2Double, n_cases, c, i + 1)] = bits_of(u.y);
  }
}

// ---- strata side (the same code runs on host and device) --------------------

STRATA_HD PhiloxStream start_strata(const Case& cs) {
  if (cs.skips == 0) return PhiloxStream(cs.seed, cs.subsequence, cs.offset);
  return PhiloxStream(strata::rng::philox_key(cs.seed), cs.start_block, cs.start_word);
}

STRATA_HD void strata_case(const Case& cs, int n_cases, int c, std::uint64_t* out) {
  PhiloxStream s = start_strata(cs);
  for (int i = 0; i < kDraws; ++i) out[slot(kU32, n_cases, c, i)] = s.next_u32();

  s = start_strata(cs);
  for (int i = 0; i < kDraws; ++i) out[slot(kUniform, n_cases, c, i)] = bits_of(s.next_uniform());

  s = start_strata(cs);
  for (int i = 0; i < kDraws; ++i) out[slot(kUniformDouble, n_cases, c, i)] = bits_of(s.next_uniform_double());

  s = start_strata(cs);
  for (int i = 0; i < kDraws; i += 4) {
    const PhiloxCounter w = s.next4();
    for (int k = 0; k < 4; ++k) out[slot(kCurand4, n_cases, c, i + k)] = w.v[k];
  }

  // curand_uniform2_double = _curand_uniform_double_hq on the two halves of curand4.
  s = start_strata(cs);
  for (int i = 0; i < kDraws; i += 2) {
    const PhiloxCounter w = s.next4();
    out[slot(kUniform2Double, n_cases, c, i + 0)] = bits_of(strata::rng::uniform_double(w.v[0], w.v[1]));
    out[slot(kUniform2Double, n_cases, c, i + 1)] = bits_of(strata::rng::uniform_double(w.v[2], w.v[3]));
  }
}

__global__ void strata_draws(const Case* cases, int n_cases, std::uint64_t* out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < n_cases) strata_case(cases[c], n_cases, c, out);
}

// ---- uint32 -> floating point maps on edge words ----------------------------

enum MapKind : int { kMapFloat, kMapDouble32, kMapDoubleHq, kMapKinds };
const char* const kMapNames[kMapKinds] = {"_curand_uniform", "_curand_uniform_double", "_curand_uniform_double_hq"};

__global__ void curand_maps(const std::uint32_t* x, const std::uint32_t* y, int n, std::uint64_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[kMapFloat * n + i] = bits_of(_curand_uniform(static_cast<unsigned int>(x[i])));
  out[kMapDouble32 * n + i] = bits_of(_curand_uniform_double(static_cast<unsigned int>(x[i])));
  out[kMapDoubleHq * n + i] = bits_of(_curand_uniform_double_hq(x[i], y[i]));
}

STRATA_HD void strata_map(const std::uint32_t* x, const std::uint32_t* y, int n, int i, std::uint64_t* out) {
  out[kMapFloat * n + i] = bits_of(strata::rng::uniform_float(x[i]));
  out[kMapDouble32 * n + i] = bits_of(strata::rng::uniform_double_32(x[i]));
  out[kMapDoubleHq * n + i] = bits_of(strata::rng::uniform_double(x[i], y[i]));
}

__global__ void strata_maps(const std::uint32_t* x, const std::uint32_t* y, int n, std::uint64_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) strata_map(x, y, n, i, out);
}

// ---- normals: host against device, up to libm differences ------------------

constexpr int kNormalCalls = 4096;
constexpr std::uint64_t kNormalSeed = 0xC0FFEEull;

// f, d: philox_normals per call; f1, d1: the same elements from philox_normal,
// which must match philox_normals bit for bit on the same side.
__global__ void device_normals(float* f, double* d, float* f1, double* d1) {
  const int call = blockIdx.x * blockDim.x + threadIdx.x;
  if (call >= kNormalCalls) return;
  const strata::rng::PhiloxKey key = strata::rng::philox_key(kNormalSeed);
  strata::rng::philox_normals<float>(key, 3, call, f + 4 * call);
  strata::rng::philox_normals<double>(key, 3, call, d + 2 * call);
  for (int c = 0; c < 4; ++c) f1[4 * call + c] = strata::rng::philox_normal<float>(key, 3, 4 * call + c);
  for (int c = 0; c < 2; ++c) d1[2 * call + c] = strata::rng::philox_normal<double>(key, 3, 2 * call + c);
}

// ---- bookkeeping ------------------------------------------------------------

struct Tally {
  long passed = 0;
  long failed = 0;
  void record(bool ok, const char* what) {
    if (ok) {
      ++passed;
      return;
    }
    if (failed < 10) std::printf("MISMATCH %s\n", what);
    ++failed;
  }
};

bool cuda_ok(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::printf("CUDA error in %s: %s (%s)\n", what, cudaGetErrorName(err), cudaGetErrorString(err));
  return false;
}

#define CHECK_CUDA(call)                   \
  do {                                     \
    if (!cuda_ok((call), #call)) return 2; \
  } while (0)

Case make_case(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset, unsigned skips) {
  Case cs{seed, subsequence, offset, skips, {}, static_cast<std::uint32_t>(offset % 4)};
  // 128-bit block index (subsequence:block) after curand_init and `skips`
  // skipaheads, carrying from the block half into the subsequence half.
  std::uint64_t hi = subsequence;
  std::uint64_t lo = offset / 4;
  for (unsigned k = 0; k < skips; ++k) {
    const std::uint64_t sum = lo + kSkipBlocks;
    if (sum < lo) ++hi;
    lo = sum;
  }
  cs.start_block = strata::rng::philox_counter(hi, lo);
  return cs;
}

std::vector<Case> make_cases() {
  constexpr std::uint64_t kBlock32 = 4ull << 32;  // element 0 of block 2^32
  constexpr std::uint64_t kMax = 0xFFFFFFFFFFFFFFFFull;
  std::vector<Case> cases;
  for (std::uint64_t off = 0; off < 8; ++off) cases.push_back(make_case(0, 0, off, 0));
  cases.push_back(make_case(1, 1, 7, 0));
  cases.push_back(make_case(kMax, kMax, kMax, 0));
  cases.push_back(make_case(kMax, 0, kMax - 2, 0));
  cases.push_back(make_case(0x0123456789ABCDEFull, 0xFEDCBA9876543210ull, 0x123456789ABCDEF1ull, 0));
  cases.push_back(make_case(0xDEADBEEFCAFEBABEull, 0x0000000100000000ull, 0x00000000FFFFFFFFull, 0));
  cases.push_back(make_case(0x8000000000000000ull, 0x00000000FFFFFFFFull, 0x8000000000000003ull, 0));
  // Draws that cross from block 2^32 - 1 into block 2^32, from each word.
  for (std::uint64_t back = 37; back <= 40; ++back)
    cases.push_back(make_case(0x0123456789ABCDEFull, 0xFEDCBA9876543210ull, kBlock32 - back, 0));
  cases.push_back(make_case(42, 0x00000000FFFFFFFFull, (kBlock32 << 1) - 30, 0));  // block 2^33
  cases.push_back(make_case(42, 0x7FFFFFFFFFFFFFFFull, 3 * kBlock32 - 1, 0));      // block 3 * 2^32
  // Counter carries from the block half into the subsequence half.
  cases.push_back(make_case(0x5EEDull, 5, 9, 4));               // block 2^64 - 2, then draws carry
  cases.push_back(make_case(0x5EEDull, 5, 23, 4));              // carry inside skipahead
  cases.push_back(make_case(0x5EEDull, 0xFFFFFFFFull, 10, 4));  // carry from ctr.z into ctr.w
  cases.push_back(make_case(kMax, kMax, 11, 4));                // 128-bit counter wraps to 0
  return cases;
}

std::vector<std::uint32_t> edge_words() {
  std::vector<std::uint32_t> w;
  for (std::uint32_t i = 0; i < 256; ++i) {
    w.push_back(i);
    w.push_back(0xFFFFFFFFu - i);
    w.push_back(0xFFFFFF80u + i - 128u);  // around the float rounding to 2^32
    w.push_back(0x80000000u + i);
    w.push_back(0x7FFFFFFFu - i);
    w.push_back(i * 0x9E3779B9u);
  }
  return w;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }

  Tally tally;
  char what[512];

  // -- stream draws --
  const std::vector<Case> cases = make_cases();
  const int n_cases = static_cast<int>(cases.size());
  const std::size_t n_out = static_cast<std::size_t>(kKinds) * n_cases * kDraws;
  std::vector<std::uint64_t> from_curand(n_out), from_device(n_out), from_host(n_out);
  for (int c = 0; c < n_cases; ++c) strata_case(cases[c], n_cases, c, from_host.data());

  Case* d_cases = nullptr;
  std::uint64_t* d_curand = nullptr;
  std::uint64_t* d_strata = nullptr;
  CHECK_CUDA(cudaMalloc(&d_cases, cases.size() * sizeof(Case)));
  CHECK_CUDA(cudaMalloc(&d_curand, n_out * sizeof(std::uint64_t)));
  CHECK_CUDA(cudaMalloc(&d_strata, n_out * sizeof(std::uint64_t)));
  CHECK_CUDA(cudaMemcpy(d_cases, cases.data(), cases.size() * sizeof(Case), cudaMemcpyHostToDevice));
  const int threads = 64;
  const int blocks = (n_cases + threads - 1) / threads;
  curand_draws<<<blocks, threads>>>(d_cases, n_cases, d_curand);
  CHECK_CUDA(cudaGetLastError());
  strata_draws<<<blocks, threads>>>(d_cases, n_cases, d_strata);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(from_curand.data(), d_curand, n_out * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(from_device.data(), d_strata, n_out * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(d_cases));
  CHECK_CUDA(cudaFree(d_curand));
  CHECK_CUDA(cudaFree(d_strata));

  for (int kind = 0; kind < kKinds; ++kind) {
    for (int c = 0; c < n_cases; ++c) {
      const Case& cs = cases[c];
      for (int i = 0; i < kDraws; ++i) {
        const std::size_t k = slot(kind, n_cases, c, i);
        const char* const sides[2] = {"strata-device", "strata-host"};
        const std::uint64_t ours[2] = {from_device[k], from_host[k]};
        for (int side = 0; side < 2; ++side) {
          std::snprintf(what, sizeof what,
                        "%s (seed=0x%016llx, subsequence=0x%016llx, offset=0x%016llx, skips=%u) "
                        "index %d: curand=0x%016llx %s=0x%016llx",
                        kKindNames[kind], static_cast<unsigned long long>(cs.seed),
                        static_cast<unsigned long long>(cs.subsequence), static_cast<unsigned long long>(cs.offset),
                        cs.skips, i, static_cast<unsigned long long>(from_curand[k]), sides[side],
                        static_cast<unsigned long long>(ours[side]));
          tally.record(ours[side] == from_curand[k], what);
        }
      }
    }
  }

  // -- uniform maps on edge words --
  const std::vector<std::uint32_t> xs = edge_words();
  const int n_words = static_cast<int>(xs.size());
  std::vector<std::uint32_t> ys(xs.size());
  for (int i = 0; i < n_words; ++i) ys[i] = xs[(i * 7 + 3) % n_words] ^ (i % 2 ? 0xFFFFF800u : 0u);
  const std::size_t n_maps = static_cast<std::size_t>(kMapKinds) * n_words;
  std::vector<std::uint64_t> map_curand(n_maps), map_device(n_maps), map_host(n_maps);
  for (int i = 0; i < n_words; ++i) strata_map(xs.data(), ys.data(), n_words, i, map_host.data());

  std::uint32_t* d_x = nullptr;
  std::uint32_t* d_y = nullptr;
  std::uint64_t* d_map_curand = nullptr;
  std::uint64_t* d_map_strata = nullptr;
  CHECK_CUDA(cudaMalloc(&d_x, xs.size() * sizeof(std::uint32_t)));
  CHECK_CUDA(cudaMalloc(&d_y, ys.size() * sizeof(std::uint32_t)));
  CHECK_CUDA(cudaMalloc(&d_map_curand, n_maps * sizeof(std::uint64_t)));
  CHECK_CUDA(cudaMalloc(&d_map_strata, n_maps * sizeof(std::uint64_t)));
  CHECK_CUDA(cudaMemcpy(d_x, xs.data(), xs.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_y, ys.data(), ys.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  const int map_blocks = (n_words + 255) / 256;
  curand_maps<<<map_blocks, 256>>>(d_x, d_y, n_words, d_map_curand);
  CHECK_CUDA(cudaGetLastError());
  strata_maps<<<map_blocks, 256>>>(d_x, d_y, n_words, d_map_strata);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(map_curand.data(), d_map_curand, n_maps * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(map_device.data(), d_map_strata, n_maps * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(d_x));
  CHECK_CUDA(cudaFree(d_y));
  CHECK_CUDA(cudaFree(d_map_curand));
  CHECK_CUDA(cudaFree(d_map_strata));

  for (int m = 0; m < kMapKinds; ++m) {
    for (int i = 0; i < n_words; ++i) {
      const std::size_t k = static_cast<std::size_t>(m) * n_words + i;
      std::snprintf(what, sizeof what, "%s(x=0x%08x, y=0x%08x): curand=0x%016llx device=0x%016llx host=0x%016llx",
                    kMapNames[m], xs[i], ys[i], static_cast<unsigned long long>(map_curand[k]),
                    static_cast<unsigned long long>(map_device[k]), static_cast<unsigned long long>(map_host[k]));
      tally.record(map_device[k] == map_curand[k], what);
      tally.record(map_host[k] == map_curand[k], what);
    }
  }

  // -- normals: host vs device. Different libm, so a tolerance: about 100
  // ulp of max(1, |z|) in each precision, far above the few-ulp error of
  // either log/sqrt/sin/cos and far below any indexing or formula error.
  std::vector<float> nf_device(4 * kNormalCalls), nf_host(4 * kNormalCalls);
  std::vector<double> nd_device(2 * kNormalCalls), nd_host(2 * kNormalCalls);
  std::vector<float> nf1_device(4 * kNormalCalls);
  std::vector<double> nd1_device(2 * kNormalCalls);
  const strata::rng::PhiloxKey normal_key = strata::rng::philox_key(kNormalSeed);
  for (int call = 0; call < kNormalCalls; ++call) {
    strata::rng::philox_normals<float>(normal_key, 3, call, nf_host.data() + 4 * call);
    strata::rng::philox_normals<double>(normal_key, 3, call, nd_host.data() + 2 * call);
  }
  float* d_nf = nullptr;
  double* d_nd = nullptr;
  float* d_nf1 = nullptr;
  double* d_nd1 = nullptr;
  CHECK_CUDA(cudaMalloc(&d_nf, nf_device.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_nd, nd_device.size() * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&d_nf1, nf1_device.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_nd1, nd1_device.size() * sizeof(double)));
  device_normals<<<(kNormalCalls + 255) / 256, 256>>>(d_nf, d_nd, d_nf1, d_nd1);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(nf_device.data(), d_nf, nf_device.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(nd_device.data(), d_nd, nd_device.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(nf1_device.data(), d_nf1, nf1_device.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(nd1_device.data(), d_nd1, nd1_device.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(d_nf));
  CHECK_CUDA(cudaFree(d_nd));
  CHECK_CUDA(cudaFree(d_nf1));
  CHECK_CUDA(cudaFree(d_nd1));

  for (std::size_t i = 0; i < nf_host.size(); ++i) {
    const double h = nf_host[i], d = nf_device[i];
    std::snprintf(what, sizeof what, "philox_normals<float> element %zu: host=%.9g device=%.9g", i, h, d);
    tally.record(std::abs(h - d) <= 1e-5 * std::fmax(1.0, std::abs(h)), what);
    std::snprintf(what, sizeof what, "device philox_normal<float>(%zu)=0x%08llx != philox_normals 0x%08llx", i,
                  static_cast<unsigned long long>(bits_of(nf1_device[i])),
                  static_cast<unsigned long long>(bits_of(nf_device[i])));
    tally.record(bits_of(nf1_device[i]) == bits_of(nf_device[i]), what);
  }
  for (std::size_t i = 0; i < nd_host.size(); ++i) {
    const double h = nd_host[i], d = nd_device[i];
    std::snprintf(what, sizeof what, "philox_normals<double> element %zu: host=%.17g device=%.17g", i, h, d);
    tally.record(std::abs(h - d) <= 2e-14 * std::fmax(1.0, std::abs(h)), what);
    std::snprintf(what, sizeof what, "device philox_normal<double>(%zu)=0x%016llx != philox_normals 0x%016llx", i,
                  static_cast<unsigned long long>(bits_of(nd1_device[i])),
                  static_cast<unsigned long long>(bits_of(nd_device[i])));
    tally.record(bits_of(nd1_device[i]) == bits_of(nd_device[i]), what);
  }

  std::printf("%ld passed, %ld failed\n", tally.passed, tally.failed);
  return tally.failed == 0 ? 0 : 1;
}
