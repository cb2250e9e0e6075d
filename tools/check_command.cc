// PLACEHOLDER: replaced by the real `seer check` implementation.
#include "tools/commands.h"

namespace seer::cli {

CommandMain RegisterCheckCommand(CLI::App& root) {
  root.add_subcommand("check", "(not built yet)");
  return [] { return ReportError("check", "not implemented in this build"); };
}

}  // namespace seer::cli
