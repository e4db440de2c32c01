// The Greeks of a run as the person reads them: HDF5 datasets beside the
// prices, columns of /pricing/summary, and a printed table with closed
// forms and z scores.
#pragma once

#include <string>
#include <vector>

#include "engine/io/h5_output.hpp"
#include "models/pricing/monte_carlo.hpp"
#include "models/pricing/portfolio.hpp"

namespace strata::pricing {

// /pricing/<name>/<greek> and <greek>_stderr (a scalar, or over a basket's
// assets), and <greek>_reference where greek_reference() has one.
// Collective; root supplies the per-asset arrays' data.
void write_greeks(H5Output& out, const Portfolio& p, const std::vector<GreekEstimate>& greeks, bool root);

// Summary columns <greek>, <greek>_stderr for every scalar Greek asked
// (NaN where an instrument has none, or has one per asset).
void add_greek_columns(H5Table& summary, const Portfolio& p, const std::vector<GreekEstimate>& greeks);

// v with `decimals` decimals ("%.*f"), without the sign of a value that
// rounds to zero: a zero gamma prints as 0.00000000, never -0.00000000.
std::string fixed_text(double v, int decimals);

// One row per instrument, Greek and asset: value, stderr, reference, z.
std::string format_greeks(const Portfolio& p, const std::vector<GreekEstimate>& greeks);

}  // namespace strata::pricing
