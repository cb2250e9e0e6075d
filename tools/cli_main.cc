#include "cli_main.h"

#include <cstdio>
#include <exception>
#include <map>

namespace seer::cli {

int ReportError(const std::string& command, const Status& status) {
  return ReportError(command, status.message());
}

int ReportError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "seer %s: error: %s\n", command.c_str(), message.c_str());
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
