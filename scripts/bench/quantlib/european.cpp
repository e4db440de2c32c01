// QuantLib's MCEuropeanEngine on the workload of
// inputs/pricing/european_bench.toml: an at-the-money call, S = K = 100,
// r = 5%, q = 0, sigma = 20%, T = 1, pseudo-random (Mersenne twister and
// inverse cumulative normal), one time step (exact log-normal terminal
// sampling, as strata does). scripts/bench/pricing builds and times it.
#include <ql/exercise.hpp>
#include <ql/instruments/payoffs.hpp>
#include <ql/instruments/vanillaoption.hpp>
#include <ql/pricingengines/vanilla/mceuropeanengine.hpp>
#include <utility>

#include "market.hpp"

int main(int argc, char** argv) {
  using namespace QuantLib;
  const bench::Args a = bench::parse(argc, argv);
  const auto proc = bench::process({100.0, 0.05, 0.0, 0.2});
  VanillaOption option(ext::make_shared<PlainVanillaPayoff>(Option::Call, 100.0),
                       ext::make_shared<EuropeanExercise>(bench::today() + 360));
  bench::time_and_print(a, [&] {
    option.setPricingEngine(MakeMCEuropeanEngine<PseudoRandom>(proc)
                                .withSteps(1)
                                .withSamples(a.samples)
                                .withAntitheticVariate(a.antithetic)
                                .withSeed(a.seed));
    return std::make_pair(option.NPV(), option.errorEstimate());
  });
}
