// The flat Black-Scholes market the QuantLib peer programs price in, and the
// line they print. Day count Actual/360 on a 360-day year, so that a
// maturity of 360 days is T = 1 exactly and monthly fixings every 30 days
// are at k/12, the times strata's inputs use.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ql/handle.hpp>
#include <ql/processes/blackscholesprocess.hpp>
#include <ql/quotes/simplequote.hpp>
#include <ql/settings.hpp>
#include <ql/termstructures/volatility/equityfx/blackconstantvol.hpp>
#include <ql/termstructures/yield/flatforward.hpp>
#include <ql/time/calendars/nullcalendar.hpp>
#include <ql/time/daycounters/actual360.hpp>

namespace bench {

struct Market {
  double spot, rate, dividend, vol;
};

inline QuantLib::Date today() { return QuantLib::Date(2, QuantLib::January, 2026); }

inline QuantLib::ext::shared_ptr<QuantLib::BlackScholesMertonProcess> process(const Market& m) {
  using namespace QuantLib;
  Settings::instance().evaluationDate() = today();
  const DayCounter dc = Actual360();
  auto flat = [&](double r) {
    return Handle<YieldTermStructure>(ext::make_shared<FlatForward>(today(), r, dc, Continuous));
  };
  Handle<BlackVolTermStructure> vol(ext::make_shared<BlackConstantVol>(today(), NullCalendar(), m.vol, dc));
  return ext::make_shared<BlackScholesMertonProcess>(Handle<Quote>(ext::make_shared<SimpleQuote>(m.spot)),
                                                     flat(m.dividend), flat(m.rate), vol);
}

// Usage: PROGRAM SAMPLES ANTITHETIC(0|1) SEED; a sample is an antithetic
// pair when ANTITHETIC is 1, as in QuantLib's MonteCarloModel.
struct Args {
  unsigned long samples;
  bool antithetic;
  unsigned long seed;
};

inline Args parse(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s SAMPLES ANTITHETIC(0|1) SEED\n", argv[0]);
    std::exit(2);
  }
  return Args{std::strtoul(argv[1], nullptr, 10), std::atoi(argv[2]) != 0, std::strtoul(argv[3], nullptr, 10)};
}

// Times price() (engine set-up and the whole simulation: what a user waits
// for) and prints one line that scripts/bench/pricing parses.
template <class Price>
void time_and_print(const Args& a, Price price) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto [npv, stderr_] = price();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("paths %lu seconds %.6f price %.8f stderr %.8e\n", a.samples * (a.antithetic ? 2 : 1), s, npv,
              stderr_);
}

}  // namespace bench
