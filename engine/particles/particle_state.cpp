#include "engine/particles/particle_state.hpp"

#include <numeric>

#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/simulation.hpp"

namespace strata::particles {

namespace {

template <class I>
std::vector<double> as_doubles(const std::vector<I>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

void save_particles(StateWriter& w, const MpiContext& mpi, const std::string& prefix, const HostParticles& local,
                    std::int64_t n) {
  const HostParticles share = to_even_share(mpi, local, n);
  const Share mine = even_share(n, mpi.rank(), mpi.size());
  if (static_cast<std::int64_t>(share.size()) != mine.count)
    throw std::logic_error("save_particles: the particles do not cover the global indices 0..N-1");
  const Record carried = Record::of(share).agreed(mpi.comm());
  w.scalar(prefix + "/n", n);
  w.scalar(prefix + "/has_id", std::int64_t{carried.id});
  w.scalar(prefix + "/has_mass", std::int64_t{carried.mass});
  w.scalar(prefix + "/has_image", std::int64_t{carried.image});
  w.array(prefix + "/index", as_doubles(share.index), mine.first, n);
  w.array(prefix + "/position", share.position, 3 * mine.first, 3 * n);
  w.array(prefix + "/velocity", share.velocity, 3 * mine.first, 3 * n);
  if (carried.id) w.array(prefix + "/id", as_doubles(share.id), mine.first, n);
  if (carried.mass) w.array(prefix + "/mass", share.mass, mine.first, n);
  if (carried.image) w.array(prefix + "/image", as_doubles(share.image), 3 * mine.first, 3 * n);
}

HostParticles restore_particles(StateReader& r, const MpiContext& mpi, const std::string& prefix) {
  const std::int64_t n = r.integer(prefix + "/n");
  const Share mine = even_share(n, mpi.rank(), mpi.size());
  const auto count = static_cast<std::size_t>(mine.count);
  HostParticles p;
  std::vector<double> index(count), id;
  r.array(prefix + "/index", index, mine.first);
  p.index.assign(index.begin(), index.end());
  for (std::size_t k = 0; k < count; ++k)
    if (p.index[k] != mine.first + static_cast<std::int64_t>(k))
      throw Error(ExitCode::bad_input, "checkpoint: " + prefix + "/index is not in global-index order");
  p.position.resize(3 * count);
  p.velocity.resize(3 * count);
  r.array(prefix + "/position", p.position, 3 * mine.first);
  r.array(prefix + "/velocity", p.velocity, 3 * mine.first);
  if (r.integer(prefix + "/has_id") != 0) {
    id.resize(count);
    r.array(prefix + "/id", id, mine.first);
    p.id.assign(id.begin(), id.end());
  }
  if (r.integer(prefix + "/has_mass") != 0) {
    p.mass.resize(count);
    r.array(prefix + "/mass", p.mass, mine.first);
  }
  if (r.integer(prefix + "/has_image") != 0) {
    std::vector<double> image(3 * count);
    r.array(prefix + "/image", image, 3 * mine.first);
    p.image.assign(image.begin(), image.end());
  }
  return p;
}

}  // namespace strata::particles
