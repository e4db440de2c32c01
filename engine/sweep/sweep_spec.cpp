#include "engine/sweep/sweep_spec.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "engine/runtime/error.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata {
namespace {

// More points than this is a typo in a range, not an experiment.
constexpr double kMaxPoints = 1'000'000;
const std::string kRangeForms = "a range is { start, stop, count } or { start, stop, step }";

std::string toml_text(const toml::node& n) {
  if (const auto* f = n.as_floating_point()) return toml_float(f->get());  // toml++ prints 17 digits
  std::ostringstream s;
  n.visit([&s](const auto& v) { s << v; });
  return s.str();
}

std::string quoted(const std::string& s) {
  std::ostringstream out;
  out << toml::value<std::string>(s);
  return out.str();
}

SweepValue integer_value(std::int64_t v) { return {std::to_string(v), std::to_string(v), static_cast<double>(v)}; }
SweepValue real_value(double v) { return {toml_float(v), toml_float(v), v}; }

SweepValue value_of(const toml::node& n) {
  if (const auto* i = n.as_integer()) return integer_value(i->get());
  if (const auto* f = n.as_floating_point()) return real_value(f->get());
  if (const auto* b = n.as_boolean()) {
    const std::string t = b->get() ? "true" : "false";
    return {t, t, b->get() ? 1.0 : 0.0};
  }
  if (const auto* s = n.as_string()) return {quoted(s->get()), s->get(), std::nullopt};
  const std::string t = toml_text(n);
  return {t, t, std::nullopt};
}

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

// Errors about the [sweep] table name the file, the line and the key.
struct SweepErrors {
  const std::string& input;
  [[noreturn]] void fail(int line, const std::string& key, const std::string& why) const {
    const std::string where = line > 0 ? input + ":" + std::to_string(line) : input;
    throw InputError(where + ": [sweep] " + key + ": " + why);
  }
};

bool is_range(const toml::table& t) {
  return t.contains("start") || t.contains("stop") || t.contains("count") || t.contains("step");
}

std::vector<SweepValue> expand_range(const toml::table& t, const std::string& name, int line, const SweepErrors& err) {
  for (auto&& [k, v] : t) {
    const std::string_view key = k.str();
    if (key != "start" && key != "stop" && key != "count" && key != "step") {
      err.fail(line_of(v), name, "unknown key '" + std::string(key) + "' in a range; " + kRangeForms);
    }
  }
  auto as_double = [](const toml::node& n) {
    return n.is_integer() ? static_cast<double>(n.as_integer()->get()) : n.as_floating_point()->get();
  };
  auto number = [&](const char* field) -> const toml::node& {
    const toml::node* n = t.get(field);
    if (n == nullptr) err.fail(line, name, std::string("range without '") + field + "'; " + kRangeForms);
    if (!n->is_number()) err.fail(line, name, std::string(field) + " = " + toml_text(*n) + ": expected a number");
    if (!std::isfinite(as_double(*n))) err.fail(line, name, std::string(field) + " = " + toml_text(*n) + ": must be finite");
    return *n;
  };
  const toml::node& start_node = number("start");
  const toml::node& stop_node = number("stop");
  const double start = as_double(start_node), stop = as_double(stop_node);
  const bool has_count = t.contains("count"), has_step = t.contains("step");
  if (has_count == has_step) {
    const std::string given = has_count ? "both count and step" : "neither count nor step";
    err.fail(line, name, given + " given; " + kRangeForms);
  }
  std::vector<SweepValue> values;
  if (has_count) {
    const toml::node& count_node = number("count");
    const double count = as_double(count_node);
    if (count != std::floor(count)) err.fail(line, name, "count = " + toml_text(count_node) + ": expected an integer");
    if (count < 1) err.fail(line, name, "count = " + toml_text(count_node) + ": must be at least 1");
    if (count > kMaxPoints) err.fail(line, name, "count = " + toml_text(count_node) + ": too many values");
    const auto n = static_cast<std::int64_t>(count);
    // Integer ends with integer spacing stay integers (paths, steps).
    const bool integers = start_node.is_integer() && stop_node.is_integer() &&
                          (n == 1 || (stop_node.as_integer()->get() - start_node.as_integer()->get()) % (n - 1) == 0);
    for (std::int64_t i = 0; i < n; ++i) {
      if (integers) {
        const std::int64_t a = start_node.as_integer()->get(), b = stop_node.as_integer()->get();
        values.push_back(integer_value(n == 1 ? a : a + (b - a) / (n - 1) * i));
      } else {
        // start + (stop - start) i / (n - 1): both ends exact, no accumulated error.
        const double x = n == 1       ? start
                         : i == n - 1 ? stop
                                      : start + (stop - start) * static_cast<double>(i) / static_cast<double>(n - 1);
        values.push_back(real_value(x));
      }
    }
    return values;
  }
  const toml::node& step_node = number("step");
  const double step = as_double(step_node);
  if (step == 0 || (stop > start && step < 0) || (stop < start && step > 0)) {
    err.fail(line, name,
             "step = " + toml_text(step_node) + ": must be " + (stop < start ? "negative" : "positive") +
                 " to go from start = " + toml_text(start_node) + " to stop = " + toml_text(stop_node));
  }
  // A step that lands within rounding of stop includes stop (0.1, 0.2, 0.3).
  const double spans = (stop - start) / step;
  if (spans + 1 > kMaxPoints) err.fail(line, name, "step = " + toml_text(step_node) + ": too many values");
  const auto n = static_cast<std::int64_t>(std::floor(spans + 1e-9)) + 1;
  const bool integers = start_node.is_integer() && stop_node.is_integer() && step_node.is_integer();
  for (std::int64_t i = 0; i < n; ++i) {
    if (integers) {
      values.push_back(integer_value(start_node.as_integer()->get() + i * step_node.as_integer()->get()));
    } else {
      double x = start + static_cast<double>(i) * step;
      if (std::fabs(x - stop) <= 1e-9 * std::fabs(step)) x = stop;
      values.push_back(real_value(x));
    }
  }
  return values;
}

}  // namespace

bool SweepAxis::numeric() const {
  return std::all_of(values.begin(), values.end(), [](const SweepValue& v) { return v.number.has_value(); });
}

SweepSpec SweepSpec::load(const std::string& input, const std::vector<std::string>& set) {
  SweepSpec spec;
  spec.input_ = input;
  spec.text_ = read_input_file(input);
  const toml::table table = parse_input(spec.text_, input);
  spec.model_ = table.at_path("run.model").value_or(std::string());
  const SweepErrors err{spec.input_};
  const toml::node* sweep_node = table.get("sweep");
  if (sweep_node == nullptr) {
    throw InputError(input +
                     ": no [sweep] table: a sweep input says which keys take which values, e.g.\n"
                     "  [sweep]\n  \"pricing.asset.0.vol\" = [0.1, 0.2, 0.3]\n  output_dir = \"out/sweep\"");
  }
  const toml::table* sweep = sweep_node->as_table();
  if (sweep == nullptr) err.fail(line_of(*sweep_node), "", "expected a table");
  const int sweep_line = line_of(*sweep_node);

  // Swept keys are dotted input keys; quoted ("pricing.asset.0.vol") they are
  // one TOML key, bare (pricing.asset.0.vol) nested tables: accept both.
  std::vector<std::pair<const toml::node*, std::string>> entries;
  std::function<void(const toml::table&, const std::string&)> flatten = [&](const toml::table& t,
                                                                            const std::string& prefix) {
    for (auto&& [k, v] : t) {
      const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      if (const auto* nested = v.as_table(); nested != nullptr && !is_range(*nested)) {
        flatten(*nested, key);
      } else {
        entries.emplace_back(&v, key);
      }
    }
  };
  flatten(*sweep, "");
  // toml++ keeps keys sorted; the grid's order is the order they were written in.
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& sa = a.first->source().begin;
    const auto& sb = b.first->source().begin;
    return sa.line != sb.line ? sa.line < sb.line : sa.column < sb.column;
  });

  spec.mode_ = "grid";
  int mode_line = sweep_line, output_line = sweep_line;
  for (const auto& [node, key] : entries) {
    const int line = line_of(*node);
    if (key == "mode" || key == "output_dir") {
      if (!node->is_string()) err.fail(line, key, toml_text(*node) + ": expected a string");
      (key == "mode" ? spec.mode_ : spec.output_dir_) = node->as_string()->get();
      (key == "mode" ? mode_line : output_line) = line;
      continue;
    }
    const std::string name = "\"" + key + "\"";
    if (key.find('.') == std::string::npos) {
      std::string msg =
          "unknown key; [sweep] holds mode, output_dir and dotted input keys with their values "
          "(\"pricing.asset.0.vol\" = [0.1, 0.2])";
      for (const char* known : {"mode", "output_dir"}) {
        if (edit_distance(key, known) <= 3) msg += "; did you mean '" + std::string(known) + "'?";
      }
      err.fail(line, key, msg);
    }
    if (key.rfind("sweep.", 0) == 0) err.fail(line, name, "a sweep cannot sweep its own table");
    if (key == "run.model" || key == "run.output") {
      err.fail(line, name, "cannot be swept (every point is one model, writing <output_dir>/point-N/output.h5)");
    }
    SweepAxis axis{key, line, {}};
    if (const auto* list = node->as_array()) {
      if (list->empty()) err.fail(line, name, "empty list of values");
      for (const toml::node& v : *list) axis.values.push_back(value_of(v));
    } else if (const auto* range = node->as_table()) {
      axis.values = expand_range(*range, name, line, err);
    } else {
      err.fail(line, name + " = " + toml_text(*node),
               "expected a list of values ([0.1, 0.2]) or a range ({ start, stop, count } or { start, stop, step })");
    }
    spec.axes_.push_back(std::move(axis));
  }

  // The user's --set: [sweep] settings apply to the sweep, the rest to every point.
  for (const std::string& s : set) {
    Override o = parse_override(s);
    if (o.key == "run.model") spec.model_ = o.value;
    if (o.key.rfind("sweep.", 0) != 0) {
      spec.overrides_.push_back(o);
      continue;
    }
    std::string value = o.value;
    try {
      toml::table parsed = toml::parse("v = " + o.value);
      if (const auto* str = parsed.get("v")->as_string()) value = str->get();
    } catch (const toml::parse_error&) {
      // a bare word is the string itself
    }
    if (o.key == "sweep.output_dir") {
      spec.output_dir_ = value;
    } else if (o.key == "sweep.mode") {
      spec.mode_ = value;
    } else {
      throw InputError(o.arg +
                       ": only sweep.output_dir and sweep.mode can be set; edit the input's [sweep] table "
                       "to change the swept values");
    }
  }

  if (spec.mode_ != "grid" && spec.mode_ != "zip") {
    err.fail(mode_line, "mode",
             "\"" + spec.mode_ +
                 "\": must be \"grid\" (every combination) or \"zip\" (the i-th "
                 "value of every key together)");
  }
  if (spec.output_dir_.empty()) {
    err.fail(output_line, "output_dir",
             "required (the directory that holds point-NNNN/), e.g. output_dir = \"out/sweep\"");
  }
  if (spec.axes_.empty()) {
    err.fail(sweep_line, "",
             "sweeps nothing: add a dotted input key and its values, e.g. \"pricing.asset.0.vol\" = "
             "[0.1, 0.2]");
  }
  double points = 1;
  for (const SweepAxis& a : spec.axes_) {
    const double n = static_cast<double>(a.values.size());
    if (spec.mode_ == "zip") {
      const SweepAxis& first = spec.axes_.front();
      if (a.values.size() != first.values.size()) {
        err.fail(a.line, "\"" + a.key + "\"",
                 std::to_string(a.values.size()) + " values, but \"" + first.key + "\" (line " +
                     std::to_string(first.line) + ") has " + std::to_string(first.values.size()) +
                     "; mode = \"zip\" needs lists of equal length");
      }
      points = n;
    } else {
      points *= n;
    }
  }
  if (points > kMaxPoints) {
    err.fail(sweep_line, "", std::to_string(static_cast<long long>(points)) + " points: more than a sweep should hold");
  }
  spec.points_ = static_cast<std::size_t>(points);
  spec.width_ = std::max<int>(4, static_cast<int>(std::to_string(spec.points_ - 1).size()));
  return spec;
}

std::vector<std::size_t> SweepSpec::coordinates(std::size_t p) const {
  std::vector<std::size_t> c(axes_.size(), p);
  if (mode_ == "zip") return c;
  // Row-major: the first key varies slowest, the last fastest.
  for (std::size_t a = axes_.size(); a-- > 0;) {
    c[a] = p % axes_[a].values.size();
    p /= axes_[a].values.size();
  }
  return c;
}

std::string SweepSpec::point_name(std::size_t p) const {
  std::string digits = std::to_string(p);
  if (digits.size() < static_cast<std::size_t>(width_))
    digits.insert(0, static_cast<std::size_t>(width_) - digits.size(), '0');
  return "point-" + digits;
}

std::string SweepSpec::point_dir(std::size_t p) const { return output_dir_ + "/" + point_name(p); }

std::string SweepSpec::describe(std::size_t p) const {
  std::string text;
  const std::vector<std::size_t> c = coordinates(p);
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    text += (a ? " " : "") + axes_[a].key + "=" + axes_[a].values[c[a]].text;
  }
  return text;
}

Config SweepSpec::point_config(std::size_t p) const {
  std::vector<Override> overrides = overrides_;
  const std::vector<std::size_t> c = coordinates(p);
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const SweepValue& v = axes_[a].values[c[a]];
    overrides.push_back({axes_[a].key, v.toml,
                         input_ + ":" + std::to_string(axes_[a].line) + ": [sweep] \"" + axes_[a].key +
                             "\" = " + v.toml + " (" + point_name(p) + ")"});
  }
  // The stored input names its own output, so it re-runs the point alone.
  overrides.push_back({"run.output", quoted(point_dir(p) + "/output.h5"), "[sweep] output_dir"});
  return Config::load_text(text_, input_, overrides, schema_for, SweepTable::remove);
}

std::string SweepSpec::unit_of(const SweepAxis& axis) const {
  if (model_.empty() || ModelRegistry::instance().find(model_) == nullptr) return "";
  const Schema schema = schema_for(model_);
  const Param* param = schema.find(schema.key_of(axis.key));
  return param != nullptr ? param->unit : "";
}

void SweepSpec::validate(const MpiContext& mpi) const {
  mpi.collective([&] {
    // Name a swept key the model does not have before loading any point, so
    // the message is about the [sweep] line rather than a generated override.
    if (!model_.empty() && ModelRegistry::instance().find(model_) != nullptr) {
      const Schema schema = schema_for(model_);
      for (const SweepAxis& a : axes_) {
        const std::string skey = schema.key_of(a.key);
        const Param* param = schema.find(skey);
        const std::string where = input_ + ":" + std::to_string(a.line) + ": [sweep] \"" + a.key + "\"";
        if (param == nullptr) {
          throw InputError(where + ": not an input key of model " + model_ + did_you_mean(schema.nearest(skey)));
        }
        if (param->type == ParamType::table_list) {
          throw InputError(where + ": a whole list of tables cannot be swept; sweep a field of one entry, e.g. \"" +
                           a.key + ".0.<field>\"");
        }
      }
    }
    for (std::size_t p = 0; p < points_; ++p) {
      const Config cfg = point_config(p);
      if (const Model* m = ModelRegistry::instance().find(cfg.model())) m->check(cfg);
    }
  });
}

}  // namespace strata
