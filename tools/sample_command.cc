// PLACEHOLDER: replaced by the real `seer sample` implementation.
#include "tools/commands.h"

namespace seer::cli {

CommandMain RegisterSampleCommand(CLI::App& root) {
  root.add_subcommand("sample", "(not built yet)");
  return [] { return ReportError("sample", "not implemented in this build"); };
}

}  // namespace seer::cli
