#include "models/pricing/portfolio.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"

namespace strata::pricing {

void declare_schema(Schema& s) {
  // 2^53: block indices stay exact in every integer and double they pass through.
  s.integer("pricing.paths", 1'000'000, "paths", Range{1.0, 9007199254740992.0},
            "Monte Carlo paths in total over all ranks and devices; any size (streamed in chunks). A restart with "
            "more paths continues the run and equals an uninterrupted run of the new count")
      .restart_safe = true;
  s.boolean("pricing.antithetic", false,
            "antithetic variates: each sample is the pair (Z, -Z); an odd path count is rounded up to even");
  s.choice("pricing.sampler", "philox", {"philox"},
           "random numbers: counter-based Philox4x32-10 keyed by (seed, path, draw)");
  s.real("pricing.rate", 0.0, "1/year", Range{-1.0, 1.0}, "continuously compounded risk-free rate");
  s.integer("pricing.chunk_paths", 0, "paths", Range{0.0, 9007199254740992.0},
            "paths per chunk on each rank (memory does not grow with paths); 0 picks one for the backend. "
            "Results do not depend on it")
      .restart_safe = true;

  s.integer("pricing.steps_per_year", 252, "1/year", Range{1.0, 1e6},
            "time steps per year of the path grid of path-dependent payoffs (refined to hit every fixing); "
            "a European or digital under GBM is sampled exactly in one step");

  s.table_list("pricing.asset", Range{1.0, {}}, "underlying assets, one [[pricing.asset]] table each");
  s.string("pricing.asset[].name", std::nullopt, "unique name, used by instruments' `assets`");
  s.real("pricing.asset[].spot", std::nullopt, "currency", Range{0.0, {}, true}, "spot price today");
  s.real("pricing.asset[].dividend", 0.0, "1/year", Range{-1.0, 1.0}, "continuous dividend yield");
  s.choice("pricing.asset[].model", "gbm", {"gbm"}, "price dynamics: geometric Brownian motion");
  s.real("pricing.asset[].vol", std::nullopt, "1/sqrt(year)", Range{0.0, 5.0}, "volatility (gbm)");

  s.table_list("pricing.instrument", Range{1.0, {}}, "options to price, one [[pricing.instrument]] table each");
  s.string("pricing.instrument[].name", std::nullopt, "unique name; names the output group /pricing/<name>");
  s.choice("pricing.instrument[].type", "european", {"european", "digital", "asian", "barrier", "lookback"},
           "payoff type");
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
  s.choice("pricing.instrument[].average", "arithmetic", {"arithmetic", "geometric"}, "asian: kind of average");
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

namespace {

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

constexpr const char* kNameRule = "names use letters, digits, '_', '-', '.' (at most 63, not 'summary')";

}  // namespace

Portfolio read_portfolio(const Config& c) {
  Portfolio p;
  p.paths = c.integer("pricing.paths");
  p.antithetic = c.boolean("pricing.antithetic");
  p.rate = c.real("pricing.rate");
  p.chunk_paths = c.integer("pricing.chunk_paths");
  p.seed = static_cast<std::uint64_t>(c.integer("run.seed"));

  for (std::size_t i = 0; i < c.count("pricing.asset"); ++i) {
    const std::string k = "pricing.asset." + std::to_string(i) + ".";
    Asset a{c.string(k + "name"), c.real(k + "spot"), c.real(k + "dividend"), c.real(k + "vol"), c.string(k + "model")};
    if (!plain_name(a.name)) c.fail(k + "name", kNameRule);
    for (const Asset& b : p.assets) {
      if (b.name == a.name) c.fail(k + "name", "two assets have this name");
    }
    p.assets.push_back(a);
  }
  for (std::size_t i = 0; i < c.count("pricing.instrument"); ++i) {
    const std::string k = "pricing.instrument." + std::to_string(i) + ".";
    Instrument in;
    in.name = c.string(k + "name");
    in.type = c.string(k + "type");
    in.call = c.string(k + "option") == "call";
    in.maturity = c.real(k + "maturity");
    if (!plain_name(in.name)) c.fail(k + "name", kNameRule);
    for (const Instrument& j : p.instruments) {
      if (j.name == in.name) c.fail(k + "name", "two instruments have this name");
    }
    if (c.word(k + "strike")) {
      if (in.type != "lookback") c.fail(k + "strike", "only a lookback's strike may be \"floating\"");
      in.floating = true;
    } else {
      in.strike = c.real(k + "strike");
    }
    in.cash = c.real(k + "cash");
    in.fixings = static_cast<int>(c.integer(k + "fixings"));
    in.geometric = c.string(k + "average") == "geometric";
    in.barrier = c.real(k + "barrier");
    in.rebate = c.real(k + "rebate");
    const std::string barrier_type = c.string(k + "barrier_type");
    in.kind.up = barrier_type.rfind("up", 0) == 0;
    in.kind.knock_in = barrier_type.size() > 3 && barrier_type.compare(barrier_type.size() - 3, 3, "-in") == 0;
    in.continuous = c.string(k + "monitoring") == "continuous";

    // A key of another payoff type is a mistake, not something to ignore.
    // (Compared with the default, so the stored /config, which lists every
    // key, reads back.)
    const bool discrete = !in.continuous;
    const std::pair<const char*, bool> belongs[] = {
        {"cash", in.type == "digital"},
        {"fixings", in.type == "asian" || ((in.type == "barrier" || in.type == "lookback") && discrete)},
        {"average", in.type == "asian"},
        {"barrier", in.type == "barrier"},
        {"barrier_type", in.type == "barrier"},
        {"monitoring", in.type == "barrier" || in.type == "lookback"},
        {"rebate", in.type == "barrier"},
    };
    const Schema& schema = c.schema();
    for (const auto& [key, ok] : belongs) {
      if (ok) continue;
      const Param* param = schema.find(std::string("pricing.instrument[].") + key);
      const std::string full = k + key;
      const bool is_default = param->type == ParamType::real      ? c.real(full) == std::get<double>(param->default_value)
                              : param->type == ParamType::integer ? c.integer(full) == std::get<std::int64_t>(param->default_value)
                                                                  : c.string(full) == std::get<std::string>(param->default_value);
      if (!is_default) {
        c.fail(full, std::string("does not apply to a ") + in.type + " option" +
                         (std::string(key) == "fixings" ? " (fixings: asian, or discrete monitoring)" : ""));
      }
    }
    if (in.type == "barrier" && !(in.barrier > 0)) c.fail(k + "barrier", "a barrier option needs a barrier > 0");

    const std::vector<std::string> names = c.strings(k + "assets");
    if (names.size() != 1) c.fail(k + "assets", "a " + in.type + " option is written on exactly one asset");
    in.asset = -1;
    for (std::size_t a = 0; a < p.assets.size(); ++a) {
      if (p.assets[a].name == names[0]) in.asset = static_cast<int>(a);
    }
    if (in.asset < 0) c.fail(k + "assets", "no [[pricing.asset]] is named \"" + names[0] + "\"");
    p.instruments.push_back(in);
  }
  p.steps_per_year = static_cast<int>(c.integer("pricing.steps_per_year"));
  return p;
}

bool terminal_only(const Portfolio& p, const Instrument& i) {
  return i.type == "european" && p.assets[static_cast<std::size_t>(i.asset)].model == "gbm";
}

std::vector<double> time_grid(const Portfolio& p, const Instrument& i) {
  const double t = i.maturity;
  const bool exact = p.assets[static_cast<std::size_t>(i.asset)].model == "gbm" &&
                     (i.type == "european" || i.type == "digital");
  if (exact) return {t};
  // ceil, forgiving the rounding of maturity * steps_per_year (1.0 * 252 is
  // 252 steps, not 253).
  const double want = t * p.steps_per_year;
  const int n = std::max(1, static_cast<int>(std::ceil(want * (1.0 - 1e-12))));
  std::vector<double> grid;
  for (int k = 1; k <= n; ++k) grid.push_back(t * k / n);
  const bool uses_fixings = i.type == "asian" || ((i.type == "barrier" || i.type == "lookback") && !i.continuous);
  if (uses_fixings) {
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

std::vector<PathGroup> path_groups(const Portfolio& p) {
  std::vector<PathGroup> groups;
  std::map<std::pair<int, std::vector<double>>, std::size_t> index;
  for (std::size_t i = 0; i < p.instruments.size(); ++i) {
    const Instrument& in = p.instruments[i];
    if (terminal_only(p, in)) continue;
    std::vector<double> grid = time_grid(p, in);
    auto [it, fresh] = index.try_emplace({in.asset, grid}, groups.size());
    if (fresh) groups.push_back({in.asset, std::move(grid), {}});
    groups[it->second].instruments.push_back(i);
  }
  return groups;
}

}  // namespace strata::pricing
