// `seer split-edges` through the real binary (env SEER_BINARY): numpy as the independent
// oracle of the split (counts, candidates, no held-out edge left in the topology, the
// topology otherwise unchanged), reproducibility byte for byte, the input left as it was,
// refusals as one line, and `seer check` naming a damaged split file or a leak.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/atomic_file.h"
#include "storage/dataset/dataset.h"
#include "support/small_dataset.h"
#include "support/test_support.h"

namespace {

using seer::testing::CliRun;
using seer::testing::ExpectOneLineError;

CliRun Seer(const std::string& args) { return seer::testing::RunSeer(args); }
CliRun Shell(const std::string& command) { return seer::testing::RunShell(command); }

// Every file of a directory with its checksum (sha256sum), to compare before and after.
std::string Snapshot(const std::string& dir) { return Shell("cd " + dir + " && sha256sum * | sort").output; }

// numpy's verdict on OUT as a split of IN: "ok", or what is wrong ("SKIP" without numpy).
std::string NumpyOracle(const std::string& in, const std::string& out, double valid, double test, bool undirected) {
  return seer::testing::RunPython(
      "import json, numpy as np\n"
      "def topo(d):\n"
      "    m = json.load(open(d + \"/dataset.json\")); n = m[\"num_nodes\"]\n"
      "    p = np.fromfile(d + \"/indptr.bin\", \"<i8\")\n"
      "    i = np.fromfile(d + \"/indices.bin\", \"<u4\" if m[\"index_dtype\"] == \"uint32\" else \"<i8\").astype(np.int64)\n"
      "    return n, i, np.repeat(np.arange(n), np.diff(p))\n"
      "n, src, dst = topo(\"" + in + "\"); n2, osrc, odst = topo(\"" + out + "\")\n"
      "und = " + std::string(undirected ? "True" : "False") + "\n"
      "keys = src * n + dst\n"
      "cand = np.unique(keys[src <= dst] if und else keys); C = len(cand)\n"
      "V = np.fromfile(\"" + out + "/edges_valid.bin\", \"<i8\").reshape(-1, 2)\n"
      "T = np.fromfile(\"" + out + "/edges_test.bin\", \"<i8\").reshape(-1, 2)\n"
      "H = np.concatenate([V, T]); hk = H[:, 0] * n + H[:, 1]\n"
      "gone = np.concatenate([hk, H[:, 1] * n + H[:, 0]]) if und else hk\n"
      "okeys = osrc * n + odst\n"
      "bad = []\n"
      "if len(V) != int(np.floor(" + std::to_string(valid) + " * C + 0.5)): bad.append(\"valid count\")\n"
      "if len(T) != int(np.floor(" + std::to_string(test) + " * C + 0.5)): bad.append(\"test count\")\n"
      "if not np.isin(hk, cand).all(): bad.append(\"a held-out edge is no candidate\")\n"
      "if len(np.unique(hk)) != len(hk): bad.append(\"an edge held out twice or in valid and test\")\n"
      "if np.isin(okeys, gone).any(): bad.append(\"leak: %d held-out edges in the topology\" % np.isin(okeys, gone).sum())\n"
      "if not np.array_equal(okeys, keys[~np.isin(keys, gone)]): bad.append(\"topology is not the input minus the held-out edges\")\n"
      "if n2 != n: bad.append(\"node count\")\n"
      "print(\"ok\" if not bad else \"; \".join(bad))");
}

// A generated graph with int8 features, renumbered (node_order.bin): split, then checked
// by numpy, reproduced byte for byte, and the input left untouched.
TEST(EdgeSplitCliTest, NumpyOracleAgreesAndSameSeedSameBytes) {
  if (!seer::testing::HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
  const std::string dir = seer::testing::MakeTempDir("edge_split_cli");
  ASSERT_EQ(Seer("gen --nodes 2000 --avg-degree 6 --seed 4 --feature-dtype int8 --quiet --out " + dir + "/g").exit_code,
            0);
  CliRun reorder = Seer("reorder " + dir + "/g --order degree --out " + dir + "/in --quiet");
  ASSERT_EQ(reorder.exit_code, 0) << reorder.output;
  const std::string before = Snapshot(dir + "/in");
  const std::string flags = " --valid-fraction 0.1 --test-fraction 0.2 --quiet --seed ";
  CliRun split = Seer("split-edges " + dir + "/in --out " + dir + "/a" + flags + "9");
  ASSERT_EQ(split.exit_code, 0) << split.output;
  EXPECT_NE(split.output.find("validation and"), std::string::npos) << split.output;
  EXPECT_EQ(Snapshot(dir + "/in"), before);  // the input is only read
  CliRun check = Seer("check " + dir + "/a --deep --quiet");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("held-out edges valid/test"), std::string::npos) << check.output;
  const std::string verdict = NumpyOracle(dir + "/in", dir + "/a", 0.1, 0.2, false);
  if (verdict == "SKIP") GTEST_SKIP() << "no numpy";
  EXPECT_EQ(verdict, "ok");
  // The node files are copied as they are.
  for (const char* name : {"features.bin", "labels.bin", "node_order.bin", "train.bin"}) {
    EXPECT_EQ(Shell("cmp " + dir + "/in/" + name + " " + dir + "/a/" + name).exit_code, 0) << name;
  }
  ASSERT_EQ(Seer("split-edges " + dir + "/in --out " + dir + "/b" + flags + "9").exit_code, 0);
  ASSERT_EQ(Seer("split-edges " + dir + "/in --out " + dir + "/c" + flags + "10").exit_code, 0);
  for (const char* name : {"edges_valid.bin", "edges_test.bin", "indices.bin", "dataset.json"}) {
    EXPECT_EQ(Shell("cmp " + dir + "/a/" + name + " " + dir + "/b/" + name).exit_code, 0) << name;
    EXPECT_NE(Shell("cmp -s " + dir + "/a/" + name + " " + dir + "/c/" + name).exit_code, 0) << name;
  }
  EXPECT_EQ(Snapshot(dir + "/in"), before);
}

// An undirected graph (prep --undirected: every edge both ways): each edge drawn once,
// its reverse removed too.
TEST(EdgeSplitCliTest, UndirectedRemovesReverses) {
  if (!seer::testing::HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
  const std::string dir = seer::testing::MakeTempDir("edge_split_cli");
  ASSERT_EQ(Seer("gen --nodes 1500 --avg-degree 4 --seed 6 --quiet --edge-list-out " + dir + "/e.bin64").exit_code, 0);
  CliRun prep = Seer("prep --edges " + dir + "/e.bin64 --undirected --out " + dir + "/in --quiet");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  CliRun split = Seer("split-edges " + dir + "/in --out " + dir + "/u --undirected --valid-fraction 0.15 "
                      "--test-fraction 0.05 --seed 2 --quiet");
  ASSERT_EQ(split.exit_code, 0) << split.output;
  EXPECT_NE(split.output.find("candidate undirected edges"), std::string::npos) << split.output;
  EXPECT_EQ(Seer("check " + dir + "/u --quiet").exit_code, 0);
  const std::string verdict = NumpyOracle(dir + "/in", dir + "/u", 0.15, 0.05, true);
  if (verdict == "SKIP") GTEST_SKIP() << "no numpy";
  EXPECT_EQ(verdict, "ok");
}

TEST(EdgeSplitCliTest, RefusesBadFlagsAndAnExistingOutput) {
  if (!seer::testing::HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
  const std::string dir = seer::testing::MakeTempDir("edge_split_cli");
  ASSERT_EQ(Seer("gen --nodes 300 --avg-degree 3 --quiet --out " + dir + "/g").exit_code, 0);
  const std::string cmd = "split-edges " + dir + "/g --out " + dir + "/s --quiet ";
  ExpectOneLineError(Seer(cmd + "--valid-fraction -0.1"), "split-edges", "--valid-fraction = -0.1 is out of range [0, 1)");
  ExpectOneLineError(Seer(cmd + "--test-fraction 1.5"), "split-edges", "--test-fraction = 1.5 is out of range [0, 1)");
  ExpectOneLineError(Seer(cmd + "--valid-fraction 0.5 --test-fraction 0.5"), "split-edges",
                     "--valid-fraction + --test-fraction = 1 must be below 1");
  EXPECT_FALSE(seer::testing::FileExists(dir + "/s/dataset.json"));
  ASSERT_EQ(Seer(cmd).exit_code, 0);
  const std::string written = Snapshot(dir + "/s");
  ExpectOneLineError(Seer(cmd + "--seed 5"), "split-edges", "--force");
  EXPECT_EQ(Snapshot(dir + "/s"), written);
  CliRun forced = Seer(cmd + "--seed 5 --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_NE(Snapshot(dir + "/s"), written);
  EXPECT_EQ(Seer("check " + dir + "/s --quiet").exit_code, 0);
  ExpectOneLineError(Seer("split-edges " + dir + "/s --out " + dir + "/t --quiet"), "split-edges",
                     "already has edge splits");
}

// `seer check` fails, naming the file, on a damaged split file and on a held-out edge
// put back into the topology (its checksum fixed, so only the leak is wrong).
TEST(EdgeSplitCliTest, CheckNamesADamagedSplitFileAndALeak) {
  if (!seer::testing::HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
  const std::string dir = seer::testing::MakeTempDir("edge_split_cli");
  ASSERT_EQ(Seer("gen --nodes 800 --avg-degree 5 --seed 3 --quiet --out " + dir + "/g").exit_code, 0);
  for (const char* out : {"/a", "/b"}) {
    ASSERT_EQ(Seer("split-edges " + dir + "/g --out " + dir + out + " --seed 1 --quiet").exit_code, 0);
  }
  ASSERT_EQ(Shell("printf '\\377' | dd of=" + dir + "/a/edges_test.bin bs=1 seek=3 conv=notrunc status=none").exit_code,
            0);
  ExpectOneLineError(Seer("check " + dir + "/a --quiet"), "check", "edges_test.bin");
  // Put held-out edge (s, d) back in place of the first in-neighbor of d.
  const std::string b = dir + "/b";
  const std::vector<int64_t> indptr = seer::testing::ReadArray<int64_t>(b + "/indptr.bin");
  const std::vector<int64_t> valid = seer::testing::ReadArray<int64_t>(b + "/edges_valid.bin");
  size_t k = 0;
  while (k + 1 < valid.size() && indptr[valid[k + 1]] == indptr[valid[k + 1] + 1]) k += 2;
  ASSERT_LT(k + 1, valid.size());
  seer::testing::Poke<uint32_t>(b + "/indices.bin", indptr[valid[k + 1]], static_cast<uint32_t>(valid[k]));
  auto manifest = seer::DatasetManifest::FromJson(seer::testing::ReadFileBytes(b + "/dataset.json"), "m");
  ASSERT_TRUE(manifest.ok());
  manifest->files["indices.bin"].checksum = *seer::FileXxh64(b + "/indices.bin");
  ASSERT_TRUE(seer::WriteFileAtomically(b + "/dataset.json", manifest->ToJson()).ok());
  const CliRun leak = Seer("check " + b + " --quiet");
  ExpectOneLineError(leak, "check", "would leak into training");
  EXPECT_NE(leak.output.find("edges_valid.bin at pair " + std::to_string(k / 2)), std::string::npos) << leak.output;
}

// --eval-negatives on an undirected graph: check accepts it and names a damaged negatives
// file; bench/link_baselines.py passes its self-test and scores the split, its JSON
// holding the three methods with an MRR in (0, 1].
TEST(EdgeSplitCliTest, EvalNegativesAndTheIndependentBaselines) {
  if (!seer::testing::HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
  const std::string source = __FILE__;
  const std::string script = source.substr(0, source.rfind("tests/tools/")) + "bench/link_baselines.py";
  const std::string dir = seer::testing::MakeTempDir("edge_split_cli");
  ASSERT_EQ(Seer("gen --nodes 1200 --avg-degree 6 --seed 8 --quiet --edge-list-out " + dir + "/e.bin64").exit_code, 0);
  ASSERT_EQ(Seer("prep --edges " + dir + "/e.bin64 --undirected --out " + dir + "/in --quiet").exit_code, 0);
  for (const char* out : {"/s", "/t"}) {
    CliRun split = Seer("split-edges " + dir + "/in --out " + dir + out + " --undirected --eval-negatives 20 --quiet");
    ASSERT_EQ(split.exit_code, 0) << split.output;
    EXPECT_NE(split.output.find("20 evaluation negatives per held-out edge"), std::string::npos) << split.output;
  }
  CliRun check = Seer("check " + dir + "/s --quiet");
  ASSERT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("20 eval negatives per held-out edge"), std::string::npos) << check.output;
  ExpectOneLineError(Seer("split-edges " + dir + "/in --out " + dir + "/x --eval-negatives -2 --quiet"), "split-edges",
                     "--eval-negatives = -2 is out of range");
  ASSERT_EQ(Shell("printf '\\377\\377' | dd of=" + dir + "/t/edges_test_negatives.bin bs=1 seek=14 conv=notrunc "
                  "status=none").exit_code,
            0);
  ExpectOneLineError(Seer("check " + dir + "/t --quiet"), "check", "edges_test_negatives.bin at row 0, column 1");

  CliRun self_test = Shell("/usr/bin/python3 " + script + " --self-test");
  if (self_test.exit_code == 77) GTEST_SKIP() << self_test.output;
  ASSERT_EQ(self_test.exit_code, 0) << self_test.output;
  EXPECT_NE(self_test.output.find("link_baselines self-test: passed"), std::string::npos) << self_test.output;
  CliRun run = Shell("/usr/bin/python3 " + script + " " + dir + "/s --json " + dir + "/baselines.json");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("| adamic_adar |"), std::string::npos) << run.output;
  const std::string verdict = seer::testing::RunPython(
      "import json\n"
      "r = json.load(open(\"" + dir + "/baselines.json\"))\n"
      "bad = [m for m in (\"common_neighbours\", \"adamic_adar\", \"preferential_attachment\")\n"
      "       if not (0 < r[\"methods\"][m][\"mrr\"] <= 1)]\n"
      "bad += [] if r[\"negatives_per_edge\"] == 20 and r[\"split\"] == \"test\" else [\"header\"]\n"
      "print(\"ok\" if not bad else \"bad: \" + \", \".join(bad))");
  EXPECT_EQ(verdict, "ok");
}

}  // namespace
