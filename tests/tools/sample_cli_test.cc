// `seer ncache build` and `seer sample` through the real binary (env SEER_BINARY).
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.h"
#include "cli_suite.h"

#include "inspector/trace_directory.h"

namespace {

using seer::testing::CliRun;
using seer::testing::ReadFileBytes;
using seer::testing::RunSeer;

class SampleCliTest : public seer::testing::CliSuite<SampleCliTest> {
 public:
  static constexpr const char* kPrefix = "seer_sample_cli";
  static void Prepare(const std::string& root) {
    const CliRun gen = RunSeer("gen --nodes 3000 --avg-degree 12 --train-fraction 0.3 --seed 5 --quiet --out " +
                               root + "/g");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
  }
};

TEST_F(SampleCliTest, TracesAreIdenticalAcrossThreadsCacheAndSpill) {
  const std::string g = root_ + "/g";
  const CliRun build = RunSeer("ncache build " + g + " --budget 30% --quiet");
  ASSERT_EQ(build.exit_code, 0) << build.output;
  EXPECT_NE(build.output.find("cached"), std::string::npos) << build.output;
  const std::string common = " --fanouts 5,4 --batch-size 128 --superbatch 3 --epochs 2 --seed 3";
  const CliRun a = RunSeer("sample " + g + " --out " + root_ + "/ta --threads 1" + common);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  for (const char* key : {"sampled nodes", "unique nodes", "edges", "ncache hit", "blocks read",
                          "read,", " s\n"}) {
    EXPECT_NE(a.output.find(key), std::string::npos) << key << "\n" << a.output;
  }
  const CliRun b = RunSeer("sample " + g + " --out " + root_ + "/tb --threads 4 --ncache --trace-budget 0 " +
                     "--runtime-dir " + root_ + "/rt" + common);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_NE(b.output.find("spilled"), std::string::npos);
  const CliRun c = RunSeer("sample " + g + " --out " + root_ + "/tc --threads 2 --ncache-budget 100% --io pread" +
                     common);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("ncache hit 100.0%"), std::string::npos) << c.output;

  auto ra = seer::TraceDirectoryReader::Open(root_ + "/ta");
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  EXPECT_EQ(ra->num_superbatches() % 2, 0);  // two epochs with the same count
  ASSERT_GT(ra->num_superbatches(), 2);
  for (int64_t i = 0; i < ra->num_superbatches(); ++i) {
    const std::string file = std::filesystem::path(ra->info(i).path).filename();
    const std::string bytes = ReadFileBytes(ra->info(i).path);
    ASSERT_FALSE(bytes.empty());
    EXPECT_EQ(bytes, ReadFileBytes(root_ + "/tb/" + file)) << file;
    EXPECT_EQ(bytes, ReadFileBytes(root_ + "/tc/" + file)) << file;
  }
  // Spill files are consumed and removed.
  EXPECT_FALSE(std::filesystem::exists(root_ + "/rt") &&
               !std::filesystem::is_empty(root_ + "/rt"));
}

TEST_F(SampleCliTest, ErrorsAreOneLineWithExitCode) {
  const CliRun missing = RunSeer("sample " + root_ + "/nope --out " + root_ + "/tx");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("seer sample: error:"), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find(root_ + "/nope"), std::string::npos) << missing.output;
  const CliRun again = RunSeer("sample " + root_ + "/g --out " + root_ + "/ty --epochs 1");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  const CliRun refuse = RunSeer("sample " + root_ + "/g --out " + root_ + "/ty --epochs 1");
  EXPECT_EQ(refuse.exit_code, 1);
  EXPECT_NE(refuse.output.find("--force"), std::string::npos) << refuse.output;
  const CliRun tiny = RunSeer("ncache build " + root_ + "/g --budget 100 --out " + root_ + "/nc --quiet");
  EXPECT_EQ(tiny.exit_code, 1);
  EXPECT_NE(tiny.output.find("per-node table"), std::string::npos) << tiny.output;
  // A non-monotone indptr is refused at open, naming the file and position (the small
  // files are validated fully, with their checksums, before sampling).
  const std::string bad = root_ + "/bad";
  std::filesystem::create_directories(bad);
  for (const auto& e : std::filesystem::directory_iterator(root_ + "/g")) {
    if (e.is_regular_file()) std::filesystem::copy_file(e.path(), bad + "/" + e.path().filename().string());
  }
  {
    std::fstream f(bad + "/indptr.bin", std::ios::in | std::ios::out | std::ios::binary);
    int64_t huge = int64_t{1} << 40;
    f.seekp(8 * 10);
    f.write(reinterpret_cast<const char*>(&huge), 8);
  }
  seer::testing::ExpectOneLineError(RunSeer("sample " + bad + " --out " + root_ + "/tz --epochs 1 --quiet"), "sample",
                                    "indptr.bin at index 10 (byte offset 80): indptr 1099511627776 exceeds num_edges");
  const CliRun help = RunSeer("sample --help");
  for (const char* flag : {"--fanouts", "--batch-size", "--superbatch", "--epochs", "--seed",
                           "--threads", "--ncache-budget", "--trace-budget", "--runtime-dir", "--io"}) {
    EXPECT_NE(help.output.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
