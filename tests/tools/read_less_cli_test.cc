// Issue "read less" through the CLI: int8 features (prep, check, a numpy decoder as the
// oracle of the stored layout) and `seer reorder` (a renumbered dataset that checks, with
// numpy reading the permutation back).
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace {

using CommandRun = seer::testing::CliRun;
CommandRun Seer(const std::string& args) { return seer::testing::RunSeer(args); }
std::string MakeTempDir() { return seer::testing::MakeTempDir("read_less_cli"); }

std::string Python(const std::string& script) { return seer::testing::RunPython(script); }

// int8 rows: dim uint8 codes, then float32 scale and bias; bias = the row minimum, scale
// = range / 255, every value within scale / 2 of the input.
TEST(ReadLessCliTest, PrepInt8FeaturesMatchNumpyDecoder) {
  const std::string dir = MakeTempDir();
  const std::string made = Python(
      "import numpy as np; r = np.random.default_rng(7); "
      "np.save(\"" + dir + "/f.npy\", (r.standard_normal((300, 11)) * 4 + 1).astype(np.float32)); "
      "np.save(\"" + dir + "/l.npy\", r.integers(0, 3, 300)); print(\"ok\")");
  if (made == "SKIP") GTEST_SKIP() << "no numpy";
  ASSERT_EQ(made, "ok");
  ASSERT_EQ(Seer("gen --nodes 300 --avg-degree 4 --seed 2 --quiet --edge-list-out " + dir + "/e.bin64").exit_code, 0);
  CommandRun prep = Seer("prep --edges " + dir + "/e.bin64 --features " + dir + "/f.npy --labels " + dir +
                         "/l.npy --feature-dtype int8 --out " + dir + "/ds --quiet");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_NE(prep.output.find("11 features x int8"), std::string::npos) << prep.output;
  CommandRun check = Seer("check " + dir + "/ds --deep --quiet");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  const std::string bad = Python(
      "import numpy as np, json; f = np.load(\"" + dir + "/f.npy\"); n, d = f.shape; "
      "m = json.load(open(\"" + dir + "/ds/dataset.json\")); assert m[\"feature_dtype\"] == \"int8\"; "
      "raw = np.fromfile(\"" + dir + "/ds/features.bin\", dtype=np.uint8)[: n * (d + 8)].reshape(n, d + 8); "
      "codes = raw[:, :d].astype(np.float64); tail = raw[:, d:].copy().view(np.float32); "
      "scale, bias = tail[:, 0:1].astype(np.float64), tail[:, 1:2].astype(np.float64); "
      "lo, hi = f.min(1, keepdims=True), f.max(1, keepdims=True); "
      "x = codes * scale + bias; "
      "print(int((bias != lo).sum()) + int((np.abs(scale - (hi.astype(np.float64) - lo) / 255) > 1e-6 * scale).sum()) "
      "+ int((np.abs(x - f) > scale / 2 + 1e-5).sum()))");
  if (bad == "SKIP") GTEST_SKIP() << "no numpy";
  EXPECT_EQ(bad, "0");
}

TEST(ReadLessCliTest, ReorderWritesACheckedPermutation) {
  const std::string dir = MakeTempDir();
  ASSERT_EQ(Seer("gen --nodes 2000 --avg-degree 6 --feature-dim 8 --seed 3 --out " + dir + "/ds --quiet").exit_code, 0);
  CommandRun reorder = Seer("reorder " + dir + "/ds --order bfs --out " + dir + "/bfs --quiet");
  ASSERT_EQ(reorder.exit_code, 0) << reorder.output;
  EXPECT_NE(reorder.output.find("renumbered by bfs"), std::string::npos) << reorder.output;
  EXPECT_NE(reorder.output.find("blocks of 4 KiB on average (was"), std::string::npos) << reorder.output;
  CommandRun check = Seer("check " + dir + "/bfs --deep --quiet");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  // --memory-budget: the bounded pass writes the same files; a bad size is one line.
  CommandRun bounded = Seer("reorder " + dir + "/ds --order bfs --out " + dir + "/bfs-bounded --memory-budget 1M --quiet");
  ASSERT_EQ(bounded.exit_code, 0) << bounded.output;
  for (const char* f : {"indptr.bin", "indices.bin", "features.bin", "labels.bin", "node_order.bin", "dataset.json"}) {
    EXPECT_EQ(seer::testing::RunShell("cmp -s " + dir + "/bfs/" + f + " " + dir + "/bfs-bounded/" + f).exit_code, 0) << f;
  }
  CommandRun bad_budget = Seer("reorder " + dir + "/ds --order bfs --out " + dir + "/x --memory-budget lots");
  EXPECT_NE(bad_budget.exit_code, 0);
  EXPECT_NE(bad_budget.output.find("--memory-budget: 'lots'"), std::string::npos) << bad_budget.output;
  // The input is kept; the output refuses a second write without --force, naming it.
  CommandRun again = Seer("reorder " + dir + "/ds --order degree --out " + dir + "/bfs --quiet");
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.output.find(dir + "/bfs"), std::string::npos) << again.output;
  EXPECT_EQ(Seer("check " + dir + "/ds --quiet").exit_code, 0);
  // numpy: node_order.bin is a permutation and labels follow it.
  const std::string bad = Python(
      "import numpy as np; o = np.fromfile(\"" + dir + "/bfs/node_order.bin\", dtype=\"<i8\"); "
      "a = np.fromfile(\"" + dir + "/ds/labels.bin\", dtype=\"<i4\"); b = np.fromfile(\"" + dir +
      "/bfs/labels.bin\", dtype=\"<i4\"); "
      "print(int((np.sort(o) != np.arange(2000)).sum()) + int((b != a[o]).sum()))");
  if (bad == "SKIP") GTEST_SKIP() << "no numpy";
  EXPECT_EQ(bad, "0");
  // A broken permutation is refused by check, naming the file.
  ASSERT_EQ(seer::testing::RunShell("printf '\\001\\000\\000\\000\\000\\000\\000\\000' | dd of=" + dir +
                                    "/bfs/node_order.bin bs=8 seek=5 conv=notrunc status=none").exit_code, 0);
  CommandRun broken = Seer("check " + dir + "/bfs --quiet");
  EXPECT_NE(broken.exit_code, 0);
  EXPECT_NE(broken.output.find("node_order.bin"), std::string::npos) << broken.output;
}

// prep --order: the dataset prep just wrote, renumbered in place (node_order.bin, version
// 2), node_ids.txt kept sorted for lookups.
TEST(ReadLessCliTest, PrepOrderRenumbersWhatItWrote) {
  const std::string dir = MakeTempDir();
  ASSERT_EQ(seer::testing::RunShell("printf 'follower,followee\\nann,bob\\nbob,cy\\ncy,ann\\ndan,ann\\n' > " + dir +
                                    "/e.csv").exit_code, 0);
  CommandRun prep = Seer("prep --edges " + dir + "/e.csv --src-col follower --dst-col followee --remap-ids --order "
                         "degree --out " + dir + "/ds --quiet");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_NE(prep.output.find("renumbered by degree"), std::string::npos) << prep.output;
  EXPECT_EQ(Seer("check " + dir + "/ds --deep --quiet").exit_code, 0);
  const std::string ids = seer::testing::RunShell("cat " + dir + "/ds/node_ids.txt").output;
  EXPECT_EQ(ids, "ann\nbob\ncy\ndan\n");
  // ann has out-degree 1... all have out-degree 1: the degree order keeps the old order
  // among ties; node_order.bin is then the identity 0..3.
  const std::string order = Python("import numpy as np; print(list(np.fromfile(\"" + dir +
                                   "/ds/node_order.bin\", dtype=\"<i8\")))");
  if (order == "SKIP") GTEST_SKIP() << "no numpy";
  EXPECT_EQ(order, "[0, 1, 2, 3]");
  CommandRun bad = Seer("prep --edges " + dir + "/e.csv --src-col follower --dst-col followee --remap-ids --order "
                        "random --out " + dir + "/ds2 --quiet");
  EXPECT_NE(bad.exit_code, 0);
}

}  // namespace
