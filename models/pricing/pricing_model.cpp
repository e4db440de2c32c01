// The `pricing` model: Monte Carlo prices of a portfolio of options, with
// standard errors, 95% confidence intervals and closed-form references.
#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include "engine/io/h5_output.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/stop_request.hpp"
#include "engine/runtime/timers.hpp"
#include "kernels/pricing/black_scholes.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "kernels/rng/inverse_normal.hpp"
#include "models/pricing/greeks.hpp"
#include "models/pricing/greeks_report.hpp"
#include "models/pricing/longstaff_schwartz.hpp"
#include "models/pricing/monte_carlo.hpp"
#include "models/pricing/portfolio.hpp"
#include "models/pricing/references.hpp"

namespace strata::pricing {
namespace {

// A reference more than this many standard errors from the estimate is not
// bad luck: under the central limit theorem P(|Z| > 6) = 2.0e-9, so one
// false note in ~5e8 instruments priced. What is wrong is the estimate
// (too few paths for a heavy tail) or a reference that is an approximation.
constexpr double kTrustSigmas = 6.0;

// Why an estimate cannot be trusted as its standard error says, or "".
std::string distrust(const Instrument& in, const Estimate& e, const std::optional<Reference>& ref) {
  char text[400];
  if (e.standard_error == 0 && e.paths > 1) {
    if (e.price == 0) {
      return "every path paid 0, so 0 +- 0 bounds nothing: the payoff lies in paths never drawn (more paths, "
             "or an instrument nearer the money)";
    }
    if (ref && ref->price != e.price) {
      std::snprintf(text, sizeof text,
                    "every path paid the same, so its standard error 0 bounds nothing, and the reference is %.8g",
                    ref->price);
      return text;
    }
    return {};
  }
  if (!ref || e.standard_error <= 0) return {};
  // Longstaff-Schwartz prices with a fitted, suboptimal policy: it is low
  // biased, and with enough paths the bias exceeds any number of standard
  // errors. Only an American above its reference says something is wrong.
  const double z = (e.price - ref->price) / (e.standard_error + ref->error);
  if (in.type == "american" ? z > kTrustSigmas : std::fabs(z) > kTrustSigmas) {
    std::snprintf(text, sizeof text,
                  "the reference %.8g is %.3g standard errors away (more than %.0f: probability 2e-9 by the central "
                  "limit theorem): the estimate is wrong (a tail too heavy for the paths drawn), or the reference is, "
                  "where it is an approximation",
                  ref->price, std::fabs(z), kTrustSigmas);
    return text;
  }
  return {};
}

using References = std::vector<std::optional<Reference>>;

// Every instrument's reference, computed once at the start (a tree for an
// American takes tens of milliseconds).
// A reference is a price: finite and not negative. Far outside a formula's
// numerical range (a strike of 1e308, a Heston integral that cancels) a
// closed form can give neither; that is no reference, and the table says so.
bool is_price(const Reference& r) { return std::isfinite(r.price) && r.price >= 0; }

References references_of(const Portfolio& p) {
  References refs;
  for (const Instrument& in : p.instruments) {
    std::optional<Reference> r = reference_for(p, in);
    refs.push_back(r && is_price(*r) ? r : std::nullopt);
  }
  return refs;
}

std::string format_table(const Portfolio& p, const std::vector<Estimate>& est, const References& refs) {
  // Columns as wide as their longest entry, so no name breaks the table.
  int name_width = 16, type_width = 9;
  for (const Instrument& in : p.instruments) {
    name_width = std::max(name_width, static_cast<int>(in.name.size()));
    type_width = std::max(type_width, static_cast<int>(in.type.size()));
  }
  std::string text, notes;
  char line[1024];
  std::snprintf(line, sizeof line, "%-*s %-*s %-4s %8s %7s %14s %11s %25s %14s %9s\n", name_width, "instrument",
                type_width, "type", "opt", "strike", "T", "price", "stderr", "95% CI", "reference", "diff/se");
  text += line;
  for (std::size_t i = 0; i < est.size(); ++i) {
    const Instrument& in = p.instruments[i];
    const Estimate& e = est[i];
    const std::optional<Reference>& ref = refs[i];
    char ci[64], ref_text[32] = "-", z_text[32] = "-", strike[32] = "floating";
    std::snprintf(ci, sizeof ci, "[%s, %s]", fixed_text(e.ci95_low, 6).c_str(), fixed_text(e.ci95_high, 6).c_str());
    if (ref) {
      std::snprintf(ref_text, sizeof ref_text, "%s", fixed_text(ref->price, 8).c_str());
      // No standard error, no ratio (not +0.00): distrust() says why below.
      if (e.standard_error > 0) std::snprintf(z_text, sizeof z_text, "%+.2f", (e.price - ref->price) / e.standard_error);
      if (ref->error > 0) {
        std::snprintf(line, sizeof line, "reference of %s: %s; |error| <= %.1e%s\n", in.name.c_str(),
                      ref->method.c_str(), ref->error,
                      in.type == "american" ? " (Longstaff-Schwartz is low-biased: a fitted policy exercises "
                                              "suboptimally)"
                                            : "");
        notes += line;
      }
    } else if (const std::optional<Reference> raw = reference_for(p, in); raw && !is_price(*raw)) {
      std::snprintf(line, sizeof line, "no reference for %s: its %s gave %g, not a price, for these inputs\n",
                    in.name.c_str(), raw->method.c_str(), raw->price);
      notes += line;
    }
    if (!ref && in.type == "american") {
      notes += "no reference for " + in.name +
               ": the binomial tree covers Americans on one GBM asset (not baskets, Heston or Merton)\n";
    }
    if (!in.floating) std::snprintf(strike, sizeof strike, "%s", fixed_text(in.strike, 3).c_str());
    std::snprintf(line, sizeof line, "%-*s %-*s %-4s %8s %7.3f %14s %11.3e %25s %14s %9s\n", name_width,
                  in.name.c_str(), type_width, in.type.c_str(), in.call ? "call" : "put", strike, in.maturity,
                  fixed_text(e.price, 8).c_str(), e.standard_error, ci, ref_text, z_text);
    text += line;
  }
  for (std::size_t i = 0; i < est.size(); ++i) {
    const std::string why = distrust(p.instruments[i], est[i], refs[i]);
    if (!why.empty()) text += "warning: " + p.instruments[i].name + ": the estimate cannot be trusted: " + why + "\n";
  }
  text += notes;
  // Common random numbers: z scores of instruments priced together are
  // correlated, and a reader should not take six alike for a bias.
  if (std::count_if(refs.begin(), refs.end(), [](const auto& r) { return r.has_value(); }) > 1) {
    text += "diff/se = (price - reference) / stderr. The instruments share their random numbers (a path's\n"
            "normals depend on the seed, the path and the step, not on the instrument), so their errors are\n"
            "correlated and the diff/se values move together: read them as one draw, not several independent ones.\n";
  }
  if (std::any_of(est.begin(), est.end(), [](const Estimate& e) { return !std::isnan(e.control_beta); })) {
    text += "control variates (stderr is that of payoff - beta (control - mean)):";
    for (std::size_t i = 0; i < est.size(); ++i) {
      if (std::isnan(est[i].control_beta)) continue;
      std::snprintf(line, sizeof line, " %s beta = %.6f;", p.instruments[i].name.c_str(), est[i].control_beta);
      text += line;
    }
    text += "\n";
  }
  return text;
}

// The fitted exercise policy: per exercise date (rows, the last all zero:
// there the policy is the intrinsic value) the continuation coefficients.
void write_exercise(H5Output& out, bool root, const Portfolio& p, const Instrument& in, const Estimate& e) {
  const std::string g = "/pricing/" + in.name;
  const int m = in.degree + 1;
  // Every rank holds the same table: rank 0 writes it.
  const std::span<const double> mine = root ? std::span<const double>(e.exercise_coefficients) : std::span<const double>();
  out.rows(g + "/exercise_coefficients", mine, 0, in.fixings, m);
  out.attribute(g + "/exercise_coefficients", "basis",
                std::string(in.laguerre ? "laguerre L_0..L_d of x = underlying / strike, unweighted"
                                        : "monomials 1, x, ..., x^d of x = underlying / strike"));
  out.attribute(g + "/exercise_coefficients", "exercise_times", [&] {
    std::vector<double> t;
    for (int f = 1; f <= in.fixings; ++f) t.push_back(in.maturity * f / in.fixings);
    return t;
  }());
  out.scalar(g + "/regression_paths", p.regression_paths, "paths");
}

void write_results(H5Output& out, const Portfolio& p, const std::vector<Estimate>& est,
                   const std::vector<GreekEstimate>& greeks, const References& refs, bool root) {
  for (std::size_t i = 0; i < est.size(); ++i) {
    const Instrument& in = p.instruments[i];
    const Estimate& e = est[i];
    const std::string g = "/pricing/" + in.name;
    out.scalar(g + "/price", e.price, "currency");
    out.scalar(g + "/stderr", e.standard_error, "currency");
    out.scalar(g + "/ci95_low", e.ci95_low, "currency");
    out.scalar(g + "/ci95_high", e.ci95_high, "currency");
    out.scalar(g + "/paths", e.paths, "paths");
    if (!std::isnan(e.control_beta)) {
      out.scalar(g + "/control_beta", e.control_beta, "");
      out.attribute(g + "/control_beta", "control", std::string(in.type == "asian" ? "geometric asian, same fixings"
                                                                : in.type == "basket" ? "discounted average terminal underlying"
                                                                                      : "discounted terminal underlying"));
    }
    if (!e.replicate_prices.empty()) {
      out.attribute(g + "/price", "replicate_prices", e.replicate_prices);
      out.attribute(g + "/stderr", "method", std::string("spread of the Sobol' replicate means"));
    }
    if (in.type == "american") write_exercise(out, root, p, in, e);
    const std::optional<Reference>& r = refs[i];
    if (r) {
      out.scalar(g + "/reference_price", r->price, "currency");
      out.attribute(g + "/reference_price", "method", r->method);
      if (r->error > 0) out.scalar(g + "/reference_error", r->error, "currency");
    }
    if (const std::string why = distrust(in, e, r); !why.empty())
      out.attribute(g + "/price", "untrusted", why);
    out.attribute(g, "type", in.type);
    out.attribute(g, "option", std::string(in.call ? "call" : "put"));
    out.attribute(g, "strike", in.floating ? std::numeric_limits<double>::quiet_NaN() : in.strike);
    out.attribute(g, "maturity", in.maturity);
    std::vector<std::string> asset_names;
    for (int a : assets_of(in)) asset_names.push_back(p.assets[static_cast<std::size_t>(a)].name);
    out.attribute(g, "assets", asset_names);
  }
  // One column of the summary: f(i) of every instrument i.
  auto column = [&](auto f) {
    std::vector<decltype(f(std::size_t{0}))> v;
    for (std::size_t i = 0; i < est.size(); ++i) v.push_back(f(i));
    return v;
  };
  const std::vector<Instrument>& in = p.instruments;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  H5Table summary;
  summary.columns = {
      {"name", "", column([&](std::size_t i) { return in[i].name; })},
      {"type", "", column([&](std::size_t i) { return in[i].type; })},
      {"option", "", column([&](std::size_t i) { return std::string(in[i].call ? "call" : "put"); })},
      {"strike", "currency", column([&](std::size_t i) { return in[i].floating ? kNaN : in[i].strike; })},
      {"maturity", "years", column([&](std::size_t i) { return in[i].maturity; })},
      {"price", "currency", column([&](std::size_t i) { return est[i].price; })},
      {"stderr", "currency", column([&](std::size_t i) { return est[i].standard_error; })},
      {"ci95_low", "currency", column([&](std::size_t i) { return est[i].ci95_low; })},
      {"ci95_high", "currency", column([&](std::size_t i) { return est[i].ci95_high; })},
      {"paths", "paths", column([&](std::size_t i) { return est[i].paths; })},
      // NaN where no closed form exists.
      {"reference_price", "currency", column([&](std::size_t i) { return refs[i] ? refs[i]->price : kNaN; })}};
  if (p.control_variate) {   // NaN: no control
    summary.columns.push_back({"control_beta", "", column([&](std::size_t i) { return est[i].control_beta; })});
  }
  write_greeks(out, p, greeks, root);
  add_greek_columns(summary, p, greeks);
  out.table("/pricing/summary", summary);
}

class PricingModel final : public ModelOf<Portfolio, read_portfolio, declare_schema> {
 public:
  std::string_view name() const override { return "pricing"; }
  std::string_view summary() const override {
    return "Monte Carlo option pricing: European, digital, Asian, barrier, lookback, basket and American "
           "(Longstaff-Schwartz) options under GBM, Heston and Merton jump diffusion, with standard errors and closed-form references";
  }
  void plan(const RunContext& ctx, const Portfolio& p) const override {
    const SamplePlan plan = plan_samples(p, ctx.device, ctx.mpi);
    char text[512];
    std::snprintf(text, sizeof text,
                  "plan: %zu instrument(s) on %zu asset(s); %lld paths as %lld %s in %lld blocks of %lld\n"
                  "      rank 0 computes blocks [%lld, %lld) in chunks of %lld blocks; %.1f MiB working memory per rank\n",
                  p.instruments.size(), p.assets.size(), static_cast<long long>(plan.paths),
                  static_cast<long long>(plan.samples), p.antithetic ? "antithetic pairs" : "samples",
                  static_cast<long long>(plan.blocks), static_cast<long long>(kernels::pricing::kSamplesPerBlock),
                  static_cast<long long>(plan.first_block), static_cast<long long>(plan.last_block),
                  static_cast<long long>(plan.chunk_blocks), static_cast<double>(plan.device_bytes) / (1 << 20));
    ctx.out << text;
    if (p.sobol) {
      std::snprintf(text, sizeof text, "      sobol: each sample is one scrambled Sobol' point, simulated in %d replicates\n",
                    p.replicates);
      ctx.out << text;
    }
    for (const PathGroup& g : path_groups(p)) {
      std::string names;
      for (int a : g.assets) names += (names.empty() ? "" : "+") + p.assets[static_cast<std::size_t>(a)].name;
      const GreekPlan gp = plan_greeks(p, g, ctx.precision);
      const int greeks = static_cast<int>(gp.slots.size());
      const std::int64_t nb = PathGroupRun::launch_blocks(p, g, ctx.precision, ctx.device, plan.chunk_blocks);
      bool per_sample = false;
      const std::size_t launch = PathGroupRun::launch_bytes(p, g, ctx.precision, ctx.device, nb, &per_sample);
      std::snprintf(text, sizeof text,
                    "      path group on %s: %zu instrument(s), %zu steps per path to T = %g; launches of %lld "
                    "blocks%s, %.1f MiB\n",
                    names.c_str(), g.instruments.size(), g.grid.size(), g.grid.back(), static_cast<long long>(nb),
                    per_sample ? " (a thread a sample)" : "", static_cast<double>(launch) / (1 << 20));
      ctx.out << text;
      const std::size_t bytes = regression_bytes(p, g, ctx.mpi.size());
      if (bytes > 0) {
        std::snprintf(text, sizeof text,
                      "      Longstaff-Schwartz regression pass first: %lld independent paths, %.1f MiB of exercise "
                      "states per rank\n",
                      static_cast<long long>(p.regression_paths), static_cast<double>(bytes) / (1 << 20));
        ctx.out << text;
      }
      if (greeks > 0) {
        const auto moved = static_cast<std::size_t>(std::count_if(
            gp.scenarios.begin(), gp.scenarios.end(), [](const Bump& b) { return b.input == BumpedInput::spot; }));
        std::snprintf(text, sizeof text,
                      "      Greeks: %d value(s); each path simulated %zu more time(s) with an input bumped and "
                      "valued %zu more time(s) with its spot bumped\n",
                      greeks, gp.scenarios.size() - moved, moved);
        ctx.out << text;
      }
    }
  }

  MemoryPlan memory(const RunContext& ctx, const Portfolio& p) const override {
    const SamplePlan plan = plan_samples(p, ctx.device, ctx.mpi);
    MemoryPlan m;
    const std::size_t moments = static_cast<std::size_t>(plan.chunk_blocks) * kernels::pricing::kMoments * sizeof(double);
    m.host_bytes = moments;   // the chunk's block moments, copied back
    // The largest group's Longstaff-Schwartz regression states and cash
    // flows, where the kernels fit them (groups fit one after the other).
    std::size_t regression = 0;
    for (const PathGroup& g : path_groups(p)) regression = std::max(regression, regression_bytes(p, g, ctx.mpi.size()));
    m.add(ctx.device, plan.device_bytes + regression);
    m.hint = "lower pricing.chunk_paths (now " + std::to_string(p.chunk_paths) +
             (p.chunk_paths == 0 ? ", chosen by the backend" : "") +
             ") or run on more ranks: memory per rank grows with the chunk, never with pricing.paths";
    if (regression > 0) {
      m.hint += "; American options keep pricing.regression_paths (now " + std::to_string(p.regression_paths) +
                ") x exercise dates doubles over the ranks";
    }
    return m;
  }

  std::unique_ptr<Simulation> start(RunContext& ctx, const Portfolio& p) const override;

  std::vector<CheckResult> self_checks(RunContext& ctx) const override {
    // European calls and puts across moneyness, maturity, volatility and
    // dividends, against Black-Scholes. A check passes when the estimate is
    // within z standard errors, z chosen so that all checks together raise a
    // false alarm with probability 1e-3 (Bonferroni: z = Phi^{-1}(1 - 1e-3/(2k))).
    struct Case {
      Instrument in;
      bool antithetic;
    };
    const Case cases[] = {
        {{"european call ATM q=2%", "european", true, 100, 1.0, 0}, false},
        {{"european put ATM q=2%", "european", false, 100, 1.0, 0}, false},
        {{"european call ITM K=80", "european", true, 80, 1.0, 0}, false},
        {{"european put OTM K=80", "european", false, 80, 1.0, 0}, false},
        {{"european call OTM K=130 vol=30%", "european", true, 130, 2.0, 1}, false},
        {{"european call T=0.1 K=105", "european", true, 105, 0.1, 1}, false},
        {{"european put vol=60% K=110", "european", false, 110, 0.5, 2}, false},
        {{"european call ATM antithetic", "european", true, 100, 1.0, 0}, true},
        {{"european put ITM K=120 antithetic", "european", false, 120, 1.5, 1}, true},
    };
    // One path group (252 steps a year) with one instrument per path
    // closed form: cash-or-nothing, discrete geometric Asian,
    // Reiner-Rubinstein barriers, Goldman-Sosin-Gatto and Conze-Viswanathan
    // lookbacks (continuous: Broadie-Glasserman-Kou shift, a bias of about
    // 0.15% of the price, below a tenth of the tolerance at these paths).
    const std::vector<Instrument> path_cases = {
        {.name = "digital call K=105 cash=10", .type = "digital", .strike = 105, .maturity = 1.0, .cash = 10},
        {.name = "geometric asian call 12 fixings", .type = "asian", .strike = 100, .maturity = 1.0, .fixings = 12,
         .geometric = true},
        {.name = "barrier down-and-out call H=90 rebate 2", .type = "barrier", .strike = 100, .maturity = 1.0,
         .barrier = 90, .rebate = 2},
        {.name = "barrier up-and-in put H=115", .type = "barrier", .call = false, .strike = 100, .maturity = 1.0,
         .barrier = 115, .kind = {true, true}},
        {.name = "lookback floating call", .type = "lookback", .maturity = 1.0, .floating = true},
        {"lookback fixed put K=95", "lookback", false, 95, 1.0, 0}};
    // Models and baskets: Heston by both schemes, Merton, Stulz max/min and the
    // geometric basket on correlated GBM assets (50 steps a year: the
    // schemes' bias there is below half a standard error at 2^15 paths).
    Portfolio models{.rate = 0.03, .paths = std::int64_t{1} << 15, .seed = 20261124, .steps_per_year = 50};
    const Asset h{.name = "H", .spot = 100.0, .dividend = 0.02, .model = "heston", .v0 = 0.04, .kappa = 4.0,
                  .theta = 0.25, .xi = 1.0, .rho = -0.5};
    Asset hf = h;
    hf.name = "HF";
    hf.qe = false;
    const Asset m{.name = "M", .spot = 100.0, .dividend = 0.02, .vol = 0.2, .model = "merton", .jump_intensity = 1.0,
                  .jump_mean = -0.1, .jump_vol = 0.15};
    models.assets = {h, hf, m, {"B1", 100.0, 0.01, 0.2, "gbm"}, {"B2", 95.0, 0.0, 0.3, "gbm"}};
    models.correlation.assign(25, 0.0);
    for (int i = 0; i < 5; ++i) models.correlation[static_cast<std::size_t>(6 * i)] = 1.0;
    models.correlation[3 * 5 + 4] = models.correlation[4 * 5 + 3] = 0.6;
    models.instruments = {
        {"heston QE call K=100", "european", true, 100, 1.0, 0},
        {"heston full-truncation put K=110", "european", false, 110, 1.0, 1},
        {"merton call K=100", "european", true, 100, 1.0, 2},
        {.name = "basket max call, rho=0.6", .type = "basket", .strike = 100, .maturity = 1.0, .asset = 3,
         .basket_assets = {3, 4}, .basket = "max"},
        {.name = "basket min put, rho=0.6", .type = "basket", .call = false, .strike = 100, .maturity = 1.0, .asset = 3,
         .basket_assets = {3, 4}, .basket = "min"},
        {.name = "geometric basket call, rho=0.6", .type = "basket", .strike = 100, .maturity = 1.0, .asset = 3,
         .basket_assets = {3, 4}, .geometric = true, .weights = {0.5, 0.5}}};
    // Quasi-Monte Carlo with control variates: 16 Sobol' replicates of
    // 2^14 points; the estimate over its standard error is Student's t
    // with 15 degrees of freedom, so its tolerance is t's quantile.
    const Portfolio qmc{.assets = {{"A", 100.0, 0.02, 0.25, "gbm"}},
                        .instruments = {{"sobol european call, control variate", "european", true, 100, 1.0, 0},
                                        {.name = "sobol geometric asian call", .type = "asian", .strike = 100,
                                         .maturity = 1.0, .fixings = 12, .geometric = true}},
                        .rate = 0.05,
                        .paths = std::int64_t{16} << 14,
                        .seed = 20261125,
                        .sobol = true,
                        .replicates = 16,
                        .control_variate = true,
                        .steps_per_year = 12};
    const int k =
        static_cast<int>(std::size(cases) + path_cases.size() + models.instruments.size() + qmc.instruments.size());
    const double alpha = 1e-3 / (2.0 * k);
    const double z_normal = rng::normal_quantile(1.0 - alpha);
    const double z_t = boost::math::quantile(boost::math::complement(boost::math::students_t(qmc.replicates - 1), alpha));
    double z = z_normal;
    std::vector<CheckResult> results;
    auto check = [&](const Portfolio& p) {
      const SamplePlan plan = plan_samples(p, ctx.device, ctx.mpi);
      const std::vector<Estimate> est = price_portfolio(p, plan, ctx.device, ctx.precision, ctx.mpi);
      for (std::size_t i = 0; i < est.size(); ++i) {
        char d[96];
        std::snprintf(d, sizeof d, "%.2f se, %lld paths", z, static_cast<long long>(est[i].paths));
        const Instrument& in = p.instruments[i];
        results.push_back(CheckResult::within(in.name, est[i].price, reference_for(p, in)->price,
                                              z * est[i].standard_error, d));
      }
    };
    const Portfolio base{
        .assets = {{"A", 100.0, 0.02, 0.2, "gbm"}, {"B", 100.0, 0.0, 0.3, "gbm"}, {"C", 100.0, 0.0, 0.6, "gbm"}},
        .rate = 0.05,
        .seed = 20261122};
    for (bool antithetic : {false, true}) {
      Portfolio p = base;
      p.paths = std::int64_t{1} << 21;
      p.antithetic = antithetic;
      for (const Case& c : cases) {
        if (c.antithetic == antithetic) p.instruments.push_back(c.in);
      }
      check(p);
    }
    Portfolio p = base;
    p.paths = std::int64_t{1} << 17;
    p.instruments = path_cases;
    check(p);
    check(models);
    z = z_t;
    check(qmc);
    return results;
  }
};

// The model's run as the engine's step loop drives it.
class PricingSimulation final : public Simulation {
 public:
  PricingSimulation(RunContext& ctx, const Portfolio& portfolio)
      : ctx_(ctx),
        portfolio_(portfolio),
        plan_(plan_samples(portfolio_, ctx.device, ctx.mpi)),
        run_(portfolio_, plan_, ctx.device, ctx.precision, ctx.mpi, &ctx.timers),
        references_(references_of(portfolio_)) {
    if (portfolio_.antithetic && portfolio_.paths % 2 == 1) {
      ctx.out << "note: pricing.paths = " << portfolio_.paths << " is odd; antithetic pairs need " << plan_.paths
              << "\n";
    }
  }

  std::int64_t steps() const override { return run_.steps(); }
  std::int64_t steps_done() const override { return run_.steps_done(); }
  void advance() override { run_.advance(); }   // collective
  // Paths simulated: the Americans' regression paths, then the pricing paths.
  double work_total() const override { return run_.paths_total(); }
  double work_done() const override { return run_.paths_done(); }
  std::string work_unit() const override { return "paths"; }
  double work_fraction() const override { return run_.work_fraction(); }
  void resume_step_count(std::int64_t steps_then) override { run_.resume_step_count(steps_then); }
  std::optional<std::string> nonfinite() const override { return run_.nonfinite(); }
  void inject_nonfinite() override { run_.inject_nonfinite(); }
  // pricing.repeat: the whole portfolio again, from scratch (regression
  // and pricing passes, with their allocations), warm; the seconds of the
  // last repetition, slowest rank. Each must give the first run's bits.
  double warm_seconds(const std::vector<Estimate>& first) {
    double seconds = 0.0;
    for (int r = 1; r < portfolio_.repeat; ++r) {
      // The results are in: a stop request cuts the repetitions short
      // rather than waiting for all of them.
      if (const int sig = static_cast<int>(ctx_.mpi.max(static_cast<double>(stop_signal()))); sig != 0) {
        ctx_.out << "pricing.repeat: " << signal_name(sig) << " after " << r << " of " << portfolio_.repeat
                 << " runs; the results are complete\n";
        break;
      }
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<Estimate> again = price_portfolio(portfolio_, plan_, ctx_.device, ctx_.precision, ctx_.mpi);
      seconds = ctx_.mpi.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      for (std::size_t i = 0; i < again.size(); ++i) {
        if (again[i].price != first[i].price) {
          throw NumericalError("pricing.repeat: repetition " + std::to_string(r + 1) + " of " +
                               portfolio_.instruments[i].name + " gave another price than the first run");
        }
      }
    }
    return seconds;
  }

  void save(StateWriter& w) const override { run_.save(w); }
  void restore(StateReader& r) override { run_.restore(r); }

  Performance finish() override {
    const std::vector<Estimate> est = run_.finish();
    auto check = [](const Estimate& e, const std::string& what) {
      if (!std::isfinite(e.price) || !std::isfinite(e.standard_error)) throw NumericalError("non-finite " + what);
    };
    const std::vector<Instrument>& in = portfolio_.instruments;
    for (std::size_t i = 0; i < est.size(); ++i) check(est[i], "estimate for instrument " + in[i].name);
    for (const GreekEstimate& g : run_.greeks()) check(g.estimate, g.name + " of instrument " + in[g.instrument].name);
    const double warm = warm_seconds(est);
    {
      auto t = ctx_.timers.scope("output");
      if (ctx_.output != nullptr)
        write_results(*ctx_.output, portfolio_, est, run_.greeks(), references_, ctx_.mpi.root());
    }
    ctx_.out << "\n" << format_table(portfolio_, est, references_) << format_greeks(portfolio_, run_.greeks());
    // The steps' time: the device passes and the fits between them on the host.
    const double seconds = ctx_.mpi.max(ctx_.timers.seconds("compute") + ctx_.timers.seconds("regression_fit"));
    // Paths computed by this process (a restart computes only what its
    // checkpoint lacked), over all ranks.
    const double blocks = ctx_.mpi.sum(static_cast<double>(run_.blocks_computed()));
    const double paths = std::min(static_cast<double>(plan_.paths),
                                  blocks * static_cast<double>(kernels::pricing::kSamplesPerBlock) *
                                      static_cast<double>(plan_.paths_per_sample));
    const double option_paths = paths * static_cast<double>(portfolio_.instruments.size());
    Performance perf;
    perf.figures = {{"paths", "paths", static_cast<double>(plan_.paths)},
                    {"paths_this_run", "paths", paths},
                    {"instruments", "", static_cast<double>(portfolio_.instruments.size())},
                    {"compute_seconds", "s", seconds},
                    {"option_paths_per_second", "paths/s", seconds > 0 ? option_paths / seconds : 0.0}};
    if (portfolio_.repeat > 1) perf.figures.push_back({"warm_seconds", "s", warm});
    return perf;
  }

 private:
  RunContext& ctx_;
  Portfolio portfolio_;
  SamplePlan plan_;
  PortfolioRun run_;
  References references_;
};

std::unique_ptr<Simulation> PricingModel::start(RunContext& ctx, const Portfolio& p) const {
  return std::make_unique<PricingSimulation>(ctx, p);
}

}  // namespace
}  // namespace strata::pricing

using PricingModel = strata::pricing::PricingModel;
STRATA_REGISTER_MODEL(PricingModel);
