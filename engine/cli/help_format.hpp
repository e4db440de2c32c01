// How strata's help reads: CLI11's, except that --help-all gives each
// command one block (a heading line with its description, its usage, then
// one line per argument and option), the layout help2man turns into the man
// page's per-command sections.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

namespace strata {

// Set it on the App before adding subcommands: they copy the parent's.
std::shared_ptr<CLI::Formatter> help_formatter();

}  // namespace strata
