// Where an instrument's keys come from: a [[pricing.instrument]] table of
// the input, or a row of the portfolio CSV (pricing.portfolio_file). Both
// read through the same schema and the same cross-key checks, and name
// their place in errors (file:line and key; CSV file, row and column).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/pricing/portfolio.hpp"

namespace strata::pricing {

class InstrumentFields {
 public:
  virtual ~InstrumentFields() = default;
  // Typed values of instrument keys ("strike", "assets", ...), defaults filled.
  virtual double real(const std::string& key) const = 0;
  virtual std::optional<std::string> word(const std::string& key) const = 0;   // a real key's word
  virtual std::int64_t integer(const std::string& key) const = 0;
  virtual std::string text(const std::string& key) const = 0;                   // string or choice
  virtual std::vector<std::string> strings(const std::string& key) const = 0;
  virtual std::vector<double> reals(const std::string& key) const = 0;
  virtual bool given(const std::string& key) const = 0;
  [[noreturn]] virtual void fail(const std::string& key, const std::string& message) const = 0;
};

// The keys of one table of the input: "pricing.instrument.3.", "pricing.asset.0.".
std::unique_ptr<InstrumentFields> config_fields(const Config& c, const std::string& prefix);

// A key of another type or model is a mistake, not something to ignore:
// each key whose flag is false must hold its default (compared with it, so
// the stored /config, which lists every key, reads back). schema_prefix
// names the table's keys in the schema ("pricing.asset[].").
void reject_foreign(const InstrumentFields& f, const Schema& schema, const std::string& schema_prefix,
                    const std::string& owner, std::initializer_list<std::pair<const char*, bool>> belongs);

// The instrument the fields describe, every check done but the uniqueness
// of its name.
Instrument read_instrument(const InstrumentFields& f, const Portfolio& p, const Schema& schema);

// Every row of a portfolio CSV (header: instrument keys; lists such as
// assets and weights separated by ';'; '#' lines and blank lines skipped).
std::vector<Instrument> read_portfolio_csv(const std::string& path, const Schema& schema, const Portfolio& p);

}  // namespace strata::pricing
