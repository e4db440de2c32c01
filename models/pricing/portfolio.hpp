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
  std::string model;   // gbm | heston | merton
  double v0 = 0, kappa = 0, theta = 0, xi = 0, rho = 0;   // heston
  bool qe = true;                                         // heston scheme: QE, else full truncation
  double jump_intensity = 0, jump_mean = 0, jump_vol = 0; // merton
};

// A barrier's side and kind, from barrier_type ("down-and-out", ...).
struct BarrierKind {
  bool up = false, knock_in = false;
};

struct Instrument {
  std::string name;
  std::string type;     // european | digital | asian | barrier | lookback | basket | american
  bool call = true;
  double strike = 0, maturity = 0;
  int asset = 0;        // index into Portfolio::assets (a basket's first)
  std::vector<int> basket_assets{};   // basket: every asset, in the order given
  double cash = 1;      // digital: paid when in the money
  int fixings = 0;      // asian, discrete barrier/lookback: dates T/n, 2T/n, ..., T; american: exercise dates
  bool geometric = false;                 // asian average
  double barrier = 0, rebate = 0;         // barrier level; rebate (out: when hit, in: at T if never hit)
  BarrierKind kind{};
  bool continuous = true;                 // barrier/lookback monitoring
  bool floating = false;                  // lookback: strike = "floating"
  std::string basket = "average";         // basket: average | max | min
  std::vector<double> weights{};            // basket average, american on several assets: one per asset
  bool laguerre = true;                     // american: regression basis (else monomial)
  int degree = 3;                           // american: basis degree
};

struct Portfolio {
  std::vector<Asset> assets{};
  std::vector<Instrument> instruments{};
  double rate = 0;
  std::int64_t paths = 0;        // as asked
  bool antithetic = false;
  std::int64_t chunk_paths = 0;  // 0: chosen by backend
  std::uint64_t seed = 0;
  bool sobol = false;            // sampler = "sobol"
  int replicates = 1;            // sobol: independent scramblings (1 for philox)
  bool control_variate = false;  // control_variates.hpp
  int steps_per_year = 252;
  std::vector<double> correlation{};   // n x n row-major over assets; empty: independent
  std::int64_t regression_paths = 0; // american: paths of the Longstaff-Schwartz regression pass
  int repeat = 1;                    // price the portfolio this many times (warm timing)
  std::vector<std::string> greeks{};   // pricing.greeks, in the order asked (greeks.hpp)

  // Samples of a replicate: a path, or an antithetic pair (Sobol': a point).
  std::int64_t samples() const { return (antithetic ? (paths + 1) / 2 : paths) / replicates; }
};

// The assets an instrument's paths need (a basket's list, else its asset).
std::vector<int> assets_of(const Instrument& i);

// Lower Cholesky factor of the correlation of `assets` (row-major); identity
// when the portfolio has none.
std::vector<double> cholesky_of(const Portfolio& p, const std::vector<int>& assets);

void declare_schema(Schema& s);

// Names become HDF5 group names and table cells: letters, digits, '_', '-',
// '.', at most 63, not "summary".
bool plain_name(const std::string& n);
extern const char* const kNameRule;
Portfolio read_portfolio(const Config& c);   // throws InputError naming the key

// Whether the instrument reads its paths at its fixings (asian, discrete
// barrier or lookback, american: its exercise dates).
bool uses_fixings(const Instrument& i);

// Grid indices (1-based: index k is the state after step k) of the
// instrument's fixings on its time grid.
std::vector<int> fixing_steps(const Instrument& i, const std::vector<double>& grid);

// Instruments on the same assets and the same time grid share their paths.
// A European under GBM alone on its asset and maturity keeps the
// single-draw sampler; with others it joins their one-step group.
struct PathGroup {
  std::vector<int> assets;
  std::vector<double> grid;
  std::vector<std::size_t> instruments;   // indices into Portfolio::instruments
};
std::vector<PathGroup> path_groups(const Portfolio& p);   // without the lone Europeans
std::vector<std::size_t> lone_europeans(const Portfolio& p);

}  // namespace strata::pricing
