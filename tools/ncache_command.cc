// PLACEHOLDER: replaced by the real `seer ncache` implementation.
#include "tools/commands.h"

namespace seer::cli {

CommandMain RegisterNcacheCommand(CLI::App& root) {
  root.add_subcommand("ncache", "(not built yet)");
  return [] { return ReportError("ncache", "not implemented in this build"); };
}

}  // namespace seer::cli
