#include "engine/config/schema.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace strata {

std::string_view to_string(ParamType t) {
  switch (t) {
    case ParamType::integer: return "integer";
    case ParamType::real: return "real";
    case ParamType::boolean: return "boolean";
    case ParamType::string: return "string";
    case ParamType::choice: return "choice";
    case ParamType::string_list: return "list of strings";
    case ParamType::integer_list: return "list of integers";
    case ParamType::real_list: return "list of reals";
    case ParamType::real_matrix: return "list of lists of reals";
    case ParamType::table_list: return "array of tables";
  }
  return "?";
}

namespace {

// Whole numbers as integers, others in the shortest form that round-trips.
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) return std::to_string(static_cast<long long>(v));
  return shortest_text(v);
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

bool is_inside(std::string_view key, std::string_view table) {
  return key.size() > table.size() && key[table.size()] == '.' && key.starts_with(table);
}

std::string shortest_text(double v) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string toml_float(double v) {
  if (std::isnan(v)) return "nan";   // to_chars may write "-nan"
  std::string s = shortest_text(v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";   // "80" would read back as an integer
  return s;
}

bool Range::contains(double v) const {
  if (std::isnan(v)) return false;
  if (min && (min_exclusive ? v <= *min : v < *min)) return false;
  if (max && (max_exclusive ? v >= *max : v > *max)) return false;
  return true;
}

std::string Range::describe() const {
  if (min && max) {
    return std::string(min_exclusive ? "(" : "[") + number_text(*min) + ", " + number_text(*max) +
           (max_exclusive ? ")" : "]");
  }
  if (min) return std::string(min_exclusive ? "> " : ">= ") + number_text(*min);
  if (max) return std::string(max_exclusive ? "< " : "<= ") + number_text(*max);
  return "";
}

std::string Param::default_text() const {
  struct Visitor {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return toml_float(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return quoted(v); }
    std::string operator()(const std::vector<std::string>& v) const {
      std::string s = "[";
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + quoted(v[i]);
      return s + "]";
    }
    std::string operator()(const std::vector<std::int64_t>& v) const {
      std::string s = "[";
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    }
  };
  return std::visit(Visitor{}, default_value);
}

Param& Schema::add(Param p) {
  if (find(p.key) != nullptr) throw std::logic_error("schema: key declared twice: " + p.key);
  params_.push_back(std::move(p));
  return params_.back();
}

Param& Schema::integer(std::string key, std::int64_t def, std::string unit, Range range, std::string doc) {
  return add({std::move(key), ParamType::integer, def, std::move(unit), range, {}, std::move(doc)});
}

Param& Schema::real(std::string key, std::optional<double> def, std::string unit, Range range, std::string doc) {
  ParamValue v;
  if (def) v = *def;
  return add({std::move(key), ParamType::real, v, std::move(unit), range, {}, std::move(doc)});
}

Param& Schema::boolean(std::string key, bool def, std::string doc) {
  return add({std::move(key), ParamType::boolean, def, "", {}, {}, std::move(doc)});
}

Param& Schema::string(std::string key, std::optional<std::string> def, std::string doc) {
  ParamValue v;
  if (def) v = *def;
  return add({std::move(key), ParamType::string, v, "", {}, {}, std::move(doc)});
}

Param& Schema::choice(std::string key, std::string def, std::vector<std::string> choices, std::string doc) {
  ParamValue v;
  if (!def.empty()) v = def;
  return add({std::move(key), ParamType::choice, v, "", {}, std::move(choices), std::move(doc)});
}

Param& Schema::string_list(std::string key, std::optional<std::vector<std::string>> def, std::string doc) {
  ParamValue v;
  if (def) v = *def;
  return add({std::move(key), ParamType::string_list, v, "", {}, {}, std::move(doc)});
}

Param& Schema::real_list(std::string key, std::string unit, Range range, std::string doc) {
  return add({std::move(key), ParamType::real_list, std::vector<std::int64_t>{}, std::move(unit), range, {}, std::move(doc)});
}

Param& Schema::real_matrix(std::string key, std::string unit, Range range, std::string doc) {
  return add({std::move(key), ParamType::real_matrix, std::vector<std::int64_t>{}, std::move(unit), range, {}, std::move(doc)});
}

Param& Schema::integer_list(std::string key, std::vector<std::int64_t> def, Range range, std::string doc) {
  return add({std::move(key), ParamType::integer_list, std::move(def), "", range, {}, std::move(doc)});
}

Param& Schema::table_list(std::string key, Range count, std::string doc) {
  // A list may be empty only when its range allows 0 entries; either way it
  // has a default (the empty list) unless at least one entry is required.
  ParamValue v;
  if (!count.min || *count.min <= 0) v = std::vector<std::string>{};
  return add({std::move(key), ParamType::table_list, v, "", count, {}, std::move(doc)});
}

const Param* Schema::find(std::string_view key) const {
  const auto it = std::ranges::find(params_, key, &Param::key);
  return it == params_.end() ? nullptr : &*it;
}

std::string Schema::key_of(std::string_view key) const {
  std::string out;
  bool entry = false;   // the part after a list of tables is its entry, numbered or named
  for (std::size_t start = 0; start <= key.size();) {
    const std::size_t dot = std::min(key.find('.', start), key.size());
    const std::string_view part = key.substr(start, dot - start);
    if (entry || (!part.empty() && part.size() < 10 && part.find_first_not_of("0123456789") == part.npos)) {
      out += "[]";
      entry = false;
    } else {
      out.append(out.empty() ? "" : ".").append(part);
      const Param* p = find(out);
      entry = p != nullptr && p->type == ParamType::table_list;
    }
    start = dot + 1;
  }
  return out;
}

Param& Schema::find_mut(std::string_view key) {
  const auto it = std::ranges::find(params_, key, &Param::key);
  if (it == params_.end()) throw std::logic_error("schema: no key " + std::string(key));
  return *it;
}

bool Schema::is_table(std::string_view prefix) const {
  return prefix.empty() || std::ranges::any_of(params_, [&](const Param& p) { return is_inside(p.key, prefix); });
}

std::vector<const Param*> Schema::fields_of(std::string_view prefix) const {
  std::vector<const Param*> out;
  const std::size_t skip = prefix.empty() ? 0 : prefix.size() + 1;
  for (const Param& p : params_) {
    if (p.key.size() <= skip) continue;
    if (!prefix.empty() && !is_inside(p.key, prefix)) continue;
    if (p.key.find('.', skip) == std::string::npos) out.push_back(&p);
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance (restricted Damerau-Levenshtein): an
  // insertion, a deletion, a substitution or a swap of two adjacent letters
  // each count one edit, so "clf" is one edit from "cfl", not two. Three rows:
  // a swap looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

namespace {

// Letters `a` and `b` have in common, each counted as often as both have it.
std::size_t shared_letters(std::string_view a, std::string_view b) {
  std::array<std::size_t, 256> count{};
  for (const char c : a) ++count[static_cast<unsigned char>(c)];
  std::size_t shared = 0;
  for (const char c : b) {
    if (auto& n = count[static_cast<unsigned char>(c)]; n > 0) {
      --n;
      ++shared;
    }
  }
  return shared;
}

}  // namespace

bool likelier_typo_of(std::string_view given, std::string_view a, std::string_view b) {
  // Fewer edits first; among equals, the word a typist more likely meant:
  // the length nearest the given one (a slip rarely adds or drops letters as
  // well), then the same first letter (the first letter is seldom mistyped),
  // then more letters in common; the order of declaration settles the rest.
  const auto rank = [&](std::string_view w) {
    const std::size_t len_gap = w.size() > given.size() ? w.size() - given.size() : given.size() - w.size();
    const bool other_first = w.empty() || given.empty() || w.front() != given.front();
    return std::tuple(edit_distance(given, w), len_gap, other_first, given.size() - shared_letters(given, w));
  };
  return rank(a) < rank(b);
}

std::optional<std::string> nearest_word(std::string_view given, const std::vector<std::string>& words,
                                        std::size_t max_edits) {
  std::optional<std::string> near;
  for (const std::string& w : words) {
    if (edit_distance(given, w) > max_edits) continue;
    if (!near || likelier_typo_of(given, w, *near)) near = w;
  }
  return near;
}

std::string comma_list(const std::vector<std::string>& words) {
  std::string list;
  for (const std::string& w : words) list += (list.empty() ? "" : ", ") + w;
  return list;
}

std::string did_you_mean(const std::optional<std::string>& key) {
  if (!key) return "";
  std::string shown = *key;
  for (std::size_t pos; (pos = shown.find("[]")) != std::string::npos;) shown.replace(pos, 2, ".N");
  return "; did you mean '" + shown + "'?";
}

std::optional<std::string> Schema::nearest(std::string_view key) const {
  // Compare the last path component within the same table first (a typo in
  // the field name), then whole keys (a field put in the wrong table).
  const std::size_t dot = key.rfind('.');
  const std::string_view table = dot == std::string_view::npos ? std::string_view{} : key.substr(0, dot);
  const std::string_view leaf = dot == std::string_view::npos ? key : key.substr(dot + 1);

  // A word the table declares as another name of a key ("dt" for a CFL
  // number) is no typo: name the key that means it.
  for (const Param* p : fields_of(table)) {
    if (std::ranges::find(p->aliases, leaf) != p->aliases.end()) return p->key;
  }
  std::optional<std::string> best;
  std::string_view best_name;
  const std::size_t max_edits = std::max<std::size_t>(2, leaf.size() / 3);
  for (const Param* p : fields_of(table)) {
    const std::string_view name = std::string_view(p->key).substr(table.empty() ? 0 : table.size() + 1);
    if (edit_distance(leaf, name) > max_edits) continue;
    if (!best || likelier_typo_of(leaf, name, best_name)) {
      best = p->key;
      best_name = name;
    }
  }
  if (best) return best;
  for (const Param& p : params_) {
    const std::size_t pdot = p.key.rfind('.');
    const std::string_view name = pdot == std::string::npos ? std::string_view(p.key) : std::string_view(p.key).substr(pdot + 1);
    if (name == leaf) return p.key;  // right name, wrong table
  }
  return std::nullopt;
}

}  // namespace strata
