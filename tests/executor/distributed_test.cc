// Data-parallel training: the launcher environment (rank_env.h), the split of seeds
// (RankShare), the c10d wrapper (process_group.h) and whole runs with W ranks as threads
// of this process, Gloo over loopback. Oracles: one process with the whole batch (the
// same steps, losses and parameters), EvaluateSplit over the whole split, hand-computed
// sums. Ranks in one process share torch's global generator, so the runs use dropout 0.
#include <signal.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "executor/evaluation.h"
#include "executor/label_table.h"
#include "executor/prediction.h"
#include "executor/process_group.h"
#include "executor/rank_env.h"
#include "executor/train_loop.h"
#include "inspector/superbatch_driver.h"
#include "storage/base/file_io.h"
#include "storage/prep/edge_split.h"
#include "storage/prep/hetero_graph.h"
#include "training_fixture.h"

namespace seer {
namespace {

// A TCP port nobody listens on now (the kernel's pick for port 0).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

RankEnv LoopbackEnv(int rank, int world, int port, double timeout_s = 30) {
  DistOptions flags;
  flags.rank = rank;
  flags.world_size = world;
  flags.master_addr = "127.0.0.1";
  flags.master_port = port;
  flags.timeout_seconds = timeout_s;
  auto env = ResolveRankEnv(flags, [](const char*) -> const char* { return nullptr; });
  EXPECT_TRUE(env.ok()) << env.status().ToString();
  return *env;
}

// Runs body(rank) on `world` threads and joins them.
void OnRanks(int world, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

TEST(RankEnvTest, ReadsTorchrunMpiAndSlurmNamesFlagsWin) {
  std::map<std::string, std::string> vars{{"RANK", "2"},         {"WORLD_SIZE", "4"},   {"LOCAL_RANK", "0"},
                                          {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.7"}, {"MASTER_PORT", "1234"}};
  auto lookup = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  auto env = ResolveRankEnv(DistOptions{}, lookup);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->rank, 2);
  EXPECT_EQ(env->world_size, 4);
  EXPECT_EQ(env->local_rank, 0);
  EXPECT_EQ(env->local_world_size, 2);
  EXPECT_EQ(env->master_addr, "10.0.0.7");
  EXPECT_EQ(env->master_port, 1234);
  EXPECT_TRUE(env->distributed());

  DistOptions flags;
  flags.rank = 1;
  flags.master_port = 999;
  env = ResolveRankEnv(flags, lookup);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->rank, 1);
  EXPECT_EQ(env->world_size, 4);
  EXPECT_EQ(env->master_port, 999);

  vars = {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}};
  env = ResolveRankEnv(DistOptions{}, lookup);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->rank, 3);
  EXPECT_EQ(env->world_size, 8);
  EXPECT_EQ(env->local_rank, 1);
  vars = {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}};
  env = ResolveRankEnv(DistOptions{}, lookup);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->rank, 5);
  EXPECT_EQ(env->world_size, 6);

  vars.clear();
  env = ResolveRankEnv(DistOptions{}, lookup);
  ASSERT_TRUE(env.ok());
  EXPECT_FALSE(env->distributed());
  EXPECT_EQ(env->source, "single process");
}

TEST(RankEnvTest, BadValuesAreNamed) {
  std::map<std::string, std::string> vars{{"RANK", "x1"}, {"WORLD_SIZE", "2"}};
  auto lookup = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  auto env = ResolveRankEnv(DistOptions{}, lookup);
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("RANK='x1'"), std::string::npos) << env.status().message();
  vars = {{"RANK", "2"}, {"WORLD_SIZE", "2"}};
  env = ResolveRankEnv(DistOptions{}, lookup);
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("rank 2 is outside [0, world size 2)"), std::string::npos);
}

// Oracle: the global batches of one process with batch b*W; every rank's batch j must be
// a disjoint part of global batch j, together all of it (bar a tail of < W seeds).
TEST(RankShareTest, RanksSplitEveryGlobalBatchAndHaveTheSameBatchCount) {
  for (int world : {2, 3, 4}) {
    for (int64_t n : {0, 1, 5, 96, 97, 100, 101, 203}) {
      const int64_t b = 8;
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 1000);
      std::vector<std::vector<int64_t>> shares;
      for (int r = 0; r < world; ++r) {
        shares.push_back(RankShare(order, b, r, world));
        EXPECT_EQ(static_cast<int64_t>(shares.back().size()), RankShareSize(n, b, r, world));
      }
      const int64_t batches = (static_cast<int64_t>(shares[0].size()) + b - 1) / b;
      const int64_t global = b * world;
      const int64_t expected_batches = n % global >= world ? n / global + 1 : n / global;
      EXPECT_EQ(batches, expected_batches) << "n " << n << " W " << world;
      for (int64_t j = 0; j < batches; ++j) {
        std::vector<int64_t> together;
        for (int r = 0; r < world; ++r) {
          const auto& s = shares[static_cast<size_t>(r)];
          ASSERT_EQ((static_cast<int64_t>(s.size()) + b - 1) / b, batches) << "rank " << r;
          const int64_t end = std::min<int64_t>(static_cast<int64_t>(s.size()), (j + 1) * b);
          ASSERT_LT(j * b, end) << "rank " << r << " has an empty batch " << j;
          together.insert(together.end(), s.begin() + j * b, s.begin() + end);
        }
        std::sort(together.begin(), together.end());
        const int64_t gend = std::min(n, (j + 1) * global);
        EXPECT_EQ(together, std::vector<int64_t>(order.begin() + j * global, order.begin() + gend)) << j;
      }
    }
  }
}

// Data-parallel tests need c10d's Gloo, which a build without the gloo headers lacks
// (PyTorch's wheels ship none: executor/process_group.cc).
#define SKIP_WITHOUT_GLOO()                                                                  \
  do {                                                                                       \
    if (!ProcessGroup::Available()) GTEST_SKIP() << "built without Gloo (no gloo headers)"; \
  } while (0)

// Without Gloo, Connect refuses at once and says what to install.
TEST(ProcessGroupTest, WithoutGlooConnectRefusesNamingTheFix) {
  if (ProcessGroup::Available()) GTEST_SKIP() << "this build has Gloo";
  auto group = ProcessGroup::Connect(LoopbackEnv(0, 2, FreePort(), /*timeout_s=*/2));
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(group.status().message().find("gloo headers"), std::string::npos) << group.status().message();
}

TEST(ProcessGroupTest, CollectivesOnThreeRanks) {
  SKIP_WITHOUT_GLOO();
  const int world = 3, port = FreePort();
  std::mutex mu;
  std::vector<std::string> failures;
  OnRanks(world, [&](int rank) {
    auto fail = [&](const std::string& what) {
      std::lock_guard<std::mutex> lock(mu);
      failures.push_back("rank " + std::to_string(rank) + ": " + what);
    };
    auto group = ProcessGroup::Connect(LoopbackEnv(rank, world, port));
    if (!group.ok()) return fail(group.status().ToString());
    ProcessGroup& g = **group;
    std::vector<float> x{1.0f * rank, 2.0f, -1.0f};
    if (!g.AllreduceSum(x.data(), 3, "sum").ok() || x != std::vector<float>{3.0f, 6.0f, -3.0f}) fail("allreduce sum");
    int64_t m[2] = {rank * 10, -rank};
    if (!g.AllreduceInt64(m, 2, ProcessGroup::ReduceOp::kMax, "max").ok() || m[0] != 20 || m[1] != 0) fail("max");
    int64_t mn = rank + 5;
    if (!g.AllreduceInt64(&mn, 1, ProcessGroup::ReduceOp::kMin, "min").ok() || mn != 5) fail("min");
    std::vector<float> w{static_cast<float>(rank), 7.0f};
    if (!g.Broadcast(w.data(), 2, 1, "bcast").ok() || w != std::vector<float>{1.0f, 7.0f}) fail("broadcast");
    std::string bytes = rank == 2 ? std::string("checkpoint\0bytes", 16) : std::string("x");
    if (!g.BroadcastBytes(&bytes, 2, "bytes").ok() || bytes != std::string("checkpoint\0bytes", 16)) fail("bytes");
    auto all = g.AllgatherInt64(100 + rank, "gather");
    if (!all.ok() || *all != std::vector<int64_t>{100, 101, 102}) fail("allgather");
    if (RanksDifferingFromRankZero(*all) != "rank 1 (101), rank 2 (102)") fail("differing");
    if (!g.Barrier("barrier").ok()) fail("barrier");
  });
  EXPECT_TRUE(failures.empty()) << failures.front();
}

// A rank that never arrives: the others fail within the timeout, naming it.
TEST(ProcessGroupTest, MissingRankIsNamedWithinTheTimeout) {
  SKIP_WITHOUT_GLOO();
  const int port = FreePort();
  const auto start = std::chrono::steady_clock::now();
  auto group = ProcessGroup::Connect(LoopbackEnv(0, 2, port, /*timeout_s=*/2));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(group.ok());
  EXPECT_NE(group.status().message().find("rank(s) 1 did not join"), std::string::npos) << group.status().message();
  EXPECT_LT(seconds, 15);
}

// The whole-run fixture: a small graph, one process's options, dropout 0.
TrainOptions DistRun(const std::string& dir, int64_t batch_size) {
  TrainOptions o = testing::SmallRun(dir);
  o.dropout = 0;
  o.batch_size = batch_size;
  o.superbatch = 3;
  o.epochs = 2;
  o.eval_every = 1;
  o.num_threads = 1;
  return o;
}

struct RankRun {
  Result<TrainSummary> summary = InvalidArgument("not run");
  std::vector<double> losses;  // per step
};

// W ranks of `base` (batch size per rank, paths with "{rank}" expanded), as threads.
std::vector<RankRun> RunRanks(const TrainOptions& base, int world, const std::function<void(TrainOptions&, int)>& edit = {}) {
  std::vector<RankRun> runs(static_cast<size_t>(world));
  const int port = FreePort();
  OnRanks(world, [&](int rank) {
    TrainOptions o = base;
    o.dist.rank = rank;
    o.dist.world_size = world;
    o.dist.master_addr = "127.0.0.1";
    o.dist.master_port = port;
    o.dist.timeout_seconds = 60;
    RankRun& run = runs[static_cast<size_t>(rank)];
    o.step_hook = [&run](int64_t, int64_t, double loss) { run.losses.push_back(loss); };
    if (edit) edit(o, rank);
    run.summary = RunTraining(o);
  });
  return runs;
}

std::map<std::string, torch::Tensor> ModelTensors(const std::string& path) {
  std::string bytes = ReadWholeFile(path).value();
  torch::IValue value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : value.toGenericDict()) {
    if (item.value().isTensor()) out[item.key().toStringRef()] = item.value().toTensor();
  }
  return out;
}

// The equivalence: 2 ranks with b/2 seeds each == 1 process with b seeds: the same
// steps, the same losses and the same parameters to float tolerance after 2 epochs; the
// evaluation across ranks gives the single process's accuracies.
TEST(DistributedTrainingTest, TwoRanksWithHalfBatchesMatchOneProcess) {
  SKIP_WITHOUT_GLOO();
  const std::string dir = testing::MakeSyntheticGraph("dist_eq", 1500, FeatureDtype::kFloat32);
  const std::string out = testing::MakeTempDir("dist_eq_out");
  TrainOptions one = DistRun(dir, 64);
  one.save_model_path = out + "/one.pt";
  std::vector<double> one_losses;
  one.step_hook = [&](int64_t, int64_t, double loss) { one_losses.push_back(loss); };
  auto single = RunTraining(one);
  ASSERT_TRUE(single.ok()) << single.status().ToString();

  TrainOptions two = DistRun(dir, 32);
  two.save_model_path = out + "/two.pt";
  auto runs = RunRanks(two, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(runs[r].summary.ok()) << r << ": " << runs[r].summary.status().ToString();
  ASSERT_GE(one_losses.size(), 8u);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(runs[r].losses.size(), one_losses.size()) << "rank " << r;
    for (size_t i = 0; i < one_losses.size(); ++i) EXPECT_NEAR(runs[r].losses[i], one_losses[i], 2e-4) << "step " << i;
  }
  const auto a = ModelTensors(one.save_model_path), b = ModelTensors(two.save_model_path);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_TRUE(torch::allclose(t, b.at(name), 1e-4, 1e-5)) << name << " max diff "
                                                            << (t - b.at(name)).abs().max().item<float>();
  }
  for (int r = 0; r < 2; ++r) {
    EXPECT_NEAR(runs[r].summary->best_valid_accuracy, single->best_valid_accuracy, 0.01) << r;
    EXPECT_NEAR(runs[r].summary->test_accuracy, single->test_accuracy, 0.01) << r;
    ASSERT_EQ(runs[r].summary->epochs.size(), single->epochs.size());
    EXPECT_NEAR(runs[r].summary->epochs[0].train_loss, single->epochs[0].train_loss, 1e-4);
  }
}

// Link prediction (--task link): 2 ranks with b/2 edges each == 1 process with b edges —
// the same positives and negatives (keyed by the pair, not the rank), each rank's step
// weighted by its scored pairs — and the sharded MRR is the single process's.
TEST(DistributedTrainingTest, LinkTwoRanksWithHalfBatchesMatchOneProcess) {
  SKIP_WITHOUT_GLOO();
  const std::string raw = testing::MakeSyntheticGraph("dist_link", 900, FeatureDtype::kFloat32);
  const std::string dir = raw + "-lp";
  EdgeSplitOptions split;
  split.valid_fraction = 0.05;
  split.test_fraction = 0.05;
  split.eval_negatives = 10;
  split.show_progress = false;
  auto made = SplitEdges(raw, dir, split);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  // A batch size whose epoch has no last global batch of a single edge (ranks drop one
  // smaller than their count, a single process keeps it).
  int64_t batch = 160;
  while (made->output_edges % batch == 1) batch += 2;
  TrainOptions base = DistRun(dir, batch);
  base.epochs = 1;  // ~45 steps: float sums in another order drift apart over hundreds
  base.task = ModelTask::kLink;
  base.link.negatives = 2;
  base.superbatch = 4;
  std::vector<double> one_losses;
  TrainOptions one = base;
  one.step_hook = [&](int64_t, int64_t, double loss) { one_losses.push_back(loss); };
  auto single = RunTraining(one);
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  TrainOptions two = base;
  two.batch_size = batch / 2;
  auto runs = RunRanks(two, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(runs[r].summary.ok()) << r << ": " << runs[r].summary.status().ToString();
  ASSERT_GE(one_losses.size(), 8u);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(runs[r].losses.size(), one_losses.size()) << "rank " << r;
    for (size_t i = 0; i < one_losses.size(); ++i) EXPECT_NEAR(runs[r].losses[i], one_losses[i], 2e-4) << "step " << i;
    EXPECT_EQ(runs[r].summary->test_link.pairs, single->test_link.pairs);
    EXPECT_NEAR(runs[r].summary->test_link.mrr(), single->test_link.mrr(), 2e-3) << r;
    EXPECT_NEAR(runs[r].summary->best_valid_accuracy, single->best_valid_accuracy, 2e-3) << r;
  }
}

// A typed dataset with a relational model: 2 ranks with b/2 papers each == 1 process with
// b (the same per-relation samples: the generator is keyed by node, hop and relation, not
// by batch or rank), and the sharded test accuracy is the single process's.
TEST(DistributedTrainingTest, TypedRgcnTwoRanksWithHalfBatchesMatchOneProcess) {
  SKIP_WITHOUT_GLOO();
  const std::string dir = testing::MakeTempDir("dist_typed") + "/h";
  HeteroGraphConfig config;
  config.num_papers = 1500;
  config.num_classes = 4;
  config.feature_dim = 8;
  config.featureless = {"institute"};
  config.seed = 9;
  auto made = GenerateHeteroDataset(config, dir, /*force=*/false);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  TrainOptions one = DistRun(dir, 64);
  one.model = ModelKind::kRgcn;
  one.relation_fanouts = "cites=3,3";
  std::vector<double> one_losses;
  one.step_hook = [&](int64_t, int64_t, double loss) { one_losses.push_back(loss); };
  auto single = RunTraining(one);
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  TrainOptions two = one;
  two.step_hook = nullptr;
  two.batch_size = 32;
  auto runs = RunRanks(two, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(runs[r].summary.ok()) << r << ": " << runs[r].summary.status().ToString();
  ASSERT_GE(one_losses.size(), 8u);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(runs[r].losses.size(), one_losses.size()) << "rank " << r;
    for (size_t i = 0; i < one_losses.size(); ++i) EXPECT_NEAR(runs[r].losses[i], one_losses[i], 2e-4) << "step " << i;
    EXPECT_NEAR(runs[r].summary->test_accuracy, single->test_accuracy, 0.01) << r;
  }
  EXPECT_GT(single->test_accuracy, 0.4) << "4 classes: chance is 0.25";
}

// --resume in a 2-rank run: rank 0 alone wrote the checkpoint and sends it; the resumed
// ranks take the uninterrupted run's remaining steps (same losses).
TEST(DistributedTrainingTest, ResumeRestoresEveryRank) {
  SKIP_WITHOUT_GLOO();
  const std::string dir = testing::MakeSyntheticGraph("dist_resume", 1500, FeatureDtype::kFloat32);
  const std::string ckpt = testing::MakeTempDir("dist_resume_ckpt");
  TrainOptions o = DistRun(dir, 32);
  auto whole = RunRanks(o, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(whole[r].summary.ok()) << whole[r].summary.status().ToString();
  o.checkpoint_dir = ckpt;
  o.checkpoint_every = 1;
  o.stop_after_superbatches = 2;
  auto first = RunRanks(o, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(first[r].summary.ok()) << first[r].summary.status().ToString();
  o.stop_after_superbatches = -1;
  o.resume = true;
  auto rest = RunRanks(o, 2);
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(rest[r].summary.ok()) << r << ": " << rest[r].summary.status().ToString();
    std::vector<double> joined = first[r].losses;
    joined.insert(joined.end(), rest[r].losses.begin(), rest[r].losses.end());
    ASSERT_EQ(joined.size(), whole[r].losses.size()) << "rank " << r;
    for (size_t i = 0; i < joined.size(); ++i) EXPECT_NEAR(joined[i], whole[r].losses[i], 1e-5) << r << " step " << i;
  }
}

// A stop request (SIGTERM) that reaches rank 1 alone: both ranks stop before the same
// batch (at the next stop check: by the next superbatch's first batch), rank 0
// checkpoints that position, and a resume finishes with the uninterrupted run's losses.
TEST(DistributedTrainingTest, StopOnOneRankStopsEveryRankAtTheSameBatch) {
  SKIP_WITHOUT_GLOO();
  const std::string dir = testing::MakeSyntheticGraph("dist_stop", 1500, FeatureDtype::kFloat32);
  const std::string ckpt = testing::MakeTempDir("dist_stop_ckpt");
  TrainOptions o = DistRun(dir, 32);
  auto whole = RunRanks(o, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(whole[r].summary.ok()) << whole[r].summary.status().ToString();
  o.checkpoint_dir = ckpt;
  std::atomic<int> stop0{0}, stop1{0};
  auto first = RunRanks(o, 2, [&](TrainOptions& t, int rank) {
    t.stop_signal = rank == 0 ? &stop0 : &stop1;
    if (rank == 1) {
      auto record = t.step_hook;
      t.step_hook = [record, &stop1, steps = 0](int64_t e, int64_t b, double loss) mutable {
        record(e, b, loss);
        if (++steps == 5) stop1 = SIGTERM;  // inside the second superbatch of 3 batches
      };
    }
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(first[r].summary.ok()) << r << ": " << first[r].summary.status().ToString();
    EXPECT_EQ(first[r].summary->interrupted_by, SIGTERM) << r;
  }
  const size_t trained = first[0].losses.size();
  EXPECT_EQ(first[1].losses.size(), trained) << "both ranks stop before the same batch";
  EXPECT_GE(trained, 5u);
  EXPECT_LE(trained, 6u) << "the check before superbatch 2's first batch stops the run";
  EXPECT_EQ(first[0].summary->checkpoint_path, ckpt + "/checkpoint.ckpt");
  EXPECT_TRUE(first[1].summary->checkpoint_path.empty()) << "rank 0 alone writes";
  const TrainPosition& at = first[0].summary->final_position;
  EXPECT_EQ(at.global_step, static_cast<int64_t>(trained));
  EXPECT_EQ(at.next_superbatch * 3 + at.next_batch, static_cast<int64_t>(trained));
  o.resume = true;
  auto rest = RunRanks(o, 2);
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(rest[r].summary.ok()) << r << ": " << rest[r].summary.status().ToString();
    std::vector<double> joined = first[r].losses;
    joined.insert(joined.end(), rest[r].losses.begin(), rest[r].losses.end());
    ASSERT_EQ(joined.size(), whole[r].losses.size()) << "rank " << r;
    for (size_t i = 0; i < joined.size(); ++i) EXPECT_NEAR(joined[i], whole[r].losses[i], 1e-5) << r << " step " << i;
  }
}

// 3 ranks, a seed count that 3 * b does not divide: every rank takes the same number of
// steps, the run ends (no hang); rank 0 alone writes the model, checkpoint and metrics.
TEST(DistributedTrainingTest, ThreeRanksUnevenSeedsSameStepsRankZeroWrites) {
  SKIP_WITHOUT_GLOO();
  const std::string dir = testing::MakeSyntheticGraph("dist_three", 1003, FeatureDtype::kFloat32);
  const std::string out = testing::MakeTempDir("dist_three_out");
  TrainOptions o = DistRun(dir, 25);
  o.epochs = 1;
  auto runs = RunRanks(o, 3, [&](TrainOptions& t, int rank) {
    t.save_model_path = out + "/model" + std::to_string(rank) + ".pt";
    t.checkpoint_dir = out + "/ckpt" + std::to_string(rank);
    t.metrics_path = out + "/metrics" + std::to_string(rank) + ".jsonl";
  });
  for (int r = 0; r < 3; ++r) ASSERT_TRUE(runs[r].summary.ok()) << r << ": " << runs[r].summary.status().ToString();
  const size_t steps = runs[0].losses.size();
  EXPECT_GT(steps, 0u);
  for (int r = 1; r < 3; ++r) EXPECT_EQ(runs[r].losses.size(), steps) << "rank " << r;
  EXPECT_EQ(runs[1].losses, runs[0].losses);  // the step's loss is the whole step's
  namespace fs = std::filesystem;
  EXPECT_TRUE(fs::exists(out + "/model0.pt"));
  EXPECT_TRUE(fs::exists(out + "/ckpt0/checkpoint.ckpt"));
  EXPECT_TRUE(fs::exists(out + "/metrics0.jsonl"));
  for (int r = 1; r < 3; ++r) {
    EXPECT_FALSE(fs::exists(out + "/model" + std::to_string(r) + ".pt")) << r;
    EXPECT_FALSE(fs::exists(out + "/ckpt" + std::to_string(r) + "/checkpoint.ckpt")) << r;
    EXPECT_FALSE(fs::exists(out + "/metrics" + std::to_string(r) + ".jsonl")) << r;
  }
}

// Evaluation sharded over 2 ranks and reduced == EvaluateSplit of the whole split in one
// process, with the same model (counts exactly).
TEST(DistributedTrainingTest, ShardedEvaluationMatchesOneProcess) {
  SKIP_WITHOUT_GLOO();
  const std::string dir = testing::MakeSyntheticGraph("dist_eval", 1200, FeatureDtype::kFloat32);
  TrainOptions o = DistRun(dir, 50);
  auto data = testing::OpenDataPath(o);
  ASSERT_TRUE(data);
  const std::vector<int64_t> valid = data->dataset().LoadSplit("valid").value();
  auto labels = LabelTable::Load(data->dataset(), valid);
  ASSERT_TRUE(labels.ok());
  auto model = testing::SmallModel(data->manifest(), 5);
  auto whole_sampler = testing::MakeSampler(*data, valid, o, /*shuffle=*/false);
  auto whole = EvaluateSplit(*whole_sampler, data->gatherer(), *model, *labels);
  ASSERT_TRUE(whole.ok());
  ASSERT_GT(whole->labeled, 0);

  const int world = 2, port = FreePort();
  std::vector<Result<EvalResult>> results(world, InvalidArgument("not run"));
  OnRanks(world, [&](int rank) {
    auto rank_data = testing::OpenDataPath(o);
    auto rank_model = testing::SmallModel(rank_data->manifest(), 5);
    auto group = ProcessGroup::Connect(LoopbackEnv(rank, world, port));
    if (!group.ok()) {
      results[rank] = group.status();
      return;
    }
    auto sampler = testing::MakeSampler(*rank_data, EvalShard(valid, rank, world), o, false);
    auto local = EvaluateSplit(*sampler, rank_data->gatherer(), *rank_model, *labels);
    results[rank] = local.ok() ? ReduceEvalResult(*local, group->get(), "valid") : local;
  });
  for (int r = 0; r < world; ++r) {
    ASSERT_TRUE(results[r].ok()) << results[r].status().ToString();
    EXPECT_EQ(results[r]->labeled, whole->labeled);
    EXPECT_EQ(results[r]->correct, whole->correct);
  }
}

// World size 1 from the flags is the plain run: the same losses as a run without them.
TEST(DistributedTrainingTest, WorldSizeOneIsThePlainRun) {
  const std::string dir = testing::MakeSyntheticGraph("dist_w1", 800, FeatureDtype::kFloat32);
  TrainOptions o = testing::SmallRun(dir);
  std::vector<double> plain, w1;
  o.step_hook = [&](int64_t, int64_t, double loss) { plain.push_back(loss); };
  ASSERT_TRUE(RunTraining(o).ok());
  o.dist.world_size = 1;
  o.dist.rank = 0;
  o.step_hook = [&](int64_t, int64_t, double loss) { w1.push_back(loss); };
  ASSERT_TRUE(RunTraining(o).ok());
  EXPECT_FALSE(plain.empty());
  EXPECT_EQ(plain, w1);
}

}  // namespace
}  // namespace seer
