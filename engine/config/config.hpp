// The resolved input of one run: built-in defaults, then the TOML file, then
// --set overrides, validated against the schema. Every key of the schema is
// present afterwards, so the stored text re-runs the experiment exactly.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config/schema.hpp"

namespace strata {

struct Override {
  std::string key;    // "pricing.paths", "pricing.asset.0.vol"
  std::string value;  // TOML value text; bare words are taken as strings
  std::string arg;    // how the user gave it, for messages: "--set key=value", "--backend cuda"
};

// Parses "key=value"; throws InputError for anything else.
Override parse_override(std::string_view arg);
// The text of input file `path`; an InputError naming it when it cannot be read.
std::string read_input_file(const std::string& path);
// `text` as TOML; an InputError "PATH:LINE:COLUMN: malformed TOML: ..." when it is not.
toml::table parse_input(std::string_view text, const std::string& path);

// What loading does with a [sweep] table: `strata run` rejects it (the input
// describes many runs), `strata sweep` removes it before validating a point.
enum class SweepTable { reject, remove };

class Config {
 public:
  // schema_for(model) returns the full schema (engine keys + the model's);
  // it throws InputError for an unknown model. Throws InputError naming the
  // file, line, key and value for every kind of bad input.
  static Config load(const std::string& path, const std::vector<Override>& overrides,
                     const std::function<Schema(const std::string& model)>& schema_for,
                     SweepTable sweep = SweepTable::reject);
  // The same from TOML text already read; `display_path` is the file that
  // messages name (lines are the text's lines).
  static Config load_text(std::string_view text, const std::string& display_path,
                          const std::vector<Override>& overrides,
                          const std::function<Schema(const std::string& model)>& schema_for,
                          SweepTable sweep = SweepTable::reject);

  const std::string& path() const { return path_; }
  const Schema& schema() const { return schema_; }
  const toml::table& table() const { return table_; }
  std::string to_toml() const;          // the resolved configuration, every key
  std::string model() const { return string("run.model"); }

  // Typed access by dotted key; list entries by index: "pricing.asset.0.spot".
  std::int64_t integer(std::string_view key) const;
  double real(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::string string(std::string_view key) const;
  std::vector<std::string> strings(std::string_view key) const;
  std::vector<std::int64_t> integers(std::string_view key) const;
  std::vector<double> reals(std::string_view key) const;                    // real_list
  std::vector<std::vector<double>> real_rows(std::string_view key) const;   // real_matrix
  std::size_t count(std::string_view list_key) const;   // entries of an array of tables
  // The word a real key holds instead of a number (Param::choices), if any.
  std::optional<std::string> word(std::string_view key) const;

  // "FILE:LINE", "--set KEY=VALUE" or "default" for where a key's value came from.
  std::string where(std::string_view key) const;
  // An InputError for a value that passed the schema but not the model's own
  // checks (unknown asset name, duplicate instrument name, ...).
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;

 private:
  Config() = default;
  void apply_override(const Override& o);
  void validate_and_fill();
  void validate_value(const Param& p, toml::node& v, const std::string& key) const;
  const toml::node* node(std::string_view key) const;

  std::string path_;
  Schema schema_;
  toml::table table_;
  std::map<std::string, std::string, std::less<>> overridden_;  // key -> "--set ..."
  std::map<std::string, int, std::less<>> lines_;               // key -> line in the file
};

}  // namespace strata
