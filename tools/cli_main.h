// The shared main() of the two executables behind `seer`:
//   seer        gen, prep, check, ncache, sample, stats (no libtorch: starts in ms)
//   seer-train  train, predict (libtorch)
// `seer train ...` / `seer predict ...` exec seer-train from the same directory, so the
// user sees one command while the light subcommands never load libtorch (~150 MiB of
// mappings and a second of start-up on Debian's build).
#pragma once

#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"

namespace seer::cli {

using Registrar = CommandMain (*)(CLI::App&);

// A --config TOML file's keys against the options of `app` and its subcommands
// ("[check]" + "deep = true", or "check.deep = true"): an unknown or misplaced key (an
// option of another section) is InvalidArgument naming the file, line and key. Sections
// of subcommands this executable does not run (`skip_sections`, and the other
// executable's) are left to it.
Status CheckConfigKeys(const std::string& path, const CLI::App& app, const std::set<std::string>& skip_sections);

// Parses argv with the given subcommands and runs the chosen one; turns exceptions
// into one-line errors (a --config file's keys are checked first, CheckConfigKeys).
// `forwarded` are subcommands listed in --help that live in the other executable
// (name, description).
int RunCli(int argc, char** argv, const std::vector<Registrar>& registrars,
           const std::vector<std::pair<std::string, std::string>>& forwarded);

}  // namespace seer::cli
