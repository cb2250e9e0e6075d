// `seer train` refuses impossible model and budget values before any work, each with one
// line naming the flag (before: a GAT with --heads 0 died of SIGFPE, --dropout 1.5 failed
// at the first step, --lr nan trained on NaNs, --epochs 0 printed "test accuracy -1",
// a --memory-budget of 2^63 bytes or more wrapped negative).
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace {

using seer::testing::ExpectOneLineError;
using seer::testing::RunSeer;

TEST(ValidationCliTest, ImpossibleValuesAreRefusedNamingTheFlag) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string ds = seer::testing::MakeTempDir("validation_cli") + "/ds";
  ASSERT_EQ(RunSeer("gen --nodes 500 --seed 1 --quiet --out " + ds).exit_code, 0);
  const struct {
    const char* flags;
    const char* says;
  } cases[] = {
      {"--model gat --heads 0", "--heads 0: expected 1 or more"},
      {"--hidden 0", "--hidden 0: expected 1 or more"},
      {"--dropout 1.5", "--dropout 1.5: expected a probability in [0, 1)"},
      {"--lr nan", "--lr nan: expected a finite number > 0"},
      {"--lr 0", "--lr 0: expected a finite number > 0"},
      {"--epochs 0", "--epochs 0 trains nothing"},
      {"--memory-budget 9000000T", "is too large"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flags);
    ExpectOneLineError(RunSeer("train " + ds + " --cpu --quiet " + c.flags), "train", c.says);
  }
}

}  // namespace
