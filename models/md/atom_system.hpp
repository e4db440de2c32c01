// A rank's atoms of the md model and the communication that keeps them
// consistent (LAMMPS's Comm/Neighbor step order, src/verlet.cpp): every
// step either forwards the ghosts' positions (forward_positions), or, when
// an atom has moved more than skin/2 since the last build, rebuilds:
// wraps positions into the box, migrates atoms to the ranks owning them,
// sorts them by cell, finds the ghosts (six swaps, x then y then z, each
// forwarding the ghosts of the axes before it, so edges and corners arrive
// too), bins owned and ghost atoms by a stable sort and builds the
// neighbour lists, then splits the owned atoms into interior ones (no
// ghost in the row) and border ones, so that a step without a rebuild can
// compute the interior's forces while the ghost positions travel
// (forward_and_compute_forces). On one rank, where every swap copies on the
// rank itself, no swap runs between rebuilds: each ghost is its owned root
// atom plus its axes' shifts (recorded at the build), made by the pack
// before the pair forces (pack_positions()). Every step is a kernel on the
// atoms' device (kernels/particles/rebuild.hpp); only the MPI messages
// (migrating records, ghost positions) and a few counts cross to the host.
//
// Arrays (device buffers, structure of arrays): positions x, y, z of owned
// atoms [0, n_local) then ghosts; velocities, forces, per-atom energy and
// virial of owned atoms; x0, y0, z0 the positions at the last build (owned
// and ghost), which the lists were built from; index, the global atom index
// 0..N-1 (it keys the Langevin noise and orders the output); image counts
// (3 per owned atom); kx, ky, kz the build positions in double (owned and
// ghost), as wrapping left them before rounding to T.
//
// Restart: the checkpoint holds x, v and x0 of every atom, and a restored
// run rebuilds from x0 exactly as the interrupted run built its lists from
// the same positions, so the lists, ghosts and summation orders are the
// same and an NVE run continues bitwise (rebuild(from_reference = true)).
//
// Sizes: atom counts per rank are int (a rank holds < 2^31 atoms, ghosts
// included); list offsets (tile * capacity * kTile) are 64-bit.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/buffer.hpp"
#include "engine/backend/primitives.hpp"
#include "engine/particles/particles.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/timers.hpp"
#include "engine/runtime/watchdog.hpp"
#include "kernels/core/exact_sum.hpp"
#include "kernels/particles/comm_kernels.hpp"
#include "kernels/particles/lennard_jones.hpp"
#include "kernels/particles/neighbour_list.hpp"
#include "kernels/particles/pair_forces.hpp"
#include "kernels/particles/rebuild.hpp"
#include "models/md/domain.hpp"
#include "models/md/kernels.hpp"

namespace strata::md {

using particles::HostParticles;

template <class T>
class AtomSystem {
 public:
  // With timers, the time spent posting and waiting for the messages of
  // ghost forwarding and migration goes to the phase "ghost_exchange".
  AtomSystem(const Device& device, const Domain& domain, double ghost_cutoff, Timers* timers = nullptr)
      : device_(device), domain_(domain), ghost_cutoff_(ghost_cutoff), timers_(timers) {}

  int n_local() const { return n_local_; }
  std::int64_t rebuilds() const { return rebuilds_; }

  // Replaces the atoms by `atoms` (any owned set; ids and masses are not
  // kept: the simulation keeps the user ids, masses are 1 in LJ units;
  // positions in [0, L) unless from_reference; reference: x0, or empty)
  // and rebuilds everything.
  void load(HostParticles atoms, bool from_reference) {
    const std::size_t n = atoms.position.size() / 3;
    if (atoms.reference.empty()) atoms.reference = atoms.position;
    if (atoms.image.empty()) atoms.image.assign(3 * n, 0);
    std::int64_t top = 0, global = 0;   // the sort keys' index bits
    for (const std::int64_t i : atoms.index) top = std::max(top, i);
    MPI_Allreduce(&top, &global, 1, MPI_INT64_T, MPI_MAX, domain_.comm());
    index_bits_ = std::bit_width(static_cast<std::uint64_t>(global));
    n_local_ = static_cast<int>(n);
    reserve_owned(n);
    deinterleave(atoms.position, {&x_, &y_, &z_}, n);
    deinterleave(atoms.velocity, {&vx_, &vy_, &vz_}, n);
    deinterleave(atoms.reference, {&kx_, &ky_, &kz_}, n);
    index_.copy_from_host(atoms.index.data(), n);
    image_.copy_from_host(atoms.image.data(), 3 * n);
    parallel_for(device_, n_local_, kernels::particles::RoundKeys<T>{kx_.data(), ky_.data(), kz_.data(), x0_.data(),
                                                                     y0_.data(), z0_.data()});
    rebuild_here(from_reference, true);
  }

  // Owned atoms to the host: positions, velocities, x0 (as reference), index, images.
  HostParticles download() const {
    HostParticles h;
    const std::size_t n = static_cast<std::size_t>(n_local_);
    h.position = interleave({&x_, &y_, &z_}, n);
    h.velocity = interleave({&vx_, &vy_, &vz_}, n);
    h.reference = interleave({&x0_, &y0_, &z0_}, n);
    h.index.resize(n);
    h.image.resize(3 * n);
    index_.copy_to_host(h.index.data(), n);
    image_.copy_to_host(h.image.data(), 3 * n);
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

  // Test-only, local: the ghosts' positions := NaN (until the next
  // forward_positions()), so that a force that reads one shows it.
  void poison_ghost_positions() {
    const auto all = static_cast<std::size_t>(n_local_ + n_ghost_);
    std::vector<T> v(all);
    for (Buffer<T>* b : {&x_, &y_, &z_}) {
      b->copy_to_host(v.data(), all);
      std::fill(v.begin() + n_local_, v.end(), std::numeric_limits<T>::quiet_NaN());
      b->copy_from_host(v.data(), all);
    }
    pack_positions(n_local_, n_ghost_);
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
  void rebuild() { rebuild_here(false, false); }

  // Sends the current positions of the ghosts' sources, axis by axis (a
  // later axis forwards the ghosts of the earlier ones).
  void forward_positions() {
    for (std::size_t first = 0; first < swaps_.size(); first += 2) forward_pair(first);
  }

  // forward_positions() and compute_forces() with the first axis that
  // talks to another rank in flight while the interior atoms' forces are
  // computed (their rows hold no ghost); that axis completes, the later
  // ones follow (they forward its ghosts), then the border atoms' forces.
  // Each atom's force is summed over its own row as before: the same bits.
  template <class Evaluator = kernels::particles::LennardJones<T>>
  void forward_and_compute_forces(const typename Evaluator::param_type& params, bool tally) {
    std::size_t remote = 0;
    while (remote < swaps_.size() && local(swaps_[remote]) && local(swaps_[remote + 1])) remote += 2;
    if (remote == swaps_.size()) {  // every swap copies on this rank: nothing to hide
      compute_forces<Evaluator>(params, tally);  // the ghosts packed from their roots (pack_positions())
      return;
    }
    for (std::size_t first = 0; first < remote; first += 2) forward_pair(first);
    const std::optional<PostedPair> posted =
        post_swap_pair<T>(&swaps_[remote], positions(), stage_out_, send_host_, recv_host_);
    compute_forces<Evaluator>(params, tally, Rows::interior);
    finish_swap_pair<T>(&swaps_[remote], positions(), posted, stage_in_, recv_host_);
    for (std::size_t first = remote + 2; first < swaps_.size(); first += 2) forward_pair(first);
    compute_forces<Evaluator>(params, tally, Rows::border);
  }

  // The pair-force kernel over the current lists (parallel_for runs it:
  // on the host its vectorised host_for; tests also run it atom by atom);
  // with `atoms`, item k is atom atoms[k].
  template <bool Tally, class Evaluator = kernels::particles::LennardJones<T>>
  kernels::particles::PairForces<Evaluator, Tally> pair_forces(const typename Evaluator::param_type& params,
                                                               const int* atoms = nullptr) {
    return {xyz_.data(), neighbours_.data(), count_.data(),  capacity_,  params,    fx_.data(), fy_.data(),
            fz_.data(),  energy_.data(),     virial_.data(), mean_row(), atoms};
  }

  // The positions of all atoms, owned and ghosts, into the packed copy
  // pair_forces() reads. On a rank whose swaps all copy here, the ghosts'
  // come from their owned roots and shifts in the same launch (the step's
  // whole ghost forwarding: PackAtoms), and their x, y, z arrays are not
  // kept (nothing else reads them; forward_positions() still fills them);
  // elsewhere from x, y, z as forward_positions() left them.
  void pack_positions() {
    if (!gather_) {
      pack_positions(0, n_local_ + n_ghost_);
      return;
    }
    kernels::particles::PackAtoms<T> f{x_.data(),           y_.data(), z_.data(), ghost_root_.data(),
                                       ghost_image_.data(), {},        n_local_,  xyz_.data()};
    for (std::size_t k = 0; k < swaps_.size(); ++k) f.shift[k] = static_cast<T>(swaps_[k].shift[k / 2]);
    parallel_for(device_, n_local_ + n_ghost_, f);
  }
  // Those of atoms [first, first + n) from x, y, z.
  void pack_positions(int first, int n) {
    parallel_for(device_, n, kernels::particles::PackPositions<T>{x_.data(), y_.data(), z_.data(), xyz_.data(), first});
  }

  // Owned atoms whose rows hold no ghost (the first of the lists' order).
  int n_interior() const { return n_interior_; }

  // The neighbours a row holds on average: a uniform liquid's count within
  // the list's reach, plus half the padding to kRowPad (the cost model's).
  double mean_row() const {
    const double density = static_cast<double>(domain_.ranks()[0] * domain_.ranks()[1] * domain_.ranks()[2]) *
                           static_cast<double>(n_local_) / domain_.volume();
    const double pi = 3.14159265358979323846;
    return 4.0 / 3.0 * pi * ghost_cutoff_ * ghost_cutoff_ * ghost_cutoff_ * density +
           0.5 * (kernels::particles::kRowPad - 1);
  }

  // Pair forces (and, when tally, per-atom energy and virial) from the
  // lists, of all owned atoms or of one of the two kinds: interior (no
  // ghost in the row) or border. Each packs the positions its rows read
  // first: all atoms', the owned ones' (interior), the ghosts' (border: it
  // follows the interior's launch, which packed the owned ones).
  enum class Rows { all, interior, border };
  template <class Evaluator = kernels::particles::LennardJones<T>>
  void compute_forces(const typename Evaluator::param_type& params, bool tally, Rows rows = Rows::all) {
    if (rows == Rows::all) pack_positions();
    if (rows == Rows::interior) pack_positions(0, n_local_);
    if (rows == Rows::border) pack_positions(n_local_, n_ghost_);
    const int* atoms = rows == Rows::all ? nullptr : order_.data() + (rows == Rows::border ? n_interior_ : 0);
    const int n = rows == Rows::all ? n_local_ : rows == Rows::interior ? n_interior_ : n_local_ - n_interior_;
    if (tally) {
      parallel_for(device_, n, pair_forces<true, Evaluator>(params, atoms));
    } else {
      parallel_for(device_, n, pair_forces<false, Evaluator>(params, atoms));
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
    return all * (13 * sizeof(T) + 3 * sizeof(double)               // x, packed x, x0, binned x0, build positions
                  + 6 * sizeof(int) + 2 * sizeof(std::uint64_t))   // cells, selections, sort keys
           + 8 * sizeof(T) + sizeof(std::int64_t) + 3 * sizeof(int)   // v, f, energy, virial, index, image
           + kernels::particles::kRecordWidth * sizeof(double)        // records to migrate and sort
           + (neighbours + 1) * sizeof(int);                          // list row and count
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
    Requests r = post_pair<V>(pair, tag_offset, type, send, send_n, recv, recv_n);
    wait_pair(r);
  }

  // An axis's messages in flight: the requests and the rank each waits for
  // (for the watchdog).
  struct Requests {
    MPI_Request requests[4];
    int peers[4];
    int pending = 0;
  };

  // exchange_pair's first half: posts the receives, then the sends.
  template <class V>
  Requests post_pair(const Swap* pair, int tag_offset, MPI_Datatype type, std::array<const V*, 2> send,
                     const int* send_n, std::array<V*, 2> recv, const int* recv_n) const {
    std::optional<Timers::Scope> timed;
    if (timers_ != nullptr) timed.emplace(*timers_, "ghost_exchange");
    Requests r;
    for (int k = 0; k < 2; ++k)
      if (!local(pair[k])) {
        r.peers[r.pending] = pair[k].from;
        MPI_Irecv(recv[k], recv_n[k], type, pair[k].from, pair[k].tag + tag_offset, domain_.comm(),
                  &r.requests[r.pending++]);
      }
    for (int k = 0; k < 2; ++k) {
      if (local(pair[k])) {
        std::copy_n(send[k], send_n[k], recv[k]);
      } else {
        r.peers[r.pending] = pair[k].to;
        MPI_Isend(send[k], send_n[k], type, pair[k].to, pair[k].tag + tag_offset, domain_.comm(),
                  &r.requests[r.pending++]);
      }
    }
    return r;
  }

  // Its second half: one at a time, receives first, so the watchdog names
  // the neighbour a hung exchange waits for (MPI progresses them all in
  // each wait).
  void wait_pair(Requests& r) const {
    if (r.pending == 0) return;
    std::optional<Timers::Scope> timed;
    if (timers_ != nullptr) timed.emplace(*timers_, "ghost_exchange");
    watchdog::PhaseScope phase(watchdog::Phase::halo, r.peers[0]);
    for (int k = 0; k < r.pending; ++k) {
      watchdog::set_peer(r.peers[k]);
      MPI_Wait(&r.requests[k], MPI_STATUS_IGNORE);
    }
  }

  // An axis's two swaps of positions p (x, y, z of the sources, shifted)
  // into the ghost slots: a swap with this rank itself copies on the
  // device, the others' messages (x, y, z blocks) go through out, the host
  // and in.
  template <class V>
  void swap_pair(const Swap* pair, std::array<V*, 3> p, Buffer<V>& out, Buffer<V>& in, std::vector<V>& send,
                 std::vector<V>& recv) {
    const std::optional<PostedPair> posted = post_swap_pair<V>(pair, p, out, send, recv);
    finish_swap_pair<V>(pair, p, posted, in, recv);
  }

  // The positions forwarded each step.
  std::array<T*, 3> positions() { return {x_.data(), y_.data(), z_.data()}; }
  void forward_pair(std::size_t first) {
    swap_pair<T>(&swaps_[first], positions(), stage_out_, stage_in_, send_host_, recv_host_);
  }

  // swap_pair's messages in flight (none when both swaps copy here).
  struct PostedPair {
    Requests requests;
    int recv_n[2] = {0, 0};
  };

  // swap_pair's first half: the local copies and the messages' packing,
  // download and posting (send and recv must stay as they are until the
  // second half).
  template <class V>
  std::optional<PostedPair> post_swap_pair(const Swap* pair, std::array<V*, 3> p, Buffer<V>& out, std::vector<V>& send,
                                           std::vector<V>& recv) {
    using kernels::particles::CopyPositions;
    int send_n[2] = {0, 0}, recv_n[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const Swap& s = pair[k];
      const bool own = local(s);
      const std::int64_t n = s.send_count, at = s.recv_first;
      V* const msg = out.data() + send_n[0];
      parallel_for(device_, n,
                   CopyPositions<V>{p[0], p[1], p[2], send_index_.data() + s.send_offset, static_cast<V>(s.shift[0]),
                                    static_cast<V>(s.shift[1]), static_cast<V>(s.shift[2]), own ? p[0] + at : msg,
                                    own ? p[1] + at : msg + n, own ? p[2] + at : msg + 2 * n});
      send_n[k] = own ? 0 : 3 * s.send_count;
      recv_n[k] = own ? 0 : 3 * s.recv_count;
    }
    const auto sent = static_cast<std::size_t>(send_n[0] + send_n[1]);
    const auto received = static_cast<std::size_t>(recv_n[0] + recv_n[1]);
    if (sent + received == 0) return std::nullopt;
    send.resize(sent);
    recv.resize(received);
    out.copy_to_host(send.data(), sent);
    PostedPair posted;
    posted.requests =
        post_pair<V>(pair, 0, sizeof(V) == 8 ? MPI_DOUBLE : MPI_FLOAT, {send.data(), send.data() + send_n[0]}, send_n,
                     {recv.data(), recv.data() + recv_n[0]}, recv_n);
    posted.recv_n[0] = recv_n[0];
    posted.recv_n[1] = recv_n[1];
    return posted;
  }

  // Its second half: waits for the messages and unpacks them into the
  // ghost slots.
  template <class V>
  void finish_swap_pair(const Swap* pair, std::array<V*, 3> p, std::optional<PostedPair> posted, Buffer<V>& in,
                        const std::vector<V>& recv) {
    using kernels::particles::CopyPositions;
    if (!posted) return;
    wait_pair(posted->requests);
    const int* recv_n = posted->recv_n;
    in.copy_from_host(recv.data(), static_cast<std::size_t>(recv_n[0] + recv_n[1]));
    for (int k = 0; k < 2; ++k) {
      const std::int64_t n = pair[k].recv_count, at = pair[k].recv_first;
      const V* from = in.data() + (k == 0 ? 0 : recv_n[0]);
      if (!local(pair[k]))
        parallel_for(device_, n, CopyPositions<V>{from, from + n, from + 2 * n, nullptr, V(0), V(0), V(0), p[0] + at,
                                                  p[1] + at, p[2] + at});
    }
  }

  // Atom i's values of k buffers as k doubles (x, y, z per atom), and back
  // (rounded to T).
  template <class V>
  std::vector<double> interleave(std::initializer_list<const Buffer<V>*> from, std::size_t n) const {
    std::vector<double> out(from.size() * n);
    std::vector<V> c(n);
    std::size_t a = 0;
    for (const Buffer<V>* b : from) {
      b->copy_to_host(c.data(), n);
      for (std::size_t i = 0; i < n; ++i) out[from.size() * i + a] = c[i];
      ++a;
    }
    return out;
  }
  template <class V>
  void deinterleave(const std::vector<double>& in, std::initializer_list<Buffer<V>*> to, std::size_t n) {
    std::vector<V> c(n);
    std::size_t a = 0;
    for (Buffer<V>* b : to) {
      for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<V>(in[to.size() * i + a]);
      b->copy_from_host(c.data(), n);
      ++a;
    }
  }

  kernels::particles::AtomArrays<T> atoms() {
    return {x_.data(),  y_.data(),  z_.data(),  vx_.data(),    vy_.data(),   vz_.data(),
            kx_.data(), ky_.data(), kz_.data(), index_.data(), image_.data()};
  }
  // Room for n atoms, contents kept in [0, keep) (three arrays at once).
  template <class V>
  void grow(std::array<Buffer<V>*, 3> b, std::size_t n, std::size_t keep) {
    if (b[0]->size() >= n) return;
    std::array<Buffer<V>, 3> more;
    for (Buffer<V>& m : more) m = Buffer<V>(device_, n + n / 4 + 16);
    parallel_for(device_, static_cast<std::int64_t>(keep),
                 kernels::particles::CopyPositions<V>{b[0]->data(), b[1]->data(), b[2]->data(), nullptr, V(0), V(0),
                                                      V(0), more[0].data(), more[1].data(), more[2].data()});
    for (int a = 0; a < 3; ++a) *b[static_cast<std::size_t>(a)] = std::move(more[static_cast<std::size_t>(a)]);
  }
  template <class V>
  void scratch(Buffer<V>& b, std::size_t n) {
    if (b.size() < n) b = Buffer<V>(device_, n + n / 4 + 16);
  }
  // At least n entries, the first `keep` kept (a rare growth, through the host).
  void grow_kept(Buffer<int>& b, std::size_t n, std::size_t keep) {
    if (b.size() >= n) return;
    std::vector<int> kept(keep);
    b.copy_to_host(kept.data(), kept.size());
    scratch(b, n);
    b.copy_from_host(kept.data(), kept.size());
  }
  void reserve_owned(std::size_t n);
  void order_rows();
  int select(std::int64_t n, int mask, int* list);
  void rebuild_here(bool from_reference, bool keys_hold_positions);
  std::string check();
  void agree_on(const std::string& local_failure) const;
  void migrate();
  void sort_by_cell(const kernels::particles::CellGrid<T>& grid);
  void find_ghosts();
  void bin_and_list(const kernels::particles::CellGrid<T>& grid);
  kernels::particles::CellGrid<T> cell_grid() const;

  Device device_;
  const Domain& domain_;
  double ghost_cutoff_;
  Timers* timers_;
  int n_local_ = 0, n_ghost_ = 0, index_bits_ = 0;
  int n_interior_ = 0;   // order_: the interior atoms (rows without a ghost), then the border ones
  bool gather_ = false;  // every swap copies on this rank: ghosts packed from ghost_root_, ghost_image_
  std::int64_t capacity_ = 0, rebuilds_ = 0, step_ = 0;
  std::vector<Swap> swaps_;
  Buffer<T> x_, y_, z_, x0_, y0_, z0_, vx_, vy_, vz_, fx_, fy_, fz_, energy_, virial_;
  Buffer<double> kx_, ky_, kz_, records_;
  Buffer<std::int64_t> index_;
  Buffer<int> image_, neighbours_, count_, cell_start_, cell_atoms_, send_index_;
  Buffer<int> code_, flag_, scan_, list_, sort_value_;   // selections and sorts
  Buffer<int> order_;
  Buffer<int> ghost_root_, ghost_image_;  // per ghost (gather_): its owned source, its swaps (PackAtoms)
  Buffer<std::uint64_t> sort_key_, sorted_key_;
  Buffer<T> binned_x_, binned_y_, binned_z_;   // build positions in cell order
  Buffer<T> xyz_;                              // positions packed four an atom, for the pair forces
  Buffer<T> stage_out_, stage_in_;
  std::vector<T> send_host_, recv_host_;
  std::vector<double> send_records_, recv_records_;
};

}  // namespace strata::md

#include "models/md/atom_system_impl.hpp"
