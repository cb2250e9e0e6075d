// `seer gen`, `seer prep`, `seer check` through the real binary (env SEER_BINARY):
// exit codes, one-line error text, and no dataset.json left behind on failure.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace {

using CommandRun = seer::testing::CliRun;
using seer::testing::FileExists;

CommandRun Seer(const std::string& args) {
  EXPECT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  return seer::testing::RunSeer(args);
}

std::string MakeTempDir() { return seer::testing::MakeTempDir("data_cli"); }

bool Exists(const std::string& path) { return FileExists(path); }

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

using seer::testing::ExpectOneLineError;

TEST(DataCliTest, GenThenCheckDeep) {
  std::string dir = MakeTempDir() + "/ds";
  CommandRun gen = Seer("gen --nodes 3001 --avg-degree 8 --feature-dim 16 --classes 4 --seed 5 --out " + dir +
                 " --feature-dtype float16 --quiet");
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  EXPECT_NE(gen.output.find("3001 nodes, 24008 edges"), std::string::npos) << gen.output;
  EXPECT_NE(gen.output.find("peak memory"), std::string::npos);
  CommandRun check = Seer("check " + dir + " --deep --quiet");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("OK"), std::string::npos);
  // Existing dataset: refused without --force, replaced with it.
  CommandRun again = Seer("gen --nodes 100 --out " + dir + " --quiet");
  ExpectOneLineError(again, "gen", "--force");
  EXPECT_TRUE(Exists(dir + "/dataset.json"));
  CommandRun forced = Seer("gen --nodes 100 --out " + dir + " --quiet --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_EQ(Seer("check " + dir + " --quiet").exit_code, 0);
}

TEST(DataCliTest, CheckFailsOnCorruptDataset) {
  std::string dir = MakeTempDir() + "/ds";
  ASSERT_EQ(Seer("gen --nodes 500 --out " + dir + " --quiet").exit_code, 0);
  {
    std::fstream f(dir + "/indices.bin", std::ios::in | std::ios::out | std::ios::binary);
    uint32_t bad = 500;
    f.seekp(12);
    f.write(reinterpret_cast<char*>(&bad), 4);
  }
  ExpectOneLineError(Seer("check " + dir + " --quiet"), "check",
                     "indices.bin at index 3 (byte offset 12): node id 500 out of range [0, 500)");
  ExpectOneLineError(Seer("check " + MakeTempDir() + " --quiet"), "check", "dataset.json");
}

TEST(DataCliTest, PrepHandWrittenEdgeList) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/e.txt", "# src dst\n0 1\n2 1\n3 0\n1 3\n0 3\n2 3\n3 1\n1 3\n4 4\n");
  CommandRun prep = Seer("prep --edges " + dir + "/e.txt --num-nodes 5 --dedup --drop-self-loops --out " + dir +
                  "/ds --quiet");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_NE(prep.output.find("5 nodes, 7 edges"), std::string::npos) << prep.output;
  EXPECT_NE(prep.output.find("1 self-loops and 1 duplicates dropped"), std::string::npos) << prep.output;
  std::ifstream indptr(dir + "/ds/indptr.bin", std::ios::binary);
  std::vector<int64_t> values(6);
  indptr.read(reinterpret_cast<char*>(values.data()), 48);
  EXPECT_EQ(values, (std::vector<int64_t>{0, 1, 4, 4, 7, 7}));
  EXPECT_EQ(Seer("check " + dir + "/ds --deep --quiet").exit_code, 0);
}

// Two independent paths to the same CSC: gen's internal build, and prep of gen's own
// (unsorted) edge list with a tiny budget (external build, many partitions).
TEST(DataCliTest, PrepOfGeneratedEdgeListEqualsGenTopology) {
  std::string dir = MakeTempDir();
  const std::string graph = "--nodes 20011 --avg-degree 9 --seed 3 --quiet";
  ASSERT_EQ(Seer("gen " + graph + " --edge-list-out " + dir + "/e.bin64").exit_code, 0);
  ASSERT_EQ(Seer("gen " + graph + " --out " + dir + "/gen").exit_code, 0);
  CommandRun prep = Seer("prep --edges " + dir + "/e.bin64 --num-nodes 20011 --memory-budget 25M --out " + dir +
                         "/prep --quiet");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_EQ(prep.output.find(", 1 partitions"), std::string::npos) << prep.output;
  for (const char* file : {"/indptr.bin", "/indices.bin"}) {
    std::ifstream a(dir + "/gen" + file, std::ios::binary), b(dir + "/prep" + file, std::ios::binary);
    std::string da((std::istreambuf_iterator<char>(a)), {}), db((std::istreambuf_iterator<char>(b)), {});
    EXPECT_FALSE(da.empty());
    EXPECT_TRUE(da == db) << file;
  }
}

TEST(DataCliTest, BadInputsFailWithOneLineAndNoManifest) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/nonnum.txt", "0 1\n1 two\n");
  WriteText(dir + "/malformed.txt", "0 1\n1 2\n3\n");
  WriteText(dir + "/big.txt", "0 1\n1 12\n");
  WriteText(dir + "/e.txt", "0 1\n");
  WriteText(dir + "/trunc.npy", "\x93NUMPY\x01");
  struct Case {
    std::string args;
    std::string expected;
  } cases[] = {
      {"--edges " + dir + "/nonnum.txt", "nonnum.txt:2: non-numeric node id 'two'"},
      {"--edges " + dir + "/malformed.txt", "malformed.txt:3: malformed line"},
      {"--edges " + dir + "/big.txt --num-nodes 10", "big.txt:2: node id 12 >= num_nodes 10"},
      {"--edges " + dir + "/e.txt --edges-format csv", "--edges-format: unknown edge list format 'csv'"},
      {"--edges " + dir + "/e.txt --index-dtype int16", "--index-dtype"},
      {"--edges " + dir + "/e.txt --memory-budget lots", "--memory-budget"},
      {"--edges " + dir + "/e.txt --features " + dir + "/trunc.npy", "trunc.npy: truncated .npy"},
      {"--edges " + dir + "/missing.txt", "missing.txt"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    std::string out = dir + "/out";
    ExpectOneLineError(Seer("prep " + c.args + " --out " + out + " --quiet"), "prep", c.expected);
    EXPECT_FALSE(Exists(out + "/dataset.json"));
  }
  ExpectOneLineError(Seer("gen --nodes 100 --feature-dtype float64 --out " + dir + "/g --quiet"), "gen",
                     "--feature-dtype");
  ExpectOneLineError(Seer("gen --nodes 100 --homophily 2 --out " + dir + "/g --quiet"), "gen", "homophily");
  EXPECT_FALSE(Exists(dir + "/g/dataset.json"));
}

TEST(DataCliTest, HelpListsEveryFlagWithDefaults) {
  CommandRun gen = Seer("gen --help");
  EXPECT_EQ(gen.exit_code, 0);
  for (const char* flag : {"--nodes", "--avg-degree", "--feature-dim", "--classes", "--seed", "--feature-dtype",
                           "--train-fraction", "--valid-fraction", "--test-fraction", "--homophily",
                           "--memory-budget", "--force", "512M"}) {
    EXPECT_NE(gen.output.find(flag), std::string::npos) << flag;
  }
  CommandRun prep = Seer("prep --help");
  for (const char* flag : {"--edges", "--edges-format", "--features", "--labels", "--train", "--ogb",
                           "--undirected", "--dedup", "--drop-self-loops", "--index-dtype", "--memory-budget"}) {
    EXPECT_NE(prep.output.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
