#include "engine/config/schema_doc.hpp"

#include <cstdio>
#include <map>

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
  std::string out;
  std::string current;
  char line[512];
  for (const Param& p : s.params()) {
    if (p.type == ParamType::table_list) continue;   // shown as its table heading
    const auto [table, field] = split(p);
    if (table != current) {
      out += (current.empty() ? "" : "\n") + table + "\n";
      current = table;
    }
    const std::string def = p.required() ? "(required)" : p.default_text();
    std::snprintf(line, sizeof line, "  %-16s %-26s %-12s %-14s %s\n", field.c_str(), type_text(p).c_str(),
                  def.c_str(), p.unit.c_str(), range_text(p).c_str());
    out += line;
    out += "      " + p.doc + (p.restart_safe ? " (may change on --restart)" : "") + "\n";
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
