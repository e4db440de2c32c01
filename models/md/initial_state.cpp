#include "models/md/initial_state.hpp"

#include <cmath>

#include "kernels/rng/normal.hpp"
#include "models/md/thermo.hpp"

namespace strata::md {

HostParticles fcc_lattice(const Params& p, const Domain& domain) {
  static constexpr double kBasis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  const double a = p.lattice_constant();
  const auto key = rng::philox_key(p.seed);
  HostParticles h;
  // Only the unit cells that can hold an owned site: [lo/a - 1, hi/a + 1].
  std::int64_t first[3], last[3];
  for (int d = 0; d < 3; ++d) {
    first[d] = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(domain.lo(d) / a)) - 1);
    last[d] = std::min<std::int64_t>(p.cells[static_cast<std::size_t>(d)] - 1,
                                     static_cast<std::int64_t>(std::floor(domain.hi(d) / a)) + 1);
  }
  for (std::int64_t k = first[2]; k <= last[2]; ++k)
    for (std::int64_t j = first[1]; j <= last[1]; ++j)
      for (std::int64_t i = first[0]; i <= last[0]; ++i)
        for (int b = 0; b < 4; ++b) {
          double r[3] = {(static_cast<double>(i) + kBasis[b][0]) * a, (static_cast<double>(j) + kBasis[b][1]) * a,
                         (static_cast<double>(k) + kBasis[b][2]) * a};
          // Lattice sites lie within one box length: the wrap cannot fail.
          int images = 0;
          for (int d = 0; d < 3; ++d) (void)wrap_periodic(r[d], domain.length()[d], images);
          if (domain.owner(r) != domain.rank()) continue;
          const std::int64_t index = ((k * p.cells[1] + j) * p.cells[0] + i) * 4 + b;
          double xi[4];
          rng::philox_normals<double>(key, static_cast<std::uint64_t>(index), 0, xi);
          rng::philox_normals<double>(key, static_cast<std::uint64_t>(index), 1, xi + 2);
          for (int d = 0; d < 3; ++d) {
            h.position.push_back(r[d]);
            h.velocity.push_back(std::sqrt(p.temperature) * xi[d]);
          }
          h.index.push_back(index);
        }
  h.image.assign(h.position.size(), 0);

  // Zero total momentum, then exactly T.
  const Device host;
  const std::int64_t n = static_cast<std::int64_t>(h.size()), total = p.fcc_atoms();
  std::vector<double> c[3];
  for (int d = 0; d < 3; ++d) {
    c[d].resize(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) c[d][i] = h.velocity[3 * i + static_cast<std::size_t>(d)];
  }
  for (int d = 0; d < 3; ++d) {
    const double mean =
        exact_sum_over_ranks(host, domain.comm(), n, kernels::particles::AtomValue<double>{c[d].data()}) / static_cast<double>(total);
    for (double& v : c[d]) v -= mean;
  }
  const double v2 = exact_sum_over_ranks(host, domain.comm(), n,
                              kernels::particles::AtomValue<double>{c[0].data(), c[1].data(), c[2].data(), true});
  const double scale = std::sqrt(p.temperature * (3.0 * static_cast<double>(total) - 3.0) / v2);
  for (std::size_t i = 0; i < h.size(); ++i)
    for (int d = 0; d < 3; ++d) h.velocity[3 * i + static_cast<std::size_t>(d)] = c[d][i] * scale;
  return h;
}

}  // namespace strata::md
