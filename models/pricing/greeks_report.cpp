#include "models/pricing/greeks_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "models/pricing/greeks.hpp"

namespace strata::pricing {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string units_of(const std::string& name) {
  if (name == "delta") return "currency per currency of spot";
  if (name == "gamma") return "currency per currency^2 of spot";
  if (name == "vega") return "currency per 1.0 of volatility";
  if (name == "rho") return "currency per 1.0 of rate";
  if (name == "theta") return "currency per year (dV/dt)";
  return "currency per 1.0 of " + name.substr(5);   // vega_v0, vega_theta, vega_xi
}

// One Greek of one instrument: a scalar or one value per basket asset.
struct GreekValues {
  std::size_t instrument;
  std::string name;
  bool per_asset;
  std::vector<double> value, stderr_;
  std::string method;   // the first element's (a basket's assets share it)
};

std::vector<GreekValues> collect(const Portfolio& p, const std::vector<GreekEstimate>& greeks) {
  std::vector<GreekValues> out;
  for (const GreekEstimate& g : greeks) {
    const auto same = [&](const GreekValues& w) { return w.instrument == g.instrument && w.name == g.name; };
    auto v = std::find_if(out.begin(), out.end(), same);
    if (v == out.end()) {
      const Instrument& in = p.instruments[g.instrument];
      const bool per_asset = per_asset_greeks(in) && g.element >= 0;
      const std::size_t n = per_asset ? assets_of(in).size() : 1;
      out.push_back(
          {g.instrument, g.name, per_asset, std::vector<double>(n, kNaN), std::vector<double>(n, kNaN), g.method});
      v = std::prev(out.end());
    }
    const auto e = static_cast<std::size_t>(g.element < 0 ? 0 : g.element);
    v->value[e] = g.estimate.price;
    v->stderr_[e] = g.estimate.standard_error;
  }
  // In the order of the instruments (the slots come group by group).
  std::stable_sort(out.begin(), out.end(),
                   [](const GreekValues& a, const GreekValues& b) { return a.instrument < b.instrument; });
  return out;
}

}  // namespace

void write_greeks(H5Output& out, const Portfolio& p, const std::vector<GreekEstimate>& greeks, bool root) {
  for (const GreekValues& v : collect(p, greeks)) {
    const Instrument& in = p.instruments[v.instrument];
    const std::string path = "/pricing/" + in.name + "/" + v.name;
    const std::string units = units_of(v.name);
    for (const auto& [suffix, data] : {std::pair{std::string(), &v.value}, std::pair{std::string("_stderr"), &v.stderr_}}) {
      if (v.per_asset) {
        const std::vector<double> none;
        out.rows(path + suffix, root ? *data : none, 0, static_cast<std::int64_t>(data->size()), 0);
        out.write_units(path + suffix, units);
        std::vector<std::string> names;
        for (int a : assets_of(in)) names.push_back(p.assets[static_cast<std::size_t>(a)].name);
        out.attribute(path + suffix, "assets", names);
      } else {
        out.scalar(path + suffix, data->front(), units);
      }
    }
    out.attribute(path, "method", v.method);
    const std::optional<GreekReference> r = v.per_asset ? std::nullopt : greek_reference(p, in, v.name);
    if (r) {
      out.scalar(path + "_reference", r->value, units);
      out.attribute(path + "_reference", "method", r->method);
    }
  }
}

void add_greek_columns(H5Table& summary, const Portfolio& p, const std::vector<GreekEstimate>& greeks) {
  std::vector<std::string> names;
  for (const GreekEstimate& g : greeks) {
    if (g.element < 0 && std::find(names.begin(), names.end(), g.name) == names.end()) names.push_back(g.name);
  }
  for (const std::string& name : names) {
    std::vector<double> value(p.instruments.size(), kNaN), se(p.instruments.size(), kNaN);
    for (const GreekEstimate& g : greeks) {
      if (g.name != name || g.element >= 0) continue;
      value[g.instrument] = g.estimate.price;
      se[g.instrument] = g.estimate.standard_error;
    }
    summary.columns.push_back({name, units_of(name), value});
    summary.columns.push_back({name + "_stderr", units_of(name), se});
  }
}

std::string fixed_text(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  const bool rounds_to_zero = text[0] == '-' && std::string(text).find_first_of("123456789") == std::string::npos;
  return rounds_to_zero ? std::string(text + 1) : std::string(text);
}

std::string format_greeks(const Portfolio& p, const std::vector<GreekEstimate>& greeks) {
  if (greeks.empty()) return {};
  // Columns as wide as their longest entry, so no name breaks the table.
  int name_width = 16, asset_width = 8;
  for (const Instrument& in : p.instruments) name_width = std::max(name_width, static_cast<int>(in.name.size()));
  for (const Asset& a : p.assets) asset_width = std::max(asset_width, static_cast<int>(a.name.size()));
  std::string text;
  char line[1024];
  std::snprintf(line, sizeof line, "\n%-*s %-11s %-*s %15s %11s %15s %9s\n", name_width, "instrument", "greek",
                asset_width, "asset", "value", "stderr", "reference", "diff/se");
  text += line;
  for (const GreekValues& v : collect(p, greeks)) {
    const Instrument& in = p.instruments[v.instrument];
    const std::optional<GreekReference> r = v.per_asset ? std::nullopt : greek_reference(p, in, v.name);
    for (std::size_t e = 0; e < v.value.size(); ++e) {
      if (std::isnan(v.value[e])) continue;
      const std::string asset = v.per_asset                ? p.assets[static_cast<std::size_t>(assets_of(in)[e])].name
                                : assets_of(in).size() > 1 ? "-"
                                                           : p.assets[static_cast<std::size_t>(in.asset)].name;
      char ref[32] = "-", z[32] = "-";
      if (r) {
        std::snprintf(ref, sizeof ref, "%s", fixed_text(r->value, 8).c_str());
        // No standard error, no ratio (an unresolved estimate is not "+0.00").
        if (v.stderr_[e] > 0) std::snprintf(z, sizeof z, "%+.2f", (v.value[e] - r->value) / v.stderr_[e]);
      }
      std::snprintf(line, sizeof line, "%-*s %-11s %-*s %15s %11.3e %15s %9s\n", name_width, in.name.c_str(),
                    v.name.c_str(), asset_width, asset.c_str(), fixed_text(v.value[e], 8).c_str(), v.stderr_[e], ref, z);
      text += line;
    }
  }
  return text;
}

}  // namespace strata::pricing
