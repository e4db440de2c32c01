#include "models/pricing/path_group_run.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "engine/backend/buffer.hpp"
#include "models/pricing/kernels.hpp"
#include "kernels/pricing/closed_forms.hpp"
#include "kernels/pricing/exercise_states.hpp"
#include "kernels/pricing/path_group.hpp"
#include "kernels/rng/philox.hpp"
#include "models/pricing/brownian_bridge_plan.hpp"
#include "models/pricing/control_variates.hpp"
#include "models/pricing/longstaff_schwartz.hpp"
#include "models/pricing/sobol_directions.hpp"

namespace strata::pricing {

using namespace kernels::pricing;

namespace {

// In PayoffKind's order.
PayoffKind kind_of(const std::string& type) {
  const std::string kinds[] = {"european", "digital", "asian", "barrier", "lookback", "basket", "american"};
  const auto k = std::find(kinds, std::end(kinds), type) - kinds;
  return k == std::ssize(kinds) ? PayoffKind::european : static_cast<PayoffKind>(k);
}

template <class T>
Buffer<T> upload(const Device& d, const std::vector<T>& v) {
  Buffer<T> b(d, std::max<std::size_t>(1, v.size()));
  b.copy_from_host(v.data(), v.size());
  return b;
}

AssetStep<double> asset_step(const Portfolio& p, const Asset& a) {
  const AssetModel model = a.model == "heston" ? (a.qe ? AssetModel::heston_qe : AssetModel::heston_full_truncation)
                           : a.model == "merton" ? AssetModel::merton
                                                 : AssetModel::gbm;
  // Merton's compensated drift: E[S_T] = S_0 e^{(r - q) T}.
  const double jumps = model == AssetModel::merton
                           ? a.jump_intensity * (std::exp(a.jump_mean + 0.5 * a.jump_vol * a.jump_vol) - 1.0)
                           : 0.0;
  return {.model = model, .log_spot = std::log(a.spot), .carry = p.rate - a.dividend - jumps, .vol = a.vol,
          .v0 = a.v0, .kappa = a.kappa, .theta = a.theta, .xi = a.xi, .rho = a.rho,
          .jump_intensity = a.jump_intensity, .jump_mean = a.jump_mean, .jump_vol = a.jump_vol};
}

// A typical volatility for the lookback's continuity correction.
double typical_vol(const Asset& a) { return a.model == "heston" ? std::sqrt(a.theta) : a.vol; }

// An instrument's payoff but for its places in the group's weight and
// fixing tables (weight_begin, fix_begin, fixings), which the caller sets.
PayoffSpec<double> payoff_spec(const Portfolio& p, const Instrument& in, int steps) {
  // BGK shift with the grid's mean step (the grid is uniform unless
  // fixings refine it).
  const double lookback_shift = in.type == "lookback" && in.continuous
                                    ? kernels::kBgkBeta * typical_vol(p.assets[static_cast<std::size_t>(in.asset)]) *
                                          std::sqrt(in.maturity / steps)
                                    : 0.0;
  return {.kind = kind_of(in.type), .asset = 0,   // single-asset instruments have single-asset groups
          .basket = in.basket == "max" ? BasketKind::max : in.basket == "min" ? BasketKind::min : BasketKind::average,
          .weight_begin = 0, .call = in.call, .geometric = in.geometric, .up = in.kind.up,
          .knock_in = in.kind.knock_in, .continuous = in.continuous, .floating = in.floating, .fix_begin = 0,
          .fixings = 0, .strike = in.strike, .cash = in.cash, .rebate = in.rebate,
          .log_barrier = in.barrier > 0 ? std::log(in.barrier) : 0.0, .lookback_shift = lookback_shift,
          .discount = std::exp(-p.rate * in.maturity), .coef_begin = 0, .degree = 0, .laguerre = false};
}

// Per step of a grid: dt, sqrt(dt) and the discount factor e^{-r t_k}.
struct GridSteps {
  std::vector<double> dt, sqrt_dt, discount_at;
};

// Appends the grid's steps (a bumped scenario's after the base's).
void add_grid_steps(GridSteps& out, const std::vector<double>& grid, double rate) {
  double prev = 0.0;
  for (double t : grid) {
    out.dt.push_back(t - prev);
    out.sqrt_dt.push_back(std::sqrt(t - prev));
    out.discount_at.push_back(std::exp(-rate * t));
    prev = t;
  }
}

// One precision's copy of a host vector: numbers converted, kernel structs
// by their own as<Real>() (no field copied by position).
template <class Real, class T>
auto as(const std::vector<T>& v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return std::vector<Real>(v.begin(), v.end());
  } else {
    std::vector<decltype(v.front().template as<Real>())> out;
    for (const T& x : v) out.push_back(x.template as<Real>());
    return out;
  }
}

// The group on the host in double, one struct per part of PathGroupKernel
// (path_group.hpp), each from its own builder; bumped scenario c's assets,
// grid and payoffs follow the base's.
struct HostPaths {
  std::uint64_t seed = 0;
  int steps = 0, n_assets = 0, replicates = 1;
  bool antithetic = false, correlated = false;
  std::vector<AssetStep<double>> assets{};   // [scenario][asset]
  std::vector<double> cholesky{};
  GridSteps grid{};                          // [scenario][step]
};

HostPaths host_paths(const Portfolio& p, const PathGroup& g, const std::vector<Bump>& scenarios) {
  HostPaths h{.seed = p.seed, .steps = static_cast<int>(g.grid.size()), .n_assets = static_cast<int>(g.assets.size()),
              .replicates = p.replicates, .antithetic = p.antithetic, .cholesky = cholesky_of(p, g.assets)};
  for (int i = 0; i < h.n_assets; ++i) {
    for (int j = 0; j < i; ++j) h.correlated = h.correlated || h.cholesky[static_cast<std::size_t>(i * h.n_assets + j)] != 0.0;
  }
  for (int a : g.assets) h.assets.push_back(asset_step(p, p.assets[static_cast<std::size_t>(a)]));
  add_grid_steps(h.grid, g.grid, p.rate);
  for (const Bump& b : scenarios) {
    const Portfolio q = bumped_portfolio(p, g, b);
    for (int a : g.assets) h.assets.push_back(asset_step(q, q.assets[static_cast<std::size_t>(a)]));
    add_grid_steps(h.grid, bumped_grid(g, b), q.rate);
  }
  return h;
}

// One moment slot per payoff (times the replicates): an instrument's, or
// in the pilot three per controlled instrument (control_variates.hpp).
struct HostPayoffs {
  std::vector<PayoffSpec<double>> specs;   // [scenario][slot]
  std::vector<PayoffSpec<double>> controls;
  std::vector<double> beta, control_mean;
  std::vector<int> fix_steps;
  std::vector<double> weights, exercise;
  std::vector<int> americans;   // slots of the group's Americans
  int exercise_row = 0;         // their exercise dates, summed
  std::vector<bool> controlled;   // per instrument
};

HostPayoffs host_payoffs(const Portfolio& p, const PathGroup& g, const std::vector<double>& betas, bool pilot,
                         const std::vector<double>& exercise, const std::vector<Bump>& scenarios) {
  HostPayoffs h;
  const std::vector<int> offsets = exercise_offsets(p, g);
  h.exercise = exercise.empty() ? std::vector<double>(static_cast<std::size_t>(offsets.back()), 0.0) : exercise;
  const int steps = static_cast<int>(g.grid.size());
  for (std::size_t j = 0; j < g.instruments.size(); ++j) {
    const Instrument& in = p.instruments[g.instruments[j]];
    PayoffSpec<double> s = payoff_spec(p, in, steps);
    s.weight_begin = static_cast<int>(h.weights.size());
    h.weights.insert(h.weights.end(), in.weights.begin(), in.weights.end());
    if (uses_fixings(in)) {
      s.fix_begin = static_cast<int>(h.fix_steps.size());
      s.fixings = in.fixings;
      for (int k : fixing_steps(in, g.grid)) h.fix_steps.push_back(k);
    }
    s.coef_begin = std::max(0, offsets[j]);
    s.degree = in.degree;
    s.laguerre = in.laguerre;
    if (!pilot && s.kind == PayoffKind::american) {
      h.americans.push_back(static_cast<int>(h.specs.size()));
      h.exercise_row += in.fixings;
    }
    const std::optional<ControlVariate> c = control_for(p, in, s, h.weights);
    h.controlled.push_back(c.has_value());
    auto slot = [&](const PayoffSpec<double>& payoff, const PayoffSpec<double>& control, double beta, double mean) {
      h.specs.push_back(payoff);
      h.controls.push_back(control);
      h.beta.push_back(beta);
      h.control_mean.push_back(mean);
    };
    if (!pilot) {
      slot(s, c ? c->spec : s, c && j < betas.size() ? betas[j] : 0.0, c ? c->mean : 0.0);
    } else if (c) {
      slot(s, s, 0.0, 0.0);
      slot(c->spec, c->spec, 0.0, 0.0);
      slot(s, c->spec, -1.0, c->mean);
    }
  }
  // Each scenario's payoffs: the base's with what the bump moves in them
  // (the discount: rate, maturity; the lookback's shift: vol, maturity);
  // all else, tables and policies, held fixed.
  const std::size_t n_payoffs = h.specs.size();
  for (const Bump& b : scenarios) {
    const Portfolio q = bumped_portfolio(p, g, b);
    for (std::size_t j = 0; j < n_payoffs; ++j) {
      const PayoffSpec<double> moved = payoff_spec(q, q.instruments[g.instruments[j]], steps);
      PayoffSpec<double> s = h.specs[j];
      s.discount = moved.discount;
      s.lookback_shift = moved.lookback_shift;
      h.specs.push_back(s);
    }
  }
  return h;
}

// Pathwise tangents of the base assets (pathwise.hpp).
std::vector<PathTangent<double>> host_tangents(const GreekPlan& plan, const HostPaths& paths) {
  std::vector<PathTangent<double>> out;
  for (const Tangent& t : plan.tangents) {
    const AssetStep<double>& a = paths.assets[static_cast<std::size_t>(t.asset)];
    out.push_back({.asset = t.asset, .vol = t.vol, .score = t.score, .inv_spot = 1.0 / std::exp(a.log_spot),
                   .carry_plus = a.carry + 0.5 * a.vol * a.vol, .sigma = a.vol});
  }
  return out;
}

// Shifts: each payoff (Greek) on the path of all-zero normals (of each
// scenario), in double on the host, so every backend and precision
// shifts by the same values.
std::vector<double> zero_path_shifts(const HostPaths& paths, const HostPayoffs& payoffs,
                                     const std::vector<PathTangent<double>>& tangents, const GreekPlan& plan,
                                     const std::vector<double>& times) {
  const int steps = paths.steps, n_assets = paths.n_assets;
  const std::size_t cells = static_cast<std::size_t>(steps + 1) * static_cast<std::size_t>(n_assets);
  std::vector<double> x(cells), var(cells);
  const double zero = 0.0;
  auto zero_path = [&](int c) {
    for (int a = 0; a < n_assets; ++a) {
      const AssetStep<double>& as = paths.assets[static_cast<std::size_t>(c * n_assets + a)];
      double va = as.v0;
      x[static_cast<std::size_t>(a)] = as.log_spot;
      for (int k = 0; k < steps; ++k) {
        const auto at = static_cast<std::size_t>(k * n_assets + a), next = at + static_cast<std::size_t>(n_assets);
        const auto ck = static_cast<std::size_t>(c * steps + k);
        step_lanes<1, rng::ScalarMath>(as, paths.grid.dt[ck], paths.grid.sqrt_dt[ck], &zero, &zero, &zero, 1.0, &x[at],
                                       &x[next], &va, &var[at]);
      }
    }
    return PathView<double>{x.data(), var.data(), 1, n_assets, steps, payoffs.fix_steps.data(), payoffs.weights.data(),
                            paths.grid.discount_at.data() + c * steps, payoffs.exercise.data()};
  };
  const std::size_t n_payoffs = payoffs.beta.size();
  std::vector<double> shifts;
  const PathView<double> mv = zero_path(0);
  for (std::size_t q = 0; q < n_payoffs; ++q) {
    double shift = kernels::pricing::path_payoff(payoffs.specs[q], mv);
    if (payoffs.beta[q] != 0.0)
      shift -= payoffs.beta[q] * (kernels::pricing::path_payoff(payoffs.controls[q], mv) - payoffs.control_mean[q]);
    shifts.push_back(shift);
  }
  shifts.resize(n_payoffs + plan.slots.size(), 0.0);
  for (const GreekTerm& t : plan.terms) {
    const PayoffSpec<double>& spec =
        payoffs.specs[static_cast<std::size_t>(t.scenario) * n_payoffs + static_cast<std::size_t>(t.payoff)];
    const PathView<double> zv = zero_path(t.scenario);
    shifts[n_payoffs + static_cast<std::size_t>(t.greek)] +=
        t.coef * (t.tangent < 0 ? kernels::pricing::path_payoff(spec, zv)
                                : kernels::pricing::pathwise_payoff(spec, zv, times.data(),
                                                                    tangents[static_cast<std::size_t>(t.tangent)]));
  }
  return shifts;
}

// Each part on the run's device in Real: its buffers and the kernel's view
// of them.
template <class Real>
struct DevicePaths {
  Buffer<AssetStep<Real>> assets;
  Buffer<Real> cholesky, dt, sqrt_dt;
  Buffer<double> discount_at;

  GroupPaths<Real> build(const Device& d, const HostPaths& h) {
    assets = upload(d, as<Real>(h.assets));
    cholesky = upload(d, as<Real>(h.cholesky));
    dt = upload(d, as<Real>(h.grid.dt));
    sqrt_dt = upload(d, as<Real>(h.grid.sqrt_dt));
    discount_at = upload(d, h.grid.discount_at);
    return {.key = rng::philox_key(h.seed), .steps = h.steps, .n_assets = h.n_assets, .antithetic = h.antithetic,
            .correlated = h.correlated, .replicates = h.replicates, .assets = assets.data(),
            .cholesky = cholesky.data(), .dt = dt.data(), .sqrt_dt = sqrt_dt.data(), .discount_at = discount_at.data()};
  }
};

template <class Real>
struct DevicePayoffs {
  Buffer<PayoffSpec<Real>> specs, controls;
  Buffer<int> fix_steps;
  Buffer<Real> weights;
  Buffer<double> exercise, shifts, beta, control_mean;

  GroupPayoffs<Real> build(const Device& d, const HostPayoffs& h, const std::vector<double>& all_shifts) {
    specs = upload(d, as<Real>(h.specs));
    controls = upload(d, as<Real>(h.controls));
    fix_steps = upload(d, h.fix_steps);
    weights = upload(d, as<Real>(h.weights));
    exercise = upload(d, h.exercise);
    shifts = upload(d, all_shifts);
    beta = upload(d, h.beta);
    control_mean = upload(d, h.control_mean);
    return {.specs = specs.data(), .n_payoffs = static_cast<int>(h.beta.size()), .fix_steps = fix_steps.data(),
            .weights = weights.data(), .exercise = exercise.data(), .shifts = shifts.data(), .beta = beta.data(),
            .controls = controls.data(), .control_mean = control_mean.data()};
  }
};

template <class Real>
struct DeviceGreeks {
  Buffer<GreekTerm> terms;
  Buffer<int> term_begin;
  Buffer<PathTangent<Real>> tangents;
  Buffer<Real> times;
  Buffer<SpotShift> spot_shifts;
  Buffer<PayoffSpec<double>> specs;
  Buffer<double> weights;
  Buffer<int> thread_of;

  // thread_of: per scenario its thread group (a thread a sample), or empty.
  GroupGreeks<Real> build(const Device& d, const GreekPlan& plan, const std::vector<PathTangent<double>>& host,
                          const std::vector<double>& grid, const HostPayoffs& payoffs, const std::vector<int>& groups) {
    // Scenario c's terms are [term_begin[c], term_begin[c + 1]).
    std::vector<int> begin(plan.scenarios.size() + 2, 0);
    for (const GreekTerm& t : plan.terms) ++begin[static_cast<std::size_t>(t.scenario) + 1];
    for (std::size_t c = 1; c < begin.size(); ++c) begin[c] += begin[c - 1];
    // Spot bumps move the base path (plan_greeks puts them first).
    std::vector<SpotShift> shifts{{-1, 0.0}};
    for (const Bump& b : plan.scenarios) {
      shifts.push_back(b.input == BumpedInput::spot ? SpotShift{b.asset, b.log_offset} : SpotShift{-1, 0.0});
    }
    terms = upload(d, plan.terms);
    term_begin = upload(d, begin);
    tangents = upload(d, as<Real>(host));
    times = upload(d, as<Real>(grid));
    spot_shifts = upload(d, shifts);
    specs = upload(d, payoffs.specs);
    weights = upload(d, payoffs.weights);
    thread_of = upload(d, groups);
    return {.n_scenarios = static_cast<int>(plan.scenarios.size()),
            .n_greeks = static_cast<int>(plan.slots.size()),
            .terms = terms.data(),
            .term_begin = term_begin.data(),
            .tangents = tangents.data(),
            .times = times.data(),
            .spot_shifts = spot_shifts.data(),
            .specs = specs.data(),
            .weights = weights.data(),
            .thread_of = groups.empty() ? nullptr : thread_of.data()};
  }
};

// Sobol': direction numbers, each replicate's Owen seeds, the bridge plan.
struct DeviceSobol {
  Buffer<std::uint32_t> directions, scramble;
  Buffer<BridgeStep> bridge;

  GroupSobol build(const Device& d, const Portfolio& p, const PathGroup& g) {
    if (!p.sobol) return GroupSobol{};
    const int dims = static_cast<int>(g.grid.size() * g.assets.size());
    std::vector<std::uint32_t> seeds;
    for (int r = 0; r < p.replicates; ++r) {
      for (int k = 0; k < dims; ++k) {
        const auto ctr = rng::philox_counter(static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(k));
        seeds.push_back(rng::philox4x32_10(ctr, rng::philox_key(p.seed)).v[0]);
      }
    }
    directions = upload(d, sobol_direction_table(dims));
    scramble = upload(d, seeds);
    bridge = upload(d, brownian_bridge_plan(g.grid));
    return GroupSobol{directions.data(), scramble.data(), bridge.data()};
  }
};

}  // namespace

// Whether a payoff of the group reads the paths' step variances: a
// continuously monitored barrier's crossing probability (payoffs.hpp).
bool reads_variance(const HostPayoffs& payoffs) {
  auto reads = [](const PayoffSpec<double>& s) { return s.kind == PayoffKind::barrier && s.continuous; };
  return std::any_of(payoffs.specs.begin(), payoffs.specs.end(), reads) ||
         std::any_of(payoffs.controls.begin(), payoffs.controls.end(), reads);
}

// The device work of one sample of one scenario (the average over the base
// and the Greeks' scenarios), for the cost model (kernels/core/work.hpp;
// op costs from kernels/core/op_costs.hpp): per step
// and asset its normals (Philox and Box-Muller, shared by the antithetic
// copies) and each copy's step, the path written and read back once, and
// each payoff's reads and functions on each copy.
//
// Also, where a thread a sample splits a sample's scenarios into thread
// groups (thread_of, or empty), the work of the busiest group's thread for
// one sample (*busiest): all of a launch's threads are resident at once,
// so the launch lasts as long as its longest thread.
template <class Real>
kernels::Work scenario_work(const HostPaths& paths, const HostPayoffs& payoffs, const GreekPlan& greeks,
                            const std::vector<int>& thread_of, kernels::Work* busiest) {
  using C = kernels::OpCost<Real>;
  const double copies = paths.antithetic ? 2 : 1, steps = paths.steps, n = paths.n_assets;
  double normals = n, step_slots = 0;
  for (int a = 0; a < paths.n_assets; ++a) {
    switch (paths.assets[static_cast<std::size_t>(a)].model) {
      case AssetModel::gbm: step_slots += 6; break;
      case AssetModel::heston_qe: step_slots += 2 * C::exp + 2 * C::sqrt + 2 * C::div + 25, normals += 1; break;
      case AssetModel::heston_full_truncation: step_slots += C::exp + 2 * C::sqrt + 15, normals += 1; break;
      case AssetModel::merton: step_slots += C::sqrt + 2 * C::div + 20, normals += 2; break;
    }
  }
  if (paths.correlated) step_slots += n * (n + 1) / 2;
  const double per_call = rng::NormalsPerCall<Real>::value;
  kernels::Work per_step{0, 2 * (normals * (C::log + C::sqrt + C::sincos) / 2 + copies * step_slots),
                normals * kernels::kPhiloxIntOps / per_call};
  // x written (the thread keeps the step's own), the variance too where a
  // payoff reads it.
  const bool variance = reads_variance(payoffs);
  per_step.bytes = copies * n * (variance ? 2 : 1) * static_cast<double>(sizeof(Real));
  // A payoff's instructions, and the cells it reads: each step's, or its
  // fixings' (a basket and an American each asset's).
  double payoff_slots = 0, payoff_cells = 0;
  for (const PayoffSpec<double>& s : payoffs.specs) {
    const bool every_step = s.kind == PayoffKind::barrier || s.kind == PayoffKind::lookback;
    const double fixings = s.kind == PayoffKind::asian || s.kind == PayoffKind::american ? s.fixings : 1;
    const double assets = s.kind == PayoffKind::basket || s.kind == PayoffKind::american ? n : 1;
    payoff_slots += every_step ? steps * (s.continuous ? C::exp + 6 : 4) : fixings * (C::exp + 4 + 2 * s.degree);
    payoff_cells += every_step ? steps * (s.continuous && s.kind == PayoffKind::barrier ? 2 : 1) : fixings * assets;
  }
  const double specs = static_cast<double>(std::max<std::size_t>(1, payoffs.specs.size()));
  const double per_payoff = payoff_slots / specs, per_payoff_bytes = payoff_cells / specs * sizeof(Real);
  // Per scenario: its simulation (a re-simulated one and the base; a spot
  // bump reads the base path moved instead), and its valuations, the base's
  // payoffs and the Greek terms but those that reuse the term before
  // (same_values). An American reads the path once for all the spot bumps
  // (PathGroupKernel::moved_values): the first bump's valuation counts the
  // reads, the others' their instructions alone.
  const kernels::Work simulated = per_step * steps, valuation{copies * per_payoff_bytes, 2 * copies * per_payoff, 0};
  const kernels::Work instructions{0, valuation.flops, 0};
  std::vector<bool> read_moved(payoffs.beta.size(), false);
  std::vector<kernels::Work> scenario(greeks.scenarios.size() + 1);
  scenario[0] = simulated + valuation * static_cast<double>(payoffs.beta.size());
  for (std::size_t c = 1; c < scenario.size(); ++c) {
    if (greeks.scenarios[c - 1].input != BumpedInput::spot) scenario[c] = simulated;
  }
  int payoff = -1, tangent = -1;
  for (std::size_t t = 0; t < greeks.terms.size(); ++t) {
    const kernels::pricing::GreekTerm& term = greeks.terms[t];
    const bool first = t == 0 || greeks.terms[t - 1].scenario != term.scenario;
    if (same_values(term, first, payoff, tangent)) continue;
    const auto c = static_cast<std::size_t>(term.scenario), q = static_cast<std::size_t>(term.payoff);
    const bool spot = c > 0 && greeks.scenarios[c - 1].input == BumpedInput::spot;
    const bool one_pass = spot && payoffs.specs[q].kind == PayoffKind::american, shared = one_pass && read_moved[q];
    if (one_pass) read_moved[q] = true;
    scenario[c] = scenario[c] + (shared ? instructions : valuation);
  }
  if (busiest != nullptr && !thread_of.empty()) {
    std::vector<kernels::Work> group(static_cast<std::size_t>(*std::max_element(thread_of.begin(), thread_of.end())) +
                                     1);
    for (std::size_t c = 0; c < scenario.size(); ++c) {
      group[static_cast<std::size_t>(thread_of[c])] = group[static_cast<std::size_t>(thread_of[c])] + scenario[c];
    }
    // The busiest by its instructions and bytes at the H200's rates alike
    // (33.3 FP64 TFLOP/s against 3.9 TB/s: a byte weighs about 8 flops).
    auto weight = [](const kernels::Work& w) { return w.flops + 8 * w.bytes + w.int_ops; };
    *busiest = *std::max_element(group.begin(), group.end(),
                                 [&](const kernels::Work& x, const kernels::Work& y) { return weight(x) < weight(y); });
  }
  kernels::Work total{};
  for (const kernels::Work& w : scenario) total = total + w;
  return total * (1.0 / static_cast<double>(scenario.size()));
}

// The group on the run's device in Real.
template <class Real>
struct PathGroupRun::Data {
  DevicePaths<Real> paths;
  DevicePayoffs<Real> payoffs;
  DeviceGreeks<Real> greeks;
  DeviceSobol sobol;
  Buffer<int> americans;
  PathGroupKernel<Real> kernel{};
  std::int64_t max_blocks = 0;
};

namespace {

// Per scenario, the thread group that simulates it where a thread a sample
// splits a sample's scenarios: the base and the spot bumps (which move the
// base path) in group 0, each re-simulated scenario in a group of its own.
std::vector<int> thread_groups(const GreekPlan& plan) {
  std::vector<int> of{0};
  int next = 0;
  for (const Bump& b : plan.scenarios) of.push_back(b.input == BumpedInput::spot ? 0 : ++next);
  return of;
}

// What a launch of a group needs: its moment slots (the payoffs', then the
// Greeks', each times the replicates), the thread groups of a sample, the
// bytes of one path column (log prices and step variances of every asset,
// each Greek's value of the column's sample) and of one sample's values in
// a thread-a-sample launch (each payoff's, each Greek term's).
struct GroupSizes {
  std::size_t slots = 0, payoff_slots = 0;
  std::int64_t groups = 1;
  std::size_t column = 0, sample = 0;
};

GroupSizes group_sizes(const Portfolio& p, const PathGroup& g, const GreekPlan& plan, Precision precision,
                       std::size_t payoffs) {
  const auto replicates = static_cast<std::size_t>(p.replicates);
  const std::size_t real = precision == Precision::fp32 ? sizeof(float) : sizeof(double);
  const std::vector<int> groups = thread_groups(plan);
  return {.slots = (payoffs + plan.slots.size()) * replicates,
          .payoff_slots = payoffs * replicates,
          .groups = *std::max_element(groups.begin(), groups.end()) + 1,
          .column = 2 * (g.grid.size() + 1) * g.assets.size() * (p.antithetic ? 2 : 1) * real +
                    plan.slots.size() * sizeof(double),
          .sample = (payoffs + plan.terms.size()) * replicates * sizeof(double)};
}

// A launch's shape: a thread a lane (max_blocks * kLanes path columns), or,
// where those lanes would leave half a GPU idle, a thread a sample and
// thread group, with as many columns as the launch memory holds
// (wide_launch_bytes), each group's a multiple of the host's batch, at
// least twice the lanes' (else the lanes' shape, which makes one launch of
// a piece rather than several), and no more than the run's samples need. A
// thread-a-sample piece covers at most the blocks one launch's columns
// reach, so that the samples' values stay within a launch's columns' worth.
struct Shape {
  bool per_sample = false;
  std::int64_t columns = 0, blocks = 0;
};

Shape launch_shape(const Device& device, std::int64_t max_blocks, const GroupSizes& sizes, std::int64_t samples) {
  const std::int64_t lanes = max_blocks * kLanes;
  const Shape shape{false, lanes, max_blocks};
  if (!device.gpu_launches() || 2 * lanes > device.resident_threads) return shape;
  const std::int64_t groups = sizes.groups;
  const auto fit = static_cast<std::int64_t>(device.wide_launch_bytes() /
                                             (static_cast<std::size_t>(groups) * sizes.column + sizes.sample));
  // No more than the run's samples, nor than four times the threads the
  // device holds (more columns would only take memory).
  const std::int64_t most = std::min(
      {max_blocks * kSamplesPerBlock, (samples + kBatch - 1) / kBatch * kBatch, 4 * device.resident_threads / groups});
  const std::int64_t per_launch = std::min(fit, most) / kBatch * kBatch;
  if (per_launch * groups < 2 * lanes) return shape;
  return {true, per_launch * groups, std::min(max_blocks, (per_launch + kSamplesPerBlock - 1) / kSamplesPerBlock)};
}

std::size_t shape_bytes(const Shape& shape, const GroupSizes& sizes) {
  const std::size_t moments = sizes.slots * kMoments * sizeof(double);
  const auto blocks = static_cast<std::size_t>(shape.blocks);
  const std::size_t values = shape.per_sample ? blocks * kSamplesPerBlock * sizes.sample : 0;
  return static_cast<std::size_t>(shape.columns) * sizes.column + values + blocks * (kLanes + 1) * moments;
}

// A launch's threads over [0, threads) of a thread-a-sample pass (paths,
// the kernel's own): a launch per columns' worth of samples, the thread
// groups of each sample side by side.
template <class Real, class Kernel>
void sample_launches(const Device& device, const Kernel& kernel, GroupPaths<Real>& paths, std::int64_t threads,
                     std::int64_t columns) {
  const std::int64_t per_launch = columns / paths.thread_groups;
  for (std::int64_t t0 = 0; t0 < threads; t0 += per_launch) {
    paths.thread_begin = t0;
    paths.group_threads = std::min(per_launch, threads - t0);
    paths.n_lanes = paths.group_threads * paths.thread_groups;
    parallel_for(device, paths.n_lanes, kernel);
  }
}

}  // namespace

std::size_t PathGroupRun::bytes_per_block(const Portfolio& p, const PathGroup& g, Precision precision) {
  const GroupSizes sizes = group_sizes(p, g, plan_greeks(p, g, precision), precision, g.instruments.size());
  const std::size_t moments = sizes.slots * kMoments * sizeof(double);
  return static_cast<std::size_t>(kLanes) * (sizes.column + moments) + moments;
}

std::int64_t PathGroupRun::launch_blocks(const Portfolio& p, const PathGroup& g, Precision precision,
                                         const Device& device, std::int64_t chunk_blocks) {
  const auto fit = static_cast<std::int64_t>(device.launch_bytes() / bytes_per_block(p, g, precision));
  return std::clamp<std::int64_t>(fit, 1, std::max<std::int64_t>(1, chunk_blocks));
}

std::size_t PathGroupRun::launch_bytes(const Portfolio& p, const PathGroup& g, Precision precision,
                                       const Device& device, std::int64_t max_blocks, bool* per_sample) {
  const GroupSizes sizes = group_sizes(p, g, plan_greeks(p, g, precision), precision, g.instruments.size());
  const Shape shape = launch_shape(device, max_blocks, sizes, p.samples());
  if (per_sample != nullptr) *per_sample = shape.per_sample;
  return shape_bytes(shape, sizes);
}

PathGroupRun::PathGroupRun(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision,
                           std::int64_t max_blocks, const std::vector<double>& betas, bool pilot,
                           const std::vector<double>& exercise)
    : device_(device) {
  if (!pilot) greeks_ = plan_greeks(p, g, precision);
  const HostPaths paths = host_paths(p, g, greeks_.scenarios);
  const HostPayoffs payoffs = host_payoffs(p, g, betas, pilot, exercise, greeks_.scenarios);
  const std::vector<PathTangent<double>> tangents = host_tangents(greeks_, paths);
  shifts_ = zero_path_shifts(paths, payoffs, tangents, greeks_, g.grid);
  americans_ = payoffs.americans;
  exercise_row_ = payoffs.exercise_row;
  controlled_ = payoffs.controlled;

  const GroupSizes sizes = group_sizes(p, g, greeks_, precision, payoffs.beta.size());
  const Shape shape = launch_shape(device, max_blocks, sizes, p.samples());
  per_sample_ = shape.per_sample;
  columns_ = shape.columns;
  payoff_slots_ = sizes.payoff_slots;
  const std::vector<int> groups = per_sample_ && sizes.groups > 1 ? thread_groups(greeks_) : std::vector<int>{};
  const auto columns = static_cast<std::size_t>(shape.columns);
  const std::size_t real = precision == Precision::fp32 ? sizeof(float) : sizeof(double);
  cells_ = columns * (static_cast<std::size_t>(paths.steps) + 1) * static_cast<std::size_t>(paths.n_assets) *
           (p.antithetic ? 2 : 1);
  path_doubles_ = (2 * cells_ * real + sizeof(double) - 1) / sizeof(double);
  work_doubles_ = path_doubles_ + columns * greeks_.slots.size();
  values_offset_ = work_doubles_;
  if (per_sample_) {
    work_doubles_ += static_cast<std::size_t>(shape.blocks * kSamplesPerBlock) * (sizes.sample / sizeof(double));
  }
  const std::size_t lanes = static_cast<std::size_t>(shape.blocks * kLanes);
  lane_doubles_ = lanes * sizes.slots * kMoments;
  block_lane_doubles_ = static_cast<std::size_t>(kLanes) * sizes.slots * kMoments;
  block_doubles_ = static_cast<std::size_t>(shape.blocks) * sizes.slots * kMoments;

  auto build = [&](auto& data) {
    data = std::make_unique<typename std::remove_reference_t<decltype(data)>::element_type>();
    data->max_blocks = shape.blocks;
    data->kernel.paths = data->paths.build(device, paths);
    using Real = std::remove_cvref_t<decltype(*data->kernel.paths.dt)>;
    data->kernel.paths.per_scenario =
        scenario_work<Real>(paths, payoffs, greeks_, groups, &data->kernel.paths.per_thread);
    data->kernel.paths.per_sample = per_sample_;
    data->kernel.paths.thread_groups = per_sample_ ? static_cast<int>(sizes.groups) : 1;
    data->kernel.paths.store_variance = reads_variance(payoffs);
    data->kernel.payoffs = data->payoffs.build(device, payoffs, shifts_);
    data->kernel.greeks = data->greeks.build(device, greeks_, tangents, g.grid, payoffs, groups);
    data->kernel.sobol = data->sobol.build(device, p, g);
    data->americans = upload(device, americans_);
  };
  precision == Precision::fp32 ? build(fp32_) : build(fp64_);
}

PathGroupRun::~PathGroupRun() = default;
PathGroupRun::PathGroupRun(PathGroupRun&&) noexcept = default;

namespace {

// The window samples of blocks [first, first + nb) (slices [begin, end) of
// each) that lie before n_samples, rounded up to whole batches of the
// host's (kBatch): a thread-a-sample launch's threads.
std::int64_t live_threads(std::int64_t first, std::int64_t nb, std::int64_t n_samples, int begin, int end) {
  const std::int64_t per_block = std::int64_t{end - begin} * kSliceSamples;
  const SampleWindow last = slice_window(first + nb - 1, n_samples, begin, end);
  const std::int64_t live = (nb - 1) * per_block + std::max<std::int64_t>(0, last.hi - last.lo);
  return (live + kBatch - 1) / kBatch * kBatch;
}

}  // namespace

// The regression states of slices [slice_begin, slice_end) of blocks
// [first, first + nb), in launches of the group's size (a thread a lane, or
// a thread a sample), written on the device into out, a date's states
// consecutive.
void PathGroupRun::exercise_states(std::int64_t first, std::int64_t nb, std::int64_t n_samples, int slice_begin,
                                   int slice_end, double* out, std::int64_t out_first, std::int64_t out_stride) {
  const int row = exercise_row_;
  auto states = [&]<class Real>(Data<Real>& data) {
    if (state_work_.size() == 0)
      state_work_ = Buffer<double>(device_, (2 * cells_ * sizeof(Real) + sizeof(double) - 1) / sizeof(double));
    ExerciseStates<Real> k{data.kernel, data.americans.data(), static_cast<int>(americans_.size()), row, out_first,
                           out, out_stride};
    GroupPaths<Real>& paths = k.group.paths;
    paths.paths = reinterpret_cast<Real*>(state_work_.data());
    paths.variance = paths.paths + cells_;
    paths.n_samples = n_samples;
    paths.slice_begin = slice_begin;
    paths.slice_end = slice_end;
    if (per_sample_) {
      // The base scenario alone: a thread a sample.
      paths.first_block = first;
      paths.thread_groups = 1;
      sample_launches(device_, k, paths, live_threads(first, nb, n_samples, slice_begin, slice_end), columns_);
      return;
    }
    for (std::int64_t off = 0; off < nb; off += data.max_blocks) {
      const std::int64_t n = std::min(data.max_blocks, nb - off);
      paths.first_block = first + off;
      paths.n_lanes = n * kLanes;
      parallel_for(device_, n * kLanes, k);
    }
  };
  fp32_ ? states(*fp32_) : states(*fp64_);
}

void PathGroupRun::compute(std::int64_t first, std::int64_t nb, std::int64_t n_samples, GroupScratch& scratch,
                           std::vector<double>& out, const GroupSlices& slices) {
  auto group = [&]<class Real>(Data<Real>& data) {
    auto kernel = data.kernel;
    kernel.paths.paths = reinterpret_cast<Real*>(scratch.work.data());
    kernel.paths.variance = kernel.paths.paths + cells_;
    kernel.greeks.acc = scratch.work.data() + path_doubles_;
    kernel.payoffs.lanes = scratch.lanes.data();
    kernel.paths.slice_begin = slices.begin;
    kernel.paths.slice_end = slices.end;
    kernel.paths.n_samples = n_samples;
    // One moment slot per payoff (then Greek) and replicate.
    const std::int64_t n_payoffs =
        std::int64_t{kernel.payoffs.n_payoffs + kernel.greeks.n_greeks} * kernel.paths.replicates;
    if (per_sample_) {
      kernel.payoffs.values = scratch.work.data() + values_offset_;
      kernel.payoffs.value_stride = data.max_blocks * kSamplesPerBlock;
      kernel.greeks.term_values =
          kernel.payoffs.values + payoff_slots_ * static_cast<std::size_t>(kernel.payoffs.value_stride);
    }
    // A cut block continues the lane moments of its earlier slices.
    if (slices.lanes != nullptr && slices.begin > 0)
      scratch.lanes.copy_from_host(slices.lanes, block_lane_doubles_);
    out.assign(slices.last ? static_cast<std::size_t>(n_payoffs * nb * kMoments) : 0, 0.0);
    std::vector<double> piece_out;
    for (std::int64_t off = 0; off < nb; off += data.max_blocks) {
      const std::int64_t n = std::min(data.max_blocks, nb - off);
      kernel.paths.first_block = first + off;
      if (per_sample_) {
        // A thread a sample, in launches of the columns' size; then each
        // lane's moments from its samples' values, in its own order.
        sample_launches(device_, kernel, kernel.paths,
                        live_threads(first + off, n, n_samples, slices.begin, slices.end), columns_);
        parallel_for(device_, n_payoffs * n * kLanes,
                     SampleMoments{.values = kernel.payoffs.values,
                                   .value_stride = kernel.payoffs.value_stride,
                                   .lanes = scratch.lanes.data(),
                                   .n_lanes = n * kLanes,
                                   .first_block = first + off,
                                   .n_samples = n_samples,
                                   .slice_begin = slices.begin,
                                   .slice_end = slices.end,
                                   .payoff_slots = static_cast<int>(payoff_slots_),
                                   .replicates = kernel.paths.replicates,
                                   .n_terms = static_cast<int>(greeks_.terms.size()),
                                   .terms = kernel.greeks.terms,
                                   .term_values = kernel.greeks.term_values,
                                   .shifts = kernel.payoffs.shifts});
      } else {
        kernel.paths.n_lanes = n * kLanes;
        parallel_for(device_, n * kLanes, kernel);   // the host's batched kernel: PathGroupKernel::host_for
      }
      if (!slices.last) {
        scratch.lanes.copy_to_host(slices.lanes, block_lane_doubles_);
        return;
      }
      parallel_for(device_, n_payoffs * n,
                   GroupLaneTree{scratch.lanes.data(), scratch.blocks.data(), n * kLanes, n});
      piece_out.resize(static_cast<std::size_t>(n_payoffs * n * kMoments));
      scratch.blocks.copy_to_host(piece_out.data(), piece_out.size());
      for (std::int64_t j = 0; j < n_payoffs; ++j) {
        std::copy_n(piece_out.begin() + j * n * kMoments, n * kMoments, out.begin() + (j * nb + off) * kMoments);
      }
    }
  };
  fp32_ ? group(*fp32_) : group(*fp64_);
}

}  // namespace strata::pricing
