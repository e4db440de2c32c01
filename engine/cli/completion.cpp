#include "engine/cli/completion.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "engine/cli/commands.hpp"
#include "engine/config/schema.hpp"
#include "engine/runtime/model.hpp"

namespace strata {

namespace {

std::string joined(const std::vector<std::string>& words, const char* separator) {
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : separator) + w;
  return text;
}

// What an option's value is, as the script's _strata_complete_kind names it:
// key, toml, h5, file, model, command, "choice A B ...", text (free text
// such as a number: nothing to offer) or "" (a flag).
std::string value_kind(const CLI::Option& opt) {
  if (!opt.get_positional() && opt.get_type_size_max() == 0) return "";
  const std::string type = opt.get_type_name();
  // CLI::IsMember describes itself as ":{a,b,c}" after the type name.
  if (const auto open = type.find(":{"); open != std::string::npos && type.back() == '}') {
    std::string words = type.substr(open + 2, type.size() - open - 3);
    std::ranges::replace(words, ',', ' ');
    return "choice " + words;
  }
  if (type.find('|') != std::string::npos) {
    std::string words = type;
    std::ranges::replace(words, '|', ' ');
    return "choice " + words;
  }
  if (type == "KEY=VALUE") return "key";
  if (type == "FILE.toml") return "toml";
  if (type == "FILE.h5") return "h5";
  if (type == "FILE") return "file";
  if (type == "MODEL") return "model";
  if (type == "COMMAND") return "command";
  return "text";
}

struct CommandLine {
  std::vector<std::string> options;                         // every name: -o, --output, ...
  std::vector<std::pair<std::string, std::string>> values;  // option name -> value kind
  std::string positional;                                   // the first positional's kind
};

CommandLine command_line(const CLI::App& app) {
  CommandLine c;
  for (const CLI::Option* opt : app.get_options()) {
    const std::string kind = value_kind(*opt);
    if (opt->get_positional() && opt->get_lnames().empty() && opt->get_snames().empty()) {
      if (c.positional.empty()) c.positional = kind;
      continue;
    }
    std::vector<std::string> names;
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& n : names) {
      c.options.push_back(n);
      if (!kind.empty()) c.values.emplace_back(n, kind);
    }
  }
  return c;
}

// The input keys as --set takes them (a list's entry by number:
// pricing.asset.0.vol) and the case pattern that matches every entry
// (pricing.asset.*.vol); list tables themselves take no value.
struct KeyWords {
  std::vector<std::string> keys, tables;
  std::vector<std::pair<std::string, std::string>> values;  // case pattern -> its words
};

void add_keys(KeyWords& k, const Schema& schema) {
  for (const Param& p : schema.params()) {
    if (p.type == ParamType::table_list) continue;
    std::string key = p.key, pattern = p.key;
    for (std::size_t at; (at = key.find("[]")) != std::string::npos;) key.replace(at, 2, ".0");
    for (std::size_t at; (at = pattern.find("[]")) != std::string::npos;) pattern.replace(at, 2, ".*");
    if (std::ranges::find(k.keys, key) != k.keys.end()) continue;
    k.keys.push_back(key);
    const std::string table = key.substr(0, key.find('.')) + ".";
    if (std::ranges::find(k.tables, table) == k.tables.end()) k.tables.push_back(table);
    if (p.type == ParamType::boolean) k.values.emplace_back(pattern, "true false");
    // A choice's values; the words a number key takes besides numbers.
    if (!p.choices.empty()) k.values.emplace_back(pattern, joined(p.choices, " "));
  }
}

// The part of the script that does not depend on the command line: how a
// word is completed once it is known what it is.
constexpr const char* kCompletionFunctions = R"BASH(
# Completes CUR as KIND (see _strata_value) into COMPREPLY.
_strata_complete_kind() {
  local kind=$1 cur=$2
  case $kind in
    key)
      if [[ $cur == *=* ]]; then
        # KEY=VALUE in one word: '=' is not a word break here.
        local key=${cur%%=*}
        _strata_key_values "$key"
        mapfile -t COMPREPLY < <(compgen -W "$REPLY" -P "$key=" -- "${cur#*=}")
      elif [[ $cur == *.* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$_strata_keys" -S = -- "$cur")
        compopt -o nospace 2>/dev/null
      else
        mapfile -t COMPREPLY < <(compgen -W "$_strata_tables" -- "$cur")
        compopt -o nospace 2>/dev/null
      fi
      ;;
    toml | h5)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X "!*.$kind" -- "$cur")
      ;;
    file)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      ;;
    model) mapfile -t COMPREPLY < <(compgen -W "$_strata_models" -- "$cur") ;;
    command) mapfile -t COMPREPLY < <(compgen -W "$_strata_commands" -- "$cur") ;;
    choice\ *) mapfile -t COMPREPLY < <(compgen -W "${kind#choice }" -- "$cur") ;;
  esac
}

_strata() {
  COMPREPLY=()
  local REPLY cmd= word i
  # Bash splits --set key=value and --option=value at '=' (COMP_WORDBREAKS):
  # join such words again; the last one is the word under the cursor.
  local words=()
  for ((i = 1; i <= COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ ${#words[@]} -gt 0 && ($word == = || ${words[-1]} == *=) ]]; then
      words[-1]+=$word
    else
      words+=("$word")
    fi
  done
  [[ ${#words[@]} -gt 0 ]] || words=("")
  local cur=${words[-1]} prev=
  [[ ${#words[@]} -gt 1 ]] && prev=${words[-2]}
  for word in "${words[@]:0:${#words[@]}-1}"; do
    [[ $word == -* ]] && continue
    cmd=$word
    break
  done
  # Readline replaces only what follows the last '=' when '=' breaks words.
  local after_eq=
  [[ $COMP_WORDBREAKS == *=* ]] && after_eq=1

  if [[ $cur == -*=* ]]; then
    _strata_value "$cmd" "${cur%%=*}"
    _strata_complete_kind "$REPLY" "${cur#*=}"
    [[ -n $after_eq ]] || COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
    return 0
  fi
  if [[ $prev == -* ]]; then
    _strata_value "$cmd" "$prev"
    local kind=$REPLY
    if [[ -n $kind ]]; then
      _strata_complete_kind "$kind" "$cur"
      if [[ $kind == key && $cur == *=* && -n $after_eq ]]; then
        COMPREPLY=("${COMPREPLY[@]#"${cur%%=*}="}")
      fi
      return 0
    fi
  fi
  if [[ $cur == -* ]]; then
    _strata_options "$cmd"
    mapfile -t COMPREPLY < <(compgen -W "$REPLY" -- "$cur")
  elif [[ -z $cmd ]]; then
    _strata_complete_kind command "$cur"
  else
    _strata_positional "$cmd"
    _strata_complete_kind "$REPLY" "$cur"
  fi
  return 0
}
complete -F _strata strata
)BASH";

}  // namespace

void write_bash_completion(std::ostream& out, const CLI::App& app) {
  std::vector<std::string> commands;
  std::vector<std::pair<std::string, CommandLine>> lines{{"", command_line(app)}};
  for (const CLI::App* sub : app.get_subcommands({})) {
    commands.push_back(sub->get_name());
    lines.emplace_back(sub->get_name(), command_line(*sub));
  }
  std::vector<std::string> models;
  for (const Model* m : ModelRegistry::instance().models()) models.emplace_back(m->name());
  KeyWords keys;
  Schema run;
  declare_run_schema(run);
  add_keys(keys, run);
  for (const Model* m : ModelRegistry::instance().models()) {
    Schema s;
    m->declare(s);
    add_keys(keys, s);
  }

  out << "# bash completion for strata: its commands, their options, input files,\n"
      << "# model names and, after --set, every input key and its choices.\n"
      << "# Generated by `strata completion bash` from the binary's own command line\n"
      << "# and parameter schema; regenerate it rather than edit it. Load it with\n"
      << "#   source <(strata completion bash)\n"
      << "# or install it as share/bash-completion/completions/strata.\n\n";
  out << "_strata_commands=" << shell_quote(joined(commands, " ")) << "\n";
  out << "_strata_models=" << shell_quote(joined(models, " ")) << "\n";
  out << "_strata_tables=" << shell_quote(joined(keys.tables, " ")) << "\n";
  out << "_strata_keys='\n" << joined(keys.keys, "\n") << "'\n\n";

  out << "# The options of a command ('' for strata itself).\n_strata_options() {\n  case $1 in\n";
  for (const auto& [name, line] : lines) {
    out << "    " << (name.empty() ? "''" : name) << ") REPLY=" << shell_quote(joined(line.options, " ")) << " ;;\n";
  }
  out << "    *) REPLY= ;;\n  esac\n}\n\n";

  out << "# What follows an option of a command: key, toml, h5, file, model, command,\n"
      << "# 'choice WORD...', text (nothing to offer) or '' (a flag).\n_strata_value() {\n  case \"$1 $2\" in\n";
  for (const auto& [name, line] : lines) {
    for (const auto& [option, kind] : line.values) {
      out << "    " << shell_quote(name + " " + option) << ") REPLY=" << shell_quote(kind) << " ;;\n";
    }
  }
  out << "    *) REPLY= ;;\n  esac\n}\n\n";

  out << "# What a command's positional argument is.\n_strata_positional() {\n  case $1 in\n";
  for (const auto& [name, line] : lines) {
    if (!name.empty() && !line.positional.empty()) {
      out << "    " << name << ") REPLY=" << shell_quote(line.positional) << " ;;\n";
    }
  }
  out << "    *) REPLY= ;;\n  esac\n}\n\n";

  out << "# The values an input key takes: its choices; true or false.\n_strata_key_values() {\n  case $1 in\n";
  for (const auto& [pattern, words] : keys.values) {
    out << "    " << pattern << ") REPLY=" << shell_quote(words) << " ;;\n";
  }
  out << "    *) REPLY= ;;\n  esac\n}\n";
  out << kCompletionFunctions;
}

}  // namespace strata
