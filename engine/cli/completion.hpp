// `strata completion bash`: a bash completion script generated from the
// binary's own command line (CLI11) and parameter schema, so it lists
// exactly the commands, options, models and input keys this build has.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace strata {

// Writes the script for `app` (the whole strata command line, parsed or not).
// Option values are completed by the option's type name: FILE.toml, FILE.h5,
// FILE, KEY=VALUE (--set: input keys), MODEL, COMMAND, "a|b|c" or CLI11's
// IsMember list (choices); any other type name takes free text.
void write_bash_completion(std::ostream& out, const CLI::App& app);

}  // namespace strata
