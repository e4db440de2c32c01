#include "engine/config/schema_doc.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace strata {
namespace {

std::string type_text(const Param& p) {
  // A choice's words; a real that also takes words: "real" and its words.
  if (p.type == ParamType::choice || (p.type == ParamType::real && !p.choices.empty())) {
    std::string s = p.type == ParamType::real ? "real" : "";
    for (const auto& c : p.choices) s += (s.empty() ? "" : " | ") + ("\"" + c + "\"");
    return s;
  }
  return std::string(to_string(p.type));
}

std::string range_text(const Param& p) {
  if (p.type == ParamType::table_list) {
    const std::string r = p.range.describe();
    return r.empty() ? "" : r + " entries";
  }
  return p.range.describe();
}

// "pricing.asset[].spot" -> table "[[pricing.asset]]", field "spot"
std::pair<std::string, std::string> split(const Param& p) {
  const auto dot = p.key.rfind('.');
  std::string table = p.key.substr(0, dot);
  const std::string field = p.key.substr(dot + 1);
  if (table.size() > 2 && table.compare(table.size() - 2, 2, "[]") == 0) {
    table = "[[" + table.substr(0, table.size() - 2) + "]]";
  } else {
    table = "[" + table + "]";
  }
  return {table, field};
}

}  // namespace

std::string schema_text(const Schema& s) {
  // One table at a time, each column as wide as its widest entry there, so
  // a long key shifts its whole table, not its own line. A type or default
  // too long for a column (a long list of choices, a matrix) is named short
  // there and given in full on the line below the key's.
  constexpr std::size_t kMaxType = 28, kMaxDefault = 14;
  struct Row {
    std::string cells[5];
    std::string extra;   // "one of ...", "default ..." where a cell was too long
    const Param* p;
  };
  std::vector<std::pair<std::string, std::vector<Row>>> tables;
  for (const Param& p : s.params()) {
    if (p.type == ParamType::table_list) continue;   // shown as its table heading
    const auto [table, field] = split(p);
    if (tables.empty() || tables.back().first != table) tables.emplace_back(table, std::vector<Row>{});
    Row r{{field, type_text(p), p.required() ? "(required)" : p.default_text(), p.unit, range_text(p)}, "", &p};
    if (r.cells[1].size() > kMaxType) {
      r.extra += "one of " + r.cells[1];
      r.cells[1] = p.type == ParamType::real ? "real or word" : std::string(to_string(p.type));
    }
    if (r.cells[2].size() > kMaxDefault) {
      r.extra += (r.extra.empty() ? "" : "; ") + ("default " + r.cells[2]);
      r.cells[2] = "(below)";
    }
    tables.back().second.push_back(std::move(r));
  }
  std::string out;
  for (const auto& [table, rows] : tables) {
    std::size_t width[5] = {};
    for (const Row& r : rows) {
      for (std::size_t c = 0; c < 5; ++c) width[c] = std::max(width[c], r.cells[c].size());
    }
    out += (out.empty() ? "" : "\n") + table + "\n";
    for (const Row& r : rows) {
      std::string line = " ";
      for (std::size_t c = 0; c < 5; ++c) {
        line += " " + r.cells[c] + std::string(c < 4 ? width[c] - r.cells[c].size() + 1 : 0, ' ');
      }
      while (line.ends_with(' ')) line.pop_back();
      out += line + "\n";
      if (!r.extra.empty()) out += "      " + r.extra + "\n";
      out += "      " + r.p->doc + (r.p->restart_safe ? " (may change on --restart)" : "") + "\n";
    }
  }
  return out;
}

std::string schema_markdown(const Schema& s) {
  std::string out;
  std::string current;
  for (const Param& p : s.params()) {
    if (p.type == ParamType::table_list) {
      out += "\n### `[[" + p.key + "]]`\n\n" + p.doc + " (" + range_text(p) + ").\n\n";
      out += "| key | type | default | unit | range | description |\n|---|---|---|---|---|---|\n";
      current = "[[" + p.key + "]]";
      continue;
    }
    const auto [table, field] = split(p);
    if (table != current) {
      out += "\n### `" + table + "`\n\n";
      out += "| key | type | default | unit | range | description |\n|---|---|---|---|---|---|\n";
      current = table;
    }
    std::string def = "required";
    if (!p.required()) def = std::string("`").append(p.default_text()).append("`");
    std::string type = type_text(p);
    for (std::size_t pos = 0; (pos = type.find(" | ", pos)) != std::string::npos; pos += 4) type.replace(pos, 3, " \\| ");
    out += "| `" + field + "` | " + type + " | " + def + " | " + p.unit + " | " + range_text(p) + " | " + p.doc +
           (p.restart_safe ? " (may change on `--restart`)" : "") + " |\n";
  }
  return out;
}

}  // namespace strata
