#include "engine/config/config.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/runtime/error.hpp"

namespace strata {
namespace {

std::vector<std::string> split_key(std::string_view key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string join(std::string_view a, std::string_view b) {
  return a.empty() ? std::string(b) : std::string(a) + "." + std::string(b);
}

std::string value_text(const toml::node& n) {
  if (n.is_table()) return "{...}";
  if (n.is_array_of_tables()) return "[{...}]";
  if (const auto* f = n.as_floating_point()) return shortest_text(f->get());
  if (const auto* str = n.as_string()) return '"' + str->get() + '"';
  std::ostringstream s;
  n.visit([&s](const auto& v) { s << v; });   // an array, integer, boolean or date
  return s.str();
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return n.is_array_of_tables() ? "an array of tables" : "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a real number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date/time";
  }
}

std::string expected_name(const Param& p) {
  switch (p.type) {
    case ParamType::integer: return "an integer";
    case ParamType::real: {
      std::string words;
      for (const auto& w : p.choices) words += " or \"" + w + "\"";
      return "a real number" + words;
    }
    case ParamType::boolean: return "true or false";
    case ParamType::string: return "a string";
    case ParamType::choice: return "a string";
    case ParamType::string_list: return "a list of strings";
    case ParamType::integer_list: return "a list of integers";
    case ParamType::real_list: return "a list of real numbers";
    case ParamType::real_matrix: return "a list of lists of real numbers";
    case ParamType::table_list: return "an array of tables ([[" + p.key + "]])";
  }
  return "?";
}

void insert_default(toml::table& t, const std::string& name, const Param& p) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::vector<std::string>> || std::is_same_v<V, std::vector<std::int64_t>>) {
          toml::array a;   // a list of tables' default is the empty list (Schema::table_list)
          for (const auto& x : v) a.push_back(x);
          t.insert_or_assign(name, std::move(a));
        } else if constexpr (!std::is_same_v<V, std::monostate>) {
          t.insert_or_assign(name, v);
        }
      },
      p.default_value);
}

}  // namespace

Override parse_override(std::string_view arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw InputError("--set " + std::string(arg) + ": expected key=value, e.g. --set pricing.paths=1e7");
  }
  return {std::string(arg.substr(0, eq)), std::string(arg.substr(eq + 1)), "--set " + std::string(arg)};
}

std::string read_input_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path + ": cannot open input file (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

toml::table parse_input(std::string_view text, const std::string& path) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw InputError(path + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column) +
                     ": malformed TOML: " + std::string(e.description()));
  }
}

Config Config::load(const std::string& path, const std::vector<Override>& overrides,
                    const std::function<Schema(const std::string& model)>& schema_for, SweepTable sweep) {
  return load_text(read_input_file(path), path, overrides, schema_for, sweep);
}

Config Config::load_text(std::string_view text, const std::string& path, const std::vector<Override>& overrides,
                         const std::function<Schema(const std::string& model)>& schema_for, SweepTable sweep) {
  Config c;
  c.path_ = path;
  c.table_ = parse_input(text, path);
  if (const toml::node* s = c.table_.get("sweep")) {
    if (sweep == SweepTable::reject) {
      throw InputError(path + ":" + std::to_string(s->source().begin.line) +
                       ": [sweep]: this input is a parameter sweep (many runs); run it with `strata sweep " + path +
                       " --all` (or --list, --index I, --status)");
    }
    c.table_.erase("sweep");
  }
  for (const Override& o : overrides) c.apply_override(o);

  // The model decides the rest of the schema, so check run.model first.
  const toml::node* model = c.node("run.model");
  if (model == nullptr) {
    throw InputError(path + ": run.model: required key missing (add [run] model = \"pricing\")");
  }
  if (!model->is_string()) {
    throw InputError(c.where("run.model") + ": run.model = " + value_text(*model) + ": expected a string");
  }
  try {
    c.schema_ = schema_for(model->as_string()->get());
  } catch (const InputError& e) {
    throw InputError(c.where("run.model") + ": run.model = " + value_text(*model) + ": " + e.what());
  }
  c.validate_and_fill();
  return c;
}

void Config::apply_override(const Override& o) {
  std::vector<std::string> parts = split_key(o.key);
  toml::node* cursor = &table_;
  std::string walked;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    std::string& part = parts[i];
    if (auto* t = cursor->as_table()) {
      walked = join(walked, part);
      if (is_index(part)) throw InputError(o.arg + ": " + walked + ": not a list");
      if (!t->contains(part)) t->insert(part, toml::table{});
      cursor = t->get(part);
    } else if (auto* a = cursor->as_array()) {
      // An entry by number, or by its `name` as the input writes it
      // (pricing.asset.SPX.vol); the key is stored with the number.
      if (!is_index(part)) {
        std::optional<std::size_t> named;
        std::vector<std::string> names;
        for (std::size_t k = 0; k < a->size(); ++k) {
          const std::optional<std::string> name = a->get(k)->at_path("name").value<std::string>();
          if (!name) continue;
          if (!named && *name == part) named = k;
          names.push_back(*name);
        }
        if (!named) {
          throw InputError(o.arg + ": " + join(walked, part) + ": no entry of " + walked + " is named '" + part +
                           "'; expected an entry number" +
                           (a->empty()       ? std::string(" (it has none)")
                            : a->size() == 1 ? std::string(" (0)")
                                             : " (0 to " + std::to_string(a->size() - 1) + ")") +
                           (names.empty() ? "" : " or one of the names " + comma_list(names)));
        }
        part = std::to_string(*named);
      }
      walked = join(walked, part);
      const std::size_t idx = std::stoul(part);
      if (idx >= a->size()) {
        throw InputError(o.arg + ": " + walked + ": the input has only " + std::to_string(a->size()) +
                         " entries there (numbered from 0)");
      }
      cursor = a->get(idx);
    } else {
      walked = join(walked, part);
      throw InputError(o.arg + ": " + walked + " is a value, not a table");
    }
  }
  auto* target = cursor->as_table();
  if (target == nullptr || is_index(parts.back())) {
    throw InputError(o.arg + ": cannot set an entry of a list directly; name its field");
  }
  // Parse the value as TOML; a bare word (fp32, out/run.h5) is a string.
  try {
    toml::table parsed = toml::parse("v = " + o.value);
    target->insert_or_assign(parts.back(), std::move(*parsed.get("v")));
  } catch (const toml::parse_error&) {
    target->insert_or_assign(parts.back(), o.value);
  }
  overridden_[join(walked, parts.back())] = o.arg;
}

const toml::node* Config::node(std::string_view key) const {
  const toml::node* cursor = &table_;
  for (const std::string& part : split_key(key)) {
    if (const auto* t = cursor->as_table()) {
      cursor = t->get(part);
    } else if (const auto* a = cursor->as_array(); a != nullptr && is_index(part)) {
      cursor = a->get(std::stoul(part));
    } else {
      return nullptr;
    }
    if (cursor == nullptr) return nullptr;
  }
  return cursor;
}

std::string Config::where(std::string_view key) const {
  if (auto it = overridden_.find(key); it != overridden_.end()) return it->second;
  // A value inside an overridden list entry or table still came from --set.
  for (const auto& [k, arg] : overridden_) {
    if (is_inside(key, k)) return arg;
  }
  if (auto it = lines_.find(key); it != lines_.end()) return path_ + ":" + std::to_string(it->second);
  const toml::node* n = node(key);
  if (n != nullptr && n->source().begin.line > 0) return path_ + ":" + std::to_string(n->source().begin.line);
  // A table the file does not have was made by the --set that reaches into
  // it ("pricng" of --set pricng.paths=10).
  if (n != nullptr) {
    for (const auto& [k, arg] : overridden_) {
      if (is_inside(k, key)) return arg;
    }
    return path_ + " (default)";
  }
  return path_;
}

void Config::fail(std::string_view key, const std::string& message) const {
  const toml::node* n = node(key);
  std::string text = where(key) + ": " + std::string(key);
  if (n != nullptr) text += " = " + value_text(*n);
  throw InputError(text + ": " + message);
}

void Config::validate_and_fill() {
  // 1. Every key in the input must be declared, of the declared type, in range.
  std::function<void(toml::table&, const std::string&)> walk = [&](toml::table& t, const std::string& prefix) {
    std::vector<std::pair<std::string, toml::node*>> retype;
    for (auto&& [k, v] : t) {
      const std::string key = join(prefix, k.str());
      if (v.source().begin.line > 0 && !overridden_.count(key)) lines_[key] = static_cast<int>(v.source().begin.line);
      if (auto* list = v.as_array()) {
        for (std::size_t i = 0; i < list->size(); ++i) {
          const auto line = list->get(i)->source().begin.line;
          if (line > 0) lines_[key + "." + std::to_string(i)] = static_cast<int>(line);
        }
      }
      const std::string skey = schema_.key_of(key);
      const Param* p = schema_.find(skey);
      if (p == nullptr) {
        if (v.is_table() && schema_.is_table(skey)) {
          walk(*v.as_table(), key);
          continue;
        }
        std::string msg = where(key) + ": " + key + ": unknown " + (v.is_table() ? "table" : "key");
        std::optional<std::string> near = schema_.nearest(skey);
        if (!near) {
          // A misspelt table name: compare with the tables of the schema.
          std::size_t best = 3;
          for (const Param& q : schema_.params()) {
            const std::string top = q.key.substr(0, q.key.find('.'));
            if (std::size_t d = edit_distance(skey.substr(0, skey.find('.')), top); d < best && d > 0) {
              best = d;
              near = top + skey.substr(std::min(skey.size(), skey.find('.')));
            }
          }
        }
        throw InputError(msg + did_you_mean(near));
      }
      validate_value(*p, v, key);
      if ((p->type == ParamType::integer && v.is_floating_point()) || (p->type == ParamType::real && v.is_integer())) {
        retype.emplace_back(std::string(k.str()), &v);
      }
      if (p->type == ParamType::table_list) {
        auto& list = *v.as_array();
        for (std::size_t i = 0; i < list.size(); ++i) walk(*list.get(i)->as_table(), key + "." + std::to_string(i));
      }
    }
    // Store whole-number reals given for integers as integers, and integers
    // given for reals as reals, so the resolved TOML has the declared types.
    for (auto& [name, n] : retype) {
      if (const auto* f = n->as_floating_point()) {
        t.insert_or_assign(name, static_cast<std::int64_t>(f->get()));
      } else {
        t.insert_or_assign(name, static_cast<double>(n->as_integer()->get()));
      }
    }
  };
  walk(table_, "");

  // 2. Defaults for every declared key not given; required keys must be there.
  std::function<void(toml::table&, const std::string&, const std::string&)> fill =
      [&](toml::table& scope, const std::string& schema_scope, const std::string& toml_scope) {
        for (const Param& p : schema_.params()) {
          if (!schema_scope.empty() && !is_inside(p.key, schema_scope)) continue;
          const std::string rest = schema_scope.empty() ? p.key : p.key.substr(schema_scope.size() + 1);
          if (rest.find("[]") != std::string::npos) continue;  // inside a deeper list
          const std::vector<std::string> parts = split_key(rest);
          toml::table* t = &scope;
          for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
            if (!t->contains(parts[i])) t->insert(parts[i], toml::table{});
            t = t->get(parts[i])->as_table();
          }
          const std::string toml_key = join(toml_scope, rest);
          if (!t->contains(parts.back())) {
            if (p.required()) {
              std::string place = toml_scope.empty() ? path_ : where(toml_scope);
              std::string what = p.type == ParamType::table_list ? "at least one [[" + p.key + "]] entry is required"
                                                                   : "required key missing";
              throw InputError(place + ": " + toml_key + ": " + what);
            }
            insert_default(*t, parts.back(), p);
          }
          if (p.type == ParamType::table_list) {
            auto& list = *t->get(parts.back())->as_array();
            for (std::size_t i = 0; i < list.size(); ++i) {
              fill(*list.get(i)->as_table(), p.key + "[]", toml_key + "." + std::to_string(i));
            }
          }
        }
      };
  fill(table_, "", "");
}

}  // namespace strata

namespace strata {

void Config::validate_value(const Param& p, toml::node& v, const std::string& key) const {
  auto bad = [&](const std::string& why) {
    throw InputError(where(key) + ": " + key + " = " + value_text(v) + ": " + why);
  };
  auto wrong_type = [&]() { bad("expected " + expected_name(p) + ", got " + type_name(v)); };
  auto check_range = [&](double x) {
    if (!p.range.contains(x)) bad("out of range: must be " + p.range.describe() + (p.unit.empty() ? "" : " " + p.unit));
  };
  // A finite number within range; `not_number` throws for anything else.
  auto check_number = [&](const toml::node& e, auto&& not_number) {
    double x = 0;
    if (const auto* f = e.as_floating_point()) {
      x = f->get();
    } else if (const auto* i = e.as_integer()) {
      x = static_cast<double>(i->get());
    } else {
      not_number();
    }
    if (!std::isfinite(x)) bad("must be finite");
    check_range(x);
  };
  switch (p.type) {
    case ParamType::integer: {
      if (auto* f = v.as_floating_point()) {
        // 1e7 is a float in TOML; accept it where it is a whole number.
        const double x = f->get();
        if (!std::isfinite(x) || x != std::floor(x)) bad("expected an integer");
        if (std::fabs(x) > 9.0e18) bad("out of range for a 64-bit integer");
        check_range(x);
        return;  // the walk stores it as an integer
      }
      if (!v.is_integer()) wrong_type();
      check_range(static_cast<double>(v.as_integer()->get()));
      return;
    }
    case ParamType::real: {
      if (const auto* w = v.as_string()) {
        // A real that also takes words (a lookback's strike = "floating").
        if (std::ranges::find(p.choices, w->get()) != p.choices.end()) return;
        wrong_type();
      }
      check_number(v, wrong_type);
      return;
    }
    case ParamType::boolean:
      if (!v.is_boolean()) wrong_type();
      return;
    case ParamType::string:
      if (!v.is_string()) wrong_type();
      return;
    case ParamType::choice: {
      if (!v.is_string()) wrong_type();
      const std::string& s = v.as_string()->get();
      if (std::ranges::find(p.choices, s) != p.choices.end()) return;
      const auto near = nearest_word(s, p.choices, std::max<std::size_t>(2, s.size() / 3));
      bad("must be one of: " + comma_list(p.choices) + (near ? "; did you mean '" + *near + "'?" : ""));
      return;
    }
    case ParamType::string_list: {
      const auto* a = v.as_array();
      if (a == nullptr) wrong_type();
      for (const auto& e : *a) {
        if (!e.is_string()) bad("expected a list of strings, found " + type_name(e) + " in it");
      }
      return;
    }
    case ParamType::integer_list: {
      const auto* a = v.as_array();
      if (a == nullptr) wrong_type();
      for (const auto& e : *a) {
        if (!e.is_integer()) bad("expected a list of integers, found " + type_name(e) + " in it");
        check_range(static_cast<double>(e.as_integer()->get()));
      }
      return;
    }
    case ParamType::real_list:
    case ParamType::real_matrix: {
      const auto* a = v.as_array();
      if (a == nullptr) wrong_type();
      auto number = [&](const toml::node& e) {
        check_number(e, [&] { bad("expected " + expected_name(p) + ", found " + type_name(e) + " in it"); });
      };
      for (const auto& e : *a) {
        if (p.type == ParamType::real_list) {
          number(e);
          continue;
        }
        const auto* row = e.as_array();
        if (row == nullptr) bad("expected " + expected_name(p) + ", found " + type_name(e) + " in it");
        for (const auto& x : *row) number(x);
      }
      return;
    }
    case ParamType::table_list: {
      const auto* a = v.as_array();
      if (a == nullptr || (!a->empty() && !a->is_array_of_tables())) wrong_type();
      check_range(static_cast<double>(a->size()));
      return;
    }
  }
}

namespace {

// toml++ writes every float with 17 significant digits (0.05 becomes
// 0.050000000000000003). Rewrite each float outside quotes in the shortest
// form that reads back to the same double, as a person would write it.
std::string shortest_floats(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  char quote = 0;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (quote != 0) {
      out += c;
      if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == quote) {
        quote = 0;
      }
      ++i;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      out += c;
      ++i;
      continue;
    }
    const bool starts = (c >= '0' && c <= '9') || (c == '-' && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9');
    const char prev = out.empty() ? ' ' : out.back();
    if (starts && (prev == ' ' || prev == '[' || prev == ',' || prev == '=')) {
      std::size_t j = i + 1;
      while (j < text.size() && std::strchr("0123456789.eE+-_", text[j]) != nullptr) ++j;
      const std::string token = text.substr(i, j - i);
      double v = 0;
      const bool is_float = token.find_first_of(".eE") != std::string::npos && token.find('_') == std::string::npos;
      const auto r = std::from_chars(token.data(), token.data() + token.size(), v);
      const bool whole = r.ec == std::errc() && r.ptr == token.data() + token.size();
      out += is_float && whole ? toml_float(v) : token;
      i = j;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace

std::string Config::to_toml() const {
  std::ostringstream s;
  s << table_ << "\n";
  return shortest_floats(s.str());
}

namespace {
[[noreturn]] void missing(std::string_view key, const char* type) {
  throw std::logic_error("config: " + std::string(key) + " is not a resolved " + type + " key");
}

// The list at `key` (n, its node).
const toml::array& list_at(const toml::node* n, std::string_view key) {
  if (n == nullptr || !n->is_array()) missing(key, "list");
  return *n->as_array();
}

double number_of(const toml::node& e) {
  if (const auto* f = e.as_floating_point()) return f->get();
  return static_cast<double>(e.as_integer()->get());
}
}  // namespace

std::int64_t Config::integer(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr || !n->is_number()) missing(key, "integer");
  if (const auto* f = n->as_floating_point()) return static_cast<std::int64_t>(f->get());
  return n->as_integer()->get();
}

double Config::real(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr || !n->is_number()) missing(key, "real");
  return number_of(*n);
}

std::optional<std::string> Config::word(std::string_view key) const {
  const toml::node* n = node(key);
  if (n != nullptr && n->is_string()) return n->as_string()->get();
  return std::nullopt;
}

bool Config::boolean(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr || !n->is_boolean()) missing(key, "boolean");
  return n->as_boolean()->get();
}

std::string Config::string(std::string_view key) const {
  const toml::node* n = node(key);
  if (n == nullptr || !n->is_string()) missing(key, "string");
  return n->as_string()->get();
}

std::vector<std::string> Config::strings(std::string_view key) const {
  std::vector<std::string> out;
  for (const auto& e : list_at(node(key), key)) out.push_back(e.as_string()->get());
  return out;
}

std::vector<std::int64_t> Config::integers(std::string_view key) const {
  std::vector<std::int64_t> out;
  for (const auto& e : list_at(node(key), key)) out.push_back(e.as_integer()->get());
  return out;
}

std::vector<double> Config::reals(std::string_view key) const {
  std::vector<double> out;
  for (const auto& e : list_at(node(key), key)) out.push_back(number_of(e));
  return out;
}

std::vector<std::vector<double>> Config::real_rows(std::string_view key) const {
  std::vector<std::vector<double>> out;
  for (const auto& row : list_at(node(key), key)) {
    out.emplace_back();
    for (const auto& e : *row.as_array()) out.back().push_back(number_of(e));
  }
  return out;
}

std::size_t Config::count(std::string_view list_key) const {
  return list_at(node(list_key), list_key).size();
}

}  // namespace strata
