// The `seer` CLI: one Register*Command per subcommand (one .cc file each). A register
// function adds its CLI11 subcommand with every flag and default, and returns the
// function main() runs when that subcommand was chosen; that function returns the
// process exit code (0 = success). Only tools/ turns Status into messages: use
// ReportError() so every error is one line "seer <cmd>: error: <message>".
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "storage/base/status.h"

namespace seer::cli {

using CommandMain = std::function<int()>;

CommandMain RegisterGenCommand(CLI::App& root);
CommandMain RegisterPrepCommand(CLI::App& root);
CommandMain RegisterReorderCommand(CLI::App& root);
CommandMain RegisterSplitEdgesCommand(CLI::App& root);
CommandMain RegisterCheckCommand(CLI::App& root);
CommandMain RegisterNcacheCommand(CLI::App& root);
CommandMain RegisterSampleCommand(CLI::App& root);
CommandMain RegisterStatsCommand(CLI::App& root);
CommandMain RegisterTrainCommand(CLI::App& root);
CommandMain RegisterPredictCommand(CLI::App& root);

// Prints "seer <command>: error: <message>" to stderr and returns exit code 1.
int ReportError(const std::string& command, const Status& status);
int ReportError(const std::string& command, const std::string& message);

}  // namespace seer::cli
