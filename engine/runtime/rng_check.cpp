#include "engine/runtime/rng_check.hpp"

#include "engine/backend/buffer.hpp"
#include "engine/backend/engine_kernels.hpp"

namespace strata {

std::vector<CheckResult> rng_self_checks(const Device& device) {
  // Random123 tests/kat_vectors, "philox4x32 10" lines: counter, key -> output.
  const rng::PhiloxCounter ctr[3] = {{{0u, 0u, 0u, 0u}},
                                     {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                                     {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}};
  const rng::PhiloxKey key[3] = {{{0u, 0u}}, {{0xffffffffu, 0xffffffffu}}, {{0xa4093822u, 0x299f31d0u}}};
  const rng::PhiloxCounter expect[3] = {{{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
                                        {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
                                        {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}};
  Buffer<rng::PhiloxCounter> d_ctr(device, 3), d_out(device, 3);
  Buffer<rng::PhiloxKey> d_key(device, 3);
  d_ctr.copy_from_host(ctr, 3);
  d_key.copy_from_host(key, 3);
  parallel_for(device, 3, rng::PhiloxBatch{d_ctr.data(), d_key.data(), d_out.data()});
  rng::PhiloxCounter got[3];
  d_out.copy_to_host(got, 3);

  int mismatched = 0;
  for (int i = 0; i < 3; ++i) {
    for (int w = 0; w < 4; ++w) mismatched += got[i].v[w] != expect[i].v[w] ? 1 : 0;
  }
  return {CheckResult::within("philox4x32-10 known answers", 12 - mismatched, 12, 0,
                              "exact: 12 words, Random123 kat_vectors")};
}

}  // namespace strata
