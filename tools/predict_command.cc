// PLACEHOLDER: replaced by the real `seer predict` implementation.
#include "tools/commands.h"

namespace seer::cli {

CommandMain RegisterPredictCommand(CLI::App& root) {
  root.add_subcommand("predict", "(not built yet)");
  return [] { return ReportError("predict", "not implemented in this build"); };
}

}  // namespace seer::cli
