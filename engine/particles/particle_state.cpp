#include "engine/particles/particle_state.hpp"


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
  // `width` values per particle of this rank's rows, converted to T (exact: doubles of integers).
  const auto read = [&]<class T>(const char* name, std::vector<T>& out, std::int64_t width) {
    std::vector<double> v(static_cast<std::size_t>(width * mine.count));
    r.array(prefix + "/" + name, v, width * mine.first);
    out.assign(v.begin(), v.end());
  };
  HostParticles p;
  read("index", p.index, 1);
  for (std::size_t k = 0; k < p.index.size(); ++k)
    if (p.index[k] != mine.first + static_cast<std::int64_t>(k))
      throw Error(ExitCode::bad_input, "checkpoint: " + prefix + "/index is not in global-index order");
  read("position", p.position, 3);
  read("velocity", p.velocity, 3);
  if (r.integer(prefix + "/has_id") != 0) read("id", p.id, 1);
  if (r.integer(prefix + "/has_mass") != 0) read("mass", p.mass, 1);
  if (r.integer(prefix + "/has_image") != 0) read("image", p.image, 3);
  return p;
}

}  // namespace strata::particles
