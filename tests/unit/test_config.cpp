// Input handling: every kind of bad input is an InputError that names the
// file, the line, the key and the value; defaults and overrides resolve.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/config/config.hpp"
#include "engine/config/schema_doc.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/model.hpp"

using namespace strata;

namespace {

Schema test_schema(const std::string& model) {
  if (model != "toy") throw InputError("unknown model; available: toy");
  Schema s;
  s.choice("run.model", "", {"toy"}, "model");
  s.integer("run.seed", 42, "", Range{0.0, {}}, "seed");
  s.integer("toy.paths", 1000, "paths", Range{1.0, {}}, "how many");
  s.real("toy.rate", 0.0, "1/year", Range{-1.0, 1.0}, "rate");
  s.boolean("toy.antithetic", false, "pairs");
  s.table_list("toy.asset", Range{1.0, {}}, "assets");
  s.string("toy.asset[].name", std::nullopt, "name");
  s.real("toy.asset[].vol", std::nullopt, "1/sqrt(year)", Range{0.0, 5.0}, "volatility");
  s.choice("toy.asset[].model", "gbm", {"gbm", "heston"}, "dynamics");
  s.string_list("toy.asset[].tags", std::vector<std::string>{}, "labels");
  return s;
}

struct TempInput {
  std::filesystem::path path;
  explicit TempInput(const std::string& text) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("strata_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".toml");
    std::ofstream(path) << text;
  }
  ~TempInput() { std::filesystem::remove(path); }
};

const char* kValid = R"(# a valid toy input
[run]
model = "toy"

[toy]
paths = 5000

[[toy.asset]]
name = "A"
vol = 0.2
)";

Config load(const std::string& text, std::vector<std::string> sets = {}) {
  TempInput in(text);
  std::vector<Override> o;
  for (const auto& s : sets) o.push_back(parse_override(s));
  return Config::load(in.path.string(), o, test_schema);
}

std::string error_of(const std::string& text, std::vector<std::string> sets = {}) {
  try {
    load(text, std::move(sets));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

}  // namespace

TEST_CASE("a valid input resolves with every default filled in", "[config]") {
  const Config c = load(kValid);
  CHECK(c.integer("toy.paths") == 5000);
  CHECK(c.real("toy.rate") == 0.0);
  CHECK(c.boolean("toy.antithetic") == false);
  CHECK(c.integer("run.seed") == 42);
  CHECK(c.count("toy.asset") == 1);
  CHECK(c.string("toy.asset.0.model") == "gbm");
  CHECK(c.strings("toy.asset.0.tags").empty());

  // The stored text re-runs the experiment: it parses back to the same values.
  const toml::table again = toml::parse(c.to_toml());
  CHECK(again["toy"]["paths"].value<std::int64_t>() == 5000);
  CHECK(again["toy"]["asset"][0]["model"].value<std::string>() == "gbm");
  CHECK(again["run"]["seed"].value<std::int64_t>() == 42);
}

TEST_CASE("an unknown key names file, line and the nearest valid key", "[config]") {
  const std::string e = error_of(replace(kValid, "paths = 5000", "pathz = 5000"));
  CHECK_THAT(e, Catch::Contains(".toml:6: toy.pathz: unknown key"));
  CHECK_THAT(e, Catch::Contains("did you mean 'toy.paths'"));

  const std::string in_list = error_of(replace(kValid, "vol = 0.2", "vool = 0.2"));
  CHECK_THAT(in_list, Catch::Contains("toy.asset.0.vool: unknown key"));
  CHECK_THAT(in_list, Catch::Contains("toy.asset.N.vol"));

  const std::string table = error_of(replace(kValid, "[toy]", "[tyo]"));
  CHECK_THAT(table, Catch::Contains("unknown table"));
  CHECK_THAT(table, Catch::Contains("did you mean 'toy"));
}

TEST_CASE("wrong types, ranges and choices are reported with the value", "[config]") {
  CHECK_THAT(error_of(replace(kValid, "paths = 5000", "paths = \"many\"")),
             Catch::Contains("toy.paths = \"many\": expected an integer, got a string"));
  CHECK_THAT(error_of(replace(kValid, "paths = 5000", "paths = -5")),
             Catch::Contains("toy.paths = -5: out of range: must be >= 1"));
  CHECK_THAT(error_of(replace(kValid, "paths = 5000", "paths = 2.5")), Catch::Contains("expected an integer"));
  CHECK_THAT(error_of(replace(kValid, "vol = 0.2", "vol = 7.0")), Catch::Contains("must be [0, 5]"));
  CHECK_THAT(error_of(replace(kValid, "vol = 0.2", "vol = 0.2\nmodel = \"hestn\"")),
             Catch::Contains("must be one of: gbm, heston; did you mean 'heston'?"));
  CHECK_THAT(error_of(replace(kValid, "paths = 5000", "paths = 5000\nantithetic = 1")),
             Catch::Contains("expected true or false"));
  CHECK_THAT(error_of(replace(kValid, "vol = 0.2", "vol = 0.2\ntags = [1, 2]")),
             Catch::Contains("expected a list of strings"));
}

TEST_CASE("missing required keys and lists are reported", "[config]") {
  CHECK_THAT(error_of(replace(kValid, "vol = 0.2", "")), Catch::Contains("toy.asset.0.vol: required key missing"));
  const std::string no_list = error_of("[run]\nmodel = \"toy\"\n");
  CHECK_THAT(no_list, Catch::Contains("at least one [[toy.asset]] entry is required"));
  CHECK_THAT(error_of("[toy]\npaths = 1\n"), Catch::Contains("run.model: required key missing"));
  CHECK_THAT(error_of(replace(kValid, "model = \"toy\"", "model = \"tyo\"")), Catch::Contains("unknown model"));
}

TEST_CASE("malformed TOML and missing files name the place", "[config]") {
  const std::string e = error_of(replace(kValid, "paths = 5000", "paths = = 5000"));
  CHECK_THAT(e, Catch::Contains(".toml:6:"));
  CHECK_THAT(e, Catch::Contains("malformed TOML"));
  try {
    Config::load("/nonexistent/dir/input.toml", {}, test_schema);
    FAIL("no error");
  } catch (const InputError& err) {
    CHECK_THAT(err.what(), Catch::Contains("/nonexistent/dir/input.toml: cannot open input file"));
  }
}

TEST_CASE("--set overrides resolve after the file and are validated", "[config]") {
  const Config c = load(kValid, {"toy.paths=1e7", "toy.asset.0.vol=0.35", "toy.asset.0.model=heston",
                                 "toy.rate=-0.01"});
  CHECK(c.integer("toy.paths") == 10'000'000);
  CHECK(c.real("toy.asset.0.vol") == 0.35);
  CHECK(c.string("toy.asset.0.model") == "heston");
  CHECK(c.real("toy.rate") == -0.01);
  CHECK(c.where("toy.paths") == "--set toy.paths=1e7");
  // Whole-number floats are stored as integers so the resolved TOML is typed.
  CHECK(c.table()["toy"]["paths"].is_integer());

  CHECK_THAT(error_of(kValid, {"toy.paths=-3"}), Catch::Contains("--set toy.paths=-3: toy.paths = -3: out of range"));
  CHECK_THAT(error_of(kValid, {"toy.pahts=3"}), Catch::Contains("did you mean 'toy.paths'"));
  CHECK_THAT(error_of(kValid, {"toy.asset.4.vol=0.1"}), Catch::Contains("only 1 entries"));
  CHECK_THAT(error_of(kValid, {"novalue"}), Catch::Contains("expected key=value"));
}

TEST_CASE("--set names a list entry by its name as well as by its number", "[config]") {
  const std::string two = std::string(kValid) + "\n[[toy.asset]]\nname = \"B\"\nvol = 0.3\n";
  const Config c = load(two, {"toy.asset.B.vol=0.45", "toy.asset.A.model=heston"});
  CHECK(c.real("toy.asset.1.vol") == 0.45);
  CHECK(c.real("toy.asset.0.vol") == 0.2);
  CHECK(c.string("toy.asset.0.model") == "heston");
  // Stored and reported under the number, as the user gave it.
  CHECK(c.where("toy.asset.1.vol") == "--set toy.asset.B.vol=0.45");
  CHECK(c.to_toml() == load(two, {"toy.asset.1.vol=0.45", "toy.asset.0.model=heston"}).to_toml());
  CHECK_THAT(error_of(two, {"toy.asset.B.vol=9"}),
             Catch::Contains("--set toy.asset.B.vol=9: toy.asset.1.vol = 9") && Catch::Contains("out of range"));
  CHECK_THAT(error_of(two, {"toy.asset.SPX.vol=0.1"}),
             Catch::Contains("no entry of toy.asset is named 'SPX'") && Catch::Contains("(0 to 1) or one of the names A, B"));
}

TEST_CASE("edit distance and nearest key", "[config][schema]") {
  CHECK(edit_distance("paths", "paths") == 0);
  CHECK(edit_distance("pathz", "paths") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  // A typo's suggestion: the nearest word (the first of equals), none beyond the edits allowed.
  const std::vector<std::string> words = {"run", "models", "doctor", "validate", "sweep", "rum"};
  CHECK(nearest_word("runn", words, 2) == std::optional<std::string>("run"));
  CHECK(nearest_word("rux", words, 2) == std::optional<std::string>("run"));
  CHECK(nearest_word("modles", words, 2) == std::optional<std::string>("models"));
  CHECK_FALSE(nearest_word("checkpoint", words, 2).has_value());
  CHECK_FALSE(nearest_word("sxxxp", words, 2).has_value());
  CHECK(comma_list(words) == "run, models, doctor, validate, sweep, rum");
  CHECK(comma_list({}).empty());
  const Schema s = test_schema("toy");
  CHECK(s.nearest("toy.ptahs") == std::optional<std::string>("toy.paths"));
  CHECK_FALSE(s.nearest("toy.completely_different").has_value());
  CHECK(s.nearest("run.paths") == std::optional<std::string>("toy.paths"));  // right name, wrong table
}

TEST_CASE("the schema renders as text and markdown with every key", "[config][schema]") {
  const Schema s = test_schema("toy");
  const std::string md = schema_markdown(s);
  const std::string text = schema_text(s);
  for (const char* key : {"paths", "rate", "antithetic", "vol", "tags"}) {
    CHECK_THAT(md, Catch::Contains(std::string("`") + key + "`"));
    CHECK_THAT(text, Catch::Contains(key));
  }
  CHECK_THAT(md, Catch::Contains("### `[[toy.asset]]`"));
  CHECK_THAT(md, Catch::Contains("\"gbm\" \\| \"heston\""));
}

TEST_CASE("a [sweep] table: rejected by default, removed for a sweep point, lines kept", "[config][sweep]") {
  const std::string text = std::string(kValid) + "\n[sweep]\n\"toy.asset.0.vol\" = [0.1, 7.0]\noutput_dir = \"out\"\n";
  std::string rejected;
  try {
    Config::load_text(text, "sw.toml", {}, test_schema);
  } catch (const InputError& e) {
    rejected = e.what();
  }
  CHECK_THAT(rejected, Catch::Contains("sw.toml:12: [sweep]"));
  CHECK_THAT(rejected, Catch::Contains("strata sweep"));

  const Config c = Config::load_text(text, "sw.toml", {}, test_schema, SweepTable::remove);
  CHECK_FALSE(c.table().contains("sweep"));
  CHECK(c.where("toy.paths") == "sw.toml:6");
  CHECK(c.path() == "sw.toml");

  // A point's value arrives as an override whose text names the [sweep] line.
  std::string bad;
  try {
    Config::load_text(text, "sw.toml", {{"toy.asset.0.vol", "7.0", "sw.toml:13: [sweep] \"toy.asset.0.vol\""}},
                      test_schema, SweepTable::remove);
  } catch (const InputError& e) {
    bad = e.what();
  }
  CHECK_THAT(bad, Catch::Contains("sw.toml:13: [sweep] \"toy.asset.0.vol\": toy.asset.0.vol = 7"));
  CHECK_THAT(bad, Catch::Contains("out of range"));
}

TEST_CASE("the resolved configuration writes numbers as a person would, and reads them back", "[config]") {
  // 0.05 is 0.050000000000000003 at 17 digits; 0.1 + 0.2 needs all 17.
  const Config c = load(replace(kValid, "paths = 5000", "paths = 5000\nrate = 0.05"),
                        {"toy.asset.0.vol=0.30000000000000004", "toy.asset.0.tags=[\"0.5\"]"});
  const std::string text = c.to_toml();
  CHECK(text.find("rate = 0.05\n") != std::string::npos);
  CHECK(text.find("0.050000000000000003") == std::string::npos);
  CHECK(text.find("vol = 0.30000000000000004") != std::string::npos);
  CHECK(text.find("'0.5'") != std::string::npos);   // strings untouched
  const toml::table again = toml::parse(text);
  CHECK(again["toy"]["rate"].value<double>() == 0.05);
  CHECK(again["toy"]["asset"][0]["vol"].value<double>() == 0.1 + 0.2);
}
