#include "models/pricing/path_group_run.hpp"

#include <algorithm>
#include <cmath>

#include "engine/backend/buffer.hpp"
#include "engine/backend/parallel.hpp"
#include "kernels/pricing/closed_forms.hpp"
#include "kernels/pricing/exercise_states.hpp"
#include "kernels/pricing/path_group.hpp"
#include "kernels/pricing/path_group_batched.hpp"
#include "kernels/rng/philox.hpp"
#include "models/pricing/brownian_bridge_plan.hpp"
#include "models/pricing/control_variates.hpp"
#include "models/pricing/longstaff_schwartz.hpp"
#include "models/pricing/sobol_directions.hpp"

namespace strata::pricing {

using kernels::pricing::AssetModel;
using kernels::pricing::AssetStep;
using kernels::pricing::BasketKind;
using kernels::pricing::ExerciseStates;
using kernels::pricing::GreekTerm;
using kernels::pricing::GroupLaneTree;
using kernels::pricing::kLanes;
using kernels::pricing::kMoments;
using kernels::pricing::PathGroupKernel;
using kernels::pricing::PathTangent;
using kernels::pricing::PathView;
using kernels::pricing::PayoffKind;
using kernels::pricing::PayoffSpec;

namespace {

PayoffKind kind_of(const std::string& type) {
  if (type == "digital") return PayoffKind::digital;
  if (type == "asian") return PayoffKind::asian;
  if (type == "barrier") return PayoffKind::barrier;
  if (type == "lookback") return PayoffKind::lookback;
  if (type == "basket") return PayoffKind::basket;
  if (type == "american") return PayoffKind::american;
  return PayoffKind::european;
}

template <class Real>
PayoffSpec<Real> spec_as(const PayoffSpec<double>& d) {
  return {d.kind,      d.asset,    d.basket,     d.weight_begin, d.call,
          d.geometric, d.up,       d.knock_in,   d.continuous,   d.floating,
          d.fix_begin, d.fixings,  static_cast<Real>(d.strike), static_cast<Real>(d.cash),
          static_cast<Real>(d.rebate), static_cast<Real>(d.log_barrier), static_cast<Real>(d.lookback_shift),
          d.discount,  d.coef_begin, d.degree,   d.laguerre};
}

template <class Real>
AssetStep<Real> step_as(const AssetStep<double>& d) {
  auto r = [](double x) { return static_cast<Real>(x); };
  return {d.model, r(d.log_spot), r(d.carry), r(d.vol), r(d.v0), r(d.kappa), r(d.theta), r(d.xi), r(d.rho),
          r(d.jump_intensity), r(d.jump_mean), r(d.jump_vol)};
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

AssetStep<double> asset_step(const Portfolio& p, const Asset& a) {
  AssetStep<double> s{};
  s.model = a.model == "heston" ? (a.qe ? AssetModel::heston_qe : AssetModel::heston_full_truncation)
            : a.model == "merton" ? AssetModel::merton
                                  : AssetModel::gbm;
  s.log_spot = std::log(a.spot);
  s.carry = p.rate - a.dividend;
  s.vol = a.vol;
  s.v0 = a.v0;
  s.kappa = a.kappa;
  s.theta = a.theta;
  s.xi = a.xi;
  s.rho = a.rho;
  s.jump_intensity = a.jump_intensity;
  s.jump_mean = a.jump_mean;
  s.jump_vol = a.jump_vol;
  if (s.model == AssetModel::merton) {
    // Compensated drift: E[S_T] = S_0 e^{(r - q) T}.
    s.carry -= a.jump_intensity * (std::exp(a.jump_mean + 0.5 * a.jump_vol * a.jump_vol) - 1.0);
  }
  return s;
}

// A typical volatility for the lookback's continuity correction.
double typical_vol(const Asset& a) { return a.model == "heston" ? std::sqrt(a.theta) : a.vol; }

// An instrument's payoff but for its places in the group's weight and
// fixing tables (weight_begin, fix_begin, fixings), which the caller sets.
PayoffSpec<double> payoff_spec(const Portfolio& p, const Instrument& in, int steps) {
  PayoffSpec<double> s{};
  s.kind = kind_of(in.type);
  s.asset = 0;   // single-asset instruments have single-asset groups
  s.basket = in.basket == "max" ? BasketKind::max : in.basket == "min" ? BasketKind::min : BasketKind::average;
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
                         ? kernels::kBgkBeta * typical_vol(p.assets[static_cast<std::size_t>(in.asset)]) *
                               std::sqrt(in.maturity / steps)
                         : 0.0;
  return s;
}

// Per step of a grid: dt, sqrt(dt) and the discount factor e^{-r t_k}.
struct GridSteps {
  std::vector<double> dt, sqrt_dt, discount_at;
};

GridSteps grid_steps(const std::vector<double>& grid, double rate) {
  GridSteps out;
  double prev = 0.0;
  for (double t : grid) {
    out.dt.push_back(t - prev);
    out.sqrt_dt.push_back(std::sqrt(t - prev));
    out.discount_at.push_back(std::exp(-rate * t));
    prev = t;
  }
  return out;
}

}  // namespace

// The group as double on the host, then as Real on the device.
template <class Real>
struct PathGroupRun::Data {
  PathGroupKernel<Real> kernel{};
  Buffer<Real> cholesky, dt, sqrt_dt, weights;
  Buffer<AssetStep<Real>> assets;
  Buffer<int> fix_steps, americans;
  Buffer<double> discount_at, shifts, exercise;
  Buffer<PayoffSpec<Real>> payoffs, controls;
  Buffer<double> beta, control_mean;
  Buffer<GreekTerm> terms;
  Buffer<int> term_begin;
  Buffer<PathTangent<Real>> tangents;
  Buffer<Real> times;
  Buffer<std::uint32_t> directions, scramble;
  Buffer<BridgeStep> bridge;
  std::int64_t max_blocks = 0;
};

std::size_t PathGroupRun::bytes_per_block(const PathGroup& g, bool antithetic, Precision precision, int replicates,
                                          int greek_slots) {
  const std::size_t real = precision == Precision::fp32 ? sizeof(float) : sizeof(double);
  // Log prices and step variances of every asset, and each Greek's value
  // of the lane's sample.
  const std::size_t path = 2 * (g.grid.size() + 1) * g.assets.size() * (antithetic ? 2 : 1) * real +
                           static_cast<std::size_t>(greek_slots) * sizeof(double);
  const std::size_t moments = (g.instruments.size() + static_cast<std::size_t>(greek_slots)) *
                              static_cast<std::size_t>(replicates) * kMoments * sizeof(double);
  return static_cast<std::size_t>(kLanes) * (path + moments) + moments;
}

std::int64_t PathGroupRun::launch_blocks(const PathGroup& g, bool antithetic, Precision precision, int replicates,
                                         const Device& device, std::int64_t chunk_blocks, int greek_slots) {
  const auto fit =
      static_cast<std::int64_t>(device.launch_bytes() / bytes_per_block(g, antithetic, precision, replicates, greek_slots));
  return std::clamp<std::int64_t>(fit, 1, std::max<std::int64_t>(1, chunk_blocks));
}

PathGroupRun::PathGroupRun(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision,
                           std::int64_t max_blocks, const std::vector<double>& betas, bool pilot,
                           const std::vector<double>& exercise)
    : device_(device) {
  const std::vector<int> offsets = exercise_offsets(p, g);
  const std::vector<double> table =
      exercise.empty() ? std::vector<double>(static_cast<std::size_t>(offsets.back()), 0.0) : exercise;
  const int steps = static_cast<int>(g.grid.size());
  const int n_assets = static_cast<int>(g.assets.size());
  std::vector<AssetStep<double>> assets;
  for (int a : g.assets) assets.push_back(asset_step(p, p.assets[static_cast<std::size_t>(a)]));
  const std::vector<double> chol = cholesky_of(p, g.assets);
  bool correlated = false;
  for (int i = 0; i < n_assets; ++i) {
    for (int j = 0; j < i; ++j) correlated = correlated || chol[static_cast<std::size_t>(i * n_assets + j)] != 0.0;
  }
  GridSteps grid = grid_steps(g.grid, p.rate);
  std::vector<int> fix_steps;
  std::vector<double> weights;
  // One moment slot per payoff (times the replicates): an instrument's, or
  // in the pilot three per controlled instrument (control_variates.hpp).
  std::vector<PayoffSpec<double>> specs, controls;
  std::vector<double> slot_beta, control_mean;
  for (std::size_t j = 0; j < g.instruments.size(); ++j) {
    const Instrument& in = p.instruments[g.instruments[j]];
    PayoffSpec<double> s = payoff_spec(p, in, steps);
    s.weight_begin = static_cast<int>(weights.size());
    weights.insert(weights.end(), in.weights.begin(), in.weights.end());
    if (uses_fixings(in)) {
      s.fix_begin = static_cast<int>(fix_steps.size());
      s.fixings = in.fixings;
      for (int k : fixing_steps(in, g.grid)) fix_steps.push_back(k);
    }
    s.coef_begin = std::max(0, offsets[j]);
    s.degree = in.degree;
    s.laguerre = in.laguerre;
    if (!pilot && s.kind == PayoffKind::american) {
      americans_.push_back(static_cast<int>(specs.size()));
      exercise_row_ += in.fixings;
    }
    const std::optional<ControlVariate> c = control_for(p, in, s, weights);
    controlled_.push_back(c.has_value());
    auto slot = [&](const PayoffSpec<double>& payoff, const PayoffSpec<double>& control, double beta, double mean) {
      specs.push_back(payoff);
      controls.push_back(control);
      slot_beta.push_back(beta);
      control_mean.push_back(mean);
    };
    if (!pilot) {
      slot(s, c ? c->spec : s, c && j < betas.size() ? betas[j] : 0.0, c ? c->mean : 0.0);
    } else if (c) {
      slot(s, s, 0.0, 0.0);
      slot(c->spec, c->spec, 0.0, 0.0);
      slot(s, c->spec, -1.0, c->mean);
    }
  }

  // Greeks: each scenario's assets, grid and payoffs after the base's.
  const std::size_t n_payoffs = specs.size();
  if (!pilot) greeks_ = plan_greeks(p, g);
  for (const Bump& b : greeks_.scenarios) {
    const Portfolio q = bumped_portfolio(p, g, b);
    for (int a : g.assets) assets.push_back(asset_step(q, q.assets[static_cast<std::size_t>(a)]));
    const GridSteps bumped = grid_steps(bumped_grid(g, b), q.rate);
    grid.dt.insert(grid.dt.end(), bumped.dt.begin(), bumped.dt.end());
    grid.sqrt_dt.insert(grid.sqrt_dt.end(), bumped.sqrt_dt.begin(), bumped.sqrt_dt.end());
    grid.discount_at.insert(grid.discount_at.end(), bumped.discount_at.begin(), bumped.discount_at.end());
    // The base payoff with what the bump moves in it (the discount:
    // rate, maturity; the lookback's shift: vol, maturity); all else,
    // tables and policies, held fixed.
    for (std::size_t j = 0; j < n_payoffs; ++j) {
      const PayoffSpec<double> moved = payoff_spec(q, q.instruments[g.instruments[j]], steps);
      PayoffSpec<double> s = specs[j];
      s.discount = moved.discount;
      s.lookback_shift = moved.lookback_shift;
      specs.push_back(s);
    }
  }
  // Pathwise tangents of the base assets (pathwise.hpp).
  std::vector<PathTangent<double>> tangents;
  for (const Tangent& t : greeks_.tangents) {
    const AssetStep<double>& a = assets[static_cast<std::size_t>(t.asset)];
    tangents.push_back({t.asset, t.vol, t.score, 1.0 / std::exp(a.log_spot), a.carry + 0.5 * a.vol * a.vol, a.vol});
  }
  std::vector<int> term_begin(greeks_.scenarios.size() + 2, 0);
  for (const GreekTerm& t : greeks_.terms) ++term_begin[static_cast<std::size_t>(t.scenario) + 1];
  for (std::size_t c = 1; c < term_begin.size(); ++c) term_begin[c] += term_begin[c - 1];

  // Shifts: each payoff (Greek) on the path of all-zero normals (of each
  // scenario), in double on the host, so every backend and precision
  // shifts by the same values.
  {
    const std::size_t cells = static_cast<std::size_t>(steps + 1) * static_cast<std::size_t>(n_assets);
    std::vector<double> x(cells), var(cells);
    auto zero = [] { return 0.0; };
    auto zero_path = [&](int c) {
      for (int a = 0; a < n_assets; ++a) {
        const AssetStep<double>& as = assets[static_cast<std::size_t>(c * n_assets + a)];
        double xa = as.log_spot, va = as.v0;
        x[static_cast<std::size_t>(a)] = xa;
        for (int k = 0; k < steps; ++k) {
          const auto kk = static_cast<std::size_t>(k), ck = static_cast<std::size_t>(c * steps + k);
          var[kk * static_cast<std::size_t>(n_assets) + static_cast<std::size_t>(a)] =
              kernels::pricing::step_asset(as, grid.dt[ck], grid.sqrt_dt[ck], 0.0, xa, va, zero);
          x[(kk + 1) * static_cast<std::size_t>(n_assets) + static_cast<std::size_t>(a)] = xa;
        }
      }
      return PathView<double>{x.data(), var.data(), 1, n_assets, steps, fix_steps.data(), weights.data(),
                              grid.discount_at.data() + c * steps, table.data()};
    };
    const PathView<double> mv = zero_path(0);
    for (std::size_t q = 0; q < n_payoffs; ++q) {
      double shift = kernels::pricing::path_payoff(specs[q], mv);
      if (slot_beta[q] != 0.0) shift -= slot_beta[q] * (kernels::pricing::path_payoff(controls[q], mv) - control_mean[q]);
      shifts_.push_back(shift);
    }
    shifts_.resize(n_payoffs + greeks_.slots.size(), 0.0);
    for (const GreekTerm& t : greeks_.terms) {
      const PayoffSpec<double>& spec = specs[static_cast<std::size_t>(t.scenario) * n_payoffs + static_cast<std::size_t>(t.payoff)];
      const PathView<double> zv = zero_path(t.scenario);
      shifts_[n_payoffs + static_cast<std::size_t>(t.greek)] +=
          t.coef * (t.tangent < 0 ? kernels::pricing::path_payoff(spec, zv)
                                  : kernels::pricing::pathwise_payoff(spec, zv, g.grid.data(),
                                                                      tangents[static_cast<std::size_t>(t.tangent)]));
    }
  }

  auto build = [&](auto& data, auto zero) {
    using Real = decltype(zero);
    using D = std::remove_reference_t<decltype(*data)>;
    data = std::make_unique<D>();
    data->max_blocks = max_blocks;
    std::vector<AssetStep<Real>> real_assets;
    for (const auto& a : assets) real_assets.push_back(step_as<Real>(a));
    data->assets = upload(device, real_assets);
    data->cholesky = upload(device, as<Real>(chol));
    data->dt = upload(device, as<Real>(grid.dt));
    data->sqrt_dt = upload(device, as<Real>(grid.sqrt_dt));
    data->weights = upload(device, as<Real>(weights));
    data->fix_steps = upload(device, fix_steps);
    data->discount_at = upload(device, grid.discount_at);
    data->terms = upload(device, greeks_.terms);
    data->term_begin = upload(device, term_begin);
    std::vector<PathTangent<Real>> real_tangents;
    for (const auto& t : tangents) real_tangents.push_back({t.asset, t.vol, t.score, t.inv_spot, t.carry_plus, t.sigma});
    data->tangents = upload(device, real_tangents);
    data->times = upload(device, as<Real>(g.grid));
    data->shifts = upload(device, shifts_);
    data->exercise = upload(device, table);
    data->americans = upload(device, americans_);
    std::vector<PayoffSpec<Real>> real_specs;
    for (const auto& s : specs) real_specs.push_back(spec_as<Real>(s));
    data->payoffs = upload(device, real_specs);
    real_specs.clear();
    for (const auto& s : controls) real_specs.push_back(spec_as<Real>(s));
    data->controls = upload(device, real_specs);
    data->beta = upload(device, slot_beta);
    data->control_mean = upload(device, control_mean);
    const std::size_t lanes = static_cast<std::size_t>(max_blocks * kLanes);
    cells_ = lanes * (static_cast<std::size_t>(steps) + 1) * static_cast<std::size_t>(n_assets) * (p.antithetic ? 2 : 1);
    path_doubles_ = (2 * cells_ * sizeof(Real) + sizeof(double) - 1) / sizeof(double);
    work_doubles_ = path_doubles_ + lanes * greeks_.slots.size();
    const std::size_t slots = (n_payoffs + greeks_.slots.size()) * static_cast<std::size_t>(p.replicates);
    lane_doubles_ = lanes * slots * kMoments;
    block_lane_doubles_ = static_cast<std::size_t>(kLanes) * slots * kMoments;
    block_doubles_ = static_cast<std::size_t>(max_blocks) * slots * kMoments;
    auto& k = data->kernel;
    k.key = rng::philox_key(p.seed);
    k.steps = steps;
    k.n_assets = n_assets;
    k.antithetic = p.antithetic;
    k.correlated = correlated;
    k.assets = data->assets.data();
    k.cholesky = data->cholesky.data();
    k.dt = data->dt.data();
    k.sqrt_dt = data->sqrt_dt.data();
    k.fix_steps = data->fix_steps.data();
    k.weights = data->weights.data();
    k.discount_at = data->discount_at.data();
    k.exercise = data->exercise.data();
    k.payoffs = data->payoffs.data();
    k.shifts = data->shifts.data();
    k.n_payoffs = static_cast<int>(n_payoffs);
    k.n_scenarios = static_cast<int>(greeks_.scenarios.size());
    k.n_greeks = static_cast<int>(greeks_.slots.size());
    k.terms = data->terms.data();
    k.term_begin = data->term_begin.data();
    k.tangents = data->tangents.data();
    k.times = data->times.data();
    k.replicates = p.replicates;
    k.controls = data->controls.data();
    k.beta = data->beta.data();
    k.control_mean = data->control_mean.data();
    if (p.sobol) {
      const int dims = steps * n_assets;
      std::vector<std::uint32_t> seeds;
      for (int r = 0; r < p.replicates; ++r) {
        for (int d = 0; d < dims; ++d) {
          const auto ctr = rng::philox_counter(static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(d));
          seeds.push_back(rng::philox4x32_10(ctr, rng::philox_key(p.seed)).v[0]);
        }
      }
      data->directions = upload(device, sobol_direction_table(dims));
      data->scramble = upload(device, seeds);
      data->bridge = upload(device, brownian_bridge_plan(g.grid));
      k.sobol = true;
      k.directions = data->directions.data();
      k.scramble = data->scramble.data();
      k.bridge = data->bridge.data();
    }
  };
  if (precision == Precision::fp32) {
    build(fp32_, 0.0f);
  } else {
    build(fp64_, 0.0);
  }
}

PathGroupRun::~PathGroupRun() = default;
PathGroupRun::PathGroupRun(PathGroupRun&&) noexcept = default;

namespace {

template <class Real, class Data>
void compute_group(Data& data, const Device& device, std::int64_t first, std::int64_t nb,
                   std::int64_t n_samples, std::size_t cells, std::size_t path_doubles, GroupScratch& scratch,
                   std::vector<double>& out, const GroupSlices& slices, std::size_t block_lanes) {
  auto kernel = data.kernel;
  kernel.paths = reinterpret_cast<Real*>(scratch.work.data());
  kernel.variance = kernel.paths + cells;
  kernel.greek_acc = scratch.work.data() + path_doubles;
  kernel.lanes = scratch.lanes.data();
  kernel.slice_begin = slices.begin;
  kernel.slice_end = slices.end;
  // One moment slot per payoff (then Greek) and replicate.
  const std::int64_t n_payoffs = std::int64_t{kernel.n_payoffs + kernel.n_greeks} * kernel.replicates;
  // A cut block continues the lane moments of its earlier slices.
  if (slices.lanes != nullptr && slices.begin > 0) scratch.lanes.copy_from_host(slices.lanes, block_lanes);
  out.assign(slices.last ? static_cast<std::size_t>(n_payoffs * nb * kMoments) : 0, 0.0);
  std::vector<double> piece_out;
  for (std::int64_t off = 0; off < nb; off += data.max_blocks) {
    const std::int64_t n = std::min(data.max_blocks, nb - off);
    kernel.first_block = first + off;
    kernel.n_samples = n_samples;
    kernel.n_lanes = n * kLanes;
    parallel_for(device, n * kLanes, kernel);   // the host's batched kernel: PathGroupKernel::host_for
    if (!slices.last) {
      scratch.lanes.copy_to_host(slices.lanes, block_lanes);
      return;
    }
    parallel_for(device, n_payoffs * n, GroupLaneTree{scratch.lanes.data(), scratch.blocks.data(), n * kLanes, n});
    piece_out.resize(static_cast<std::size_t>(n_payoffs * n * kMoments));
    scratch.blocks.copy_to_host(piece_out.data(), piece_out.size());
    for (std::int64_t j = 0; j < n_payoffs; ++j) {
      std::copy_n(piece_out.begin() + j * n * kMoments, n * kMoments, out.begin() + (j * nb + off) * kMoments);
    }
  }
}

// The regression states of slices [rb, re) of blocks [first, first + nb),
// in launches of the group's size, copied to the host in sample order.
template <class Real, class Data>
void states_of(Data& data, const Device& device, Buffer<double>& work, Buffer<double>& states, std::int64_t first,
               std::int64_t nb, int rb, int re, std::int64_t n_samples, std::size_t cells, int n_americans, int row,
               double* out, std::int64_t out_first) {
  using kernels::pricing::kSamplesPerBlock;
  using kernels::pricing::slice_window;
  const std::int64_t per_launch = data.max_blocks * kSamplesPerBlock;
  if (work.size() == 0) work = Buffer<double>(device, (2 * cells * sizeof(Real) + sizeof(double) - 1) / sizeof(double));
  if (states.size() == 0) states = Buffer<double>(device, static_cast<std::size_t>(per_launch * row));
  ExerciseStates<Real> k{data.kernel, data.americans.data(), n_americans, row, 0, states.data()};
  k.paths.paths = reinterpret_cast<Real*>(work.data());
  k.paths.variance = k.paths.paths + cells;
  k.paths.n_samples = n_samples;
  k.paths.slice_begin = rb;
  k.paths.slice_end = re;
  for (std::int64_t off = 0; off < nb; off += data.max_blocks) {
    const std::int64_t n = std::min(data.max_blocks, nb - off);
    k.paths.first_block = first + off;
    k.paths.n_lanes = n * kLanes;
    // Whole blocks (or the slices of one): their samples are contiguous.
    k.first_sample = slice_window(first + off, n_samples, rb, re).lo;
    const std::int64_t last = slice_window(first + off + n - 1, n_samples, rb, re).hi;
    if (last <= k.first_sample) continue;
    parallel_for(device, n * kLanes, k);
    states.copy_to_host(out + (k.first_sample - out_first) * row,
                        static_cast<std::size_t>((last - k.first_sample) * row));
  }
}

}  // namespace

void PathGroupRun::exercise_states(std::int64_t first, std::int64_t nb, std::int64_t n_samples, int slice_begin,
                                   int slice_end, double* out, std::int64_t out_first) {
  const int n = static_cast<int>(americans_.size());
  if (fp32_) {
    states_of<float>(*fp32_, device_, state_work_, state_rows_, first, nb, slice_begin, slice_end, n_samples, cells_,
                     n, exercise_row_, out, out_first);
  } else {
    states_of<double>(*fp64_, device_, state_work_, state_rows_, first, nb, slice_begin, slice_end, n_samples, cells_,
                      n, exercise_row_, out, out_first);
  }
}

void PathGroupRun::compute(std::int64_t first, std::int64_t nb, std::int64_t n_samples, GroupScratch& scratch,
                           std::vector<double>& out, const GroupSlices& slices) {
  if (fp32_) {
    compute_group<float>(*fp32_, device_, first, nb, n_samples, cells_, path_doubles_, scratch, out, slices,
                         block_lane_doubles_);
  } else {
    compute_group<double>(*fp64_, device_, first, nb, n_samples, cells_, path_doubles_, scratch, out, slices,
                          block_lane_doubles_);
  }
}

}  // namespace strata::pricing
