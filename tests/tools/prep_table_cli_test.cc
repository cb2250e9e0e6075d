// `seer prep` from tables through the real binary (env SEER_BINARY): a follows CSV of
// string ids, a labels CSV "user_id,label" and --train-fraction, as a newcomer would run
// it; the summary's split sizes and its note when `seer train` would refuse the dataset;
// table errors as one line naming file and line.
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace seer {
namespace {

using testing::CliRun;
using testing::ExpectOneLineError;
using testing::ReadArray;

CliRun Seer(const std::string& args) {
  EXPECT_TRUE(testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  return testing::RunSeer(args);
}

void WriteText(const std::string& path, const std::string& text) { testing::WriteFileBytes(path, text); }

// 400 users "user_<hex>", 2000 follows; labels for ~70% of the users and for 10 users
// with no edge. Returns the users that occur in an edge and the labels by user.
struct Tables {
  std::string dir;
  std::set<std::string> nodes;
  std::map<std::string, int> labels;
};

Tables MakeTables() {
  Tables t;
  t.dir = testing::MakeTempDir("prep_table_cli");
  std::mt19937_64 rng(8);
  std::vector<std::string> users;
  for (int i = 0; i < 400; ++i) {
    std::ostringstream name;
    name << "user_" << std::hex << (rng() & 0xffffff);
    users.push_back(name.str());
  }
  std::string follows = "follower,followee\n";
  for (int e = 0; e < 2000; ++e) {
    const std::string& a = users[rng() % users.size()];
    const std::string& b = users[rng() % users.size()];
    follows += a + "," + b + "\n";
    t.nodes.insert(a);
    t.nodes.insert(b);
  }
  WriteText(t.dir + "/follows.csv", follows);
  std::string labels = "user_id,label\n";
  for (const std::string& user : users) {
    if (rng() % 10 >= 7 || t.labels.count(user)) continue;
    t.labels[user] = static_cast<int>(rng() % 8);
    labels += user + "," + std::to_string(t.labels[user]) + "\n";
  }
  for (int i = 0; i < 10; ++i) labels += "nobody_" + std::to_string(i) + ",1\n";
  WriteText(t.dir + "/labels.csv", labels);
  return t;
}

std::string PrepArgs(const Tables& t, const std::string& out) {
  return "prep --edges " + t.dir + "/follows.csv --src-col follower --dst-col followee --remap-ids --labels " +
         t.dir + "/labels.csv --out " + t.dir + "/" + out + " --quiet";
}

TEST(PrepTableCliTest, LabelsCsvAndFractionsNeedNoScript) {
  const Tables t = MakeTables();
  const CliRun run =
      Seer(PrepArgs(t, "ds") + " --train-fraction 0.8 --valid-fraction 0.1 --test-fraction 0.1 --split-seed 3");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  int64_t labeled = 0, absent = 10;
  for (const auto& [user, label] : t.labels) {
    if (t.nodes.count(user)) ++labeled;
    else ++absent;
  }
  const int64_t train = static_cast<int64_t>(ReadArray<int64_t>(t.dir + "/ds/train.bin").size());
  const int64_t valid = static_cast<int64_t>(ReadArray<int64_t>(t.dir + "/ds/valid.bin").size());
  const int64_t test = static_cast<int64_t>(ReadArray<int64_t>(t.dir + "/ds/test.bin").size());
  EXPECT_GT(train, labeled / 2);
  EXPECT_LE(train + valid + test, labeled);
  const std::string sizes = "train/valid/test " + std::to_string(train) + "/" + std::to_string(valid) + "/" +
                            std::to_string(test) + " (drawn among the " + std::to_string(labeled) +
                            " labeled nodes, seed 3)";
  EXPECT_NE(run.output.find(sizes), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(std::to_string(absent) + " ids of " + t.dir +
                            "/labels.csv are not nodes of the graph (skipped)"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(Seer("check " + t.dir + "/ds --quiet").exit_code, 0);
}

// A dataset without a train split: the summary says `seer train` will refuse it and
// which flag fixes it.
TEST(PrepTableCliTest, EmptyTrainSplitIsAnnounced) {
  const Tables t = MakeTables();
  const CliRun labels_only = Seer(PrepArgs(t, "a"));
  ASSERT_EQ(labels_only.exit_code, 0) << labels_only.output;
  EXPECT_NE(labels_only.output.find("train/valid/test 0/0/0 (no train split: `seer train` will refuse this dataset; "
                                    "add --train-fraction F"),
            std::string::npos)
      << labels_only.output;
  const CliRun bare = Seer("prep --edges " + t.dir + "/follows.csv --src-col follower --dst-col followee "
                           "--remap-ids --out " + t.dir + "/b --quiet");
  ASSERT_EQ(bare.exit_code, 0) << bare.output;
  EXPECT_NE(bare.output.find("give --labels FILE and --train-fraction F"), std::string::npos) << bare.output;
}

TEST(PrepTableCliTest, TableErrorsAreOneLineNamingFileAndLine) {
  const Tables t = MakeTables();
  WriteText(t.dir + "/twice.csv", "user_id,label\nann,1\nbob,0\nann,2\n");
  ExpectOneLineError(Seer("prep --edges " + t.dir + "/follows.csv --src-col follower --dst-col followee "
                          "--remap-ids --labels " + t.dir + "/twice.csv --out " + t.dir + "/c --quiet"),
                     "prep", t.dir + "/twice.csv:4: node id 'ann' has label 2, but line 2 gave it label 1");
  WriteText(t.dir + "/float.csv", "user_id,label\nann,1.0\n");
  ExpectOneLineError(Seer("prep --edges " + t.dir + "/follows.csv --src-col follower --dst-col followee "
                          "--remap-ids --labels " + t.dir + "/float.csv --out " + t.dir + "/c --quiet"),
                     "prep", t.dir + "/float.csv:2: non-integer label '1.0'");
  ExpectOneLineError(Seer(PrepArgs(t, "c") + " --train-fraction 0.5 --train " + t.dir + "/labels.csv"), "prep",
                     "draw the splits, and " + t.dir + "/labels.csv gives one: use one or the other");
  EXPECT_FALSE(testing::FileExists(t.dir + "/c/dataset.json"));
}

// Issue 27's --remap-ids reproductions through the binary, each read wrongly before: a
// data line whose first id starts with '#' in a CSV with named columns was dropped (1
// edge), a "src,dst" header with index columns became two phantom nodes, and ids that
// node_ids.txt cannot give back were written raw.
TEST(PrepTableCliTest, RemapHeaderHashAndIdRules) {
  const std::string dir = testing::MakeTempDir("prep_table_cli");
  WriteText(dir + "/hash.csv", "a,b\n#tag,bob\nann,bob\n");
  CliRun run = Seer("prep --edges " + dir + "/hash.csv --src-col a --dst-col b --remap-ids --out " + dir +
                    "/h --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("3 nodes, 2 edges"), std::string::npos) << run.output;
  EXPECT_EQ(testing::ReadFileBytes(dir + "/h/node_ids.txt"), "#tag\nann\nbob\n");

  WriteText(dir + "/head.csv", "src,dst\nann,bob\ncat,bob\n");
  run = Seer("prep --edges " + dir + "/head.csv --src-col 0 --dst-col 1 --remap-ids --out " + dir + "/i --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("3 nodes, 2 edges"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(dir + "/head.csv:1 'src,dst' read as a header"), std::string::npos) << run.output;
  EXPECT_EQ(testing::ReadFileBytes(dir + "/i/node_ids.txt"), "ann\nbob\ncat\n");
  // Declared otherwise: an edge.
  run = Seer("prep --edges " + dir + "/head.csv --src-col 0 --dst-col 1 --remap-ids --edges-header no --out " + dir +
             "/j --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("5 nodes, 3 edges"), std::string::npos) << run.output;
  // Integer ids: the same header rule as without --remap-ids.
  WriteText(dir + "/int.txt", "src dst\n10 20\n30 20\n");
  run = Seer("prep --edges " + dir + "/int.txt --remap-ids --out " + dir + "/k --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("3 nodes, 2 edges"), std::string::npos) << run.output;

  testing::WriteFileBytes(dir + "/nul.csv", std::string("a,b\nann,bob\nx\0y,bob\n", 20));
  ExpectOneLineError(Seer("prep --edges " + dir + "/nul.csv --src-col a --dst-col b --remap-ids --out " + dir +
                          "/l --quiet"),
                     "prep", dir + "/nul.csv:3: node id 'x\\x00y' has a NUL byte");
  EXPECT_FALSE(testing::FileExists(dir + "/l/dataset.json"));
  WriteText(dir + "/blank.csv", "a,b\nann,\" bob\"\n");
  ExpectOneLineError(Seer("prep --edges " + dir + "/blank.csv --src-col a --dst-col b --remap-ids --out " + dir +
                          "/m --quiet"),
                     "prep", dir + "/blank.csv:2: node id ' bob' has a blank at its start or end");
}

}  // namespace
}  // namespace seer
