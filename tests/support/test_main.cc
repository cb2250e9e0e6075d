// main() of every Seer test binary: GoogleTest plus a listener that removes the
// directories each test made with MakeTempDir once that test has ended.
#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace {

class TempDirCleanup : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo&) override { seer::testing::RemoveRegisteredTempDirs(); }
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    seer::testing::RemoveAllRegisteredTempDirs();  // incl. dirs made outside a test
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new TempDirCleanup);
  return RUN_ALL_TESTS();
}
