// seer-train: the libtorch half of the CLI (`seer train`, `seer predict`); `seer`
// execs it for those subcommands. Runs on its own too: seer-train train DIR ...
#include "cli_main.h"

int main(int argc, char** argv) {
  using namespace seer::cli;
  return RunCli(argc, argv, {RegisterTrainCommand, RegisterPredictCommand}, {});
}
