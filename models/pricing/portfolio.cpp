#include "models/pricing/portfolio.hpp"

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "kernels/pricing/black_scholes.hpp"

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

  s.table_list("pricing.asset", Range{1.0, {}}, "underlying assets, one [[pricing.asset]] table each");
  s.string("pricing.asset[].name", std::nullopt, "unique name, used by instruments' `assets`");
  s.real("pricing.asset[].spot", std::nullopt, "currency", Range{0.0, {}, true}, "spot price today");
  s.real("pricing.asset[].dividend", 0.0, "1/year", Range{-1.0, 1.0}, "continuous dividend yield");
  s.choice("pricing.asset[].model", "gbm", {"gbm"}, "price dynamics: geometric Brownian motion");
  s.real("pricing.asset[].vol", std::nullopt, "1/sqrt(year)", Range{0.0, 5.0}, "volatility (gbm)");

  s.table_list("pricing.instrument", Range{1.0, {}}, "options to price, one [[pricing.instrument]] table each");
  s.string("pricing.instrument[].name", std::nullopt, "unique name; names the output group /pricing/<name>");
  s.choice("pricing.instrument[].type", "european", {"european"}, "payoff type");
  s.choice("pricing.instrument[].option", "", {"call", "put"}, "call or put");
  s.real("pricing.instrument[].strike", std::nullopt, "currency", Range{0.0, {}, true}, "strike price");
  s.real("pricing.instrument[].maturity", std::nullopt, "years", Range{0.0, 100.0, true}, "time to maturity");
  s.string_list("pricing.instrument[].assets", std::nullopt, "the asset(s) it is written on, by name");
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
    in.strike = c.real(k + "strike");
    in.maturity = c.real(k + "maturity");
    if (!plain_name(in.name)) c.fail(k + "name", kNameRule);
    for (const Instrument& j : p.instruments) {
      if (j.name == in.name) c.fail(k + "name", "two instruments have this name");
    }
    const std::vector<std::string> names = c.strings(k + "assets");
    if (names.size() != 1) c.fail(k + "assets", "a european option is written on exactly one asset");
    in.asset = -1;
    for (std::size_t a = 0; a < p.assets.size(); ++a) {
      if (p.assets[a].name == names[0]) in.asset = static_cast<int>(a);
    }
    if (in.asset < 0) c.fail(k + "assets", "no [[pricing.asset]] is named \"" + names[0] + "\"");
    p.instruments.push_back(in);
  }
  return p;
}

double reference_price(const Portfolio& p, const Instrument& i) {
  const Asset& a = p.assets[static_cast<std::size_t>(i.asset)];
  return kernels::black_scholes(i.call, a.spot, i.strike, p.rate, a.dividend, a.vol, i.maturity);
}

}  // namespace strata::pricing
