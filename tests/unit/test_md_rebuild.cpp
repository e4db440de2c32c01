// The backend's scan and pair sort, and md's rebuild kernels
// (kernels/particles/rebuild.hpp), against serial references, on every
// backend (test::devices()): the same bits wherever they run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "engine/backend/buffer.hpp"
#include "engine/backend/primitives.hpp"
#include "models/md/domain.hpp"
#include "models/md/kernels.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;
using namespace strata::kernels::particles;

namespace {

template <class V>
Buffer<V> on(const Device& d, const std::vector<V>& host) {
  Buffer<V> b(d, std::max<std::size_t>(host.size(), 1));
  b.copy_from_host(host.data(), host.size());
  return b;
}

template <class V>
std::vector<V> back(const Buffer<V>& b, std::size_t n) {
  std::vector<V> host(n);
  b.copy_to_host(host.data(), n);
  return host;
}

}  // namespace

TEST_CASE("exclusive_scan: each prefix sum and the total, on every backend", "[md][rebuild]") {
  std::mt19937 gen(3);
  for (const Device& d : test::devices()) {
    for (int n : {1, 7, 4096, 100'003}) {
      INFO(to_string(d.backend) << " n = " << n);
      std::vector<int> in(static_cast<std::size_t>(n));
      for (int& v : in) v = static_cast<int>(gen() % 3);   // zeros and runs, as flags and counts are
      Buffer<int> din = on(d, in), dout(d, in.size());
      const int total = exclusive_scan(d, din.data(), dout.data(), n);
      std::vector<int> expect(in.size());
      std::exclusive_scan(in.begin(), in.end(), expect.begin(), 0);
      CHECK(back(dout, in.size()) == expect);
      CHECK(total == expect.back() + in.back());
    }
  }
}

TEST_CASE("sort_pairs is a stable sort by key, on every backend", "[md][rebuild]") {
  std::mt19937_64 gen(11);
  for (const Device& d : test::devices()) {
    for (int bits : {1, 9, 20, 64}) {
      const std::size_t n = 50'001;
      INFO(to_string(d.backend) << " bits = " << bits);
      std::vector<std::uint64_t> keys(n);
      const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
      // Few distinct keys at small widths: ties must keep the input order.
      for (std::uint64_t& k : keys) k = gen() & mask;
      std::vector<int> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return keys[a] < keys[b]; });
      std::vector<std::uint64_t> sorted(n);
      for (std::size_t k = 0; k < n; ++k) sorted[k] = keys[static_cast<std::size_t>(order[k])];
      std::vector<int> values(n);
      std::iota(values.begin(), values.end(), 0);
      Buffer<std::uint64_t> dk = on(d, keys), dk_out(d, n);
      Buffer<int> dv = on(d, values), dv_out(d, n);
      sort_pairs(d, dk.data(), dv.data(), dk_out.data(), dv_out.data(), static_cast<std::int64_t>(n), bits);
      CHECK(back(dk_out, n) == sorted);
      CHECK(back(dv_out, n) == order);
    }
  }
}

// Atoms in a box of cells: the keys, the sort and the cell starts give
// each cell its atoms in increasing index (a serial counting sort's order).
TEST_CASE("md binning: cell keys, a stable sort and cell starts give the counting sort", "[md][rebuild]") {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(-1.0, 7.0);
  CellGrid<double> grid;
  for (int a = 0; a < 3; ++a) grid.lo[a] = -1.0, grid.inv_width[a] = 0.75, grid.n[a] = 6;
  const std::int64_t n = 3000, cells = grid.cells();
  std::vector<double> k[3];
  for (auto& v : k) {
    v.resize(n);
    for (double& x : v) x = u(gen);
  }
  std::vector<int> start(static_cast<std::size_t>(cells) + 1, 0), atoms;
  for (std::int64_t c = 0; c < cells; ++c) {
    for (std::int64_t i = 0; i < n; ++i)
      if (grid.cell_of(k[0][i], k[1][i], k[2][i]) == c) atoms.push_back(static_cast<int>(i));
    start[static_cast<std::size_t>(c) + 1] = static_cast<int>(atoms.size());
  }
  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    Buffer<double> kx = on(d, k[0]), ky = on(d, k[1]), kz = on(d, k[2]);
    Buffer<std::uint64_t> key(d, n), sorted(d, n);
    Buffer<int> value(d, n), cell_atoms(d, n), cell_start(d, start.size());
    parallel_for(d, n, CellKeys<double>{kx.data(), ky.data(), kz.data(), grid, nullptr, 0, key.data(), value.data()});
    sort_pairs(d, key.data(), value.data(), sorted.data(), cell_atoms.data(), n, 8);
    parallel_for(d, cells + 1, CellStarts{sorted.data(), static_cast<int>(n), cell_start.data()});
    CHECK(back(cell_atoms, atoms.size()) == atoms);
    CHECK(back(cell_start, start.size()) == start);
  }
}

// Flags from codes, their scan and the selection: the indices whose code
// is in the mask, in order; records round-trip every field bit for bit.
TEST_CASE("md selection and records: flagged indices in order, records lossless", "[md][rebuild]") {
  const int n = 5000;
  std::vector<int> code(n), expect;
  for (int i = 0; i < n; ++i) code[static_cast<std::size_t>(i)] = (i * 7 + i / 13) % 4;
  for (int i = 0; i < n; ++i)
    if (code[static_cast<std::size_t>(i)] == 1 || code[static_cast<std::size_t>(i)] == 3) expect.push_back(i);
  std::vector<double> pos(n), key(n);
  std::vector<std::int64_t> index(n);
  std::vector<int> image(3 * n);
  for (int i = 0; i < n; ++i) {
    pos[static_cast<std::size_t>(i)] = 0.1 * i;
    key[static_cast<std::size_t>(i)] = std::nextafter(0.1 * i, 1e9);
    index[static_cast<std::size_t>(i)] = (std::int64_t{1} << 40) + 3 * i;
  }
  for (int k = 0; k < 3 * n; ++k) image[static_cast<std::size_t>(k)] = k % 5 - 2;
  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    Buffer<int> dcode = on(d, code), flag(d, n), scan(d, n), list(d, n);
    parallel_for(d, n, FlagCodes{dcode.data(), 0b1010, flag.data()});
    const int count = exclusive_scan(d, flag.data(), scan.data(), n);
    parallel_for(d, n, SelectFlagged{flag.data(), scan.data(), list.data()});
    REQUIRE(count == static_cast<int>(expect.size()));
    CHECK(back(list, expect.size()) == expect);

    Buffer<double> p[3] = {on(d, pos), on(d, pos), on(d, pos)}, v[3] = {on(d, pos), on(d, pos), on(d, pos)};
    Buffer<double> k[3] = {on(d, key), on(d, key), on(d, key)}, q[6];
    for (Buffer<double>& b : q) b = Buffer<double>(d, n);
    Buffer<std::int64_t> dindex = on(d, index), index2(d, n);
    Buffer<int> dimage = on(d, image), image2(d, 3 * n);
    Buffer<double> records(d, static_cast<std::size_t>(n) * kRecordWidth);
    const AtomArrays<double> from{p[0].data(), p[1].data(), p[2].data(), v[0].data(), v[1].data(), v[2].data(),
                                  k[0].data(), k[1].data(), k[2].data(), dindex.data(), dimage.data()};
    // The selected atoms, packed in list order, unpacked into fresh arrays.
    Buffer<double> to_p(d, n), to_k(d, n);
    const AtomArrays<double> to{to_p.data(), q[0].data(), q[1].data(), q[2].data(), q[3].data(), q[4].data(),
                                to_k.data(),  q[5].data(), q[5].data(), index2.data(), image2.data()};
    parallel_for(d, count, PackRecords<double>{from, list.data(), records.data()});
    parallel_for(d, count, UnpackRecords<double>{to, records.data(), 0});
    const std::vector<double> got_p = back(to_p, expect.size()), got_k = back(to_k, expect.size());
    const std::vector<std::int64_t> got_index = back(index2, expect.size());
    const std::vector<int> got_image = back(image2, 3 * expect.size());
    for (std::size_t r = 0; r < expect.size(); ++r) {
      const auto i = static_cast<std::size_t>(expect[r]);
      REQUIRE(got_p[r] == pos[i]);
      REQUIRE(got_k[r] == key[i]);
      REQUIRE(got_index[r] == index[i]);
      for (std::size_t a = 0; a < 3; ++a) REQUIRE(got_image[3 * r + a] == image[3 * i + a]);
    }
  }
}

// The check before a rebuild: the farthest atom beyond the reach (the
// lowest of a tie), a NaN never chosen, the first unplaceable atom.
TEST_CASE("md rebuild check: the worst atom, ties to the lowest, NaN kept for the health check", "[md][rebuild]") {
  const int n = 10'000;
  std::vector<double> x(n, 1.0), x0(n, 1.0), zero(n, 0.0);
  x[17] = 4.0, x[9000] = 4.0, x[40] = 3.0;   // 17 and 9000 tie beyond the reach 1.5
  x[5] = std::numeric_limits<double>::quiet_NaN();
  // Unplaceable but not moved (an infinite move would be the worst).
  x[8500] = x0[8500] = 1e300, x[8000] = x0[8000] = std::numeric_limits<double>::infinity();
  const double length[3] = {5.0, 5.0, 5.0};
  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    Buffer<double> dx = on(d, x), dx0 = on(d, x0), dz = on(d, zero);
    const RebuildCheck<double> f{dx.data(), dz.data(), dz.data(), dx0.data(), dz.data(), dz.data(), 1.5 * 1.5,
                                 {length[0], length[1], length[2]}};
    const WorstAtom w = parallel_reduce(d, n, f, WorstAtom{}, WorstAtomOp{});
    CHECK(w.worst == 17);
    CHECK(w.d2 == 9.0);
    CHECK(w.unwrappable == 8000);
  }
}

// Wrapping and the migration codes: wrap_periodic's bits and image counts
// per atom, and each atom's destination from the Domain's own arithmetic.
TEST_CASE("md wrap and migration codes match wrap_periodic and the sub-box bounds", "[md][rebuild]") {
  const int n = 4000, ranks = 4;
  const double length = 7.3;
  std::mt19937_64 gen(2);
  std::uniform_real_distribution<double> u(-1.2 * length, 2.2 * length);
  std::vector<double> pos(n);
  for (double& v : pos) v = u(gen);
  pos[3] = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> wrapped = pos;
  std::vector<int> image(n, 0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) (void)md::wrap_periodic(wrapped[i], length, image[i]);
  for (int me = 0; me < ranks; ++me) {
    for (const Device& d : test::devices()) {
      INFO(to_string(d.backend) << " coordinate " << me);
      Buffer<double> p[3] = {on(d, pos), on(d, pos), on(d, pos)}, k[3], v(d, n);
      for (Buffer<double>& b : k) b = Buffer<double>(d, n);
      Buffer<std::int64_t> index(d, n);
      // WrapAtoms adds the boxes crossed to the image counts: they start at
      // zero here, as in the atoms' arrays (a fresh Buffer holds garbage).
      Buffer<int> dimage = on(d, std::vector<int>(3 * static_cast<std::size_t>(n), 0)), dcode(d, n);
      const AtomArrays<double> at{p[0].data(), p[1].data(), p[2].data(), v.data(),      v.data(),     v.data(),
                                  k[0].data(), k[1].data(), k[2].data(), index.data(), dimage.data()};
      parallel_for(d, n, WrapAtoms<double>{at, {length, length, length}, false});
      parallel_for(d, n, MigrationCode{k[1].data(), length, ranks, me, dcode.data()});
      const std::vector<double> got = back(k[2], n), got_x = back(p[0], n);
      const std::vector<int> got_image = back(dimage, 3 * n), got_code = back(dcode, n);
      for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
        const double w = wrapped[i];
        REQUIRE((std::isnan(w) ? std::isnan(got[i]) && std::isnan(got_x[i]) : got[i] == w && got_x[i] == w));
        for (std::size_t a = 0; a < 3; ++a) REQUIRE(got_image[3 * i + a] == image[i]);
        int c = me;
        if (std::isfinite(w))
          for (int r = 0; r < ranks; ++r)
            if (w >= length * r / ranks && w < length * (r + 1) / ranks) c = r;
        const int lower = (me + ranks - 1) % ranks, upper = (me + 1) % ranks;
        REQUIRE(got_code[i] == (c == me ? 0 : c == lower ? 1 : c == upper ? 2 : 3));
      }
    }
  }
}
