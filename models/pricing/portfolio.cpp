#include "models/pricing/portfolio.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <unordered_set>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/runtime/error.hpp"
#include "models/pricing/greeks.hpp"
#include "models/pricing/instrument_fields.hpp"
#include "models/pricing/sobol_directions.hpp"

namespace strata::pricing {

void declare_schema(Schema& s) {
  // 2^53: block indices stay exact in every integer and double they pass through.
  s.integer("pricing.paths", 1'000'000, "paths", Range{1.0, 9007199254740992.0},
            "Monte Carlo paths in total over all ranks and devices; any size (streamed in chunks). A restart with "
            "more paths continues the run and equals an uninterrupted run of the new count")
      .restart_safe = true;
  s.boolean("pricing.antithetic", false,
            "antithetic variates: each sample is the pair (Z, -Z); an odd path count is rounded up to even");
  s.choice("pricing.sampler", "philox", {"philox", "sobol"},
           "random numbers: philox (counter-based Philox4x32-10 keyed by (seed, path, draw)) or sobol "
           "(Owen-scrambled Sobol' points, Joe-Kuo directions, Brownian bridge over each path's time grid; "
           "pricing.replicates independent scramblings give the standard error; Heston's and Merton's own "
           "draws stay Philox). With sobol, a power of two paths per replicate keeps the net balanced");
  s.integer("pricing.replicates", 16, "", Range{2.0, 1024.0},
            "sobol: independent scramblings; paths are split evenly among them and the standard error is "
            "that of their means (ignored by philox)");
  s.boolean("pricing.control_variate", false,
            "control variates: the geometric Asian (GBM) for arithmetic Asians, the discounted terminal "
            "underlying for Europeans, the discounted weighted average of the terminal underlyings for baskets; "
            "beta from a fixed pilot of 32768 extra samples, reported as control_beta");
  s.integer("pricing.regression_paths", 65536, "paths", Range{256.0, 1e9},
            "american: paths of the Longstaff-Schwartz regression pass, independent of the pricing paths (another "
            "Philox key, or another Sobol' scrambling), so the policy is fitted out of sample and the price is "
            "low-biased with an honest standard error. 65536 (four blocks) keeps the policy's own error well "
            "below a cent on a vanilla put (Longstaff-Schwartz used 100000)");
  s.integer("pricing.repeat", 1, "", Range{1.0, 1000.0},
            "price the whole portfolio this many times in the process (regression and pricing passes, from "
            "scratch) and report the last repetition's seconds as warm_seconds: a warm timing for benchmarks; "
            "every repetition gives the same bits")
      .restart_safe = true;
  s.string_list("pricing.greeks", std::vector<std::string>{},
                "sensitivities of every instrument, of \"delta\", \"gamma\", \"vega\", \"rho\", \"theta\" (and Heston's "
                "\"vega_v0\", \"vega_theta\", \"vega_xi\"): "
                "delta, and vega on GBM, pathwise for european, asian, basket and lookback payoffs, a digital's "
                "delta on GBM by likelihood ratio; the others by "
                "central differences of paths from the same random numbers with the input bumped "
                "(spot, vol, Heston v0/theta/xi and maturity by 1%, rate by 1e-3): a spot bump moves the base "
                "path and values it in double (so an fp32 gamma rounds as an fp64 one), any other input "
                "re-simulates it. Units: per 1.0 of the input: "
                "delta per unit of spot, gamma per unit of spot squared, vega per 1.0 of volatility (not per 1%), "
                "rho per 1.0 of rate, theta = dV/dt per year of calendar time (-dV/dT). Written as "
                "/pricing/<name>/<greek> with <greek>_stderr; baskets: delta, gamma (diagonal) and vega per asset. "
                "Heston assets: vega gives vega_v0, vega_theta, vega_xi (each may be asked alone by that name; other "
                "models have none of them). Greeks are of the plain payoff (no "
                "control variate)");
  s.real("pricing.rate", 0.0, "1/year", Range{-1.0, 1.0}, "continuously compounded risk-free rate");
  s.integer("pricing.chunk_paths", 0, "paths", Range{0.0, 9007199254740992.0},
            "paths per chunk on each rank (memory does not grow with paths); 0 sizes each step by measured time "
            "(about 0.25 s, within the backend's memory budget), so stop requests and progress lines are never "
            "long in coming. Results do not depend on it")
      .restart_safe = true;

  s.integer("pricing.steps_per_year", 252, "1/year", Range{1.0, 1e6},
            "time steps per year of the path grid of path-dependent payoffs (refined to hit every fixing); "
            "a European, digital or basket on GBM assets is sampled exactly in one step");

  s.real_matrix("pricing.correlation", "", Range{-1.0, 1.0},
                "correlation of the assets' Brownian motions, one row per [[pricing.asset]] in order (symmetric "
                "positive definite); empty: independent. For Heston assets it correlates the asset Brownian "
                "motions; each asset's rho couples it to its variance");
  s.string("pricing.portfolio_file", std::string(),
           "CSV of instruments, one a row, header = [[pricing.instrument]] keys (lists separated by ';'), "
           "relative to the input file; priced with the inline instruments");

  s.table_list("pricing.asset", Range{1.0, {}}, "underlying assets, one [[pricing.asset]] table each");
  s.string("pricing.asset[].name", std::nullopt, "unique name, used by instruments' `assets`");
  s.real("pricing.asset[].spot", std::nullopt, "currency", Range{0.0, {}, true}, "spot price today");
  s.real("pricing.asset[].dividend", 0.0, "1/year", Range{-1.0, 1.0}, "continuous dividend yield");
  s.choice("pricing.asset[].model", "gbm", {"gbm", "heston", "merton"},
           "price dynamics: geometric Brownian motion, Heston stochastic variance, Merton log-normal jumps");
  s.real("pricing.asset[].vol", 0.0, "1/sqrt(year)", Range{0.0, 5.0}, "volatility (gbm, merton; required there)");
  s.real("pricing.asset[].v0", 0.0, "1/year", Range{0.0, 25.0}, "heston: initial variance");
  s.real("pricing.asset[].kappa", 0.0, "1/year", Range{0.0, 1000.0}, "heston: mean-reversion rate (> 0)");
  s.real("pricing.asset[].theta", 0.0, "1/year", Range{0.0, 25.0}, "heston: long-run variance (> 0)");
  s.real("pricing.asset[].xi", 0.0, "1/year", Range{0.0, 100.0},
         "heston: volatility of variance (> 0; 2 kappa theta < xi^2, Feller violated, is allowed)");
  s.real("pricing.asset[].rho", 0.0, "", Range{-1.0, 1.0}, "heston: correlation of the asset and its variance");
  s.choice("pricing.asset[].scheme", "qe", {"qe", "full-truncation"},
           "heston: Andersen's quadratic-exponential scheme or full-truncation log-Euler");
  s.real("pricing.asset[].jump_intensity", 0.0, "1/year", Range{0.0, 1000.0}, "merton: jumps per year");
  s.real("pricing.asset[].jump_mean", 0.0, "", Range{-5.0, 5.0}, "merton: mean of the log jump size");
  s.real("pricing.asset[].jump_vol", 0.0, "", Range{0.0, 5.0}, "merton: standard deviation of the log jump size");

  s.table_list("pricing.instrument", Range{0.0, {}},
               "options to price, one [[pricing.instrument]] table each (and/or rows of pricing.portfolio_file)");
  s.string("pricing.instrument[].name", std::nullopt, "unique name; names the output group /pricing/<name>");
  s.choice("pricing.instrument[].type", "european",
           {"european", "digital", "asian", "barrier", "lookback", "basket", "american"},
           "payoff type (american: Bermudan exercise at exercise_dates by Longstaff-Schwartz)");
  s.choice("pricing.instrument[].option", "", {"call", "put"}, "call or put");
  s.real("pricing.instrument[].strike", std::nullopt, "currency", Range{0.0, {}, true},
         "strike price; a lookback's strike = \"floating\" pays S_T - min (call) or max - S_T (put)")
      .choices = {"floating"};
  s.real("pricing.instrument[].maturity", std::nullopt, "years", Range{0.0, 100.0, true}, "time to maturity");
  s.string_list("pricing.instrument[].assets", std::nullopt, "the asset(s) it is written on, by name");
  s.real("pricing.instrument[].cash", 1.0, "currency", Range{0.0, {}}, "digital: cash paid when in the money");
  s.integer("pricing.instrument[].fixings", 12, "dates", Range{1.0, 100000.0},
            "asian, and barrier or lookback with monitoring = \"discrete\": fixing dates, equally spaced, the "
            "last at maturity");
  s.choice("pricing.instrument[].average", "arithmetic", {"arithmetic", "geometric"},
           "asian (over the fixings), basket with basket = \"average\" (over the assets): kind of average");
  s.choice("pricing.instrument[].basket", "average", {"average", "max", "min"},
           "basket: the weighted average, the best or the worst of its assets at maturity");
  s.real_list("pricing.instrument[].weights", "", Range{{}, {}},
              "basket average, and american on several assets (its underlying is their weighted average): one "
              "weight per asset of `assets` (default: equal weights summing to 1)");
  s.integer("pricing.instrument[].exercise_dates", 50, "dates", Range{1.0, 100000.0},
            "american: exercise dates T/n, 2T/n, ..., T (a Bermudan option; more dates approach the American)");
  s.choice("pricing.instrument[].basis", "laguerre", {"laguerre", "monomial"},
           "american: regression basis in x = underlying / strike: Laguerre polynomials L_0..L_degree (without "
           "the exp(-x/2) weight) or monomials 1, x, ..., x^degree");
  s.integer("pricing.instrument[].degree", 3, "", Range{1.0, 8.0}, "american: degree of the regression basis");
  s.real("pricing.instrument[].barrier", 0.0, "currency", Range{0.0, {}}, "barrier: the barrier level (> 0)");
  s.choice("pricing.instrument[].barrier_type", "down-and-out", {"down-and-out", "down-and-in", "up-and-out", "up-and-in"},
           "barrier: side and kind");
  s.choice("pricing.instrument[].monitoring", "continuous", {"continuous", "discrete"},
           "barrier, lookback: continuous (barrier: Brownian-bridge crossing probability between grid points; "
           "lookback: Broadie-Glasserman-Kou shift of the grid extreme) or discrete (at the fixings)");
  s.real("pricing.instrument[].rebate", 0.0, "currency", Range{0.0, {}},
         "barrier: paid when a knock-out barrier is hit (at the end of the step or fixing it is hit in), or at "
         "maturity when a knock-in barrier never was");
}

// Names become HDF5 group names and table cells: keep them plain.
bool plain_name(const std::string& n) {
  if (n.empty() || n.size() > 63 || n == "summary") return false;
  for (char ch : n) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                    ch == '-' || ch == '.';
    if (!ok) return false;
  }
  return n != "." && n != "..";
}

const char* const kNameRule = "names use letters, digits, '_', '-', '.' (at most 63, not 'summary')";

namespace {

// pricing.correlation: n x n, symmetric, unit diagonal, positive definite
// (its Cholesky factorisation succeeds).
void read_correlation(const Config& c, Portfolio& p) {
  const std::vector<std::vector<double>> rows = c.real_rows("pricing.correlation");
  if (rows.empty()) return;
  const std::size_t n = p.assets.size();
  const std::string key = "pricing.correlation";
  if (rows.size() != n) {
    c.fail(key, "needs " + std::to_string(n) + " rows, one per [[pricing.asset]]; has " + std::to_string(rows.size()));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].size() != n) c.fail(key, "row " + std::to_string(i + 1) + " needs " + std::to_string(n) + " entries");
    if (rows[i][i] != 1.0) c.fail(key, "the diagonal must be 1 (row " + std::to_string(i + 1) + ")");
    for (std::size_t j = 0; j < i; ++j) {
      if (rows[i][j] != rows[j][i]) {
        c.fail(key, "not symmetric: entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ") differs from (" +
                        std::to_string(j + 1) + ", " + std::to_string(i + 1) + ")");
      }
    }
  }
  for (const auto& r : rows) p.correlation.insert(p.correlation.end(), r.begin(), r.end());
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  if (cholesky_of(p, all).empty()) c.fail(key, "not positive definite (its Cholesky factorisation fails)");
}

// A point index is 32 bits, and each path group needs one Sobol' dimension
// per asset and time step.
void check_sobol(const Config& c, const Portfolio& p) {
  const std::int64_t per_replicate = p.samples();
  // The last blocks of the 2^32 points are the control variates' pilot.
  if (per_replicate > (std::int64_t{1} << 31)) {
    c.fail("pricing.paths", "sobol: at most 2^31 points per replicate (" +
                                std::to_string(per_replicate) + " asked); raise pricing.replicates");
  }
  if (per_replicate < 1) c.fail("pricing.paths", "sobol: fewer paths than pricing.replicates");
  for (const PathGroup& g : path_groups(p)) {
    const std::size_t dims = g.grid.size() * g.assets.size();
    if (dims > static_cast<std::size_t>(sobol_max_dimensions())) {
      c.fail("pricing.sampler", "sobol: a path group needs " + std::to_string(dims) + " dimensions (" +
                                    std::to_string(g.grid.size()) + " steps x " + std::to_string(g.assets.size()) +
                                    " assets), the direction table has " + std::to_string(sobol_max_dimensions()) +
                                    "; lower pricing.steps_per_year");
    }
  }
}

}  // namespace

Portfolio read_portfolio(const Config& c) {
  Portfolio p;
  p.paths = c.integer("pricing.paths");
  p.antithetic = c.boolean("pricing.antithetic");
  p.rate = c.real("pricing.rate");
  p.chunk_paths = c.integer("pricing.chunk_paths");
  p.seed = static_cast<std::uint64_t>(c.integer("run.seed"));
  p.sobol = c.string("pricing.sampler") == "sobol";
  if (p.sobol) p.replicates = static_cast<int>(c.integer("pricing.replicates"));
  p.control_variate = c.boolean("pricing.control_variate");
  p.regression_paths = c.integer("pricing.regression_paths");
  p.repeat = static_cast<int>(c.integer("pricing.repeat"));
  for (const std::string& g : c.strings("pricing.greeks")) {
    if (std::find(kGreekNames.begin(), kGreekNames.end(), g) == kGreekNames.end()) {
      c.fail("pricing.greeks", "unknown greek \"" + g + "\" (expected delta, gamma, vega, rho, theta, vega_v0, vega_theta or vega_xi)");
    }
    if (std::find(p.greeks.begin(), p.greeks.end(), g) == p.greeks.end()) p.greeks.push_back(g);
  }

  for (std::size_t i = 0; i < c.count("pricing.asset"); ++i) {
    const std::string k = "pricing.asset." + std::to_string(i) + ".";
    Asset a{c.string(k + "name"), c.real(k + "spot"), c.real(k + "dividend"), c.real(k + "vol"), c.string(k + "model")};
    if (!plain_name(a.name)) c.fail(k + "name", kNameRule);
    if (std::ranges::count(p.assets, a.name, &Asset::name) > 0) c.fail(k + "name", "two assets have this name");
    a.v0 = c.real(k + "v0");
    a.kappa = c.real(k + "kappa");
    a.theta = c.real(k + "theta");
    a.xi = c.real(k + "xi");
    a.rho = c.real(k + "rho");
    a.qe = c.string(k + "scheme") == "qe";
    a.jump_intensity = c.real(k + "jump_intensity");
    a.jump_mean = c.real(k + "jump_mean");
    a.jump_vol = c.real(k + "jump_vol");
    const bool heston = a.model == "heston", merton = a.model == "merton";
    const std::unique_ptr<InstrumentFields> f = config_fields(c, k);
    reject_foreign(*f, c.schema(), "pricing.asset[].", "model " + a.model,
                   {{"vol", !heston}, {"v0", heston}, {"kappa", heston}, {"theta", heston}, {"xi", heston},
                    {"rho", heston}, {"scheme", heston}, {"jump_intensity", merton}, {"jump_mean", merton},
                    {"jump_vol", merton}});
    if (!heston && !f->given("vol")) c.fail(k + "vol", "required for model " + a.model);
    if (heston) {
      for (const char* key : {"v0", "kappa", "theta", "xi"}) {
        if (!f->given(key)) c.fail(k + key, "required for model heston");
      }
      if (!(a.kappa > 0)) c.fail(k + "kappa", "heston needs kappa > 0");
      if (!(a.theta > 0)) c.fail(k + "theta", "heston needs theta > 0");
      if (!(a.xi > 0)) c.fail(k + "xi", "heston needs xi > 0");
    }
    p.assets.push_back(a);
  }
  read_correlation(c, p);
  p.steps_per_year = static_cast<int>(c.integer("pricing.steps_per_year"));
  std::unordered_set<std::string> names;
  for (std::size_t i = 0; i < c.count("pricing.instrument"); ++i) {
    const std::string k = "pricing.instrument." + std::to_string(i) + ".";
    p.instruments.push_back(read_instrument(*config_fields(c, k), p, c.schema()));
    if (!names.insert(p.instruments.back().name).second) {
      c.fail(k + "name", "two instruments have this name");
    }
  }
  const std::string file = c.string("pricing.portfolio_file");
  if (!file.empty()) {
    // Relative to the input file's folder, like any path a person writes in it.
    std::filesystem::path path(file);
    if (path.is_relative()) path = std::filesystem::path(c.path()).parent_path() / path;
    for (Instrument& in : read_portfolio_csv(path.string(), c.schema(), p)) {
      if (!names.insert(in.name).second) {
        throw InputError(path.string() + ": instrument \"" + in.name + "\": two instruments have this name");
      }
      p.instruments.push_back(std::move(in));
    }
  }
  if (p.instruments.empty()) {
    c.fail("pricing.portfolio_file", "no instruments: give [[pricing.instrument]] tables or a portfolio file");
  }
  if (p.sobol) check_sobol(c, p);
  return p;
}

std::vector<int> assets_of(const Instrument& i) {
  return i.basket_assets.empty() ? std::vector<int>{i.asset} : i.basket_assets;
}

std::vector<double> cholesky_of(const Portfolio& p, const std::vector<int>& assets) {
  const std::size_t n = assets.size(), all = p.assets.size();
  std::vector<double> l(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      const auto ai = static_cast<std::size_t>(assets[i]), aj = static_cast<std::size_t>(assets[j]);
      double sum = p.correlation.empty() ? (i == j ? 1.0 : 0.0) : p.correlation[ai * all + aj];
      for (std::size_t k = 0; k < j; ++k) sum -= l[i * n + k] * l[j * n + k];
      if (i == j) {
        if (!(sum > 1e-12)) return {};
        l[i * n + i] = std::sqrt(sum);
      } else {
        l[i * n + j] = sum / l[j * n + j];
      }
    }
  }
  return l;
}

bool uses_fixings(const Instrument& i) {
  return i.type == "asian" || i.type == "american" || ((i.type == "barrier" || i.type == "lookback") && !i.continuous);
}

std::vector<int> fixing_steps(const Instrument& i, const std::vector<double>& grid) {
  std::vector<int> steps;
  for (int m = 1; m <= i.fixings; ++m) {
    const double t = i.maturity * m / i.fixings;
    const auto it = std::min_element(grid.begin(), grid.end(),
                                     [t](double a, double b) { return std::fabs(a - t) < std::fabs(b - t); });
    steps.push_back(static_cast<int>(it - grid.begin()) + 1);
  }
  return steps;
}

namespace {

// The times (years, ascending, the last = maturity) at which the
// instrument's paths are sampled: maturity cut into
// ceil(maturity * steps_per_year) equal steps, refined to hit every fixing
// exactly; one step for a European or digital under GBM (exact).
std::vector<double> time_grid(const Portfolio& p, const Instrument& i) {
  const double t = i.maturity;
  bool all_gbm = true;
  for (int a : assets_of(i)) all_gbm = all_gbm && p.assets[static_cast<std::size_t>(a)].model == "gbm";
  const bool exact = all_gbm && (i.type == "european" || i.type == "digital" || i.type == "basket");
  if (exact) return {t};
  // ceil, forgiving the rounding of maturity * steps_per_year (1.0 * 252 is
  // 252 steps, not 253).
  const double want = t * p.steps_per_year;
  const int n = std::max(1, static_cast<int>(std::ceil(want * (1.0 - 1e-12))));
  std::vector<double> grid;
  for (int k = 1; k <= n; ++k) grid.push_back(t * k / n);
  if (uses_fixings(i)) {
    for (int m = 1; m <= i.fixings; ++m) grid.push_back(t * m / i.fixings);
    std::sort(grid.begin(), grid.end());
    // A fixing that falls on a grid point (up to rounding) is that point.
    std::vector<double> merged;
    for (double x : grid) {
      if (merged.empty() || x - merged.back() > 1e-12 * t) {
        merged.push_back(x);
      } else {
        merged.back() = std::max(merged.back(), x);
      }
    }
    merged.back() = t;
    grid = merged;
  }
  return grid;
}

std::vector<PathGroup> all_groups(const Portfolio& p) {
  std::vector<PathGroup> groups;
  std::map<std::pair<std::vector<int>, std::vector<double>>, std::size_t> index;
  for (std::size_t i = 0; i < p.instruments.size(); ++i) {
    const Instrument& in = p.instruments[i];
    std::vector<double> grid = time_grid(p, in);
    auto [it, fresh] = index.try_emplace({assets_of(in), grid}, groups.size());
    if (fresh) groups.push_back({assets_of(in), std::move(grid), {}});
    groups[it->second].instruments.push_back(i);
  }
  return groups;
}

// A European call or put under GBM alone in its group is priced by exact
// terminal sampling (the single-draw sampler). Sobol', control-variate and
// Greeks runs take every instrument through a path group (the single-draw
// sampler reads Philox only, has no control and no scenarios).
bool lone_european(const Portfolio& p, const PathGroup& g) {
  if (p.sobol || p.control_variate || !p.greeks.empty() || g.instruments.size() != 1) return false;
  const Instrument& in = p.instruments[g.instruments.front()];
  return in.type == "european" && p.assets[static_cast<std::size_t>(in.asset)].model == "gbm";
}

}  // namespace

std::vector<PathGroup> path_groups(const Portfolio& p) {
  std::vector<PathGroup> groups;
  for (PathGroup& g : all_groups(p)) {
    if (!lone_european(p, g)) groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<std::size_t> lone_europeans(const Portfolio& p) {
  std::vector<std::size_t> out;
  for (const PathGroup& g : all_groups(p)) {
    if (lone_european(p, g)) out.push_back(g.instruments.front());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace strata::pricing
