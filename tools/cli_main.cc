#include "cli_main.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <new>
#include <set>

#include <fmt/format.h>

#include "storage/base/exception_status.h"

namespace seer::cli {

int ReportError(const std::string& command, const Status& status) {
  return ReportError(command, status.message());
}

int ReportError(const std::string& command, const std::string& message) {
  fmt::print(stderr, "seer {}: error: {}\n", command, message);
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

}  // namespace

Status CheckConfigKeys(const std::string& path, const CLI::App& app, const std::set<std::string>& skip_sections) {
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
    if (unchecked.count(key_section) > 0 || sections[key_section].count(key) > 0) continue;
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
  return Status::Ok();
}

int RunCli(int argc, char** argv, const std::vector<Registrar>& registrars,
           const std::vector<std::pair<std::string, std::string>>& forwarded) {
  CLI::App app{"seer: out-of-core GNN training from NVMe SSDs (inspector/executor, Belady feature cache)"};
  app.name("seer");
  app.require_subcommand(1);
  app.set_config("--config", "", "Read options from a TOML file", false);
  std::map<std::string, CommandMain> mains;
  for (Registrar registrar : registrars) {
    CommandMain main = registrar(app);
    mains[app.get_subcommands({}).back()->get_name()] = std::move(main);
  }
  for (const auto& [name, description] : forwarded) app.add_subcommand(name, description);
  // --config: every key must be an option of its section (CLI11 ignores unknown ones).
  for (int i = 1; i < argc; ++i) {
    std::string config;
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) config = argv[i + 1];
    if (std::strncmp(argv[i], "--config=", 9) == 0) config = argv[i] + 9;
    if (config.empty()) continue;
    std::set<std::string> skip;
    for (const auto& [name, description] : forwarded) skip.insert(name);
    const Status checked = CheckConfigKeys(config, app, skip);
    if (checked.ok()) continue;
    std::string command;  // the subcommand named on the command line, for the message
    for (int j = 1; j < argc && command.empty(); ++j) {
      if (mains.count(argv[j]) > 0 || skip.count(argv[j]) > 0) command = argv[j];
    }
    return ReportError(command, checked);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const seer::StatusError& e) {
    // A flag value the library's parser refused (tools/flag_binding.h).
    const auto parsed = app.get_subcommands();
    return ReportError(parsed.empty() ? "" : parsed.front()->get_name(), e.status());
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
