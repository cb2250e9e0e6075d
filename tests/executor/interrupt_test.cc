// Stopping a training run (executor/interrupt.h, TrainOptions::stop_signal): the
// SIGINT/SIGTERM handlers (first signal recorded, second one ends the process), a stop
// request mid-epoch checkpoints exactly the batches trained (inside a superbatch too) and
// a resume from there reproduces the uninterrupted losses bit for bit, timed
// checkpoints (--checkpoint-every DURATION) follow the batches, and a stopped pipeline
// neither waits for the next superbatch's sampling nor leaves trace files.
#include "executor/interrupt.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "executor/checkpoint_file.h"
#include "executor/checkpointer.h"
#include "executor/superbatch_pipeline.h"
#include "executor/train_loop.h"
#include "training_fixture.h"

namespace seer {
namespace {

using seer::testing::MakeSyntheticGraph;
using seer::testing::MakeTempDir;
using seer::testing::SmallRun;

TEST(InterruptTest, FirstSignalIsRecordedSecondEndsTheProcess) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InstallStopSignalHandlers(nullptr);
    ::raise(SIGINT);
    if (StopSignalFlag().load() != SIGINT) _exit(3);
    ::raise(SIGINT);  // a second Ctrl-C ends the process at once
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFEXITED(status)) << "exit code " << WEXITSTATUS(status) << " (3: flag not set, 4: survived)";
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_EQ(StopSignalName(SIGTERM), "SIGTERM");
}

// 600 training seeds in batches of 64: 10 batches per epoch in superbatches of 4, 4, 2.
struct StopRun {
  std::string dir = MakeSyntheticGraph("interrupt", 2000, FeatureDtype::kFloat32);
  TrainOptions Base() const {
    TrainOptions o = SmallRun(dir);
    o.epochs = 2;
    o.fcache_budget_bytes = 200 * 16 * 4;
    return o;
  }
};

// The stop request arrives during step `stop_step` (1-based); the run stops before the
// next batch, at the checkpointed position, and a resume finishes it with the same losses.
void StopAndResume(const StopRun& run, int64_t stop_step, bool overlap) {
  SCOPED_TRACE("stop during step " + std::to_string(stop_step) + (overlap ? "" : ", --no-overlap"));
  std::vector<double> full, resumed;
  TrainOptions a = run.Base();
  a.step_hook = [&](int64_t, int64_t, double loss) { full.push_back(loss); };
  auto ra = RunTraining(a);
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  ASSERT_EQ(full.size(), 20u);

  const std::string ckpt = MakeTempDir("interrupt_ckpt");
  std::atomic<int> stop{0};
  TrainOptions b = run.Base();
  b.overlap = overlap;
  b.checkpoint_dir = ckpt;
  b.stop_signal = &stop;
  b.step_hook = [&](int64_t, int64_t, double loss) {
    resumed.push_back(loss);
    if (static_cast<int64_t>(resumed.size()) == stop_step) stop = SIGINT;
  };
  auto rb = RunTraining(b);
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  EXPECT_EQ(rb->interrupted_by, SIGINT);
  EXPECT_TRUE(rb->stopped_early);
  EXPECT_TRUE(rb->training_started);
  EXPECT_EQ(rb->checkpoint_path, ckpt + "/checkpoint.ckpt");
  ASSERT_EQ(static_cast<int64_t>(resumed.size()), stop_step) << "no batch is trained after the request";

  // The checkpoint holds exactly the batches trained: epoch, superbatch, batch inside it.
  auto at = ReadCheckpointPosition(ckpt + "/checkpoint.ckpt");
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  const int64_t epoch = stop_step / 10, in_epoch = stop_step % 10;
  EXPECT_EQ(at->global_step, stop_step);
  EXPECT_EQ(at->epoch, epoch);
  EXPECT_EQ(at->epoch_batches, in_epoch);
  EXPECT_EQ(at->next_superbatch * 4 + at->next_batch, in_epoch);
  EXPECT_EQ(at->global_step, rb->final_position.global_step);
  EXPECT_EQ(at->next_batch, rb->final_position.next_batch);
  TrainOptions c = run.Base();
  c.checkpoint_dir = ckpt;
  c.resume = true;
  c.step_hook = b.step_hook;
  auto rc = RunTraining(c);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->interrupted_by, 0);
  ASSERT_EQ(resumed.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) EXPECT_EQ(resumed[i], full[i]) << "step " << i + 1;
  EXPECT_EQ(rc->test_accuracy, ra->test_accuracy);
  EXPECT_EQ(rc->best_valid_accuracy, ra->best_valid_accuracy);
  // The resumed epoch reports over all its batches, as the uninterrupted run's did.
  ASSERT_FALSE(rc->epochs.empty());
  const EpochReport& first = rc->epochs.front();
  const EpochReport& same = ra->epochs[static_cast<size_t>(first.epoch)];
  EXPECT_EQ(first.batches, same.batches);
  EXPECT_EQ(first.seeds, same.seeds);
  EXPECT_DOUBLE_EQ(first.train_loss, same.train_loss);
  EXPECT_DOUBLE_EQ(first.train_accuracy, same.train_accuracy);
}

TEST(InterruptTest, StopCheckpointsTheBatchesTrainedAndResumeReproducesTheLosses) {
  const StopRun run;
  StopAndResume(run, 6, /*overlap=*/true);   // inside superbatch 1 of epoch 1
  StopAndResume(run, 4, /*overlap=*/false);  // at the end of superbatch 0
  StopAndResume(run, 13, /*overlap=*/true);  // inside epoch 2
}

TEST(InterruptTest, StopBeforeTrainingSavesNothing) {
  const StopRun run;
  std::atomic<int> stop{SIGTERM};
  TrainOptions o = run.Base();
  o.checkpoint_dir = MakeTempDir("interrupt_early");
  o.stop_signal = &stop;
  int steps = 0;
  o.step_hook = [&](int64_t, int64_t, double) { ++steps; };
  auto r = RunTraining(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->interrupted_by, SIGTERM);
  EXPECT_FALSE(r->training_started);
  EXPECT_TRUE(r->checkpoint_path.empty());
  EXPECT_EQ(steps, 0);
}

// --checkpoint-every DURATION: with an interval shorter than a step every batch is
// checkpointed as it ends, inside superbatches too.
TEST(InterruptTest, TimedCheckpointsFollowTheBatches) {
  const StopRun run;
  const std::string ckpt = MakeTempDir("interrupt_timed");
  TrainOptions o = run.Base();
  o.epochs = 1;
  o.checkpoint_dir = ckpt;
  o.checkpoint_every_seconds = 1e-9;
  int64_t steps = 0, inside = 0;
  o.step_hook = [&](int64_t, int64_t, double) {
    ++steps;
    if (steps == 1) return;  // nothing written yet
    auto at = ReadCheckpointPosition(ckpt + "/checkpoint.ckpt");
    ASSERT_TRUE(at.ok()) << at.status().ToString();
    EXPECT_EQ(at->global_step, steps - 1);
    EXPECT_EQ(at->epoch_batches, steps - 1);
    inside += at->next_batch > 0;
  };
  auto r = RunTraining(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(steps, 10);
  EXPECT_GE(inside, 6) << "timed checkpoints inside superbatches";

  TrainOptions defaults = run.Base();
  EXPECT_EQ(TimedCheckpointSeconds(defaults), 0) << "no checkpoint directory: none";
  defaults.checkpoint_dir = ckpt;
  EXPECT_EQ(TimedCheckpointSeconds(defaults), kDefaultCheckpointEverySeconds);
  defaults.checkpoint_every = 2;  // --checkpoint-every 2 (superbatches) replaces the timed default
  EXPECT_EQ(TimedCheckpointSeconds(defaults), 0);
}

// A pipeline whose sampling is slow: on a stop request Next() gives up waiting within a
// fraction of a second, and Stop() cancels the sampling (no error, no file left) instead
// of waiting for the whole superbatch.
TEST(InterruptTest, StoppedPipelineDoesNotWaitForSampling) {
  const std::string runtime = MakeTempDir("interrupt_pipeline") + "/runtime";
  std::atomic<int> interrupt{0};
  std::atomic<int> sampled_batches{0};
  PipelineStages stages;
  stages.sample = [&](int64_t epoch, int64_t k, const std::string& path, SuperbatchStats*,
                      const std::atomic<bool>& cancel) -> Result<TraceFile> {
    SEER_ASSIGN_OR_RETURN(TraceFileWriter writer, TraceFileWriter::Create(path, epoch, k));
    for (int64_t b = 0; b < 200; ++b) {  // 10 s unless cancelled
      if (cancel) return Status(StatusCode::kInternal, "cancelled");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      BatchTrace batch;
      batch.epoch = epoch;
      batch.batch_index = b;
      batch.num_seeds = 1;
      batch.node_ids = {b};
      SEER_RETURN_IF_ERROR(writer.Append(batch));
      ++sampled_batches;
    }
    return writer.Finish();
  };
  stages.plan = [](const TraceFile&) -> Result<SuperbatchPlan> { return SuperbatchPlan(); };
  stages.fill = [](const std::vector<int64_t>&, GatherStats*) { return Status::Ok(); };
  stages.gather = [](const BatchTrace& batch, const Changeset*, std::vector<float>* rows, GatherStats*) {
    rows->assign(batch.node_ids.begin(), batch.node_ids.end());
    return Status::Ok();
  };
  PipelineOptions options;
  options.schedule = {{0, 0}, {0, 1}};
  options.runtime_dir = runtime;
  auto pipeline = SuperbatchPipeline::Start(std::move(stages), options);
  std::thread signal([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    interrupt = SIGINT;
  });
  const auto start = std::chrono::steady_clock::now();
  std::optional<GatheredBatch> g = pipeline->Next(&interrupt);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  signal.join();
  EXPECT_FALSE(g.has_value());
  EXPECT_LT(waited, 2.0);
  const auto stop_start = std::chrono::steady_clock::now();
  const Status stopped = pipeline->Stop();
  const double stopping = std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_start).count();
  EXPECT_TRUE(stopped.ok()) << stopped.ToString();
  EXPECT_LT(stopping, 2.0);
  EXPECT_LT(sampled_batches.load(), 100);
  pipeline.reset();
  size_t left = 0;
  if (std::filesystem::exists(runtime)) {
    for (const auto& entry : std::filesystem::directory_iterator(runtime)) left += entry.exists();
  }
  EXPECT_EQ(left, 0u) << "trace files left behind";
}

}  // namespace
}  // namespace seer
