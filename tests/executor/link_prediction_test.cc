// Link prediction (`--task link`): the OGB ranking metric against a brute-force one, the
// model's pair scores against its own embeddings, and whole training runs — learning
// beyond chance against fixed evaluation negatives, a resume that reproduces the
// uninterrupted losses, and the trace that the feature cache plans holding the negatives.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "executor/evaluation.h"
#include "executor/link_metrics.h"
#include "executor/train_loop.h"
#include "storage/base/random.h"
#include "storage/prep/edge_split.h"
#include "support/random_seed.h"
#include "training_fixture.h"

namespace seer {
namespace {

using testing::MakeSyntheticGraph;
using testing::MakeTempDir;
using testing::SmallRun;

TEST(LinkMetricsTest, MatchesABruteForceRankingWithTies) {
  const uint64_t seed = testing::PrintedRandomSeed();
  SplitMix64 rng(seed);
  const int64_t pairs = 300, k = 60;
  std::vector<float> pos(pairs), neg(pairs * k);
  // Scores on a coarse grid, so ties are common.
  for (float& s : pos) s = static_cast<float>(rng.Below(8));
  for (float& s : neg) s = static_cast<float>(rng.Below(8));
  LinkMetrics m;
  AddLinkRanks(pos.data(), neg.data(), pairs, k, &m);
  double mrr = 0;
  int64_t hits[3] = {0, 0, 0};
  for (int64_t i = 0; i < pairs; ++i) {
    // Sort the pair's scores descending; the positive's rank is the mean of the positions
    // (1-based) it could take among the negatives tied with it.
    std::vector<float> all(neg.begin() + i * k, neg.begin() + (i + 1) * k);
    std::sort(all.begin(), all.end(), std::greater<float>());
    int64_t first = 1, last = 1;
    for (float s : all) first += s > pos[i] ? 1 : 0;
    for (float s : all) last += s >= pos[i] ? 1 : 0;
    const double rank = (static_cast<double>(first) + static_cast<double>(last)) / 2;
    mrr += 1 / rank;
    hits[0] += rank <= 1;
    hits[1] += rank <= 10;
    hits[2] += rank <= 50;
  }
  EXPECT_EQ(m.pairs, pairs);
  EXPECT_NEAR(m.mrr(), mrr / pairs, 1e-12) << "seed " << seed;
  EXPECT_EQ(m.hits1, hits[0]);
  EXPECT_EQ(m.hits10, hits[1]);
  EXPECT_EQ(m.hits50, hits[2]);
  // A positive above every negative ranks 1; below all of k, k + 1; tied with all, (k+2)/2.
  const float low[3] = {0, 0, 0};
  EXPECT_EQ(LinkRank(1, low, 3), 1);
  EXPECT_EQ(LinkRank(-1, low, 3), 4);
  EXPECT_EQ(LinkRank(0, low, 3), 2.5);
}

// A dataset with held-out edges (5 % valid, 10 % test, K fixed negatives each).
std::string MakeLinkGraph(const std::string& name, int64_t nodes, int64_t eval_negatives) {
  const std::string dir = MakeSyntheticGraph(name, nodes, FeatureDtype::kFloat32);
  const std::string out = dir + "-split";
  EdgeSplitOptions options;
  options.valid_fraction = 0.05;
  options.test_fraction = 0.1;
  options.eval_negatives = eval_negatives;
  options.show_progress = false;
  auto split = SplitEdges(dir, out, options);
  EXPECT_TRUE(split.ok()) << split.status().ToString();
  return out;
}

TrainOptions SmallLinkRun(const std::string& dir) {
  TrainOptions o = SmallRun(dir);
  o.task = ModelTask::kLink;
  o.link.negatives = 2;
  o.batch_size = 128;
  o.learning_rate = 0.01;
  o.memory_budget_bytes = 48 << 20;
  return o;
}

TEST(LinkModelTest, PairScoresAreTheScorerOfTheModelsEmbeddings) {
  const std::string dir = MakeLinkGraph("link_scores", 600, 5);
  TrainOptions o = SmallLinkRun(dir);
  auto data = testing::OpenDataPath(o);
  ASSERT_TRUE(data);
  auto batcher = LinkBatcher::ForPairFile(dir + "/edges_valid.bin", dir + "/edges_valid_negatives.bin", 5,
                                          data->manifest().num_nodes, 0);
  ASSERT_TRUE(batcher.ok()) << batcher.status().ToString();
  SuperbatchOptions options = MakeSuperbatchOptions(16, 2, 1, o.fanouts, 3, /*shuffle=*/false);
  auto sampler = SuperbatchSampler::CreateLink(data->topology_view(),
                                               std::make_shared<LinkBatcher>(std::move(*batcher)), options);
  ASSERT_TRUE(sampler.ok()) << sampler.status().ToString();
  auto trace = sampler->Sample(0, 0);
  ASSERT_TRUE(trace.ok());
  const BatchTrace& batch = trace->batches[0];
  ASSERT_EQ(batch.link.num_pairs(), 16);
  std::vector<float> rows;
  ASSERT_TRUE(data->gatherer().GatherReadOnly(batch, &rows, nullptr).ok());
  for (LinkScorer scorer : {LinkScorer::kDot, LinkScorer::kMlp}) {
    ModelConfig config;
    config.in_dim = data->manifest().feature_dim;
    config.hidden = 12;
    config.num_layers = 2;
    config.task = ModelTask::kLink;
    config.scorer = scorer;
    auto model = ModelRunner::Create(config, 0.01, 4, /*use_cuda=*/false);
    ASSERT_EQ(model->embedding_dim(), 12);
    std::vector<float> pos, neg, emb;
    model->ScoreLinks(batch, rows.data(), &pos, &neg);
    ASSERT_EQ(pos.size(), 16u);
    ASSERT_EQ(neg.size(), 16u * 5);
    std::vector<int64_t> classes(static_cast<size_t>(batch.num_seeds));
    model->Predict(batch, rows.data(), classes.data(), &emb, nullptr);
    EXPECT_EQ(classes[0], -1);
    ASSERT_EQ(emb.size(), static_cast<size_t>(batch.num_seeds * 12));
    auto row = [&](int32_t p) { return emb.data() + 12 * p; };
    for (int64_t i = 0; i < 16; ++i) {
      for (int64_t j = -1; j < 5; ++j) {
        const int32_t other = j < 0 ? batch.link.dst[static_cast<size_t>(i)] : batch.link.negative(i, j);
        const float got = j < 0 ? pos[static_cast<size_t>(i)] : neg[static_cast<size_t>(i * 5 + j)];
        float want = 0;
        if (scorer == LinkScorer::kDot) {
          for (int d = 0; d < 12; ++d) want += row(batch.link.src[static_cast<size_t>(i)])[d] * row(other)[d];
        } else {
          model->ScoreEmbeddings(row(batch.link.src[static_cast<size_t>(i)]), row(other), 1, &want);
        }
        EXPECT_NEAR(got, want, 1e-4 * (1 + std::fabs(want))) << LinkScorerName(scorer) << " pair " << i << " " << j;
      }
    }
  }
}

TEST(LinkTrainingTest, LearnsToRankHeldOutEdgesAboveFixedNegatives) {
  const std::string dir = MakeLinkGraph("link_learn", 1500, 20);
  TrainOptions o = SmallLinkRun(dir);
  o.epochs = 3;
  o.hidden = 32;
  std::vector<double> losses;
  o.step_hook = [&](int64_t, int64_t, double loss) { losses.push_back(loss); };
  auto run = RunTraining(o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const Dataset dataset = Dataset::Open(dir).value();
  EXPECT_EQ(run->test_link.pairs, dataset.manifest().edge_splits.num_test);
  // Chance against 20 negatives: E[1/rank] = H(21)/21 ~ 0.173, hits@1 ~ 1/21.
  EXPECT_GT(run->test_link.mrr(), 0.3);
  EXPECT_GT(run->test_link.hits(10), 0.7);
  EXPECT_EQ(run->test_accuracy, run->test_link.mrr());
  ASSERT_GE(losses.size(), 20u);
  const size_t q = losses.size() / 4;
  double first = 0, last = 0;
  for (size_t i = 0; i < q; ++i) {
    first += losses[i];
    last += losses[losses.size() - 1 - i];
  }
  EXPECT_LT(last, first);
  EXPECT_GE(run->best_epoch, 0);
  // The epoch reports say which metric they hold.
  ASSERT_FALSE(run->epochs.empty());
  EXPECT_TRUE(run->epochs.back().link);
  EXPECT_GT(run->epochs.back().valid_link.pairs, 0);
}

// The other options end to end: GCN and the features-only MLP, the MLP scorer, K shared
// degree-biased negatives per batch (the test's negatives are uniform); each learns beyond
// chance (MRR 0.174 against 20 negatives), GCN with its neighbours by more.
TEST(LinkTrainingTest, SharedDegreeNegativesMlpScorerGcnAndMlpModelsLearn) {
  const std::string dir = MakeLinkGraph("link_options", 1500, 20);
  for (ModelKind kind : {ModelKind::kGcn, ModelKind::kMlp}) {
    TrainOptions o = SmallLinkRun(dir);
    o.model = kind;
    o.epochs = 3;
    o.hidden = 32;
    o.scorer = LinkScorer::kMlp;
    o.link.negatives = 4;
    o.link.shared = true;
    o.link.distribution = NegativeDistribution::kDegree;
    int64_t shared_batches = 0;
    o.batch_hook = [&](const BatchTrace& batch, const float*, int64_t, int64_t) {
      shared_batches += batch.link.shared_negatives && batch.link.neg.size() == 4u ? 1 : 0;
    };
    auto run = RunTraining(o);
    ASSERT_TRUE(run.ok()) << ModelKindName(kind) << ": " << run.status().ToString();
    EXPECT_GT(shared_batches, 0);
    EXPECT_GT(run->test_link.mrr(), kind == ModelKind::kGcn ? 0.25 : 0.19) << ModelKindName(kind);
  }
}

TEST(LinkTrainingTest, ResumeReproducesTheUninterruptedLosses) {
  const std::string dir = MakeLinkGraph("link_resume", 900, 4);
  const std::string ckpt = MakeTempDir("link_resume_ckpt");
  TrainOptions base = SmallLinkRun(dir);
  base.epochs = 2;
  base.superbatch = 3;
  std::vector<std::pair<int64_t, double>> full, resumed;
  TrainOptions a = base;
  a.step_hook = [&](int64_t e, int64_t b, double loss) { full.push_back({e * 1000 + b, loss}); };
  auto ra = RunTraining(a);
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  TrainOptions b = base;
  b.checkpoint_dir = ckpt;
  b.checkpoint_every = 1;
  b.stop_after_superbatches = 3;
  b.step_hook = [&](int64_t e, int64_t bi, double loss) { resumed.push_back({e * 1000 + bi, loss}); };
  auto rb = RunTraining(b);
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  ASSERT_TRUE(rb->stopped_early);
  ASSERT_LT(resumed.size(), full.size());
  TrainOptions c = base;
  c.checkpoint_dir = ckpt;
  c.resume = true;
  c.step_hook = b.step_hook;
  // Other negatives are other batches: refused like another --batch-size.
  TrainOptions other = c;
  other.link.negatives = 3;
  auto refused = RunTraining(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--negatives"), std::string::npos) << refused.status().ToString();
  auto rc = RunTraining(c);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  ASSERT_EQ(resumed.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(resumed[i].first, full[i].first);
    EXPECT_DOUBLE_EQ(resumed[i].second, full[i].second) << "step " << i;
  }
}

// The rows the model is handed are the batch's seeds — negatives included — and every
// one of them went through the feature cache the planner planned: the hook sees each
// negative's features (checked against features.bin) in every training batch.
TEST(LinkTrainingTest, NegativesAreGatheredThroughThePlannedCache) {
  const std::string dir = MakeLinkGraph("link_rows", 700, 3);
  TrainOptions o = SmallLinkRun(dir);
  o.fcache_budget_bytes = 64 * 16 * 4;  // far fewer rows than the graph: misses happen
  const Dataset dataset = Dataset::Open(dir).value();
  const std::vector<float> features =
      testing::ReadAllFeatures(dir, dataset.manifest().num_nodes, 16, FeatureDtype::kFloat32);
  int64_t batches = 0, negatives = 0, mismatches = 0;
  o.batch_hook = [&](const BatchTrace& batch, const float* rows, int64_t, int64_t dim) {
    ++batches;
    ASSERT_EQ(batch.link.negatives_per_pair, 2);
    for (int32_t p : batch.link.neg) {
      ++negatives;
      const int64_t v = batch.node_ids[static_cast<size_t>(p)];
      for (int64_t d = 0; d < dim; ++d) mismatches += rows[p * dim + d] != features[static_cast<size_t>(v * dim + d)];
    }
  };
  auto run = RunTraining(o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_GT(batches, 0);
  EXPECT_EQ(negatives, 2 * dataset.manifest().num_edges);  // every training edge once, 2 negatives each
  EXPECT_EQ(mismatches, 0);
  ASSERT_FALSE(run->epochs.empty());
  EXPECT_GT(run->epochs[0].gather.rows - run->epochs[0].gather.hits, 0);
}

}  // namespace
}  // namespace seer
