// `seer gen`, `seer prep`, `seer check` through the real binary (env SEER_BINARY):
// exit codes, one-line error text, and no dataset.json left behind on failure.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/prep/npy.h"
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

// prep --force whose conversion fails keeps the old dataset (it was left without a
// manifest before); leftovers of a killed run in --out are swept and reported.
TEST(DataCliTest, FailedForcedPrepKeepsTheOldDatasetAndStaleTemporariesAreSwept) {
  const std::string root = MakeTempDir();
  const std::string dir = root + "/ds";
  WriteText(root + "/e.txt", "0 1\n1 2\n2 0\n");
  ASSERT_EQ(Seer("prep --edges " + root + "/e.txt --out " + dir + " --quiet").exit_code, 0);
  WriteText(root + "/bad.txt", "0 1\n1 -2\n");
  ExpectOneLineError(Seer("prep --edges " + root + "/bad.txt --out " + dir + " --force --quiet"), "prep",
                     "bad.txt:2: negative node id -2");
  CommandRun check = Seer("check " + dir + " --deep --quiet");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("3 nodes, 3 edges"), std::string::npos) << check.output;
  // A temp file of a process that no longer runs (pid of a finished shell) is removed.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::string dead = std::to_string(child);
  WriteText(dir + "/indices.bin.tmp." + dead + ".0", "junk");
  CommandRun again = Seer("prep --edges " + root + "/e.txt --out " + dir + " --force --quiet");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("seer: removed " + dir + "/indices.bin.tmp." + dead + ".0 (4 B), left by process " +
                              dead + " which is no longer running"),
            std::string::npos)
      << again.output;
  EXPECT_FALSE(Exists(dir + "/indices.bin.tmp." + dead + ".0"));
}

// kill -9 of `prep --force` in the middle of the conversion (it blocks reading a FIFO, its
// staging directory and temp files written): the old dataset is intact, and the next prep
// removes the dead run's staging directory and says so.
TEST(DataCliTest, KilledForcedPrepLeavesTheOldDatasetAndItsLeftoversAreSwept) {
  const char* binary = std::getenv("SEER_BINARY");
  ASSERT_NE(binary, nullptr);
  const std::string root = MakeTempDir();
  const std::string dir = root + "/ds";
  WriteText(root + "/e.txt", "0 1\n1 2\n2 0\n");
  ASSERT_EQ(Seer("prep --edges " + root + "/e.txt --out " + dir + " --quiet").exit_code, 0);
  const std::string fifo = root + "/edges.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t prep = ::fork();
  if (prep == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(binary, "seer", "prep", "--edges", fifo.c_str(), "--out", dir.c_str(), "--force", "--quiet",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Our write end keeps prep's reads blocked (no data, no end of file).
  int writer = -1;
  for (int i = 0; i < 6000 && writer < 0; ++i) {
    writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer < 0) ::usleep(10000);
  }
  ASSERT_GE(writer, 0) << "prep never opened the edge list";
  const std::string staging = ".seer-prep-" + std::to_string(prep) + "-ds";
  bool temp_files = false;
  for (int i = 0; i < 6000 && !temp_files; ++i) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root + "/" + staging, ec)) {
      temp_files |= e.path().filename().string().find(".tmp." + std::to_string(prep) + ".") != std::string::npos;
    }
    if (!temp_files) ::usleep(10000);
  }
  ::kill(prep, SIGKILL);
  int status = 0;
  ::waitpid(prep, &status, 0);
  ::close(writer);
  ASSERT_TRUE(temp_files) << "no temp files in " << root + "/" + staging;
  ASSERT_TRUE(WIFSIGNALED(status));
  CommandRun check = Seer("check " + dir + " --deep --quiet");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("3 nodes, 3 edges"), std::string::npos) << check.output;
  CommandRun again = Seer("prep --edges " + root + "/e.txt --out " + dir + " --force --quiet");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("seer: removed "), std::string::npos) << again.output;
  EXPECT_NE(again.output.find(staging), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("left by process " + std::to_string(prep) + " which is no longer running"),
            std::string::npos)
      << again.output;
  EXPECT_FALSE(std::filesystem::exists(root + "/" + staging));
}

// A label of 1e9 is refused (it made num_classes 1,000,000,001); --num-classes sets the count.
TEST(DataCliTest, PrepLabelSanityAndNumClasses) {
  const std::string root = MakeTempDir();
  WriteText(root + "/e.txt", "0 1\n1 2\n2 0\n");
  // OGB-style folder: raw/edge.csv, raw/node-label.csv (line numbers in errors).
  std::filesystem::create_directories(root + "/ogb/raw");
  WriteText(root + "/ogb/raw/edge.csv", "0,1\n1,2\n2,0\n");
  WriteText(root + "/ogb/raw/node-label.csv", "0\n1000000000\n1\n");
  ExpectOneLineError(Seer("prep --ogb " + root + "/ogb --out " + root + "/o1 --quiet"), "prep",
                     "node-label.csv:2: label 1000000000 out of range [-1, 100000)");
  EXPECT_FALSE(Exists(root + "/o1/dataset.json"));
  WriteText(root + "/ogb/raw/node-label.csv", "0\n1\n1\n");
  CommandRun ok = Seer("prep --ogb " + root + "/ogb --out " + root + "/o2 --num-classes 7 --quiet");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("7 classes"), std::string::npos) << ok.output;
  ExpectOneLineError(Seer("prep --ogb " + root + "/ogb --out " + root + "/o3 --num-classes 1 --quiet"), "prep",
                     "node-label.csv:2: label 1 out of range [-1, 1) given by --num-classes");
}

// check --deep covers DIR/ncache: a changed neighbor id in lists.bin is named.
TEST(DataCliTest, CheckDeepCoversTheNeighborCache) {
  const std::string dir = MakeTempDir() + "/ds";
  ASSERT_EQ(Seer("gen --nodes 2000 --out " + dir + " --quiet").exit_code, 0);
  ASSERT_EQ(Seer("ncache build " + dir + " --budget 30% --quiet").exit_code, 0);
  CommandRun good = Seer("check " + dir + " --deep --quiet");
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("neighbor cache " + dir + "/ncache OK"), std::string::npos) << good.output;
  {
    std::fstream f(dir + "/ncache/lists.bin", std::ios::in | std::ios::out | std::ios::binary);
    uint32_t id = 0;
    f.seekg(4);
    f.read(reinterpret_cast<char*>(&id), 4);
    id = (id + 1) % 2000;
    f.seekp(4);
    f.write(reinterpret_cast<const char*>(&id), 4);
  }
  EXPECT_EQ(Seer("check " + dir + " --quiet").exit_code, 0);  // shallow: the dataset only
  ExpectOneLineError(Seer("check " + dir + " --deep --quiet"), "check", dir + "/ncache/lists.bin: xxh64 ");
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
  CommandRun prep = Seer("prep --edges " + dir + "/e.bin64 --num-nodes 20011 --memory-budget 1600K --out " + dir +
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
                           "--undirected", "--dedup", "--drop-self-loops", "--index-dtype", "--memory-budget",
                           "--threads", "--src-col", "--dst-col", "--remap-ids", "--node-ids", "bfloat16",
                           "--edges-header", "--allow-non-finite"}) {
    EXPECT_NE(prep.output.find(flag), std::string::npos) << flag;
  }
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::string Python(const std::string& script) { return seer::testing::RunPython(script); }

// Parallel prep: 1 thread and 2 threads write the same bytes (text input parsed in
// several blocks and pieces, spilled to several partitions).
TEST(DataCliTest, PrepWithOneOrTwoThreadsWritesIdenticalFiles) {
  std::string dir = MakeTempDir();
  ASSERT_EQ(Seer("gen --nodes 30011 --avg-degree 7 --seed 9 --quiet --edge-list-out " + dir + "/e.txt").exit_code, 0);
  for (const char* threads : {"1", "2"}) {
    CommandRun prep = Seer("prep --edges " + dir + "/e.txt --undirected --dedup --memory-budget 3500K --threads " +
                           threads + " --out " + dir + "/t" + threads + " --quiet");
    ASSERT_EQ(prep.exit_code, 0) << prep.output;
    EXPECT_EQ(prep.output.find(", 1 partitions"), std::string::npos) << prep.output;
  }
  for (const char* file : {"/indptr.bin", "/indices.bin", "/labels.bin", "/dataset.json"}) {
    const std::string one = ReadBytes(dir + "/t1" + file), two = ReadBytes(dir + "/t2" + file);
    EXPECT_FALSE(one.empty()) << file;
    EXPECT_TRUE(one == two) << file;
  }
  EXPECT_EQ(Seer("check " + dir + "/t2 --deep --quiet").exit_code, 0);
}

// The budget floor is sized from the inputs: a tiny conversion runs within 4 MiB, and the
// memory it adds to the program's own is within that budget.
TEST(DataCliTest, TinyConversionFitsAFewMiB) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/e.txt", "0 1\n1 2\n2 0\n3 1\n");
  CommandRun prep = Seer("prep --edges " + dir + "/e.txt --memory-budget 4M --out " + dir + "/ds --quiet");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  const size_t at = prep.output.find(" above the ");
  ASSERT_NE(at, std::string::npos) << prep.output;
  const size_t open = prep.output.rfind('(', at);
  const std::string added = prep.output.substr(open + 1, at - open - 1);  // e.g. "1.2 MiB"
  double value = std::stod(added);
  const double mib = added.find("MiB") != std::string::npos ? value : added.find("KiB") != std::string::npos ? value / 1024 : value / 1048576;
#if defined(__SANITIZE_ADDRESS__)
  (void)mib;  // ASan's shadow memory and quarantine inflate the resident set
#else
  EXPECT_LE(mib, 4.0) << prep.output;
#endif
  ExpectOneLineError(Seer("prep --edges " + dir + "/e.txt --memory-budget 16K --out " + dir + "/ds2 --quiet"),
                     "prep", "raise --memory-budget");
}

// bfloat16 features end to end through the CLI (prep, check), read back with numpy (which
// has no bfloat16: the oracle rounds to the nearer neighbour itself).
TEST(DataCliTest, PrepBFloat16FeaturesMatchNumpyOracle) {
  std::string dir = MakeTempDir();
  const std::string make =
      "import numpy as np; r = np.random.default_rng(4); "
      "np.save(\"" + dir + "/f.npy\", (r.standard_normal((300, 7)) * 10).astype(np.float32)); "
      "np.save(\"" + dir + "/l.npy\", r.integers(0, 3, 300)); print(\"ok\")";
  const std::string made = Python(make);
  if (made == "SKIP") GTEST_SKIP() << "no numpy";
  ASSERT_EQ(made, "ok");
  ASSERT_EQ(Seer("gen --nodes 300 --avg-degree 4 --seed 2 --quiet --edge-list-out " + dir + "/e.bin64").exit_code, 0);
  CommandRun prep = Seer("prep --edges " + dir + "/e.bin64 --features " + dir + "/f.npy --labels " + dir +
                         "/l.npy --feature-dtype bfloat16 --out " + dir + "/ds --quiet");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_NE(prep.output.find("7 features x bfloat16"), std::string::npos) << prep.output;
  CommandRun check = Seer("check " + dir + "/ds --deep");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("bfloat16"), std::string::npos) << check.output;
  // numpy oracle: of the two bfloat16 neighbours of each value (low 16 bits cleared, and
  // the next one up), the nearer in float64, ties to the even one.
  const std::string compare =
      "import numpy as np, json; f = np.load(\"" + dir + "/f.npy\").reshape(-1); "
      "m = json.load(open(\"" + dir + "/ds/dataset.json\")); assert m[\"feature_dtype\"] == \"bfloat16\"; "
      "got = np.fromfile(\"" + dir + "/ds/features.bin\", dtype=np.uint16)[: f.size]; "
      "b = f.view(np.uint32); lo = b & np.uint32(0xffff0000); hi = lo + np.uint32(0x10000); "
      "dl = np.abs(f.astype(np.float64) - lo.view(np.float32)); dh = np.abs(hi.view(np.float32).astype(np.float64) - f); "
      "up = (dh < dl) | ((dh == dl) & (((lo >> 16) & 1) == 1)); "
      "want = np.where(up, hi >> 16, lo >> 16).astype(np.uint16); "
      "back = (got.astype(np.uint32) << 16).view(np.float32); "
      "print(int((got != want).sum()) + int((np.abs(back - f) > np.abs(f) / 256).sum()))";
  const std::string mismatches = Python(compare);
  if (mismatches == "SKIP") GTEST_SKIP() << "no numpy";
  EXPECT_EQ(mismatches, "0");
}

// CSV with named columns and string ids: the mapping file is the sorted distinct ids
// (numpy/Python oracle), the topology the renumbered pairs, and `seer check` reads both.
TEST(DataCliTest, PrepCsvColumnsWithStringIds) {
  std::string dir = MakeTempDir();
  std::string csv = "weight,source,target\n";
  std::vector<std::pair<std::string, std::string>> edges = {
      {"paris", "rome"}, {"rome", "oslo"}, {"42", "paris"}, {"oslo", "42"}, {"7", "rome"}, {"paris", "7"}};
  for (auto& [s, d] : edges) csv += "1.5," + s + "," + d + "\n";
  WriteText(dir + "/e.csv", csv);
  CommandRun prep = Seer("prep --edges " + dir + "/e.csv --src-col source --dst-col target --remap-ids --out " + dir +
                         "/ds --quiet");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_NE(prep.output.find("5 nodes, 6 edges"), std::string::npos) << prep.output;
  EXPECT_NE(prep.output.find("node_ids.txt"), std::string::npos) << prep.output;
  EXPECT_EQ(Seer("check " + dir + "/ds --deep --quiet").exit_code, 0);
  const std::string oracle =
      "import csv, numpy as np; rows = list(csv.DictReader(open(\"" + dir + "/e.csv\"))); "
      "ids = sorted({r[k] for r in rows for k in (\"source\", \"target\")}, "
      "key=lambda s: (0, int(s), \"\") if s.isdigit() and (s == \"0\" or s[0] != \"0\") else (1, 0, s)); "
      "got = open(\"" + dir + "/ds/node_ids.txt\").read().split(); "
      "ip = np.fromfile(\"" + dir + "/ds/indptr.bin\", dtype=np.int64); ix = np.fromfile(\"" + dir + "/ds/indices.bin\", dtype=np.uint32); "
      "pos = {s: i for i, s in enumerate(ids)}; "
      "want = sorted((pos[r[\"target\"]], pos[r[\"source\"]]) for r in rows); "
      "have = sorted((v, int(u)) for v in range(len(ids)) for u in ix[ip[v]:ip[v + 1]]); "
      "print(\"ok\" if got == ids and want == have else \"mismatch %s %s %s %s\" % (got, ids, want, have))";
  const std::string result = Python(oracle);
  if (result == "SKIP") GTEST_SKIP() << "no numpy";
  EXPECT_EQ(result, "ok");
  // An unknown column is named with the header's columns.
  ExpectOneLineError(Seer("prep --edges " + dir + "/e.csv --src-col from --dst-col target --remap-ids --out " + dir +
                          "/ds2 --quiet"),
                     "prep", "e.csv:1: no column 'from' in the header (weight, source, target)");
  EXPECT_FALSE(Exists(dir + "/ds2/dataset.json"));
}

// --node-ids through the CLI: string ids from CSV columns, an ids file in its own order
// with one id that is in no edge (kept: a node of degree 0 with its row), features/labels/
// train indexed by its rows. Oracle: a std::map of id -> row applied to the node_ids.txt
// seer wrote; the summary counts the node without edges; errors are one line naming the
// file, with no dataset.json.
TEST(DataCliTest, PrepStringIdsWithNodeIdsFile) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/e.csv", "w,source,target\n1,paris,rome\n1,rome,oslo\n1,42,paris\n1,oslo,42\n1,7,rome\n");
  const std::vector<std::string> file_ids = {"rome", "42", "madrid", "oslo", "7", "paris"};
  std::string ids_text;
  for (const std::string& id : file_ids) ids_text += id + "\n";
  WriteText(dir + "/ids.txt", ids_text);
  std::vector<float> features;
  std::vector<int64_t> labels;
  for (int64_t r = 0; r < 6; ++r) {
    features.insert(features.end(), {static_cast<float>(r), static_cast<float>(10 * r)});
    labels.push_back(r % 3);
  }
  const std::vector<int64_t> train = {5, 0, 2};  // paris, rome, madrid (no edge)
  ASSERT_TRUE(seer::WriteNpy(dir + "/f.npy", "<f4", {6, 2}, features.data()).ok());
  ASSERT_TRUE(seer::WriteNpy(dir + "/l.npy", "<i8", {6}, labels.data()).ok());
  ASSERT_TRUE(seer::WriteNpy(dir + "/t.npy", "<i8", {3}, train.data()).ok());
  const std::string inputs = "--edges " + dir + "/e.csv --src-col source --dst-col target --features " + dir +
                             "/f.npy --labels " + dir + "/l.npy --train " + dir + "/t.npy --quiet";
  CommandRun prep = Seer("prep " + inputs + " --remap-ids --node-ids " + dir + "/ids.txt --out " + dir + "/ds");
  ASSERT_EQ(prep.exit_code, 0) << prep.output;
  EXPECT_NE(prep.output.find("6 nodes, 5 edges"), std::string::npos) << prep.output;
  EXPECT_NE(prep.output.find("1 ids of " + dir + "/ids.txt are in no edge (nodes of degree 0)"), std::string::npos)
      << prep.output;
  CommandRun check = Seer("check " + dir + "/ds --deep --quiet");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  std::map<std::string, int64_t> row_of;
  for (size_t r = 0; r < file_ids.size(); ++r) row_of[file_ids[r]] = static_cast<int64_t>(r);
  std::istringstream mapping(ReadBytes(dir + "/ds/node_ids.txt"));
  std::vector<std::string> nodes;
  for (std::string id; std::getline(mapping, id);) nodes.push_back(id);
  ASSERT_EQ(nodes, (std::vector<std::string>{"7", "42", "madrid", "oslo", "paris", "rome"}));
  EXPECT_EQ(seer::testing::ReadArray<int64_t>(dir + "/ds/indptr.bin"),
            (std::vector<int64_t>{0, 0, 1, 1, 2, 3, 5}));  // in-degrees; madrid (node 2) has no edge at all
  const auto got_features = seer::testing::ReadArray<float>(dir + "/ds/features.bin");
  const auto got_labels = seer::testing::ReadArray<int32_t>(dir + "/ds/labels.bin");
  for (size_t k = 0; k < nodes.size(); ++k) {
    const int64_t row = row_of.at(nodes[k]);
    EXPECT_EQ(got_features[2 * k + 1], features[2 * row + 1]) << nodes[k];
    EXPECT_EQ(got_labels[k], labels[row]) << nodes[k];
  }
  EXPECT_EQ(seer::testing::ReadArray<int64_t>(dir + "/ds/train.bin"), (std::vector<int64_t>{4, 5, 2}));
  ExpectOneLineError(Seer("prep " + inputs + " --node-ids " + dir + "/ids.txt --out " + dir + "/ds2"), "prep",
                     "--node-ids " + dir + "/ids.txt needs --remap-ids");
  EXPECT_FALSE(Exists(dir + "/ds2/dataset.json"));
  WriteText(dir + "/ids2.txt", "rome\n42\nparis\noslo\n7\nparis\n");
  ExpectOneLineError(Seer("prep " + inputs + " --remap-ids --node-ids " + dir + "/ids2.txt --out " + dir + "/ds3"),
                     "prep", dir + "/ids2.txt:6: node id 'paris' repeats line 3");
  EXPECT_FALSE(Exists(dir + "/ds3/dataset.json"));
  WriteText(dir + "/ids2.txt", "rome\n42\nmadrid\nparis\n7\nlisbon\n");
  ExpectOneLineError(Seer("prep " + inputs + " --remap-ids --node-ids " + dir + "/ids2.txt --out " + dir + "/ds4"),
                     "prep", dir + "/ids2.txt: no line for node id 'oslo' of the edge list");
  EXPECT_FALSE(Exists(dir + "/ds4/dataset.json"));
}

// Issue 27: prep stored 70000 as float16 inf and 1e300 from float64 as inf, accepted
// NaN/inf, and `check --deep` said OK. Now prep refuses each with one line naming the
// file, row and column; --allow-non-finite keeps them (counted in the summary), and
// `check --deep` then names the first non-finite value and exits non-zero.
TEST(DataCliTest, NonFiniteFeaturesAreRefusedOrKeptAndFlagged) {
  const std::string dir = MakeTempDir();
  WriteText(dir + "/e.txt", "0 1\n2 1\n");
  const std::vector<float> big = {1, 2, 70000, 4, 5, 6};
  const std::vector<double> huge = {1, 2, 3, 4, 1e300, 6};
  const std::vector<float> nan = {1, 2, 3, 4, 5, std::nanf("")};
  ASSERT_TRUE(seer::WriteNpy(dir + "/big.npy", "<f4", {3, 2}, big.data()).ok());
  ASSERT_TRUE(seer::WriteNpy(dir + "/huge.npy", "<f8", {3, 2}, huge.data()).ok());
  ASSERT_TRUE(seer::WriteNpy(dir + "/nan.npy", "<f4", {3, 2}, nan.data()).ok());
  const std::string base = "prep --edges " + dir + "/e.txt --quiet --features " + dir;
  ExpectOneLineError(Seer(base + "/big.npy --feature-dtype float16 --out " + dir + "/a"), "prep",
                     dir + "/big.npy: row 1, column 0: feature value 70000 does not fit float16 (largest finite "
                           "65504)");
  ExpectOneLineError(Seer(base + "/huge.npy --out " + dir + "/a"), "prep",
                     dir + "/huge.npy: row 2, column 0: feature value 1e+300 does not fit float32");
  ExpectOneLineError(Seer(base + "/nan.npy --out " + dir + "/a"), "prep",
                     dir + "/nan.npy: row 2, column 1: feature value nan is not finite");
  EXPECT_FALSE(Exists(dir + "/a/dataset.json"));
  CommandRun kept = Seer(base + "/big.npy --feature-dtype float16 --allow-non-finite --out " + dir + "/b");
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("--allow-non-finite: 0 NaN/inf feature values kept, 1 values beyond float16 stored as "
                             "+-inf"),
            std::string::npos)
      << kept.output;
  EXPECT_EQ(Seer("check " + dir + "/b --quiet").exit_code, 0);
  ExpectOneLineError(Seer("check " + dir + "/b --deep --quiet"), "check",
                     dir + "/b/features.bin: node 1, feature 0 (byte offset 4): value inf is not finite");
  kept = Seer(base + "/nan.npy --allow-non-finite --out " + dir + "/c");
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("1 NaN/inf feature values kept"), std::string::npos) << kept.output;
  ExpectOneLineError(Seer("check " + dir + "/c --deep --quiet"), "check",
                     dir + "/c/features.bin: node 2, feature 1 (byte offset 20): value nan is not finite");
}

}  // namespace
