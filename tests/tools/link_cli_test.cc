// Link prediction through the CLI (`split-edges` → `sample`/`train --task link` →
// `stats` → `predict`), on one small generated graph with held-out edges:
//   - train's feature-cache misses on batches that include their negatives equal `seer
//     stats --belady-scope superbatch` on `seer sample --task link`'s trace (belady,
//     static-degree, lru), and Belady reads fewer rows than static-degree;
//   - a trained model's ranking metrics are printed for scripts, its file predicts
//     embeddings and pair scores, and a dot-product model's scores are the dot products
//     of the embeddings it writes (an independent computation over the .npy files);
//   - bad flags and files are refused in one line.
#include <cmath>
#include <cstring>
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_suite.h"
#include "storage/base/json_file.h"
#include "storage/prep/npy.h"
#include "support/test_support.h"

namespace seer {
namespace {

using seer::testing::CliRun;
using seer::testing::ReadFileBytes;
using seer::testing::RunSeer;

constexpr const char* kShared =
    "--task link --negatives 2 --batch-size 100 --superbatch 4 --epochs 2 --fanouts 5,5 --seed 7 --threads 2";

class LinkCliTest : public seer::testing::CliSuite<LinkCliTest> {
 public:
  static constexpr const char* kPrefix = "seer_link_cli";
  static void Prepare(const std::string& root) {
    const CliRun gen = RunSeer("gen --nodes 3001 --avg-degree 6 --feature-dim 24 --homophily 0.9 --seed 5 --quiet --out " +
                               root + "/raw");
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    const CliRun split = RunSeer("split-edges " + root + "/raw --out " + root + "/g --valid-fraction 0.05 "
                                 "--test-fraction 0.1 --eval-negatives 20 --quiet");
    ASSERT_EQ(split.exit_code, 0) << split.output;
    const CliRun sample = RunSeer("sample " + root + "/g --out " + root + "/t " + kShared + " --quiet");
    ASSERT_EQ(sample.exit_code, 0) << sample.output;
  }
};

int64_t IntField(const Json& object, const std::string& key, const std::string& path) {
  auto value = JsonInt(object, key, path);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : -1;
}

struct Counts {
  int64_t rows = -1, accesses = 0, misses = 0, fill = 0;
};

Counts TrainCounts(const std::string& metrics) {
  Counts c;
  std::istringstream lines(ReadFileBytes(metrics));
  std::string line;
  while (std::getline(lines, line)) {
    auto j = ParseJson(line, metrics);
    if (!j.ok()) continue;
    const std::string type = j->value("type", "");
    if (type == "start") c.rows = IntField(*j, "fcache_rows", metrics);
    if (type != "epoch") continue;
    const int64_t accesses = IntField(*j, "fcache_accesses", metrics);
    c.accesses += accesses;
    c.misses += accesses - IntField(*j, "fcache_hits", metrics);
    c.fill += IntField(*j, "fcache_fill_rows", metrics);
  }
  return c;
}

TEST_F(LinkCliTest, TrainMissesWithNegativesEqualStatsOnTheLinkTrace) {
  const std::string ds = root_ + "/g";
  std::map<std::string, Counts> train;
  for (const char* policy : {"belady", "static-degree", "lru"}) {
    const std::string metrics = root_ + "/m_" + policy + ".jsonl";
    const CliRun run = RunSeer("train " + ds + " --no-train --feature-cache " + policy + " --fcache-budget 40K " +
                               "--memory-budget 64M --budget-scope data --buffered --quiet --metrics " + metrics + " " +
                               kShared);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    train[policy] = TrainCounts(metrics);
  }
  const int64_t rows = train["belady"].rows;
  ASSERT_GT(rows, 0);
  const std::string json = root_ + "/stats.json";
  const CliRun stats = RunSeer("stats " + ds + " --trace " + root_ + "/t --planner cpu --policies belady,static-degree,lru "
                               "--capacities " + std::to_string(rows) + " --belady-scope superbatch --json " + json);
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  auto doc = ReadJsonFile(json);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  for (const Json& r : (*doc)["results"]) {
    const std::string policy = r.value("policy", "");
    const Counts& t = train[policy];
    std::printf("%-13s train %lld misses of %lld accesses, stats %lld\n", policy.c_str(),
                static_cast<long long>(t.misses), static_cast<long long>(t.accesses),
                static_cast<long long>(IntField(r, "misses", json)));
    EXPECT_EQ(t.accesses, IntField(r, "accesses", json)) << policy;
    EXPECT_EQ(t.misses, IntField(r, "misses", json)) << policy;
    EXPECT_EQ(t.fill, IntField(r, "fill_rows", json)) << policy;
    EXPECT_GT(t.misses, 0) << policy;
  }
  EXPECT_LT(train["belady"].misses, train["static-degree"].misses);
}

std::vector<float> ReadFloats(const std::string& path, std::vector<int64_t>* shape) {
  auto file = NpyFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return {};
  *shape = file->header().shape;
  std::vector<float> out(static_cast<size_t>(file->header().num_elements()));
  const std::string bytes = ReadFileBytes(path);
  std::memcpy(out.data(), bytes.data() + bytes.size() - 4 * out.size(), 4 * out.size());
  return out;
}

TEST_F(LinkCliTest, TrainsPrintsRankingMetricsAndPredictsEmbeddingsAndPairScores) {
  const std::string ds = root_ + "/g", model = root_ + "/link.pt";
  const CliRun run = RunSeer("train " + ds + " --task link --epochs 2 --fanouts 5,5 --hidden 16 --batch-size 200 --lr 0.01 "
                             "--memory-budget 64M --budget-scope data --buffered --seed 3 --save-model " + model,
                             /*merge_stderr=*/true);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("link evaluation: "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("20 fixed (the dataset's) negatives"), std::string::npos) << run.output;
  for (const char* line : {"\ntest mrr 0.", "\ntest hits@1 ", "\ntest hits@10 ", "\ntest hits@50 ", "\nbest valid mrr "}) {
    EXPECT_NE(run.output.find(line), std::string::npos) << line << "\n" << run.output;
  }
  // Embeddings of every node, then the scores of three pairs.
  const std::string emb = root_ + "/emb.npy", scores = root_ + "/scores.npy", pairs = root_ + "/pairs.txt";
  const CliRun embed = RunSeer("predict " + ds + " --model " + model + " --embeddings " + emb + " --buffered");
  ASSERT_EQ(embed.exit_code, 0) << embed.output;
  std::vector<int64_t> shape;
  const std::vector<float> e = ReadFloats(emb, &shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{3001, 16}));
  {
    std::FILE* f = std::fopen(pairs.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("0 1\n17,2999\n\n5\t5\n", f);
    std::fclose(f);
  }
  const CliRun score = RunSeer("predict " + ds + " --model " + model + " --task link --pairs " + pairs + " --scores " +
                               scores + " --buffered");
  ASSERT_EQ(score.exit_code, 0) << score.output;
  const std::vector<float> s = ReadFloats(scores, &shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{3}));
  const int64_t u[3] = {0, 17, 5}, v[3] = {1, 2999, 5};
  for (int i = 0; i < 3; ++i) {
    double dot = 0;
    for (int d = 0; d < 16; ++d) dot += static_cast<double>(e[u[i] * 16 + d]) * e[v[i] * 16 + d];
    EXPECT_NEAR(s[static_cast<size_t>(i)], dot, 1e-4 * (1 + std::fabs(dot))) << "pair " << i;
  }
  // Refusals, one line each: a pair line with three ids, both --pairs and --nodes.
  {
    std::FILE* f = std::fopen(pairs.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("0 1\n1 2 3\n", f);
    std::fclose(f);
  }
  const CliRun bad = RunSeer("predict " + ds + " --model " + model + " --pairs " + pairs + " --scores " + scores);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("pairs.txt:2: expected two node ids"), std::string::npos) << bad.output;
  const CliRun both = RunSeer("predict " + ds + " --model " + model + " --pairs " + pairs + " --nodes " + pairs);
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.output.find("give one"), std::string::npos) << both.output;
  const CliRun other_task = RunSeer("predict " + ds + " --model " + model + " --task node --out " + root_ + "/c.npy");
  EXPECT_NE(other_task.exit_code, 0);
  EXPECT_NE(other_task.output.find("a link prediction model (seer train --task link), not the --task node"),
            std::string::npos)
      << other_task.output;
}

TEST_F(LinkCliTest, BadLinkFlagsAreRefusedInOneLine) {
  const std::string ds = root_ + "/g";
  const CliRun zero = RunSeer("train " + ds + " --task link --negatives 0 --epochs 1 --memory-budget 64M --quiet");
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE(zero.output.find("--negatives 0"), std::string::npos) << zero.output;
  const CliRun dist = RunSeer("train " + ds + " --task link --negative-dist zipf --epochs 1 --quiet");
  EXPECT_NE(dist.exit_code, 0);
  EXPECT_NE(dist.output.find("zipf"), std::string::npos) << dist.output;
  // A node classifier scores no pairs.
  const std::string node_model = root_ + "/node.pt";
  const CliRun node = RunSeer("train " + ds + " --epochs 1 --fanouts 5,5 --hidden 8 --memory-budget 64M --budget-scope "
                              "data --buffered --quiet --save-model " + node_model);
  ASSERT_EQ(node.exit_code, 0) << node.output;
  const std::string pairs = root_ + "/one_pair.txt";
  std::FILE* f = std::fopen(pairs.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("0 1\n", f);
  std::fclose(f);
  const CliRun refused = RunSeer("predict " + ds + " --model " + node_model + " --pairs " + pairs);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("scores no pairs"), std::string::npos) << refused.output;
}

}  // namespace
}  // namespace seer
