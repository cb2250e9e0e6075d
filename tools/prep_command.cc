// PLACEHOLDER: replaced by the real `seer prep` implementation.
#include "tools/commands.h"

namespace seer::cli {

CommandMain RegisterPrepCommand(CLI::App& root) {
  root.add_subcommand("prep", "(not built yet)");
  return [] { return ReportError("prep", "not implemented in this build"); };
}

}  // namespace seer::cli
