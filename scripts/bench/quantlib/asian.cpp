// QuantLib's MCDiscreteArithmeticAPEngine on the workload of
// inputs/pricing/asian_bench.toml: an arithmetic-average call with 12
// monthly fixings (the last at maturity), S = K = 100, r = 5%, q = 2%,
// sigma = 25%, T = 1, pseudo-random, no Brownian bridge and no control
// variate (as strata's input). QuantLib's time grid is the 12 fixing times,
// so a path is 12 exact log-normal steps. scripts/bench/pricing builds and
// times it.
#include <ql/exercise.hpp>
#include <ql/instruments/asianoption.hpp>
#include <ql/instruments/payoffs.hpp>
#include <ql/pricingengines/asian/mc_discr_arith_av_price.hpp>
#include <utility>
#include <vector>

#include "market.hpp"

int main(int argc, char** argv) {
  using namespace QuantLib;
  const bench::Args a = bench::parse(argc, argv);
  const auto proc = bench::process({100.0, 0.05, 0.02, 0.25});
  std::vector<Date> fixings;
  for (int k = 1; k <= 12; ++k) fixings.push_back(bench::today() + 30 * k);
  DiscreteAveragingAsianOption option(Average::Arithmetic, 0.0, 0, fixings,
                                      ext::make_shared<PlainVanillaPayoff>(Option::Call, 100.0),
                                      ext::make_shared<EuropeanExercise>(fixings.back()));
  bench::time_and_print(a, [&] {
    option.setPricingEngine(MakeMCDiscreteArithmeticAPEngine<PseudoRandom>(proc)
                                .withBrownianBridge(false)
                                .withSamples(a.samples)
                                .withAntitheticVariate(a.antithetic)
                                .withSeed(a.seed));
    return std::make_pair(option.NPV(), option.errorEstimate());
  });
}
