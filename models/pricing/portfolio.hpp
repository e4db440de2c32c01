// The pricing input as typed values: assets, instruments and Monte Carlo
// settings, read from a validated Config with the cross-key checks done.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {
class Config;
class Schema;
}  // namespace strata

namespace strata::pricing {

struct Asset {
  std::string name;
  double spot = 0, dividend = 0, vol = 0;
  std::string model;   // gbm
};

struct Instrument {
  std::string name;
  std::string type;     // european
  bool call = true;
  double strike = 0, maturity = 0;
  int asset = 0;        // index into Portfolio::assets
};

struct Portfolio {
  std::vector<Asset> assets;
  std::vector<Instrument> instruments;
  double rate = 0;
  std::int64_t paths = 0;        // as asked
  bool antithetic = false;
  std::int64_t chunk_paths = 0;  // 0: chosen by backend
  std::uint64_t seed = 0;
};

void declare_schema(Schema& s);
Portfolio read_portfolio(const Config& c);   // throws InputError naming the key

// Black-Scholes price of an instrument (all of today's types have one).
double reference_price(const Portfolio& p, const Instrument& i);

}  // namespace strata::pricing
