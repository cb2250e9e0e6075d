// PLACEHOLDER: replaced by the real `seer train` implementation.
#include "tools/commands.h"

namespace seer::cli {

CommandMain RegisterTrainCommand(CLI::App& root) {
  root.add_subcommand("train", "(not built yet)");
  return [] { return ReportError("train", "not implemented in this build"); };
}

}  // namespace seer::cli
