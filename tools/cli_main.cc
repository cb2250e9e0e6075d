#include "cli_main.h"

#include <algorithm>
#include <cctype>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <new>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "kernels/device.h"
#include "storage/base/exception_status.h"

namespace seer::cli {

int ReportError(const std::string& command, const Status& status) {
  return ReportError(command, status.message());
}

std::string CutLongTokens(const std::string& message) {
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    const bool blank = message[i] == ' ' || message[i] == '\n';
    size_t end = i;
    while (end < message.size() && (message[end] == ' ' || message[end] == '\n') == blank) ++end;
    if (!blank && end - i > kMaxQuotedTokenChars) {
      out += message.substr(i, kCutTokenChars) + fmt::format("...({} characters)", end - i);
    } else {
      out += message.substr(i, end - i);
    }
    i = end;
  }
  return out;
}

int ReportError(const std::string& command, const std::string& message) {
  fmt::print(stderr, "seer {}: error: {}\n", command, CutLongTokens(message));
  return 1;
}

namespace {

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// The names a config key may use for `cmd`'s options: long names ("deep", "no-overlap")
// and positional names ("dataset"), with '_' also accepted for '-'.
std::set<std::string> ConfigKeys(const CLI::App& cmd) {
  std::set<std::string> keys;
  for (const CLI::Option* option : cmd.get_options()) {
    std::vector<std::string> names = option->get_lnames();
    if (!option->get_name(true, false).empty()) names.push_back(option->get_name(true, false));
    for (std::string name : names) {
      while (!name.empty() && name[0] == '-') name.erase(0, 1);
      keys.insert(name);
      for (char& c : name) c = c == '-' ? '_' : c;
      keys.insert(name);
    }
  }
  return keys;
}

// Levenshtein distance (flag names are short).
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The long flags `cmd` (and the root, for --config) take, "--" included.
std::vector<std::string> LongFlags(const CLI::App& cmd) {
  std::vector<std::string> flags;
  for (const CLI::App* app : {&cmd, cmd.get_parent()}) {
    if (app == nullptr) continue;
    for (const CLI::Option* option : app->get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    }
  }
  return flags;
}

// "--xyz", the known flag nearest to `typed` ("--hiden"), or "" when none is close.
std::string NearestFlag(const std::string& typed, const std::vector<std::string>& flags) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, (typed.size() - 2) / 4) + 1;
  for (const std::string& flag : flags) {
    const size_t d = EditDistance(typed, flag);
    if (d < best_distance || (d == best_distance && !best.empty() && flag < best && d > 0)) {
      best_distance = d;
      best = flag;
    }
  }
  // A unique prefix ("--hid" for --hidden) is a guess too.
  if (best.empty() && typed.size() >= 4) {
    for (const std::string& flag : flags) {
      if (flag.rfind(typed, 0) != 0) continue;
      if (!best.empty()) return "";
      best = flag;
    }
  }
  return best;
}

std::string WithConfigLine(const CLI::App& cmd, const std::string& message, int argc, char** argv,
                           const std::string& config, const ConfigKeyLines& config_lines);

// A CLI11 parse error as one line naming what is wrong: an unknown flag with the nearest
// known one, a --config value with its file, line and key.
std::string DescribeParseError(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv,
                               const std::string& config, const ConfigKeyLines& config_lines) {
  const auto parsed = app.get_subcommands();
  const CLI::App& cmd = parsed.empty() ? app : *parsed.front();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::vector<std::string> flags = LongFlags(cmd);
    for (int i = 1; i < argc; ++i) {
      std::string word = argv[i];
      if (word == "--") break;
      if (word.rfind("--", 0) != 0 || word.size() < 3) continue;
      word = word.substr(0, word.find('='));
      if (std::find(flags.begin(), flags.end(), word) != flags.end()) continue;
      const std::string nearest = NearestFlag(word, flags);
      return "unknown flag " + word + (nearest.empty() ? " (--help lists the flags)" : "; did you mean " + nearest + "?");
    }
    std::string extras;
    for (const std::string& word : app.remaining()) extras += (extras.empty() ? "" : " ") + word;
    for (const CLI::App* sub : parsed) {
      for (const std::string& word : sub->remaining()) extras += (extras.empty() ? "" : " ") + word;
    }
    return "unexpected argument(s): " + (extras.empty() ? std::string(e.what()) : extras) + " (--help lists the flags)";
  }
  return WithConfigLine(cmd, e.what(), argc, argv, config, config_lines);
}

// `message` about a flag's value, prefixed "FILE:LINE: key 'K' in [SECTION]: " when the
// value came from --config rather than the command line.
std::string WithConfigLine(const CLI::App& cmd, const std::string& message, int argc, char** argv,
                           const std::string& config, const ConfigKeyLines& config_lines) {
  // Which flag the message is about, and whether --config (not the command line) set it.
  const size_t at = message.find("--");
  if (!config.empty() && at != std::string::npos) {
    size_t end = at + 2;
    while (end < message.size() && (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '-')) ++end;
    const std::string flag = message.substr(at, end - at);
    bool on_command_line = false;
    for (int i = 1; i < argc; ++i) on_command_line |= std::string(argv[i]).substr(0, flag.size()) == flag;
    for (const std::string& section : {cmd.get_name(), std::string()}) {
      const auto it = config_lines.find({section == "seer" ? "" : section, flag.substr(2)});
      if (on_command_line || it == config_lines.end()) continue;
      return config + ":" + std::to_string(it->second) + ": key '" + flag.substr(2) + "'" +
             (it->first.first.empty() ? "" : " in [" + it->first.first + "]") + ": " + message;
    }
  }
  return message;
}

// Whether this kernel lets this process set up an io_uring (seccomp and container
// policies often refuse it; Seer then reads with a pread pool).
std::string IoUringAvailability() {
  io_uring_params params{};
  const long fd = ::syscall(__NR_io_uring_setup, 1, &params);
  if (fd < 0) return fmt::format("unavailable ({}; reads use a pread pool)", std::strerror(errno));
  ::close(static_cast<int>(fd));
  return "available";
}

}  // namespace

std::string VersionText() {
  const bool trainer = ::access((ExecutableDir() + "seer-train").c_str(), X_OK) == 0;
  const int devices = kernels::BuiltWithCuda() ? kernels::CudaDeviceCount() : 0;
  return fmt::format(
      "seer {} (git {})\nCUDA kernels: {}\nlibtorch (seer train, seer predict): {}\nio_uring: {}", SEER_VERSION,
      SEER_GIT_HASH,
      kernels::BuiltWithCuda() ? fmt::format("built, {} device{} ({})", devices, devices == 1 ? "" : "s",
                                             kernels::DescribeDevice())
                               : "not built (CPU only)",
      trainer ? "built (" + ExecutableDir() + "seer-train)" : "not built (-DSEER_WITH_TORCH=OFF)", IoUringAvailability());
}

Status CheckConfigKeys(const std::string& path, const CLI::App& app, const std::set<std::string>& skip_sections) {
  return ReadConfigKeys(path, app, skip_sections).status();
}

Result<ConfigKeyLines> ReadConfigKeys(const std::string& path, const CLI::App& app,
                                      const std::set<std::string>& skip_sections) {
  ConfigKeyLines lines_of;
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kNotFound, path + ": cannot open the --config file");
  std::map<std::string, std::set<std::string>> sections;  // "" = top level (seer's own flags)
  sections[""] = ConfigKeys(app);
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (skip_sections.count(sub->get_name()) == 0) sections[sub->get_name()] = ConfigKeys(*sub);
  }
  // The other executable's subcommands (seer / seer-train) are checked when it runs.
  static const char* const kAllSubcommands[] = {"gen", "prep", "check", "ncache", "sample", "stats", "train", "predict"};
  std::set<std::string> unchecked;
  for (const char* name : kAllSubcommands) {
    if (sections.count(name) == 0) unchecked.insert(name);
  }
  std::string section;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    std::string text = Trim(line);
    if (text.empty() || text[0] == '#' || text[0] == ';') continue;
    if (text[0] == '[') {
      const size_t close = text.find(']');
      if (close == std::string::npos) return InvalidArgument(where + ": section header without ']'");
      section = Trim(text.substr(1, close - 1));
      if (sections.count(section) == 0 && unchecked.count(section) == 0) {
        return InvalidArgument(where + ": unknown section [" + section + "] (sections are seer subcommands)");
      }
      continue;
    }
    const size_t eq = text.find('=');
    if (eq == std::string::npos) return InvalidArgument(where + ": expected 'key = value'");
    std::string key = Trim(text.substr(0, eq));
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front()) {
      key = key.substr(1, key.size() - 2);
    }
    std::string key_section = section;
    const size_t dot = key.rfind('.');
    if (dot != std::string::npos) {  // check.deep = true
      key_section = key.substr(0, dot);
      key = key.substr(dot + 1);
      if (unchecked.count(key_section) > 0) continue;
      if (sections.count(key_section) == 0) {
        return InvalidArgument(where + ": unknown key '" + key_section + "." + key + "' (no subcommand " +
                               key_section + ")");
      }
    }
    if (unchecked.count(key_section) > 0) continue;
    if (sections[key_section].count(key) > 0) {
      std::string canonical = key;  // hidden_units and hidden-units are one key
      for (char& c : canonical) c = c == '_' ? '-' : c;
      const auto [it, inserted] = lines_of.emplace(std::pair{key_section, canonical}, number);
      if (!inserted) {
        return InvalidArgument(where + ": key '" + key + "' " +
                               (key_section.empty() ? "at the top level" : "in [" + key_section + "]") +
                               " is given twice (first at line " + std::to_string(it->second) + ")");
      }
      continue;
    }
    const std::string in_section = key_section.empty() ? "at the top level" : "in [" + key_section + "]";
    std::string elsewhere;
    for (const auto& [name, keys] : sections) {
      if (name != key_section && !name.empty() && keys.count(key) > 0) elsewhere += (elsewhere.empty() ? "" : ", ") + ("[" + name + "]");
    }
    if (!elsewhere.empty()) {
      return InvalidArgument(where + ": key '" + key + "' " + in_section + " is misplaced: it is an option of " +
                             elsewhere);
    }
    return InvalidArgument(where + ": unknown key '" + key + "' " + in_section +
                           (key_section.empty() ? "" : " (seer " + key_section + " has no --" + key + ")"));
  }
  return lines_of;
}

std::string ExecutableDir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.find_last_of('/') + 1);
}

int RunCli(int argc, char** argv, const std::vector<Registrar>& registrars,
           const std::vector<std::pair<std::string, std::string>>& forwarded) {
  CLI::App app{"seer: out-of-core GNN training from NVMe SSDs (inspector/executor, Belady feature cache)"};
  app.name("seer");
  app.require_subcommand(1);
  app.set_config("--config", "", "Read options from a TOML file", false);
  app.set_version_flag("--version", VersionText, "Print the version, the git commit and what this build can use "
                                                "(CUDA, libtorch, io_uring), then exit");
  std::map<std::string, CommandMain> mains;
  for (Registrar registrar : registrars) {
    CommandMain main = registrar(app);
    mains[app.get_subcommands({}).back()->get_name()] = std::move(main);
  }
  for (const auto& [name, description] : forwarded) app.add_subcommand(name, description);
  std::set<std::string> skip;
  for (const auto& [name, description] : forwarded) skip.insert(name);
  std::string command;  // the subcommand named on the command line, for messages
  for (int j = 1; j < argc && command.empty(); ++j) {
    if (mains.count(argv[j]) > 0 || skip.count(argv[j]) > 0) command = argv[j];
  }
  // --config: every key must be an option of its section (CLI11 ignores unknown ones),
  // and appear once; the lines of the keys name a value CLI11 refuses.
  std::string config;
  ConfigKeyLines config_lines;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) config = argv[i + 1];
    if (std::strncmp(argv[i], "--config=", 9) == 0) config = argv[i] + 9;
  }
  if (!config.empty()) {
    Result<ConfigKeyLines> checked = ReadConfigKeys(config, app, skip);
    if (!checked.ok()) return ReportError(command, checked.status());
    config_lines = std::move(checked).value();
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return ReportError(command, DescribeParseError(app, e, argc, argv, config, config_lines));
  } catch (const seer::StatusError& e) {
    // A flag value the library's parser refused (tools/flag_binding.h).
    const auto parsed = app.get_subcommands();
    return ReportError(parsed.empty() ? "" : parsed.front()->get_name(),
                       WithConfigLine(parsed.empty() ? app : *parsed.front(), e.status().message(), argc, argv, config,
                                      config_lines));
  }
  for (auto* sub : app.get_subcommands()) {
    auto it = mains.find(sub->get_name());
    if (it == mains.end()) continue;
    try {
      return it->second();
    } catch (const seer::StatusError& e) {
      return ReportError(sub->get_name(), e.status());
    } catch (...) {
      // The one exception -> Status rule (storage/base/exception_status.h).
      return ReportError(sub->get_name(), StatusFromCurrentException(""));
    }
  }
  return ReportError("", "this subcommand is not part of this executable");
}

}  // namespace seer::cli
