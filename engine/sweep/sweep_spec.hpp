// A parameter sweep: the [sweep] table of an input, expanded into points.
// Each point is the base input (its [sweep] table removed) plus the user's
// --set overrides plus one value per swept key, validated like any input
// before anything runs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/config.hpp"

namespace strata {

class MpiContext;

// One value of a swept key.
struct SweepValue {
  std::string toml;              // as TOML text, given to the point's input as an override
  std::string text;              // for --list and the summary's string columns
  std::optional<double> number;  // numbers (and booleans) for the summary's numeric columns
};

// One swept key and its values, in the order they were given.
struct SweepAxis {
  std::string key;  // the input key: "pricing.asset.0.vol"
  int line = 0;     // its line in the input file
  std::vector<SweepValue> values;
  bool numeric() const;  // every value has a number
};

class SweepSpec {
 public:
  // Reads INPUT's [sweep] table and expands it; every rank calls it. Throws
  // InputError naming the file, line and [sweep] key for a bad table. The
  // points are not validated yet: see validate().
  static SweepSpec load(const std::string& input, const std::vector<std::string>& set);

  // Loads every point's Config (schema, ranges, the model's own checks) on
  // every rank, collectively: a bad value is exit 2 before any point runs.
  void validate(const MpiContext& mpi) const;

  // The unit of a swept key as its schema declares it ("" when
  // dimensionless or the model is unknown), for the summary's columns.
  std::string unit_of(const SweepAxis& axis) const;

  const std::string& input() const { return input_; }
  const std::string& mode() const { return mode_; }
  const std::string& output_dir() const { return output_dir_; }
  const std::vector<SweepAxis>& axes() const { return axes_; }
  std::size_t points() const { return points_; }
  // Index of point `p` into each axis's values.
  std::vector<std::size_t> coordinates(std::size_t p) const;
  std::string point_name(std::size_t p) const;  // "point-0007"
  std::string point_dir(std::size_t p) const;   // "<output_dir>/point-0007"
  // The point's resolved Config: base input, --set, its values.
  Config point_config(std::size_t p) const;
  // "pricing.asset.0.vol=0.2 pricing.instrument.0.strike=90"
  std::string describe(std::size_t p) const;

 private:
  std::string input_, text_, mode_, output_dir_;
  std::string model_;   // run.model of the input and --set; "" when absent
  std::vector<Override> overrides_;  // the user's --set, [sweep] ones excepted
  std::vector<SweepAxis> axes_;
  std::size_t points_ = 0;
  int width_ = 4;
};

}  // namespace strata
