// AtomSystem's rebuild (host side: wrap, migrate, sort, ghosts, cells).
#pragma once

#include <cmath>
#include <cstdio>

namespace strata::md {

template <class T>
kernels::particles::CellGrid<T> AtomSystem<T>::cell_grid() const {
  kernels::particles::CellGrid<T> g;
  g.reach = 2;
  const double width = ghost_cutoff_ / g.reach;
  for (int a = 0; a < 3; ++a) {
    const double lo = domain_.lo(a) - ghost_cutoff_, extent = domain_.hi(a) - domain_.lo(a) + 2 * ghost_cutoff_;
    const int n = std::max(1, static_cast<int>(std::floor(extent / width)));
    g.lo[a] = static_cast<T>(lo);
    g.n[a] = n;
    // Cells at least `width` wide, in T arithmetic as the kernels use it:
    // n width <= extent, so n / extent rounded to T is at most an ulp or two
    // above 1 / width; a fixed few steps down settle it (no loop runs on a
    // value's say).
    g.inv_width[a] = static_cast<T>(n / extent);
    for (int k = 0; k < 8 && static_cast<double>(g.inv_width[a]) * width > 1.0; ++k)
      g.inv_width[a] = std::nextafter(g.inv_width[a], T(0));
  }
  return g;
}

template <class T>
void AtomSystem<T>::rebuild_from_host(bool from_reference) {
  ++rebuilds_;
  if (!from_reference) {
    agree_on(check_and_wrap());
    host_.reference = host_.position;
  }
  migrate();
  const auto grid = cell_grid();
  sort_by_cell(grid);
  std::vector<double> keys = host_.reference;   // owned then ghost positions at build
  find_ghosts(keys);
  upload(keys);
  bin_and_list(keys, grid);
  forward_positions();
}

// Positions into [0, L), counting images (the lists are built from these),
// after checking that each is a place in the box the lists can follow: a
// finite position, at most the list's reach (cutoff + skin) from where the
// last build saw it (x0). An atom that went farther passed atoms whose
// pairs were never in its list, so the forces of the steps since were
// wrong: the run is unstable. Returns this rank's failure ("" when none),
// the farthest-moved broken atom, positions untouched. A NaN is left as it
// is, for the health check (it names the atom too).
template <class T>
std::string AtomSystem<T>::check_and_wrap() {
  const std::size_t n = host_.size();
  std::size_t worst = n;
  double worst_d2 = -1;
  for (std::size_t i = 0; i < n; ++i) {
    double d2 = 0;
    for (int a = 0; a < 3; ++a) {
      const double d = host_.position[3 * i + a] - host_.reference[3 * i + a];
      d2 += d * d;
    }
    if (d2 > ghost_cutoff_ * ghost_cutoff_ && d2 > worst_d2) {
      worst = i;
      worst_d2 = d2;
    }
  }
  std::size_t unwrappable = n;
  std::vector<int> image(3 * n);
  for (std::size_t i = 0; i < n && worst == n && unwrappable == n; ++i)
    for (int a = 0; a < 3; ++a) {
      double v = host_.position[3 * i + a];
      if (!std::isnan(v) && !wrap_periodic(v, domain_.length()[a], image[3 * i + a])) unwrappable = i;
    }
  if (worst != n || unwrappable != n) {
    const std::size_t i = worst != n ? worst : unwrappable;
    const double* x = &host_.position[3 * i];
    const double* x0 = &host_.reference[3 * i];
    char where[160];
    if (worst != n) {
      std::snprintf(where, sizeof where, "%.6g sigma from (%.6g, %.6g, %.6g) where the neighbour list last saw it",
                    std::sqrt(worst_d2), x0[0], x0[1], x0[2]);
    } else {
      std::snprintf(where, sizeof where, "not a place in the periodic box (more than 2^30 box lengths out)");
    }
    char text[640];
    std::snprintf(text, sizeof text,
                  "rank %d: md: atom %lld is at (%.6g, %.6g, %.6g), %s, at step %lld (a neighbour list reaches "
                  "cutoff + skin = %.6g): the run is unstable (md.dt too large for the forces or the temperature, "
                  "or atoms on top of each other)",
                  domain_.rank(), static_cast<long long>(host_.index[i]), x[0], x[1], x[2], where,
                  static_cast<long long>(step_), ghost_cutoff_);
    return text;
  }
  for (std::size_t k = 0; k < 3 * n; ++k) {
    int crossed = 0;
    (void)wrap_periodic(host_.position[k], domain_.length()[k % 3], crossed);
    host_.image[k] += crossed;
  }
  return {};
}

// Every rank throws the lowest failing rank's message (collective).
template <class T>
void AtomSystem<T>::agree_on(const std::string& local_failure) const {
  const int mine = local_failure.empty() ? std::numeric_limits<int>::max() : domain_.rank();
  int first = 0;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, domain_.comm());
  if (first == std::numeric_limits<int>::max()) return;
  int length = static_cast<int>(local_failure.size());
  MPI_Bcast(&length, 1, MPI_INT, first, domain_.comm());
  std::string text = local_failure;
  text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, first, domain_.comm());
  throw Error(ExitCode::numerical, text, true);
}

// Atoms whose x0 left the sub-box go to the neighbour owning them, axis by
// axis (an atom moves less than skin/2 between builds, so one hop suffices;
// start-up and restarts place atoms on their owners before load()).
template <class T>
void AtomSystem<T>::migrate() {
  const particles::Record record{false, false, true, true};   // index, position, velocity, image, x0
  const int width = record.width();
  int lost = 0;   // atoms farther than one sub-box away: the run blew up
  for (int a = 0; a < 3; ++a) {
    if (domain_.ranks()[a] == 1) continue;
    const int me = domain_.coords()[a], p = domain_.ranks()[a];
    std::vector<double> to_lower, to_upper;
    std::vector<std::size_t> stay;
    for (std::size_t i = 0; i < host_.size(); ++i) {
      const double v = host_.reference[3 * i + a];
      int c = std::isfinite(v) ? domain_.coord_of(a, v) : me;   // NaN stays for the health check
      if (c != me && c != (me + p - 1) % p && c != (me + 1) % p) {
        lost = 1;
        c = me;
      }
      if (c == me) {
        stay.push_back(i);
        continue;
      }
      std::vector<double>& out = c == (me + p - 1) % p ? to_lower : to_upper;
      out.resize(out.size() + static_cast<std::size_t>(width));
      record.pack(host_, i, out.data() + out.size() - width);
    }
    // Both directions at once, non-blocking: counts, then the records.
    Swap pair[2] = {{domain_.lower(a), domain_.upper(a), 100 + 4 * a},
                    {domain_.upper(a), domain_.lower(a), 102 + 4 * a}};
    const int one[2] = {1, 1}, sizes[2] = {static_cast<int>(to_lower.size()), static_cast<int>(to_upper.size())};
    int counts[2] = {0, 0};
    exchange_pair<int>(pair, 0, MPI_INT, {&sizes[0], &sizes[1]}, one, {&counts[0], &counts[1]}, one);
    std::vector<double> in(static_cast<std::size_t>(counts[0] + counts[1]));
    exchange_pair<double>(pair, 1, MPI_DOUBLE, {to_lower.data(), to_upper.data()}, sizes,
                          {in.data(), in.data() + counts[0]}, counts);
    HostParticles keep = host_.permuted(stay);
    for (std::size_t r = 0; r < in.size(); r += static_cast<std::size_t>(width)) record.unpack(in.data() + r, keep);
    host_ = std::move(keep);
  }
  int any = 0;
  MPI_Allreduce(&lost, &any, 1, MPI_INT, MPI_MAX, domain_.comm());
  if (any != 0)
    throw Error(ExitCode::numerical,
                "md: an atom moved farther than a neighbouring sub-domain since the last neighbour-list build "
                "(the run is unstable: md.dt too large for the forces?)",
                true);
}

// Owned atoms in cell order (ties by index): neighbours in memory are
// neighbours in space, and the order is fixed by the positions alone.
template <class T>
void AtomSystem<T>::sort_by_cell(const kernels::particles::CellGrid<T>& grid) {
  const std::size_t n = host_.size();
  std::vector<int> cell(n);
  for (std::size_t i = 0; i < n; ++i)
    cell[i] = grid.cell_of(static_cast<T>(host_.reference[3 * i]), static_cast<T>(host_.reference[3 * i + 1]),
                           static_cast<T>(host_.reference[3 * i + 2]));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return cell[a] != cell[b] ? cell[a] < cell[b] : host_.index[a] < host_.index[b];
  });
  host_ = host_.permuted(order);
  n_local_ = static_cast<int>(n);
}

// Six swaps (LAMMPS's Comm::borders): along each axis, the atoms (owned and
// ghosts of earlier axes) within the ghost cutoff of the lower face go to the
// lower neighbour, those near the upper face to the upper one, shifted by
// a box length across the periodic seam. An axis's two swaps travel at
// once, non-blocking (receives posted first). Appends the ghosts' build
// positions to `keys` and records each swap for forward_positions().
template <class T>
void AtomSystem<T>::find_ghosts(std::vector<double>& keys) {
  swaps_.clear();
  std::vector<int> sends;
  const double rg = ghost_cutoff_;
  std::size_t stage_out = 1, stage_in = 1;
  for (int a = 0; a < 3; ++a) {
    const std::size_t candidates = keys.size() / 3;
    Swap pair[2];
    std::vector<double> out[2], in[2];
    int counts[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      Swap& s = pair[side];
      s.to = side == 0 ? domain_.lower(a) : domain_.upper(a);
      s.from = side == 0 ? domain_.upper(a) : domain_.lower(a);
      s.tag = 200 + 2 * a + side;
      const bool seam = side == 0 ? domain_.coords()[a] == 0 : domain_.coords()[a] == domain_.ranks()[a] - 1;
      s.shift[a] = seam ? (side == 0 ? domain_.length()[a] : -domain_.length()[a]) : 0.0;
      s.send_offset = static_cast<int>(sends.size());
      for (std::size_t i = 0; i < candidates; ++i) {
        const double v = keys[3 * i + a];
        if (side == 0 ? v < domain_.lo(a) + rg : v >= domain_.hi(a) - rg) {
          sends.push_back(static_cast<int>(i));
          for (int k = 0; k < 3; ++k) out[side].push_back(keys[3 * i + k] + s.shift[k]);
        }
      }
      s.send_count = static_cast<int>(sends.size()) - s.send_offset;
    }
    const int one[2] = {1, 1}, sizes[2] = {static_cast<int>(out[0].size()), static_cast<int>(out[1].size())};
    exchange_pair<int>(pair, 0, MPI_INT, {&pair[0].send_count, &pair[1].send_count}, one, {&counts[0], &counts[1]},
                       one);
    for (int side = 0; side < 2; ++side) in[side].resize(3 * static_cast<std::size_t>(counts[side]));
    const int in_sizes[2] = {3 * counts[0], 3 * counts[1]};
    exchange_pair<double>(pair, 10, MPI_DOUBLE, {out[0].data(), out[1].data()}, sizes, {in[0].data(), in[1].data()},
                          in_sizes);
    for (int side = 0; side < 2; ++side) {
      Swap& s = pair[side];
      s.recv_first = static_cast<int>(keys.size() / 3);
      s.recv_count = counts[side];
      keys.insert(keys.end(), in[side].begin(), in[side].end());
      swaps_.push_back(s);
    }
    stage_out = std::max(stage_out, out[0].size() + out[1].size());
    stage_in = std::max(stage_in, in[0].size() + in[1].size());
  }
  n_ghost_ = static_cast<int>(keys.size() / 3) - n_local_;
  send_index_ = Buffer<int>(device_, std::max<std::size_t>(sends.size(), 1));
  send_index_.copy_from_host(sends.data(), sends.size());
  if (stage_out_.size() < stage_out) stage_out_ = Buffer<T>(device_, stage_out + stage_out / 4);
  if (stage_in_.size() < stage_in) stage_in_ = Buffer<T>(device_, stage_in + stage_in / 4);
}

template <class T>
void AtomSystem<T>::upload(const std::vector<double>& keys) {
  const std::size_t n = static_cast<std::size_t>(n_local_), all = keys.size() / 3;
  if (x_.size() < all || vx_.size() < n || vx_.size() == 0) {
    const std::size_t cap_all = all + all / 4 + 16, cap = n + n / 4 + 16;
    for (Buffer<T>* b : {&x_, &y_, &z_, &x0_, &y0_, &z0_}) *b = Buffer<T>(device_, cap_all);
    for (Buffer<T>* b : {&vx_, &vy_, &vz_, &fx_, &fy_, &fz_, &energy_, &virial_}) *b = Buffer<T>(device_, cap);
    index_ = Buffer<std::int64_t>(device_, cap);
    count_ = Buffer<int>(device_, cap);
    neighbours_ = Buffer<int>();
  }
  deinterleave(keys, {&x0_, &y0_, &z0_}, all);
  deinterleave(host_.position, {&x_, &y_, &z_}, n);
  deinterleave(host_.velocity, {&vx_, &vy_, &vz_}, n);
  index_.copy_from_host(host_.index.data(), n);
}

// Counting sort of owned and ghost atoms by the cell of their build
// position, then the lists; grown and rebuilt while a row overflows.
template <class T>
void AtomSystem<T>::bin_and_list(const std::vector<double>& keys, const kernels::particles::CellGrid<T>& grid) {
  const std::size_t all = keys.size() / 3;
  const std::int64_t cells = grid.cells();
  std::vector<int> cell(all), start(static_cast<std::size_t>(cells) + 1, 0), atoms(all);
  for (std::size_t i = 0; i < all; ++i) {
    cell[i] = grid.cell_of(static_cast<T>(keys[3 * i]), static_cast<T>(keys[3 * i + 1]), static_cast<T>(keys[3 * i + 2]));
    ++start[static_cast<std::size_t>(cell[i]) + 1];
  }
  for (std::int64_t c = 0; c < cells; ++c) start[static_cast<std::size_t>(c) + 1] += start[static_cast<std::size_t>(c)];
  std::vector<int> fill(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < all; ++i) atoms[static_cast<std::size_t>(fill[static_cast<std::size_t>(cell[i])]++)] = static_cast<int>(i);
  cell_start_ = Buffer<int>(device_, start.size());
  cell_start_.copy_from_host(start.data(), start.size());
  cell_atoms_ = Buffer<int>(device_, std::max<std::size_t>(all, 1));
  cell_atoms_.copy_from_host(atoms.data(), all);
  for (Buffer<T>* b : {&binned_x_, &binned_y_, &binned_z_})
    if (b->size() < all) *b = Buffer<T>(device_, all + all / 4 + 16);
  parallel_for(device_, static_cast<std::int64_t>(all),
               kernels::particles::BinPositions<T>{x0_.data(), y0_.data(), z0_.data(), cell_atoms_.data(),
                                                   binned_x_.data(), binned_y_.data(), binned_z_.data()});

  const T cutsq = static_cast<T>(ghost_cutoff_ * ghost_cutoff_);
  const auto padded = [](std::int64_t c) {
    return (c + kernels::particles::kRowPad - 1) / kernels::particles::kRowPad * kernels::particles::kRowPad;
  };
  if (capacity_ == 0) capacity_ = 64;
  for (;;) {
    const std::size_t need = static_cast<std::size_t>(std::max<std::int64_t>(capacity_ * std::max(n_local_, 1), 1));
    if (neighbours_.size() < need) neighbours_ = Buffer<int>(device_, need);
    const kernels::particles::BuildNeighbours<T> build{x0_.data(),         y0_.data(),         z0_.data(),
                                                       binned_x_.data(),   binned_y_.data(),   binned_z_.data(),
                                                       grid,               cell_start_.data(), cell_atoms_.data(),
                                                       cutsq,              neighbours_.data(), count_.data(),
                                                       capacity_};
    parallel_for(device_, n_local_, build);
    std::vector<int> counts(static_cast<std::size_t>(n_local_));
    count_.copy_to_host(counts.data(), counts.size());
    const int most = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
    if (most <= capacity_) break;
    capacity_ = padded(most + most / 4 + 8);
  }
}

}  // namespace strata::md
