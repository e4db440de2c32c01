// The parameter schema: every input key declared once (name, type, default,
// unit, range, doc). Validation, `strata models` and docs/inputs.md all come
// from it. Keys are dotted TOML paths; an array of tables is declared as a
// table_list and its fields as "table.list[].field".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strata {

enum class ParamType { integer, real, boolean, string, choice, string_list, integer_list, real_list, real_matrix, table_list };

std::string_view to_string(ParamType t);

using ParamValue = std::variant<std::monostate, std::int64_t, double, bool, std::string, std::vector<std::string>,
                                std::vector<std::int64_t>>;

struct Range {
  std::optional<double> min, max;
  bool min_exclusive = false, max_exclusive = false;
  bool contains(double v) const;
  std::string describe() const;   // "> 0", "[1, 100]", "" when unbounded
};

struct Param {
  std::string key;                   // "pricing.paths", "pricing.asset[].vol"
  ParamType type = ParamType::real;
  ParamValue default_value;          // monostate: required
  std::string unit;                  // "" for dimensionless
  Range range;                       // numbers; for table_list: number of entries
  std::vector<std::string> choices;  // choice: allowed values; real: words allowed besides numbers
  std::string doc;
  // May differ between a checkpoint and the run that restarts from it: how
  // long to run (`pricing.paths`), where to write, how often to checkpoint.
  // Every other key must be equal, or the restart is refused.
  bool restart_safe = false;
  // Other names a user may write for this key ("dt" for a CFL number that
  // sets the time step): such a key is suggested for them, as for a typo.
  std::vector<std::string> aliases{};

  bool required() const { return std::holds_alternative<std::monostate>(default_value); }
  std::string default_text() const;  // as TOML, "" when required
};

class Schema {
 public:
  // Builders; each returns the declared Param for chaining tweaks.
  Param& integer(std::string key, std::int64_t def, std::string unit, Range range, std::string doc);
  Param& real(std::string key, std::optional<double> def, std::string unit, Range range, std::string doc);
  Param& boolean(std::string key, bool def, std::string doc);
  Param& string(std::string key, std::optional<std::string> def, std::string doc);
  Param& choice(std::string key, std::string def, std::vector<std::string> choices, std::string doc);
  Param& string_list(std::string key, std::optional<std::vector<std::string>> def, std::string doc);
  // A list of integers, each within `range` (e.g. a decomposition [px, py]).
  Param& integer_list(std::string key, std::vector<std::int64_t> def, Range range, std::string doc);
  // Lists of reals (weights) and lists of lists (a correlation matrix), each
  // number within `range`; the default is empty.
  Param& real_list(std::string key, std::string unit, Range range, std::string doc);
  Param& real_matrix(std::string key, std::string unit, Range range, std::string doc);
  Param& table_list(std::string key, Range count, std::string doc);

  const Param* find(std::string_view key) const;
  // The declared name of an input key: "pricing.asset.0.vol" (or, as --set
  // and [sweep] allow, "pricing.asset.SPX.vol") -> "pricing.asset[].vol".
  std::string key_of(std::string_view key) const;
  Param& find_mut(std::string_view key);   // a declared key; throws std::logic_error otherwise
  // Whether `prefix` names a table that holds declared keys ("pricing", "pricing.asset[]").
  bool is_table(std::string_view prefix) const;
  // The declared key closest to `key` by edit distance, if close enough to be a likely typo.
  std::optional<std::string> nearest(std::string_view key) const;
  // Declared keys directly inside table `prefix` ("" for the top level, "pricing.asset[]").
  std::vector<const Param*> fields_of(std::string_view prefix) const;

  const std::vector<Param>& params() const { return params_; }

 private:
  Param& add(Param p);
  std::vector<Param> params_;
};

// Whether dotted `key` lies inside table `table` ("pricing.asset[].vol" in "pricing.asset[]").
bool is_inside(std::string_view key, std::string_view table);
// `v` in the shortest form that reads back as the same double ("0.05", "80").
std::string shortest_text(double v);
// The same as a TOML float ("80.0"); "nan" for every NaN.
std::string toml_float(double v);

// Optimal string alignment distance: insertions, deletions, substitutions
// and swaps of adjacent letters, each one edit.
std::size_t edit_distance(std::string_view a, std::string_view b);
// Whether `a` is a likelier intended word than `b` for the typo `given`: fewer
// edits; then the length nearer given's; then the same first letter; then
// more letters in common (the earlier-declared word wins a full tie).
bool likelier_typo_of(std::string_view given, std::string_view a, std::string_view b);
// The word of `words` nearest `given`, within `max_edits` edits (ties broken
// by likelier_typo_of): the suggestion for a typo, never another word.
std::optional<std::string> nearest_word(std::string_view given, const std::vector<std::string>& words,
                                        std::size_t max_edits);
// `words` with ", " between them.
std::string comma_list(const std::vector<std::string>& words);
// "; did you mean 'KEY'?" for a suggested schema key, written as in an input
// file (a list's "[]" as ".N"); "" without a suggestion.
std::string did_you_mean(const std::optional<std::string>& key);

}  // namespace strata
