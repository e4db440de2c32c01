// AtomSystem's rebuild: kernels on the atoms' device, MPI on staged messages.
#pragma once

#include <cmath>

#include "engine/runtime/format.hpp"
#include "engine/runtime/mpi_context.hpp"

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
void AtomSystem<T>::rebuild_here(bool from_reference, bool keys_hold_positions) {
  ++rebuilds_;
  if (!from_reference) {
    agree_on(check());
    parallel_for(device_, n_local_, kernels::particles::WrapAtoms<T>{atoms(), {domain_.length()[0],
                 domain_.length()[1], domain_.length()[2]}, keys_hold_positions});
  }
  migrate();
  const auto grid = cell_grid();
  sort_by_cell(grid);
  find_ghosts();
  scratch(xyz_, 4 * static_cast<std::size_t>(n_local_ + n_ghost_));
  bin_and_list(grid);
  order_rows();
  if (!gather_) forward_positions();  // else the next pack_positions() makes the ghosts
}

// The owned atoms in two lists (order_): those whose rows hold no ghost,
// then the others, each in increasing index, by one scan and a partition
// (PartitionFlagged), so the lists never visit the host.
template <class T>
void AtomSystem<T>::order_rows() {
  using namespace kernels::particles;
  const std::int64_t n = n_local_;
  for (Buffer<int>* b : {&code_, &flag_, &scan_, &order_}) scratch(*b, static_cast<std::size_t>(n));
  parallel_for(device_, n, GhostRows{neighbours_.data(), count_.data(), capacity_, n_local_, code_.data()});
  parallel_for(device_, n, FlagCodes{code_.data(), 0b01, flag_.data()});
  n_interior_ = exclusive_scan(device_, flag_.data(), scan_.data(), n);
  parallel_for(device_, n, PartitionFlagged{flag_.data(), scan_.data(), n_interior_, order_.data()});
}

// The owned arrays for n atoms; contents are lost when they grow (the
// callers restore them from records).
template <class T>
void AtomSystem<T>::reserve_owned(std::size_t n) {
  if (vx_.size() >= n && vx_.size() != 0) return;
  const std::size_t cap = n + n / 4 + 16;
  for (Buffer<T>* b : {&x_, &y_, &z_, &x0_, &y0_, &z0_, &vx_, &vy_, &vz_, &fx_, &fy_, &fz_, &energy_, &virial_})
    *b = Buffer<T>(device_, cap);
  for (Buffer<double>* b : {&kx_, &ky_, &kz_}) *b = Buffer<double>(device_, cap);
  index_ = Buffer<std::int64_t>(device_, cap);
  image_ = Buffer<int>(device_, 3 * cap);
  count_ = Buffer<int>(device_, cap);
}

// The indices of the atoms in [0, n) whose code_ is a bit of `mask`, in
// order, into list; returns how many.
template <class T>
int AtomSystem<T>::select(std::int64_t n, int mask, int* list) {
  using namespace kernels::particles;
  parallel_for(device_, n, FlagCodes{code_.data(), mask, flag_.data()});
  const int count = exclusive_scan(device_, flag_.data(), scan_.data(), n);
  parallel_for(device_, n, SelectFlagged{flag_.data(), scan_.data(), list});
  return count;
}

// Checks, before positions are wrapped into [0, L) with their images (the
// lists are built from these), that each is a place in the box the lists
// can follow: a finite position, at most the list's reach (cutoff + skin)
// from where the last build saw it (x0). An atom that went farther passed
// atoms whose pairs were never in its list, so the forces of the steps
// since were wrong: the run is unstable. Returns this rank's failure (""
// when none), the farthest-moved broken atom. A NaN is left as it is, for
// the health check (it names the atom too).
template <class T>
std::string AtomSystem<T>::check() {
  using namespace kernels::particles;
  const auto& box = domain_.length();
  const RebuildCheck<T> f{x_.data(), y_.data(), z_.data(), x0_.data(), y0_.data(), z0_.data(),
                          ghost_cutoff_ * ghost_cutoff_, {box[0], box[1], box[2]}};
  const WorstAtom w = parallel_reduce(device_, n_local_, f, WorstAtom{}, WorstAtomOp{});
  const int i = w.worst >= 0 ? w.worst : w.unwrappable;
  if (i < 0) return {};
  double x[3], x0[3];
  const Buffer<T>* from[6] = {&x_, &y_, &z_, &x0_, &y0_, &z0_};
  for (int a = 0; a < 6; ++a) {
    T v{};
    from[a]->copy_to_host(&v, 1, {}, static_cast<std::size_t>(i));
    (a < 3 ? x[a] : x0[a - 3]) = v;
  }
  std::int64_t index = 0;
  index_.copy_to_host(&index, 1, {}, static_cast<std::size_t>(i));
  const std::string where =
      w.worst >= 0 ? format("%.6g sigma from (%.6g, %.6g, %.6g) where the neighbour list last saw it",
                            std::sqrt(w.d2), x0[0], x0[1], x0[2])
                   : "not a place in the periodic box (more than 2^30 box lengths out)";
  return format("rank %d: md: atom %lld is at (%.6g, %.6g, %.6g), %s, at step %lld (a neighbour list reaches "
                "cutoff + skin = %.6g): the run is unstable (md.dt too large for the forces or the temperature, "
                "or atoms on top of each other)",
                domain_.rank(), static_cast<long long>(index), x[0], x[1], x[2], where.c_str(),
                static_cast<long long>(step_), ghost_cutoff_);
}

// Every rank throws the lowest failing rank's message (collective).
template <class T>
void AtomSystem<T>::agree_on(const std::string& local_failure) const {
  if (const auto failure = lowest_failure(domain_.comm(), local_failure))
    throw Error(ExitCode::numerical, failure->message, true);
}

// Atoms whose x0 left the sub-box go to the neighbour owning them, axis by
// axis (an atom moves less than skin/2 between builds, so one hop suffices;
// start-up and restarts place atoms on their owners before load()): the
// records of those leaving for the lower neighbour, then the upper one,
// then of those staying, are packed in order; the leaving ones travel, the
// staying ones are unpacked first and the arrivals after them.
template <class T>
void AtomSystem<T>::migrate() {
  using namespace kernels::particles;
  const std::int64_t w = kRecordWidth;
  int lost = 0;   // atoms farther than one sub-box away: the run blew up
  for (int a = 0; a < 3; ++a) {
    if (domain_.ranks()[a] == 1) continue;
    const std::int64_t n = n_local_;
    for (Buffer<int>* b : {&code_, &flag_, &scan_, &list_}) scratch(*b, static_cast<std::size_t>(n));
    const double* key[3] = {kx_.data(), ky_.data(), kz_.data()};
    parallel_for(device_, n, MigrationCode{key[a], domain_.length()[a], domain_.ranks()[a], domain_.coords()[a],
                                           code_.data()});
    const int down = select(n, 0b0010, list_.data());
    const int up = select(n, 0b0100, list_.data() + down);
    const int stay = select(n, 0b1001, list_.data() + down + up);
    lost |= parallel_reduce(device_, n, RowCount{code_.data()}, 0.0, kernels::MaxOp{}) == 3 ? 1 : 0;
    scratch(records_, static_cast<std::size_t>(n * w));
    parallel_for(device_, n, PackRecords<T>{atoms(), list_.data(), records_.data()});
    send_records_.resize(static_cast<std::size_t>((down + up) * w));
    records_.copy_to_host(send_records_.data(), send_records_.size());
    // Both directions at once, non-blocking: counts, then the records.
    Swap pair[2] = {{domain_.lower(a), domain_.upper(a), 100 + 4 * a},
                    {domain_.upper(a), domain_.lower(a), 102 + 4 * a}};
    const int one[2] = {1, 1}, sizes[2] = {static_cast<int>(down * w), static_cast<int>(up * w)};
    int counts[2] = {0, 0};
    exchange_pair<int>(pair, 0, MPI_INT, {&sizes[0], &sizes[1]}, one, {&counts[0], &counts[1]}, one);
    recv_records_.resize(static_cast<std::size_t>(counts[0] + counts[1]));
    exchange_pair<double>(pair, 1, MPI_DOUBLE, {send_records_.data(), send_records_.data() + sizes[0]}, sizes,
                          {recv_records_.data(), recv_records_.data() + counts[0]}, counts);
    const int arrived = (counts[0] + counts[1]) / kRecordWidth;
    reserve_owned(static_cast<std::size_t>(stay + arrived));
    parallel_for(device_, stay, UnpackRecords<T>{atoms(), records_.data() + (down + up) * w, 0});
    scratch(records_, recv_records_.size());
    records_.copy_from_host(recv_records_.data(), recv_records_.size());
    parallel_for(device_, arrived, UnpackRecords<T>{atoms(), records_.data(), stay});
    n_local_ = stay + arrived;
  }
  int any = 0;
  MPI_Allreduce(&lost, &any, 1, MPI_INT, MPI_MAX, domain_.comm());
  if (any != 0)
    throw Error(ExitCode::numerical,
                "md: an atom moved farther than a neighbouring sub-domain since the last neighbour-list build "
                "(the run is unstable: md.dt too large for the forces?)",
                true);
}

// Owned atoms in cell order (ties by global index: the key is the cell
// above the index's bits): neighbours in memory are neighbours in space,
// and the order is fixed by the positions alone.
template <class T>
void AtomSystem<T>::sort_by_cell(const kernels::particles::CellGrid<T>& grid) {
  using namespace kernels::particles;
  const std::int64_t n = n_local_;
  const int bits = std::bit_width(static_cast<std::uint64_t>(grid.cells())) + index_bits_;
  if (bits > 64)
    throw Error(ExitCode::resources, "md: " + std::to_string(grid.cells()) + " cells of rank " +
                                         std::to_string(domain_.rank()) +
                                         " and the atom indices exceed a 64-bit sort key (use more ranks)");
  for (Buffer<std::uint64_t>* b : {&sort_key_, &sorted_key_}) scratch(*b, static_cast<std::size_t>(n));
  for (Buffer<int>* b : {&sort_value_, &list_}) scratch(*b, static_cast<std::size_t>(n));
  parallel_for(device_, n, CellKeys<T>{kx_.data(), ky_.data(), kz_.data(), grid, index_.data(), index_bits_,
                                       sort_key_.data(), sort_value_.data()});
  sort_pairs(device_, sort_key_.data(), sort_value_.data(), sorted_key_.data(), list_.data(), n, bits);
  scratch(records_, static_cast<std::size_t>(n * kRecordWidth));
  parallel_for(device_, n, PackRecords<T>{atoms(), list_.data(), records_.data()});
  parallel_for(device_, n, UnpackRecords<T>{atoms(), records_.data(), 0});
}

// Six swaps (LAMMPS's Comm::borders): along each axis, the atoms (owned and
// ghosts of earlier axes) within the ghost cutoff of the lower face go to the
// lower neighbour, those near the upper face to the upper one, shifted by
// a box length across the periodic seam. An axis's two swaps travel at
// once, non-blocking (receives posted first); a swap with this rank itself
// copies on the device. Appends the ghosts' build positions to the keys and
// records each swap for forward_positions().
template <class T>
void AtomSystem<T>::find_ghosts() {
  using namespace kernels::particles;
  swaps_.clear();
  gather_ = true;  // every swap copies here (one rank along every axis)
  for (int a = 0; a < 3; ++a)
    gather_ = gather_ && domain_.lower(a) == domain_.rank() && domain_.upper(a) == domain_.rank();
  const double rg = ghost_cutoff_;
  std::size_t stage_out = 1, stage_in = 1;
  int sends = 0, all = n_local_;
  for (int a = 0; a < 3; ++a) {
    const int candidates = all;
    scratch(code_, static_cast<std::size_t>(candidates));
    for (Buffer<int>* b : {&flag_, &scan_}) scratch(*b, 2 * static_cast<std::size_t>(candidates));
    grow_kept(send_index_, static_cast<std::size_t>(sends + 2 * candidates), static_cast<std::size_t>(sends));
    const double* key[3] = {kx_.data(), ky_.data(), kz_.data()};
    parallel_for(device_, candidates, GhostFaces{key[a], domain_.lo(a) + rg, domain_.hi(a) - rg, code_.data()});
    // Both sides' sources by one scan (FlagSides, SelectSides): the total
    // and the lower face's count read back.
    parallel_for(device_, 2 * std::int64_t{candidates}, FlagSides{code_.data(), candidates, flag_.data()});
    const int both = exclusive_scan(device_, flag_.data(), scan_.data(), 2 * std::int64_t{candidates});
    int lower = 0;
    if (candidates > 0) scan_.copy_to_host(&lower, 1, {}, static_cast<std::size_t>(candidates));
    parallel_for(device_, 2 * std::int64_t{candidates},
                 SelectSides{flag_.data(), scan_.data(), candidates, send_index_.data() + sends});
    Swap pair[2];
    for (int side = 0; side < 2; ++side) {
      Swap& s = pair[side];
      s.to = side == 0 ? domain_.lower(a) : domain_.upper(a);
      s.from = side == 0 ? domain_.upper(a) : domain_.lower(a);
      s.tag = 200 + 2 * a + side;
      const bool seam = side == 0 ? domain_.coords()[a] == 0 : domain_.coords()[a] == domain_.ranks()[a] - 1;
      s.shift[a] = seam ? (side == 0 ? domain_.length()[a] : -domain_.length()[a]) : 0.0;
      s.send_offset = sends;
      s.send_count = side == 0 ? lower : both - lower;
      sends += s.send_count;
    }
    const int one[2] = {1, 1};
    int counts[2] = {0, 0};
    exchange_pair<int>(pair, 0, MPI_INT, {&pair[0].send_count, &pair[1].send_count}, one, {&counts[0], &counts[1]},
                       one);
    grow<double>({&kx_, &ky_, &kz_}, static_cast<std::size_t>(all + counts[0] + counts[1]),
                 static_cast<std::size_t>(all));
    for (int side = 0; side < 2; ++side) {
      pair[side].recv_first = side == 0 ? all : all + counts[0];
      pair[side].recv_count = counts[side];
      swaps_.push_back(pair[side]);
    }
    if (gather_) {  // copies here: the keys, and each ghost's root and shifts for PackAtoms
      const auto ghosts = static_cast<std::size_t>(all + counts[0] + counts[1] - n_local_);
      for (Buffer<int>* b : {&ghost_root_, &ghost_image_})
        grow_kept(*b, ghosts, static_cast<std::size_t>(all - n_local_));
      for (int side = 0; side < 2; ++side) {
        const Swap& s = pair[side];
        parallel_for(device_, s.send_count,
                     CopyGhostKeys{kx_.data(), ky_.data(), kz_.data(), send_index_.data() + s.send_offset, s.shift[0],
                                   s.shift[1], s.shift[2], a, side, n_local_, s.recv_first, kx_.data() + s.recv_first,
                                   ky_.data() + s.recv_first, kz_.data() + s.recv_first, ghost_root_.data(),
                                   ghost_image_.data()});
      }
    } else {
      const int most = std::max(pair[0].send_count + pair[1].send_count, counts[0] + counts[1]);
      scratch(records_, static_cast<std::size_t>(3 * most));
      swap_pair<double>(pair, {kx_.data(), ky_.data(), kz_.data()}, records_, records_, send_records_, recv_records_);
    }
    all += counts[0] + counts[1];
    stage_out = std::max(stage_out, static_cast<std::size_t>(3 * (pair[0].send_count + pair[1].send_count)));
    stage_in = std::max(stage_in, static_cast<std::size_t>(3 * (counts[0] + counts[1])));
  }
  n_ghost_ = all - n_local_;
  const auto everyone = static_cast<std::size_t>(all);
  grow<T>({&x_, &y_, &z_}, everyone, static_cast<std::size_t>(n_local_));
  grow<T>({&x0_, &y0_, &z0_}, everyone, 0);
  parallel_for(device_, all, RoundKeys<T>{kx_.data(), ky_.data(), kz_.data(), x0_.data(), y0_.data(), z0_.data()});
  if (stage_out_.size() < stage_out) stage_out_ = Buffer<T>(device_, stage_out + stage_out / 4);
  if (stage_in_.size() < stage_in) stage_in_ = Buffer<T>(device_, stage_in + stage_in / 4);
}

// Owned and ghost atoms sorted stably by the cell of their build position
// (a cell's atoms in increasing local index), the cells' starts by binary
// search, then the lists; grown and rebuilt while a row overflows.
template <class T>
void AtomSystem<T>::bin_and_list(const kernels::particles::CellGrid<T>& grid) {
  using namespace kernels::particles;
  const std::int64_t all = n_local_ + n_ghost_, cells = grid.cells();
  for (Buffer<std::uint64_t>* b : {&sort_key_, &sorted_key_}) scratch(*b, static_cast<std::size_t>(all));
  for (Buffer<int>* b : {&sort_value_, &cell_atoms_}) scratch(*b, static_cast<std::size_t>(all));
  scratch(cell_start_, static_cast<std::size_t>(cells + 1));
  parallel_for(device_, all, CellKeys<T>{kx_.data(), ky_.data(), kz_.data(), grid, nullptr, 0, sort_key_.data(),
                                         sort_value_.data()});
  sort_pairs(device_, sort_key_.data(), sort_value_.data(), sorted_key_.data(), cell_atoms_.data(), all,
             std::bit_width(static_cast<std::uint64_t>(cells)));
  parallel_for(device_, cells + 1, CellStarts{sorted_key_.data(), static_cast<int>(all), cell_start_.data()});
  grow<T>({&binned_x_, &binned_y_, &binned_z_}, static_cast<std::size_t>(all), 0);
  parallel_for(device_, all, BinPositions<T>{x0_.data(), y0_.data(), z0_.data(), cell_atoms_.data(),
                                             binned_x_.data(), binned_y_.data(), binned_z_.data()});

  const T cutsq = static_cast<T>(ghost_cutoff_ * ghost_cutoff_);
  const auto padded = [](std::int64_t c) {
    return (c + kernels::particles::kRowPad - 1) / kernels::particles::kRowPad * kernels::particles::kRowPad;
  };
  if (capacity_ == 0) capacity_ = 64;
  for (;;) {
    const auto need = static_cast<std::size_t>(list_entries(std::max(n_local_, 1), capacity_));
    if (neighbours_.size() < need) neighbours_ = Buffer<int>(device_, need);
    const BuildNeighbours<T> build{x0_.data(),         y0_.data(),         z0_.data(),
                                                       binned_x_.data(),   binned_y_.data(),   binned_z_.data(),
                                                       grid,               cell_start_.data(), cell_atoms_.data(),
                                                       cutsq,              neighbours_.data(), count_.data(),
                                                       capacity_};
    parallel_for(device_, n_local_, build);
    const int most = static_cast<int>(
        parallel_reduce(device_, n_local_, RowCount{count_.data()}, 0.0, kernels::MaxOp{}));
    if (most <= capacity_) break;
    capacity_ = padded(most + most / 4 + 8);
  }
}

}  // namespace strata::md
