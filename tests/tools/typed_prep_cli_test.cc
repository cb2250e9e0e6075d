// `seer prep --relation ...` (a typed dataset) through the real `seer` binary (env
// SEER_BINARY): numpy builds every relation's CSC from the input edge lists and compares
// the files byte for byte (--reverse as the transposes, --remap-ids through the node_ids
// files read back), `seer check` passes, gen --hetero's dataset exported by numpy and
// prepped again gives the same files, and the refusals are one line with no output left.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "storage/prep/npy.h"
#include "support/test_support.h"

namespace seer::testing {
namespace {

class TypedPrepCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveSeerBinary()) GTEST_SKIP() << "SEER_BINARY not set";
    dir_ = MakeTempDir("typed_prep_cli");
  }
  std::string dir_;
};

// numpy's verdict on relation KEY of DIR: "ok" when its files equal the CSC of the edges
// (S, D) numpy computes (sorted per destination), else what differs.
constexpr const char* kOracle =
    "import json, numpy as np\n"
    "def check(d, key, S, D, nd):\n"
    "    m = json.load(open(d + \"/dataset.json\"))\n"
    "    r = [x for x in m[\"relations\"] if x[\"src\"] + \"__\" + x[\"name\"] + \"__\" + x[\"dst\"] == key][0]\n"
    "    o = np.lexsort((S, D))\n"
    "    p = np.concatenate([[0], np.cumsum(np.bincount(D, minlength=nd))]).astype(\"<i8\")\n"
    "    same = open(d + \"/\" + r[\"indptr\"], \"rb\").read() == p.tobytes()\n"
    "    same = same and open(d + \"/\" + r[\"indices\"], \"rb\").read() == S[o].astype(\"<u4\").tobytes()\n"
    "    return \"ok\" if same else \"differs: \" + key\n";

TEST_F(TypedPrepCliTest, RelationsReversesLabelsAndCheckMatchNumpy) {
  const std::string verdict = RunPython(
      std::string(kOracle) + "rng = np.random.default_rng(5)\n"
      "d = \"" + dir_ + "\"\n"
      "S = rng.integers(0, 41, 500); D = rng.integers(0, 13, 500)\n"  // author -> paper
      "open(d + \"/writes.tsv\", \"w\").write(\"paper_id\\tauthor_id\\n\" + \"\".join(\"%d\\t%d\\n\" % (b, a) for a, b in zip(S, D)))\n"
      "C = rng.integers(0, 13, (200, 2))\n"
      "np.save(d + \"/cites.npy\", C)\n"
      "np.save(d + \"/labels.npy\", np.where(np.arange(13) % 3 == 0, -1, np.arange(13) % 4))\n"
      "import subprocess, os\n"
      "r = subprocess.run(os.environ[\"SEER_BINARY\"] + \" prep --out \" + d + \"/ds --quiet --reverse\"\n"
      "  \" --relation author,writes,paper=\" + d + \"/writes.tsv --src-col author_id --dst-col paper_id\"\n"
      "  \" --relation paper,cites,paper=\" + d + \"/cites.npy --node-type author=50\"\n"
      "  \" --type-labels paper=\" + d + \"/labels.npy --train-fraction 0.5 --valid-fraction 0.5\", shell=True,\n"
      "  capture_output=True, text=True)\n"
      "if r.returncode != 0: print(\"prep failed: \" + r.stdout + r.stderr); raise SystemExit\n"
      "out = d + \"/ds\"\n"
      "res = [check(out, \"author__writes__paper\", S, D, 13), check(out, \"paper__rev_writes__author\", D, S, 50),\n"
      "       check(out, \"paper__cites__paper\", C[:, 0], C[:, 1], 13),\n"
      "       check(out, \"paper__rev_cites__paper\", C[:, 1], C[:, 0], 13)]\n"
      "lab = np.fromfile(out + \"/paper.labels.bin\", \"<i4\")\n"
      "res.append(\"ok\" if (lab == np.where(np.arange(13) % 3 == 0, -1, np.arange(13) % 4)).all() else \"labels\")\n"
      "sp = np.sort(np.concatenate([np.fromfile(out + \"/paper.\" + s + \".bin\", \"<i8\") for s in (\"train\", \"valid\")]))\n"
      "res.append(\"ok\" if (sp == np.nonzero(lab >= 0)[0]).all() else \"splits\")\n"
      "bad = [x for x in res if x != \"ok\"]\n"
      "print(\"ok\" if not bad else \", \".join(bad))");
  if (verdict == "SKIP") GTEST_SKIP() << "numpy missing";
  EXPECT_EQ(verdict, "ok");
  const CliRun check = RunSeer("check " + dir_ + "/ds --deep --quiet");
  ASSERT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("OK: typed, 2 node types, 4 relations, 63 nodes"), std::string::npos) << check.output;
}

TEST_F(TypedPrepCliTest, RemapIdsPerTypeReadBackThroughNodeIds) {
  WriteFileBytes(dir_ + "/writes.csv", "author,paper\nann,p9\nbob,p10\nann,ann\nzed,p9\nbob,p9\n");
  WriteFileBytes(dir_ + "/labels.csv", "id,label\np9,2\nann,0\n");
  WriteFileBytes(dir_ + "/paper_ids.txt", "p9\nann\np10\n");
  const float features[3] = {9, 1, 10};  // rows of p9, ann, p10
  ASSERT_TRUE(WriteNpy(dir_ + "/paper.npy", "<f4", {3, 1}, features).ok());
  const CliRun prep = RunSeer("prep --out " + dir_ + "/ds --quiet --remap-ids --relation author,writes,paper=" + dir_ +
                              "/writes.csv --type-labels paper=" + dir_ + "/labels.csv --type-features paper=" + dir_ +
                              "/paper.npy --type-node-ids paper=" + dir_ + "/paper_ids.txt");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_NE(prep.output.find("original ids in " + dir_ + "/ds/paper.node_ids.txt"), std::string::npos) << prep.output;
  const std::string verdict = RunPython(
      "import numpy as np\n"
      "d = \"" + dir_ + "/ds\"\n"
      "A = open(d + \"/author.node_ids.txt\").read().split(); P = open(d + \"/paper.node_ids.txt\").read().split()\n"
      "p = np.fromfile(d + \"/author__writes__paper.indptr.bin\", \"<i8\"); i = np.fromfile(d + \"/author__writes__paper.indices.bin\", \"<u4\")\n"
      "got = sorted((A[i[e]], P[v]) for v in range(len(P)) for e in range(p[v], p[v + 1]))\n"
      "want = sorted([(\"ann\", \"p9\"), (\"bob\", \"p10\"), (\"ann\", \"ann\"), (\"zed\", \"p9\"), (\"bob\", \"p9\")])\n"
      "lab = dict(zip(P, np.fromfile(d + \"/paper.labels.bin\", \"<i4\")))\n"
      "ok = A == [\"ann\", \"bob\", \"zed\"] and P == [\"ann\", \"p10\", \"p9\"] and got == want\n"
      "ok = ok and lab == {\"ann\": 0, \"p10\": -1, \"p9\": 2}\n"
      "ok = ok and list(np.fromfile(d + \"/paper.features.bin\", \"<f4\")[:3]) == [1, 10, 9]\n"
      "print(\"ok\" if ok else \"bad: %s %s %s %s\" % (A, P, got, lab))");
  if (verdict == "SKIP") GTEST_SKIP() << "numpy missing";
  EXPECT_EQ(verdict, "ok");
  const CliRun check = RunSeer("check " + dir_ + "/ds --quiet");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST_F(TypedPrepCliTest, GenHeteroExportedAndPreppedAgainIsTheSame) {
  const CliRun gen = RunSeer("gen --hetero --papers 800 --feature-dim 4 --seed 9 --quiet --out " + dir_ + "/h");
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const std::string flags = RunPython(
      "import json, numpy as np\n"
      "d = \"" + dir_ + "\"; m = json.load(open(d + \"/h/dataset.json\")); f = []\n"
      "for t in m[\"node_types\"]: f.append(\"--node-type %s=%d\" % (t[\"name\"], t[\"count\"]))\n"
      "for r in m[\"relations\"]:\n"
      "    p = np.fromfile(d + \"/h/\" + r[\"indptr\"], \"<i8\"); s = np.fromfile(d + \"/h/\" + r[\"indices\"], \"<u4\")\n"
      "    e = np.stack([s, np.repeat(np.arange(len(p) - 1), np.diff(p))], 1)[::-1]\n"
      "    name = d + \"/\" + r[\"name\"] + \".txt.gz\"\n"
      "    import gzip; gzip.open(name, \"wt\").write(\"\".join(\"%d %d\\n\" % (a, b) for a, b in e))\n"
      "    f.append(\"--relation %s,%s,%s=%s\" % (r[\"src\"], r[\"name\"], r[\"dst\"], name))\n"
      "print(\" \".join(f))");
  if (flags == "SKIP") GTEST_SKIP() << "numpy missing";
  ASSERT_EQ(flags.find("FAILED"), std::string::npos) << flags;
  const CliRun prep = RunSeer("prep --out " + dir_ + "/again --quiet " + flags);
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  const CliRun same = RunShell("cd " + dir_ + "/h && for f in *__*.bin; do cmp \"$f\" ../again/\"$f\" || exit 1; done && "
                               "ls *__*.bin | wc -l");
  EXPECT_EQ(same.output, "16\n");
}

TEST_F(TypedPrepCliTest, RefusalsAreOneLineAndLeaveNoOutput) {
  WriteFileBytes(dir_ + "/e.txt", "0 1\n# note\n1 7\n2 2\n");
  const std::string out = dir_ + "/ds";
  ExpectOneLineError(RunSeer("prep --out " + out + " --quiet --relation a,r,b=" + dir_ + "/e.txt --node-type b=5"),
                     "prep", dir_ + "/e.txt:3: destination id 7 is not a node of type b: --node-type b=5 (ids 0..4)");
  ExpectOneLineError(RunSeer("prep --out " + out + " --quiet --relation a,r,b=" + dir_ + "/e.txt --edges " + dir_ +
                             "/e.txt"),
                     "prep", "--relation (a typed dataset) cannot be combined with --edges");
  ExpectOneLineError(RunSeer("prep --out " + out + " --quiet --relation a,r,b=" + dir_ + "/e.txt --relation a,r,b=" +
                             dir_ + "/e.txt"),
                     "prep", "relation a__r__b is given twice");
  ExpectOneLineError(RunSeer("prep --out " + out + " --quiet --relation a,r-x,b=" + dir_ + "/e.txt"), "prep",
                     "relation name 'r-x' is not a valid name");
  EXPECT_FALSE(FileExists(out + "/dataset.json"));
  EXPECT_NE(RunShell("test -e " + out).exit_code, 0) << "the output directory was left behind";
}

}  // namespace
}  // namespace seer::testing
