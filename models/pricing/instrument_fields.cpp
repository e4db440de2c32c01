#include "models/pricing/instrument_fields.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/runtime/error.hpp"

namespace strata::pricing {
namespace {

constexpr const char* kField = "pricing.instrument[].";

class ConfigFields final : public InstrumentFields {
 public:
  ConfigFields(const Config& c, const std::string& prefix) : c_(c), prefix_(prefix) {}
  double real(const std::string& key) const override { return c_.real(prefix_ + key); }
  std::optional<std::string> word(const std::string& key) const override { return c_.word(prefix_ + key); }
  std::int64_t integer(const std::string& key) const override { return c_.integer(prefix_ + key); }
  std::string text(const std::string& key) const override { return c_.string(prefix_ + key); }
  std::vector<std::string> strings(const std::string& key) const override { return c_.strings(prefix_ + key); }
  std::vector<double> reals(const std::string& key) const override { return c_.reals(prefix_ + key); }
  bool given(const std::string& key) const override {
    const std::string w = c_.where(prefix_ + key);
    return w.size() < 9 || w.compare(w.size() - 9, 9, "(default)") != 0;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const override {
    c_.fail(prefix_ + key, message);
  }

 private:
  const Config& c_;
  std::string prefix_;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// One CSV line into cells: commas separate, double quotes protect commas
// ("" is a quote inside quotes).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cells.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else {
      cells.back() += ch;
    }
  }
  for (auto& c : cells) c = trim(c);
  return cells;
}

std::vector<std::string> split_list(const std::string& cell) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= cell.size()) {
    const std::size_t end = std::min(cell.find(';', start), cell.size());
    const std::string item = trim(cell.substr(start, end - start));
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

class CsvFields final : public InstrumentFields {
 public:
  CsvFields(const std::string& file, int line, int row, const std::vector<std::string>& header,
            std::vector<std::string> cells, const Schema& schema)
      : file_(file), line_(line), row_(row), header_(header), cells_(std::move(cells)), schema_(schema) {
    if (cells_.size() > header_.size()) {
      throw InputError(file_ + ": row " + std::to_string(row_) + " (line " + std::to_string(line_) + ") has " +
                       std::to_string(cells_.size()) + " cells, the header " + std::to_string(header_.size()));
    }
  }

  double real(const std::string& key) const override {
    const std::string& cell = this->cell(key);
    if (cell.empty()) return std::get<double>(param(key).default_value);
    return number(key, cell);
  }
  std::optional<std::string> word(const std::string& key) const override {
    const std::vector<std::string>& choices = param(key).choices;
    const auto w = std::find(choices.begin(), choices.end(), cell(key));
    return w == choices.end() ? std::nullopt : std::optional<std::string>(*w);
  }
  std::int64_t integer(const std::string& key) const override {
    const std::string& cell = this->cell(key);
    if (cell.empty()) return std::get<std::int64_t>(param(key).default_value);
    const double x = number(key, cell);
    if (x != static_cast<double>(static_cast<std::int64_t>(x))) fail(key, "expected an integer");
    return static_cast<std::int64_t>(x);
  }
  std::string text(const std::string& key) const override {
    const Param& p = param(key);
    const std::string& cell = this->cell(key);
    if (cell.empty()) return std::get<std::string>(p.default_value);
    if (p.type == ParamType::choice && std::ranges::find(p.choices, cell) == p.choices.end()) {
      fail(key, "must be one of: " + comma_list(p.choices));
    }
    return cell;
  }
  std::vector<std::string> strings(const std::string& key) const override { return split_list(cell(key)); }
  std::vector<double> reals(const std::string& key) const override {
    std::vector<double> out;
    for (const std::string& item : split_list(cell(key))) out.push_back(number(key, item));
    return out;
  }
  bool given(const std::string& key) const override { return !cell(key).empty(); }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const override {
    std::string where = file_ + ": row " + std::to_string(row_) + " (line " + std::to_string(line_) + ")";
    const int col = column(key);
    if (col >= 0) where += ", column " + std::to_string(col + 1);
    where += " (" + key + ")";
    const std::string& value = this->cell(key);
    throw InputError(where + (value.empty() ? "" : " = " + value) + ": " + message);
  }

  // Required keys must have a cell.
  void check_required() const {
    for (const Param* p : schema_.fields_of("pricing.instrument[]")) {
      const std::string key = p->key.substr(p->key.rfind('.') + 1);
      if (p->required() && cell(key).empty()) fail(key, "required (a column and a value in every row)");
    }
  }

 private:
  int column(const std::string& key) const {
    const auto i = std::find(header_.begin(), header_.end(), key);
    return i == header_.end() ? -1 : static_cast<int>(i - header_.begin());
  }
  const std::string& cell(const std::string& key) const {
    static const std::string empty;
    const int col = column(key);
    return col >= 0 && static_cast<std::size_t>(col) < cells_.size() ? cells_[static_cast<std::size_t>(col)] : empty;
  }
  const Param& param(const std::string& key) const { return *schema_.find(kField + key); }
  double number(const std::string& key, const std::string& text) const {
    double x = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), x);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) fail(key, "expected a real number, got " + text);
    const Param& p = param(key);
    if (!p.range.contains(x)) fail(key, "out of range: must be " + p.range.describe() + (p.unit.empty() ? "" : " " + p.unit));
    return x;
  }

  std::string file_;
  int line_, row_;
  const std::vector<std::string>& header_;
  std::vector<std::string> cells_;
  const Schema& schema_;
};

}  // namespace

void reject_foreign(const InstrumentFields& f, const Schema& schema, const std::string& schema_prefix,
                    const std::string& owner, std::initializer_list<std::pair<const char*, bool>> belongs) {
  for (const auto& [key, ok] : belongs) {
    if (ok) continue;
    const Param& param = *schema.find(schema_prefix + key);
    bool is_default = true;
    switch (param.type) {
      case ParamType::real: is_default = f.real(key) == std::get<double>(param.default_value); break;
      case ParamType::integer: is_default = f.integer(key) == std::get<std::int64_t>(param.default_value); break;
      case ParamType::real_list: is_default = f.reals(key).empty(); break;
      default: is_default = f.text(key) == std::get<std::string>(param.default_value); break;
    }
    if (!is_default) {
      f.fail(key, "does not apply to " + owner +
                      (std::string(key) == "fixings" ? " (fixings: asian, or discrete monitoring)" : ""));
    }
  }
}

std::unique_ptr<InstrumentFields> config_fields(const Config& c, const std::string& prefix) {
  return std::make_unique<ConfigFields>(c, prefix);
}

Instrument read_instrument(const InstrumentFields& f, const Portfolio& p, const Schema& schema) {
  Instrument in;
  in.name = f.text("name");
  in.type = f.text("type");
  const std::string option = f.text("option");
  if (option != "call" && option != "put") f.fail("option", "required: \"call\" or \"put\"");
  in.call = option == "call";
  in.maturity = f.real("maturity");
  if (!plain_name(in.name)) f.fail("name", kNameRule);
  if (f.word("strike")) {
    if (in.type != "lookback") f.fail("strike", "only a lookback's strike may be \"floating\"");
    in.floating = true;
  } else {
    in.strike = f.real("strike");
  }
  in.cash = f.real("cash");
  in.fixings = static_cast<int>(f.integer("fixings"));
  in.geometric = f.text("average") == "geometric";
  in.barrier = f.real("barrier");
  in.rebate = f.real("rebate");
  const std::string barrier_type = f.text("barrier_type");
  in.kind.up = barrier_type.rfind("up", 0) == 0;
  in.kind.knock_in = barrier_type.size() > 3 && barrier_type.compare(barrier_type.size() - 3, 3, "-in") == 0;
  in.continuous = f.text("monitoring") == "continuous";

  const bool discrete = !in.continuous;
  const bool vowel = in.type[0] == 'a';   // an asian, an american; a european
  reject_foreign(f, schema, kField, (vowel ? "an " : "a ") + in.type + " option",
                 {{"cash", in.type == "digital"},
                  {"fixings", in.type == "asian" || ((in.type == "barrier" || in.type == "lookback") && discrete)},
                  {"average", in.type == "asian" || in.type == "basket"},
                  {"barrier", in.type == "barrier"},
                  {"barrier_type", in.type == "barrier"},
                  {"monitoring", in.type == "barrier" || in.type == "lookback"},
                  {"rebate", in.type == "barrier"},
                  {"basket", in.type == "basket"},
                  {"weights", in.type == "basket" || in.type == "american"},
                  {"exercise_dates", in.type == "american"},
                  {"basis", in.type == "american"},
                  {"degree", in.type == "american"}});
  if (in.type == "barrier" && !(in.barrier > 0)) f.fail("barrier", "a barrier option needs a barrier > 0");

  in.basket = f.text("basket");
  in.weights = f.reals("weights");
  if (in.basket != "average" && in.geometric) f.fail("average", "applies to basket = \"average\" only");
  const std::vector<std::string> names = f.strings("assets");
  const bool american = in.type == "american";
  if (american) {
    in.fixings = static_cast<int>(f.integer("exercise_dates"));
    in.laguerre = f.text("basis") == "laguerre";
    in.degree = static_cast<int>(f.integer("degree"));
    if (names.empty() || names.size() > 8) f.fail("assets", "an american option is written on 1 to 8 assets");
  }
  // An American on several assets is written on their weighted average.
  const bool basket = in.type == "basket" || (american && names.size() > 1);
  if (!basket && !american && names.size() != 1) {
    f.fail("assets", "a " + in.type + " option is written on exactly one asset");
  }
  if (in.type == "basket" && (names.size() < 2 || names.size() > 8)) f.fail("assets", "a basket holds 2 to 8 assets");
  for (const std::string& name : names) {
    const auto asset = std::ranges::find(p.assets, name, &Asset::name);
    if (asset == p.assets.end()) f.fail("assets", "no [[pricing.asset]] is named \"" + name + "\"");
    const auto found = static_cast<int>(asset - p.assets.begin());
    if (std::ranges::count(in.basket_assets, found) > 0) f.fail("assets", "\"" + name + "\" is named twice");
    in.basket_assets.push_back(found);
  }
  in.asset = in.basket_assets.front();
  if (!basket) in.basket_assets.clear();
  if (basket && in.basket == "average") {
    if (in.weights.empty()) in.weights.assign(names.size(), 1.0 / static_cast<double>(names.size()));
    if (in.weights.size() != names.size()) f.fail("weights", "needs one weight per asset (" + std::to_string(names.size()) + ")");
  } else if (!in.weights.empty()) {
    f.fail("weights", american ? "applies to an american option on several assets only"
                               : "applies to basket = \"average\" only");
  }
  return in;
}

std::vector<Instrument> read_portfolio_csv(const std::string& path, const Schema& schema, const Portfolio& p) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the portfolio file");
  std::vector<std::string> header;
  std::vector<Instrument> out;
  std::string line;
  int line_no = 0, row = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (header.empty()) {
      header = split_csv(t);
      for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string& key = header[i];
        if (schema.find(kField + key) == nullptr) {
          std::string msg = path + ": line " + std::to_string(line_no) + ", column " + std::to_string(i + 1) + ": '" +
                            key + "' is not an instrument key";
          if (const auto near = schema.nearest(kField + key)) msg += "; did you mean '" + near->substr(near->rfind('.') + 1) + "'?";
          throw InputError(msg);
        }
        if (std::count(header.begin(), header.begin() + i, key) > 0)
          throw InputError(path + ": line " + std::to_string(line_no) + ": column '" + key + "' appears twice");
      }
      continue;
    }
    ++row;
    CsvFields fields(path, line_no, row, header, split_csv(t), schema);
    fields.check_required();
    out.push_back(read_instrument(fields, p, schema));
  }
  if (header.empty()) throw InputError(path + ": no header line (the instrument keys, comma separated)");
  return out;
}

}  // namespace strata::pricing
