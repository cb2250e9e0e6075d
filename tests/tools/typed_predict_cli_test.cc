// `seer predict` on a typed dataset prepared with --remap-ids (env SEER_BINARY): --nodes
// takes the target type's original ids (the lines of its TYPE.node_ids.txt) and the CSV
// reports them. The oracle is numpy reading paper.node_ids.txt and paper.test.bin: the
// default run (the test split) lists the test rows' ids in split order, and a --nodes run
// with those ids shuffled (one repeated) gives each id the class the default run gave its
// row. An unknown id is refused naming the file, the line and the type's id file.
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace seer::testing {
namespace {

class TypedPredictCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
    dir_ = MakeTempDir("typed_predict_cli");
  }
  std::string dir_;
};

// 300 papers with string ids "w<7k>" (sorted as strings, not by k), 4 classes, 8 float
// features with a class signal; paper cites paper and 80 featureless authors write papers.
constexpr const char* kInputs =
    "import numpy as np\n"
    "rng = np.random.default_rng(11)\n"
    "n = 300; ids = [\"w%d\" % (7 * k) for k in range(n)]; lab = np.arange(n) % 4\n"
    "feat = (np.eye(4)[lab].repeat(2, 1) + 0.3 * rng.standard_normal((n, 8))).astype(np.float32)\n"
    "open(D + \"/paper_ids.txt\", \"w\").write(\"\".join(i + \"\\n\" for i in ids))\n"
    "np.save(D + \"/feat.npy\", feat); np.save(D + \"/labels.npy\", lab)\n"
    "cites = [(ids[k], ids[(k + j) % n]) for k in range(n) for j in (4, 8, 1)]\n"
    "open(D + \"/cites.txt\", \"w\").write(\"\".join(\"%s %s\\n\" % e for e in cites))\n"
    "writes = [(\"a%d\" % (k % 80), ids[k]) for k in range(n)]\n"
    "open(D + \"/writes.txt\", \"w\").write(\"\".join(\"%s %s\\n\" % e for e in writes))\n"
    "print(\"ok\")\n";

TEST_F(TypedPredictCliTest, NodesAndCsvUseTheTargetTypesOriginalIds) {
  const std::string made = RunPython("D = \"" + dir_ + "\"\n" + kInputs);
  if (made == "SKIP") GTEST_SKIP() << "numpy missing";
  ASSERT_EQ(made, "ok");
  const std::string ds = dir_ + "/ds";
  const CliRun prep = RunSeer("prep --out " + ds + " --quiet --remap-ids --relation paper,cites,paper=" + dir_ +
                              "/cites.txt --relation author,writes,paper=" + dir_ + "/writes.txt --reverse" +
                              " --type-features paper=" + dir_ + "/feat.npy --type-labels paper=" + dir_ +
                              "/labels.npy --type-node-ids paper=" + dir_ + "/paper_ids.txt" +
                              " --train-fraction 0.5 --valid-fraction 0.2 --test-fraction 0.3");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  const CliRun train = RunSeer("train " + ds + " --model sage --hidden 16 --fanouts 4,4 --batch-size 50 --epochs 1 "
                               "--threads 2 --memory-budget 64M --budget-scope data --cpu --quiet --save-model " +
                               dir_ + "/m.pt");
  ASSERT_EQ(train.exit_code, 0) << train.output;

  // The test split, by default: the CSV's ids are its rows' original ids.
  const CliRun all = RunSeer("predict " + ds + " --model " + dir_ + "/m.pt --out " + dir_ + "/all.npy --quiet");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  // --nodes: test ids in another order, one twice.
  const std::string picked = RunPython(
      "import numpy as np\n"
      "d = \"" + ds + "\"; P = open(d + \"/paper.node_ids.txt\").read().split()\n"
      "test = np.fromfile(d + \"/paper.test.bin\", \"<i8\")\n"
      "ids = [P[r] for r in test[::-3]] + [P[test[0]]]\n"
      "open(\"" + dir_ + "/nodes.txt\", \"w\").write(\"\".join(i + \"\\n\" for i in ids))\n"
      "print(len(ids))");
  ASSERT_EQ(picked.find("FAILED"), std::string::npos) << picked;
  const CliRun some = RunSeer("predict " + ds + " --model " + dir_ + "/m.pt --nodes " + dir_ + "/nodes.txt --out " +
                              dir_ + "/some.npy --quiet");
  ASSERT_EQ(some.exit_code, 0) << some.output;

  const std::string verdict = RunPython(
      "import numpy as np, csv\n"
      "d = \"" + ds + "\"; o = \"" + dir_ + "\"\n"
      "P = open(d + \"/paper.node_ids.txt\").read().split(); test = np.fromfile(d + \"/paper.test.bin\", \"<i8\")\n"
      "def rows(name):\n"
      "    r = list(csv.reader(open(o + \"/\" + name + \".csv\")))\n"
      "    return r[0], [x[0] for x in r[1:]], [int(x[1]) for x in r[1:]]\n"
      "head, ids_all, cls_all = rows(\"all\")\n"
      "bad = []\n"
      "if head != [\"id\", \"class\"]: bad.append(\"header %s\" % head)\n"
      "if ids_all != [P[r] for r in test]: bad.append(\"default ids %s\" % ids_all[:5])\n"
      "if cls_all != list(np.load(o + \"/all.npy\")): bad.append(\"default classes\")\n"
      "_, ids_some, cls_some = rows(\"some\")\n"
      "want_ids = open(o + \"/nodes.txt\").read().split()\n"
      "class_of_row = dict(zip(test.tolist(), cls_all))\n"
      "want_cls = [class_of_row[P.index(i)] for i in want_ids]\n"
      "if ids_some != want_ids: bad.append(\"nodes ids %s\" % ids_some[:5])\n"
      "if cls_some != want_cls or list(np.load(o + \"/some.npy\")) != want_cls: bad.append(\"nodes classes\")\n"
      "print(\"ok\" if not bad else \"; \".join(bad))");
  EXPECT_EQ(verdict, "ok");

  // An id of another type (an author) or none at all: one line naming the line and file.
  WriteFileBytes(dir_ + "/unknown.txt", "w7\na3\n");
  const CliRun unknown = RunSeer("predict " + ds + " --model " + dir_ + "/m.pt --nodes " + dir_ + "/unknown.txt --out " +
                                 dir_ + "/u.npy --quiet");
  ExpectOneLineError(unknown, "predict", dir_ + "/unknown.txt:2: node id 'a3' is not in the dataset (not in its "
                                                "paper.node_ids.txt)");
}

}  // namespace
}  // namespace seer::testing
