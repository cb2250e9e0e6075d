// seer: the command-line front end. Each subcommand lives in its own *_command.cc.
// train and predict need libtorch and live in seer-train (tools/train_main.cc); this
// binary execs it for them so the other subcommands start fast and small.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "cli_main.h"

namespace {

// The subcommand word: the first argument that is not the root's --config option.
const char* SubcommandWord(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0) {
      ++i;
      continue;
    }
    if (std::strncmp(argv[i], "--config=", 9) == 0) continue;
    return argv[i];
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace seer::cli;
  const std::string word = SubcommandWord(argc, argv);
  if (word == "train" || word == "predict") {
    // seer-train sweeps dead runs' runtime directories once its flags are parsed (not on
    // --help); the other commands sweep the directories they write.
    std::string trainer = ExecutableDir() + "seer-train";
    argv[0] = const_cast<char*>("seer");
    ::execv(trainer.c_str(), argv);
    return ReportError(word, "cannot run " + trainer + ": " + std::strerror(errno) +
                                 " (built next to seer when Seer is built with libtorch, -DSEER_WITH_TORCH=ON)");
  }
  return RunCli(argc, argv,
                {RegisterGenCommand, RegisterPrepCommand, RegisterReorderCommand, RegisterSplitEdgesCommand,
                 RegisterCheckCommand, RegisterNcacheCommand, RegisterSampleCommand, RegisterStatsCommand},
                {{"train", "Train a GNN (GraphSAGE/GCN/GAT) out of core through the Belady feature cache"},
                 {"predict", "Predict node classes with a trained model (.npy output)"}});
}
