// The shared main() of the two executables behind `seer`:
//   seer        gen, prep, check, ncache, sample, stats (no libtorch: starts in ms)
//   seer-train  train, predict (libtorch)
// `seer train ...` / `seer predict ...` exec seer-train from the same directory, so the
// user sees one command while the light subcommands never load libtorch (~150 MiB of
// mappings and a second of start-up on Debian's build).
#pragma once

#include <cstdint>
#include <map>
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

// The line of every key of a --config file: (section, key with '-') -> line number ("" =
// the top level). ReadConfigKeys makes the checks of CheckConfigKeys, and refuses a key
// given twice in one section, naming both lines.
using ConfigKeyLines = std::map<std::pair<std::string, std::string>, int64_t>;
Result<ConfigKeyLines> ReadConfigKeys(const std::string& path, const CLI::App& app,
                                      const std::set<std::string>& skip_sections);

// Error messages quote what the user typed; a token (a run of non-blanks) longer than
// kMaxQuotedTokenChars is cut to its first kCutTokenChars characters and
// "...(N characters)", so a 10 MB bad argument gives a short line. ReportError applies it.
inline constexpr size_t kMaxQuotedTokenChars = 256;
inline constexpr size_t kCutTokenChars = 80;
std::string CutLongTokens(const std::string& message);

// The directory of the running executable (/proc/self/exe), with a trailing slash ("" if
// unknown): where `seer` finds `seer-train` and the launcher finds `seer`.
std::string ExecutableDir();

// `seer --version`: the version, the git commit built from, and what this build can use:
// the CUDA kernels (and devices), libtorch (seer-train beside seer) and io_uring.
std::string VersionText();

// Parses argv with the given subcommands and runs the chosen one; turns exceptions
// and CLI11's parse errors into one-line errors, exit code 1 (a --config file's keys are
// checked first, ReadConfigKeys; a value CLI11 refuses there is named by file:line and
// key; an unknown flag gets the nearest known one: "did you mean --hidden?").
// `forwarded` are subcommands listed in --help that live in the other executable
// (name, description).
int RunCli(int argc, char** argv, const std::vector<Registrar>& registrars,
           const std::vector<std::pair<std::string, std::string>>& forwarded);

}  // namespace seer::cli
