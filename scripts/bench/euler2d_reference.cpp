// A plain serial loop code of strata's euler2d scheme (miniWeather's: 2-D
// compressible Euler in an x-z slice, fourth-order finite volumes with
// hyperviscosity, three-stage Runge-Kutta, alternating dimensional
// splitting), written without any engine type: flat arrays with halos, one
// function that runs the thermal case. The stencil benchmark
// (scripts/bench/euler2d) runs it next to `strata run` on one core to show
// what the engine's abstraction (grid boxes, functors, halo exchange,
// OpenMP launch) costs.
//
// It keeps every expression of kernels/stencil/euler2d.hpp in the same
// operation order and the same clock (the last step shortened to end at
// sim_time), so on the host its FP64 fields equal strata's bit for bit when
// both are compiled with the same flags (no FMA contraction on x86-64's
// baseline ISA).
//
// Usage: strata_euler2d_reference NX NZ STEPS [STRATA_OUTPUT.h5]
//   runs the thermal case for STEPS time steps of dt = min(dx, dz) 1.5 /
//   450 m/s (sim_time = STEPS dt, printed), prints cell-steps/s, and with a
//   strata FP64 output of the same run (euler2d.nx = NX, nz = NZ, sim_time
//   as printed) compares the last frame of /{dens,uwnd,wwnd,theta}.
//   Exit 0 when they agree bitwise, 1 otherwise.
//
// Build: the target strata_euler2d_reference (scripts/bench/CMakeLists.txt),
// or by hand (HDF5 for the comparison only), as one line:
//   g++ -O3 -std=c++20 scripts/bench/euler2d_reference.cpp -I/usr/include/hdf5/openmpi
//       -I/usr/lib/x86_64-linux-gnu/openmpi/include -L/usr/lib/x86_64-linux-gnu/hdf5/openmpi -lhdf5
//       -o euler2d_reference
#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr double kPi = 3.14159265358979323846264338327;
constexpr double kGrav = 9.8, kCp = 1004., kRd = 287., kP0 = 1.e5;
constexpr double kC0 = 27.5629410929725921310572974482;
constexpr double kGamma = 1.40027894002789400278940027894;
constexpr double kXLen = 2.e4, kZLen = 1.e4, kMaxSpeed = 450, kCfl = 1.5, kHvBeta = 0.05;
constexpr int kHs = 2;
constexpr double kQp[3] = {0.112701665379258311482073460022E0, 0.500000000000000000000000000000E0,
                           0.887298334620741688517926539980E0};
constexpr double kQw[3] = {0.277777777777777777777777777779E0, 0.444444444444444444444444444444E0,
                           0.277777777777777777777777777779E0};

// Neutral (theta = 300 K) hydrostatic density and potential temperature at height z.
void neutral_background(double z, double& r, double& t) {
  t = 300.;
  const double exner = 1. - kGrav * z / (kCp * 300.);
  const double p = kP0 * std::pow(exner, kCp / kRd);
  r = std::pow(p / kC0, 1. / kGamma) / t;
}

// The warm bubble: 3 K cos^2 within 2 km of (10 km, 2 km).
double bubble(double x, double z) {
  const double dist =
      std::sqrt(((x - kXLen / 2) / 2000.) * ((x - kXLen / 2) / 2000.) + ((z - 2000.) / 2000.) * ((z - 2000.) / 2000.)) *
      kPi / 2.;
  return dist <= kPi / 2. ? 3. * std::pow(std::cos(dist), 2.) : 0.;
}

struct Result {
  int nx, nz;
  std::vector<double> dens, uwnd, wwnd, theta;    // [nz][nx], as strata's fields
  double seconds = 0;                             // the time loop alone
};

// The whole scheme: initial state, background, `steps` steps of the
// thermal case (the last one shortened to end at sim_time).
Result run_thermal(int nx, int nz, double sim_time) {
  const double dx = kXLen / nx, dz = kZLen / nz;
  const double dt0 = std::min(dx, dz) / kMaxSpeed * kCfl;
  const long steps = std::max(1L, static_cast<long>(std::ceil(sim_time / dt0 * (1 - 1e-12))));
  const int sx = nx + 2 * kHs;   // row stride
  const std::size_t cells = static_cast<std::size_t>(sx) * (nz + 2 * kHs);
  auto id = [sx](int i, int k) { return static_cast<std::size_t>(k + kHs) * sx + (i + kHs); };
  std::vector<double> state[4], tmp[4], flux[4];
  for (int v = 0; v < 4; ++v) {
    state[v].assign(cells, 0.);
    tmp[v].assign(cells, 0.);
    flux[v].assign(cells, 0.);
  }
  // Background: cell values at rows -2 .. nz+1 (index k + 2), face values at 0 .. nz.
  std::vector<double> hd(nz + 4), hdt(nz + 4), hdi(nz + 1), hdti(nz + 1), hpi(nz + 1);
  for (int k = -kHs; k < nz + kHs; ++k) {
    double r, t, a = 0, b = 0;
    for (int q = 0; q < 3; ++q) {
      neutral_background((k + 0.5) * dz, r, t);
      a = a + r * kQw[q];
      b = b + r * t * kQw[q];
    }
    hd[k + kHs] = a;
    hdt[k + kHs] = b;
  }
  for (int k = 0; k <= nz; ++k) {
    double r, t;
    neutral_background(k * dz, r, t);
    hdi[k] = r;
    hdti[k] = r * t;
    hpi[k] = kC0 * std::pow(r * t, kGamma);
  }
  for (int k = 0; k < nz; ++k)
    for (int i = 0; i < nx; ++i) {
      double d = 0, rt = 0, um = 0, wm = 0;
      for (int kk = 0; kk < 3; ++kk)
        for (int ii = 0; ii < 3; ++ii) {
          const double x = (i + 0.5) * dx + (kQp[ii] - 0.5) * dx;
          const double z = (k + 0.5) * dz + (kQp[kk] - 0.5) * dz;
          double hr, ht;
          neutral_background(z, hr, ht);
          const double t = bubble(x, z);
          d = d + 0. * kQw[ii] * kQw[kk];
          um = um + (0. + hr) * 0. * kQw[ii] * kQw[kk];
          wm = wm + (0. + hr) * 0. * kQw[ii] * kQw[kk];
          rt = rt + ((0. + hr) * (t + ht) - hr * ht) * kQw[ii] * kQw[kk];
        }
      state[0][id(i, k)] = d;
      state[1][id(i, k)] = um;
      state[2][id(i, k)] = wm;
      state[3][id(i, k)] = rt;
    }

  // state_out = state_init + dts rhs(forcing) along x (dir 0) or z (dir 1).
  auto stage = [&](int dir, std::vector<double>* init, std::vector<double>* forcing, std::vector<double>* out,
                   double dts) {
    if (dir == 0) {
      for (int k = 0; k < nz; ++k)   // periodic halos
        for (int s = 0; s < kHs; ++s)
          for (int v = 0; v < 4; ++v) {
            forcing[v][id(-kHs + s, k)] = forcing[v][id(nx - kHs + s, k)];
            forcing[v][id(nx + s, k)] = forcing[v][id(s, k)];
          }
    } else {
      for (int i = 0; i < nx; ++i)   // solid walls
        for (int s = 0; s < kHs; ++s) {
          const int lo = -kHs + s, hi = nz + s;
          forcing[0][id(i, lo)] = forcing[0][id(i, 0)];
          forcing[1][id(i, lo)] = forcing[1][id(i, 0)] / hd[0 + kHs] * hd[lo + kHs];
          forcing[2][id(i, lo)] = 0.;
          forcing[3][id(i, lo)] = forcing[3][id(i, 0)];
          forcing[0][id(i, hi)] = forcing[0][id(i, nz - 1)];
          forcing[1][id(i, hi)] = forcing[1][id(i, nz - 1)] / hd[nz - 1 + kHs] * hd[hi + kHs];
          forcing[2][id(i, hi)] = 0.;
          forcing[3][id(i, hi)] = forcing[3][id(i, nz - 1)];
        }
    }
    const double hv = -kHvBeta * (dir == 0 ? dx : dz) / (16 * dts);
    const int fi = dir == 0 ? 1 : 0, fk = dir == 0 ? 0 : 1;   // face f+1 of cell f
    for (int k = 0; k < nz + fk; ++k)
      for (int i = 0; i < nx + fi; ++i) {
        double vals[4], d3[4];
        for (int v = 0; v < 4; ++v) {
          const double* q = forcing[v].data();
          const std::size_t c = id(i, k), step = dir == 0 ? 1 : static_cast<std::size_t>(sx);
          const double s0 = q[c - 2 * step], s1 = q[c - step], s2 = q[c], s3 = q[c + step];
          vals[v] = (7. * (s1 + s2) - (s0 + s3)) * (1. / 12);
          d3[v] = -s0 + 3. * s1 - 3. * s2 + s3;
        }
        double r, u, w, t, p;
        if (dir == 0) {
          r = vals[0] + hd[k + kHs];
          const double rr = 1. / r;
          u = vals[1] * rr;
          w = vals[2] * rr;
          t = (vals[3] + hdt[k + kHs]) * rr;
          p = kC0 * std::pow(r * t, kGamma);
          flux[0][id(i, k)] = r * u - hv * d3[0];
          flux[1][id(i, k)] = r * u * u + p - hv * d3[1];
          flux[2][id(i, k)] = r * u * w - hv * d3[2];
          flux[3][id(i, k)] = r * u * t - hv * d3[3];
        } else {
          r = vals[0] + hdi[k];
          const double rr = 1. / r;
          u = vals[1] * rr;
          w = vals[2] * rr;
          t = (vals[3] + hdti[k]) * rr;
          p = kC0 * std::pow(r * t, kGamma) - hpi[k];
          if (k == 0 || k == nz) {
            w = 0.;
            d3[0] = 0.;
          }
          flux[0][id(i, k)] = r * w - hv * d3[0];
          flux[1][id(i, k)] = r * w * u - hv * d3[1];
          flux[2][id(i, k)] = r * w * w + p - hv * d3[2];
          flux[3][id(i, k)] = r * w * t - hv * d3[3];
        }
      }
    const double d = dir == 0 ? dx : dz;
    for (int k = 0; k < nz; ++k)
      for (int i = 0; i < nx; ++i) {
        const std::size_t c = id(i, k), c1 = id(i + fi, k + fk);
        double tend[4];
        const double rd = 1. / d;
        for (int v = 0; v < 4; ++v) tend[v] = (flux[v][c] - flux[v][c1]) * rd;
        if (dir == 1) tend[2] = tend[2] - forcing[0][c] * kGrav;
        for (int v = 0; v < 4; ++v) out[v][c] = init[v][c] + dts * tend[v];
      }
  };

  const auto t0 = std::chrono::steady_clock::now();
  for (long n = 0; n < steps; ++n) {
    const double dt = n + 1 == steps ? sim_time - static_cast<double>(n) * dt0 : dt0;
    for (int half = 0; half < 2; ++half) {
      const int dir = (n % 2 == 0) == (half == 0) ? 0 : 1;   // x first on even steps
      stage(dir, state, state, tmp, dt / 3);
      stage(dir, state, tmp, tmp, dt / 2);
      stage(dir, state, tmp, state, dt / 1);
    }
  }
  Result res{nx, nz, {}, {}, {}, {}, 0};
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int k = 0; k < nz; ++k)
    for (int i = 0; i < nx; ++i) {
      const std::size_t c = id(i, k);
      const double hr = hd[k + kHs], hrt = hdt[k + kHs];
      res.dens.push_back(state[0][c]);
      res.uwnd.push_back(state[1][c] / (hr + state[0][c]));
      res.wwnd.push_back(state[2][c] / (hr + state[0][c]));
      res.theta.push_back((state[3][c] + hrt) / (hr + state[0][c]) - hrt / hr);
    }
  return res;
}

// The last frame of the field /<name> ([n_out, nz, nx]) of a strata output.
bool last_frame(hid_t file, const char* name, int nx, int nz, std::vector<double>& out) {
  const std::string path = std::string("/") + name;
  const hid_t ds = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  if (ds < 0) return false;
  const hid_t space = H5Dget_space(ds);
  hsize_t dims[3] = {0, 0, 0};
  const bool ok_shape = H5Sget_simple_extent_ndims(space) == 3 && H5Sget_simple_extent_dims(space, dims, nullptr) == 3 &&
                        dims[1] == static_cast<hsize_t>(nz) && dims[2] == static_cast<hsize_t>(nx) && dims[0] > 0;
  bool ok = false;
  if (ok_shape) {
    hsize_t start[3] = {dims[0] - 1, 0, 0}, count[3] = {1, dims[1], dims[2]};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t mem = H5Screate_simple(3, count, nullptr);
    out.assign(static_cast<std::size_t>(nx) * nz, 0.);
    ok = H5Dread(ds, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, out.data()) >= 0;
    H5Sclose(mem);
  }
  H5Sclose(space);
  H5Dclose(ds);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s NX NZ STEPS [STRATA_OUTPUT.h5]\n", argv[0]);
    return 2;
  }
  const int nx = std::atoi(argv[1]), nz = std::atoi(argv[2]);
  const long steps = std::atol(argv[3]);
  if (nx < 4 || nz < 4 || steps < 1) {
    std::fprintf(stderr, "NX, NZ >= 4 and STEPS >= 1\n");
    return 2;
  }
  const double dt = std::min(kXLen / nx, kZLen / nz) / kMaxSpeed * kCfl;
  const double sim_time = static_cast<double>(steps) * dt;
  const Result r = run_thermal(nx, nz, sim_time);
  const double rate = static_cast<double>(nx) * nz * static_cast<double>(steps) / r.seconds;
  std::printf("reference thermal %d x %d, %ld steps (sim_time = %.17g s): %.3f s, %.3e cell-steps/s (1 core, fp64)\n",
              nx, nz, steps, sim_time, r.seconds, rate);
  if (argc < 5) return 0;

  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(argv[4], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    std::fprintf(stderr, "cannot open %s\n", argv[4]);
    return 2;
  }
  const char* names[4] = {"dens", "uwnd", "wwnd", "theta"};
  const std::vector<double>* mine[4] = {&r.dens, &r.uwnd, &r.wwnd, &r.theta};
  bool bitwise = true;
  for (int f = 0; f < 4; ++f) {
    std::vector<double> theirs;
    if (!last_frame(file, names[f], nx, nz, theirs)) {
      std::fprintf(stderr, "%s: no /%s of shape [n, %d, %d]\n", argv[4], names[f], nz, nx);
      H5Fclose(file);
      return 2;
    }
    double max_diff = 0, max_abs = 0;
    for (std::size_t c = 0; c < theirs.size(); ++c) {
      max_diff = std::max(max_diff, std::fabs(theirs[c] - (*mine[f])[c]));
      max_abs = std::max(max_abs, std::fabs((*mine[f])[c]));
    }
    const bool same = std::memcmp(theirs.data(), mine[f]->data(), theirs.size() * sizeof(double)) == 0;
    bitwise = bitwise && same;
    std::printf("  %-5s max |strata - reference| = %.3e (max |value| %.3e)%s\n", names[f], max_diff, max_abs,
                same ? "  bitwise equal" : "");
  }
  H5Fclose(file);
  std::printf("%s\n", bitwise ? "strata matches the reference bit for bit" : "strata differs from the reference");
  return bitwise ? 0 : 1;
}
