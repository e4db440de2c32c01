// A rank's atoms of the md model and the communication that keeps them
// consistent (LAMMPS's Comm/Neighbor step order, src/verlet.cpp): every
// step either forwards the ghosts' positions (forward_positions), or, when
// an atom has moved more than skin/2 since the last build, rebuilds:
// wraps positions into the box, migrates atoms to the ranks owning them,
// sorts them by cell, finds the ghosts (six swaps, x then y then z, each
// forwarding the ghosts of the axes before it, so edges and corners arrive
// too), bins owned and ghost atoms by counting sort and builds the
// neighbour lists.
//
// Arrays (device buffers, structure of arrays): positions x, y, z of owned
// atoms [0, n_local) then ghosts; velocities, forces, per-atom energy and
// virial of owned atoms; x0, y0, z0 the positions at the last build (owned
// and ghost), which the lists were built from; index, the global atom index
// 0..N-1 (it keys the Langevin noise and orders the output). Host mirrors of
// index and image counts stay in the owned atoms' order.
//
// Restart: the checkpoint holds x, v and x0 of every atom, and a restored
// run rebuilds from x0 exactly as the interrupted run built its lists from
// the same positions, so the lists, ghosts and summation orders are the
// same and an NVE run continues bitwise (rebuild(from_reference = true)).
//
// Sizes: atom counts per rank are int (a rank holds < 2^31 atoms, ghosts
// included); list offsets i * capacity are 64-bit.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "engine/backend/buffer.hpp"
#include "engine/particles/particles.hpp"
#include "models/md/kernels.hpp"
#include "engine/runtime/error.hpp"
#include "kernels/particles/lennard_jones.hpp"
#include "kernels/particles/neighbour_list.hpp"
#include "kernels/particles/pair_forces.hpp"
#include "kernels/particles/comm_kernels.hpp"
#include "kernels/core/exact_sum.hpp"
#include "models/md/domain.hpp"

namespace strata::md {

using particles::HostParticles;

template <class T>
class AtomSystem {
 public:
  AtomSystem(const Device& device, const Domain& domain, double ghost_cutoff)
      : device_(device), domain_(domain), ghost_cutoff_(ghost_cutoff) {}

  int n_local() const { return n_local_; }
  int n_ghost() const { return n_ghost_; }
  std::int64_t rebuilds() const { return rebuilds_; }
  std::int64_t list_capacity() const { return capacity_; }

  // Replaces the atoms by `atoms` (any owned set, no ids; positions in
  // [0, L) unless from_reference; reference: x0, or empty) and rebuilds
  // everything.
  void load(HostParticles atoms, bool from_reference) {
    host_ = std::move(atoms);
    host_.id.clear();     // the simulation keeps the user ids (output only)
    host_.mass.clear();   // unit masses (LJ units)
    if (host_.reference.empty()) host_.reference = host_.position;
    if (host_.image.empty()) host_.image.assign(host_.position.size(), 0);
    rebuild_from_host(from_reference);
  }

  // Owned atoms to the host: positions, velocities, x0 (as reference), index, images.
  HostParticles download() const {
    HostParticles h;
    const std::size_t n = static_cast<std::size_t>(n_local_);
    h.position = interleave({&x_, &y_, &z_}, n);
    h.velocity = interleave({&vx_, &vy_, &vz_}, n);
    h.reference = interleave({&x0_, &y0_, &z0_}, n);
    h.index = host_.index;
    h.image = host_.image;
    return h;
  }

  // Forces, per-atom energies and virials of the owned atoms (3, 1, 1 per atom).
  std::vector<double> host_forces() const { return interleave({&fx_, &fy_, &fz_}, static_cast<std::size_t>(n_local_)); }
  std::vector<double> host_energy_virial() const {
    return interleave({&energy_, &virial_}, static_cast<std::size_t>(n_local_));
  }

  // Test-only, local (no communication): the first owned atom's vx := NaN.
  void poison_first_velocity() {
    if (n_local_ == 0) return;
    std::vector<T> v(static_cast<std::size_t>(n_local_));
    vx_.copy_to_host(v.data(), v.size());
    v[0] = std::numeric_limits<T>::quiet_NaN();
    vx_.copy_from_host(v.data(), v.size());
  }

  // Sets the owned atoms' forces (3 per atom, in the owned order).
  void upload_forces(const std::vector<double>& f) {
    deinterleave(f, {&fx_, &fy_, &fz_}, static_cast<std::size_t>(n_local_));
  }

  // The rebuild test (one all-reduce): has any atom moved more than skin/2?
  bool needs_rebuild(double skin) const {
    const double local = parallel_reduce(device_, n_local_,
                                         kernels::particles::Displacement2<T>{x_.data(), y_.data(), z_.data(),
                                                                              x0_.data(), y0_.data(), z0_.data()},
                                         0.0, kernels::MaxOp{});
    double global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, domain_.comm());
    return global > 0.25 * skin * skin;
  }

  // The step the next rebuild happens at, for the messages of a failed one.
  void at_step(std::int64_t step) { step_ = step; }

  // Rebuild from the current positions (wrap, migrate, ghosts, lists).
  // Collective; throws the same numerical Error on every rank, naming the
  // atom, the step and the rank, when an atom's position is not finite or
  // it moved farther than its neighbour list reaches since the last build.
  void rebuild() {
    host_ = download();
    rebuild_from_host(false);
  }

  // Sends the current positions of the ghosts' sources, axis by axis (a
  // later axis forwards the ghosts of the earlier ones).
  void forward_positions() {
    using namespace kernels::particles;
    for (std::size_t first = 0; first < swaps_.size(); first += 2) {
      const Swap* pair = &swaps_[first];
      int send_n[2] = {0, 0}, recv_n[2] = {0, 0};
      for (int k = 0; k < 2; ++k) {
        const Swap& s = pair[k];
        const bool own = local(s);
        const std::int64_t n = s.send_count, at = s.recv_first;
        T* const msg = stage_out_.data() + send_n[0];   // a message: x, y, z blocks
        parallel_for(device_, n,
                     CopyPositions<T>{x_.data(), y_.data(), z_.data(), send_index_.data() + s.send_offset,
                                      static_cast<T>(s.shift[0]), static_cast<T>(s.shift[1]),
                                      static_cast<T>(s.shift[2]), own ? x_.data() + at : msg,
                                      own ? y_.data() + at : msg + n, own ? z_.data() + at : msg + 2 * n});
        send_n[k] = own ? 0 : 3 * s.send_count;
        recv_n[k] = own ? 0 : 3 * s.recv_count;
      }
      const auto sent = static_cast<std::size_t>(send_n[0] + send_n[1]);
      const auto received = static_cast<std::size_t>(recv_n[0] + recv_n[1]);
      if (sent + received == 0) continue;
      send_host_.resize(sent);
      recv_host_.resize(received);
      stage_out_.copy_to_host(send_host_.data(), sent);
      exchange_pair<T>(pair, 0, mpi_type(), {send_host_.data(), send_host_.data() + send_n[0]}, send_n,
                       {recv_host_.data(), recv_host_.data() + recv_n[0]}, recv_n);
      stage_in_.copy_from_host(recv_host_.data(), received);
      for (int k = 0; k < 2; ++k) {
        const std::int64_t n = pair[k].recv_count, first = pair[k].recv_first;
        const T* in = stage_in_.data() + (k == 0 ? 0 : recv_n[0]);
        if (!local(pair[k]))
          parallel_for(device_, n, CopyPositions<T>{in, in + n, in + 2 * n, nullptr, T(0), T(0), T(0),
                                                    x_.data() + first, y_.data() + first, z_.data() + first});
      }
    }
  }

  // The pair-force kernel over the current lists (parallel_for runs it:
  // on the host its vectorised host_for; tests also run it atom by atom).
  template <bool Tally, class Evaluator = kernels::particles::LennardJones<T>>
  kernels::particles::PairForces<Evaluator, Tally> pair_forces(const typename Evaluator::param_type& params) {
    return {x_.data(),      y_.data(),      z_.data(),      neighbours_.data(), count_.data(),
            capacity_,      params,         fx_.data(),     fy_.data(),         fz_.data(),
            energy_.data(), virial_.data()};
  }

  // Pair forces (and, when tally, per-atom energy and virial) from the lists.
  template <class Evaluator = kernels::particles::LennardJones<T>>
  void compute_forces(const typename Evaluator::param_type& params, bool tally) {
    if (tally) {
      parallel_for(device_, n_local_, pair_forces<true, Evaluator>(params));
    } else {
      parallel_for(device_, n_local_, pair_forces<false, Evaluator>(params));
    }
  }

  T* x() { return x_.data(); }
  T* y() { return y_.data(); }
  T* z() { return z_.data(); }
  T* vx() { return vx_.data(); }
  T* vy() { return vy_.data(); }
  T* vz() { return vz_.data(); }
  T* fx() { return fx_.data(); }
  T* fy() { return fy_.data(); }
  T* fz() { return fz_.data(); }
  const T* energy() const { return energy_.data(); }
  const T* virial() const { return virial_.data(); }
  const T* x() const { return x_.data(); }
  const T* y() const { return y_.data(); }
  const T* z() const { return z_.data(); }
  const T* vx() const { return vx_.data(); }
  const T* vy() const { return vy_.data(); }
  const T* vz() const { return vz_.data(); }
  const std::int64_t* index() const { return index_.data(); }

  // Bytes per owned atom this layout allocates with `neighbours` list
  // entries and `ghost_ratio` ghosts per owned atom (the memory plan).
  static double bytes_per_atom(double neighbours, double ghost_ratio) {
    const double all = 1 + ghost_ratio;
    return all * (9 * sizeof(T) + sizeof(int) * 2)   // x, x0, binned x0, the cell sort
           + 8 * sizeof(T) + sizeof(std::int64_t)   // v, f, energy, virial, index
           + (neighbours + 1) * sizeof(int);        // list row and count
  }

 private:
  struct Swap {
    int to = 0, from = 0, tag = 0;
    int send_offset = 0, send_count = 0, recv_first = 0, recv_count = 0;
    double shift[3] = {0, 0, 0};
  };

  bool local(const Swap& s) const { return s.to == domain_.rank() && s.from == domain_.rank(); }

  // An axis's two swaps at once, non-blocking as the grid's halos (receives
  // posted first): swap k sends send_n[k] values from send[k] and receives
  // recv_n[k] into recv[k]; a swap with this rank itself copies.
  template <class V>
  void exchange_pair(const Swap* pair, int tag_offset, MPI_Datatype type, std::array<const V*, 2> send,
                     const int* send_n, std::array<V*, 2> recv, const int* recv_n) const {
    MPI_Request requests[4];
    int pending = 0;
    for (int k = 0; k < 2; ++k)
      if (!local(pair[k]))
        MPI_Irecv(recv[k], recv_n[k], type, pair[k].from, pair[k].tag + tag_offset, domain_.comm(),
                  &requests[pending++]);
    for (int k = 0; k < 2; ++k) {
      if (local(pair[k])) {
        std::copy_n(send[k], send_n[k], recv[k]);
      } else {
        MPI_Isend(send[k], send_n[k], type, pair[k].to, pair[k].tag + tag_offset, domain_.comm(), &requests[pending++]);
      }
    }
    MPI_Waitall(pending, requests, MPI_STATUSES_IGNORE);
  }

  static MPI_Datatype mpi_type() { return sizeof(T) == 8 ? MPI_DOUBLE : MPI_FLOAT; }

  // Atom i's values of k buffers as k doubles (x, y, z per atom), and back
  // (rounded to T).
  std::vector<double> interleave(std::initializer_list<const Buffer<T>*> from, std::size_t n) const {
    std::vector<double> out(from.size() * n);
    std::vector<T> c(n);
    std::size_t a = 0;
    for (const Buffer<T>* b : from) {
      b->copy_to_host(c.data(), n);
      for (std::size_t i = 0; i < n; ++i) out[from.size() * i + a] = c[i];
      ++a;
    }
    return out;
  }
  void deinterleave(const std::vector<double>& in, std::initializer_list<Buffer<T>*> to, std::size_t n) {
    std::vector<T> c(n);
    std::size_t a = 0;
    for (Buffer<T>* b : to) {
      for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<T>(in[to.size() * i + a]);
      b->copy_from_host(c.data(), n);
      ++a;
    }
  }

  void rebuild_from_host(bool from_reference);
  std::string check_and_wrap();
  void agree_on(const std::string& local_failure) const;
  void migrate();
  void sort_by_cell(const kernels::particles::CellGrid<T>& grid);
  void find_ghosts(std::vector<double>& keys);
  void upload(const std::vector<double>& keys);
  void bin_and_list(const std::vector<double>& keys, const kernels::particles::CellGrid<T>& grid);
  kernels::particles::CellGrid<T> cell_grid() const;

  Device device_;
  const Domain& domain_;
  double ghost_cutoff_;
  HostParticles host_;   // owned atoms during a rebuild; index and image kept in device order after it
  int n_local_ = 0, n_ghost_ = 0;
  std::int64_t capacity_ = 0, rebuilds_ = 0, step_ = 0;
  std::vector<Swap> swaps_;
  Buffer<T> x_, y_, z_, x0_, y0_, z0_, vx_, vy_, vz_, fx_, fy_, fz_, energy_, virial_;
  Buffer<std::int64_t> index_;
  Buffer<int> neighbours_, count_, cell_start_, cell_atoms_, send_index_;
  Buffer<T> binned_x_, binned_y_, binned_z_;   // build positions in cell order
  Buffer<T> stage_out_, stage_in_;
  std::vector<T> send_host_, recv_host_;
};

}  // namespace strata::md

#include "models/md/atom_system_impl.hpp"
