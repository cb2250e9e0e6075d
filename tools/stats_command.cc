// PLACEHOLDER: replaced by the real `seer stats` implementation.
#include "tools/commands.h"

namespace seer::cli {

CommandMain RegisterStatsCommand(CLI::App& root) {
  root.add_subcommand("stats", "(not built yet)");
  return [] { return ReportError("stats", "not implemented in this build"); };
}

}  // namespace seer::cli
