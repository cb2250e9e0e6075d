// seer: the command-line front end. Each subcommand lives in its own *_command.cc.
#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "tools/commands.h"

namespace seer::cli {

int ReportError(const std::string& command, const Status& status) {
  return ReportError(command, status.message());
}

int ReportError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "seer %s: error: %s\n", command.c_str(), message.c_str());
  return 1;
}

}  // namespace seer::cli

int main(int argc, char** argv) {
  using namespace seer::cli;
  CLI::App app{"seer: out-of-core GNN training from NVMe SSDs (inspector/executor, Belady feature cache)"};
  app.require_subcommand(1);
  app.set_config("--config", "", "Read options from a TOML file", false);
  std::map<std::string, CommandMain> mains;
  auto add = [&](CommandMain main) {
    // The subcommand just added is the last one.
    mains[app.get_subcommands({}).back()->get_name()] = std::move(main);
  };
  add(RegisterGenCommand(app));
  add(RegisterPrepCommand(app));
  add(RegisterCheckCommand(app));
  add(RegisterNcacheCommand(app));
  add(RegisterSampleCommand(app));
  add(RegisterStatsCommand(app));
  add(RegisterTrainCommand(app));
  add(RegisterPredictCommand(app));
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
  return 2;
}
