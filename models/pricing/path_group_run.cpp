#include "models/pricing/path_group_run.hpp"

#include <algorithm>
#include <cmath>

#include "engine/backend/buffer.hpp"
#include "engine/backend/parallel.hpp"
#include "kernels/pricing/closed_forms.hpp"
#include "kernels/pricing/path_group.hpp"

namespace strata::pricing {

using kernels::pricing::GbmPathGroup;
using kernels::pricing::GroupLaneTree;
using kernels::pricing::kLanes;
using kernels::pricing::kMoments;
using kernels::pricing::PathView;
using kernels::pricing::PayoffKind;
using kernels::pricing::PayoffSpec;

namespace {

// Working memory per launch: small enough for the host's caches and memory,
// large enough to fill a GPU.
std::size_t budget(const Device& d) { return d.backend == Backend::cuda ? (std::size_t{1} << 30) : (std::size_t{64} << 20); }

PayoffKind kind_of(const std::string& type) {
  if (type == "digital") return PayoffKind::digital;
  if (type == "asian") return PayoffKind::asian;
  if (type == "barrier") return PayoffKind::barrier;
  if (type == "lookback") return PayoffKind::lookback;
  return PayoffKind::european;
}

template <class Real>
PayoffSpec<Real> spec_as(const PayoffSpec<double>& d) {
  return {d.kind,      d.call,     d.geometric, d.up,
          d.knock_in,  d.continuous, d.floating, d.fix_begin,
          d.fixings,   static_cast<Real>(d.strike), static_cast<Real>(d.cash), static_cast<Real>(d.rebate),
          static_cast<Real>(d.log_barrier), static_cast<Real>(d.lookback_shift), d.discount};
}

template <class Real>
std::vector<Real> as(const std::vector<double>& v) {
  return std::vector<Real>(v.begin(), v.end());
}

template <class T>
Buffer<T> upload(const Device& d, const std::vector<T>& v) {
  Buffer<T> b(d, std::max<std::size_t>(1, v.size()));
  b.copy_from_host(v.data(), v.size());
  return b;
}

}  // namespace

// The group as double on the host, then as Real on the device.
template <class Real>
struct PathGroupRun::Data {
  GbmPathGroup<Real> kernel{};
  Buffer<Real> drift, diffusion, variance, paths;
  Buffer<int> fix_steps;
  Buffer<double> discount_at, shifts, lanes, blocks;
  Buffer<PayoffSpec<Real>> payoffs;
  std::int64_t max_blocks = 0;
};

std::size_t PathGroupRun::bytes_per_block(const PathGroup& g, bool antithetic, Precision precision) {
  const std::size_t real = precision == Precision::fp32 ? sizeof(float) : sizeof(double);
  const std::size_t path = (g.grid.size() + 1) * (antithetic ? 2 : 1) * real;
  const std::size_t moments = g.instruments.size() * kMoments * sizeof(double);
  return static_cast<std::size_t>(kLanes) * (path + moments) + moments;
}

std::int64_t PathGroupRun::launch_blocks(const PathGroup& g, bool antithetic, Precision precision,
                                         const Device& device, std::int64_t chunk_blocks) {
  const auto fit = static_cast<std::int64_t>(budget(device) / bytes_per_block(g, antithetic, precision));
  return std::clamp<std::int64_t>(fit, 1, std::max<std::int64_t>(1, chunk_blocks));
}

PathGroupRun::PathGroupRun(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision,
                           std::int64_t max_blocks) {
  const Asset& a = p.assets[static_cast<std::size_t>(g.asset)];
  const int steps = static_cast<int>(g.grid.size());
  std::vector<double> drift, diffusion, variance, discount_at;
  double prev = 0.0;
  for (double t : g.grid) {
    const double dt = t - prev;
    drift.push_back((p.rate - a.dividend - 0.5 * a.vol * a.vol) * dt);
    diffusion.push_back(a.vol * std::sqrt(dt));
    variance.push_back(a.vol * a.vol * dt);
    discount_at.push_back(std::exp(-p.rate * t));
    prev = t;
  }
  std::vector<int> fix_steps;
  std::vector<PayoffSpec<double>> specs;
  for (std::size_t idx : g.instruments) {
    const Instrument& in = p.instruments[idx];
    PayoffSpec<double> s{};
    s.kind = kind_of(in.type);
    s.call = in.call;
    s.geometric = in.geometric;
    s.up = in.kind.up;
    s.knock_in = in.kind.knock_in;
    s.continuous = in.continuous;
    s.floating = in.floating;
    s.strike = in.strike;
    s.cash = in.cash;
    s.rebate = in.rebate;
    s.log_barrier = in.barrier > 0 ? std::log(in.barrier) : 0.0;
    s.discount = std::exp(-p.rate * in.maturity);
    // BGK shift with the grid's mean step (the grid is uniform unless
    // fixings refine it).
    s.lookback_shift = in.type == "lookback" && in.continuous
                           ? kernels::kBgkBeta * a.vol * std::sqrt(in.maturity / steps)
                           : 0.0;
    const bool uses_fixings = in.type == "asian" || ((in.type == "barrier" || in.type == "lookback") && !in.continuous);
    if (uses_fixings) {
      s.fix_begin = static_cast<int>(fix_steps.size());
      s.fixings = in.fixings;
      for (int k : fixing_steps(in, g.grid)) fix_steps.push_back(k);
    }
    specs.push_back(s);
  }

  // Shifts: each payoff on the median path (Z = 0), in double on the host,
  // so every backend and precision shifts by the same values.
  std::vector<double> median(static_cast<std::size_t>(steps) + 1, std::log(a.spot));
  for (int k = 0; k < steps; ++k) median[static_cast<std::size_t>(k) + 1] = median[static_cast<std::size_t>(k)] + drift[static_cast<std::size_t>(k)];
  const PathView<double> mv{median.data(), 1, steps, variance.data(), fix_steps.data(), discount_at.data()};
  for (const PayoffSpec<double>& s : specs) shifts_.push_back(kernels::pricing::path_payoff(s, mv));

  auto build = [&](auto& data, auto zero) {
    using Real = decltype(zero);
    using D = std::remove_reference_t<decltype(*data)>;
    data = std::make_unique<D>();
    data->max_blocks = max_blocks;
    data->drift = upload(device, as<Real>(drift));
    data->diffusion = upload(device, as<Real>(diffusion));
    data->variance = upload(device, as<Real>(variance));
    data->fix_steps = upload(device, fix_steps);
    data->discount_at = upload(device, discount_at);
    data->shifts = upload(device, shifts_);
    std::vector<PayoffSpec<Real>> real_specs;
    for (const auto& s : specs) real_specs.push_back(spec_as<Real>(s));
    data->payoffs = upload(device, real_specs);
    const std::size_t lanes = static_cast<std::size_t>(max_blocks * kLanes);
    data->paths = Buffer<Real>(device, lanes * (static_cast<std::size_t>(steps) + 1) * (p.antithetic ? 2 : 1));
    data->lanes = Buffer<double>(device, lanes * specs.size() * kMoments);
    data->blocks = Buffer<double>(device, static_cast<std::size_t>(max_blocks) * specs.size() * kMoments);
    auto& k = data->kernel;
    k.key = rng::philox_key(p.seed);
    k.steps = steps;
    k.antithetic = p.antithetic;
    k.log_spot = static_cast<Real>(std::log(a.spot));
    k.drift = data->drift.data();
    k.diffusion = data->diffusion.data();
    k.variance = data->variance.data();
    k.fix_steps = data->fix_steps.data();
    k.discount_at = data->discount_at.data();
    k.payoffs = data->payoffs.data();
    k.shifts = data->shifts.data();
    k.n_payoffs = static_cast<int>(specs.size());
    k.paths = data->paths.data();
    k.lanes = data->lanes.data();
  };
  if (precision == Precision::fp32) {
    build(fp32_, 0.0f);
  } else {
    build(fp64_, 0.0);
  }
  device_ = device;
}

PathGroupRun::~PathGroupRun() = default;
PathGroupRun::PathGroupRun(PathGroupRun&&) noexcept = default;

namespace {

template <class Data>
void compute_group(Data& data, const Device& device, std::int64_t first, std::int64_t nb, std::int64_t n_samples,
                   std::vector<double>& out) {
  auto kernel = data.kernel;
  const std::int64_t n_payoffs = kernel.n_payoffs;
  out.assign(static_cast<std::size_t>(n_payoffs * nb * kMoments), 0.0);
  std::vector<double> piece_out;
  for (std::int64_t off = 0; off < nb; off += data.max_blocks) {
    const std::int64_t n = std::min(data.max_blocks, nb - off);
    kernel.first_block = first + off;
    kernel.n_samples = n_samples;
    kernel.n_lanes = n * kLanes;
    parallel_for(device, n * kLanes, kernel);
    parallel_for(device, n_payoffs * n, GroupLaneTree{data.lanes.data(), data.blocks.data(), n * kLanes, n});
    piece_out.resize(static_cast<std::size_t>(n_payoffs * n * kMoments));
    data.blocks.copy_to_host(piece_out.data(), piece_out.size());
    for (std::int64_t j = 0; j < n_payoffs; ++j) {
      std::copy_n(piece_out.begin() + j * n * kMoments, n * kMoments, out.begin() + (j * nb + off) * kMoments);
    }
  }
}

}  // namespace

void PathGroupRun::compute(std::int64_t first, std::int64_t nb, std::int64_t n_samples, std::vector<double>& out) {
  if (fp32_) {
    compute_group(*fp32_, device_, first, nb, n_samples, out);
  } else {
    compute_group(*fp64_, device_, first, nb, n_samples, out);
  }
}

}  // namespace strata::pricing
