#include "cli_main.h"

#include <cstdio>
#include <exception>
#include <map>

#include <fmt/format.h>

namespace seer::cli {

int ReportError(const std::string& command, const Status& status) {
  return ReportError(command, status.message());
}

int ReportError(const std::string& command, const std::string& message) {
  fmt::print(stderr, "seer {}: error: {}\n", command, message);
  return 1;
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
    } catch (const std::exception& e) {
      return ReportError(sub->get_name(), e.what());
    }
  }
  return ReportError("", "this subcommand is not part of this executable");
}

}  // namespace seer::cli
