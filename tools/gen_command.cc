// PLACEHOLDER: replaced by the real `seer gen` implementation.
#include "tools/commands.h"

namespace seer::cli {

CommandMain RegisterGenCommand(CLI::App& root) {
  root.add_subcommand("gen", "(not built yet)");
  return [] { return ReportError("gen", "not implemented in this build"); };
}

}  // namespace seer::cli
