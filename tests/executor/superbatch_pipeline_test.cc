// SuperbatchPipeline on fake stages: batches arrive in schedule order, an exception or
// error in any stage becomes the Status Stop() reports (naming the stage) without a
// hang, and Stop()/destruction join threads blocked on full queues.
#include "executor/superbatch_pipeline.h"

#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <future>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "cache/policies.h"
#include "storage/base/exception_status.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

constexpr int64_t kBatchesPerSuperbatch = 3;

// Runs `body` on its own thread and fails (instead of hanging the suite) when it takes
// longer than `limit`.
// Runs `body` and fails the test binary when it has not finished after `limit` seconds.
// A hung thread cannot be cancelled, and the std::async future would wait for it in its
// destructor, so a hang ends the process (exit 1) instead of hanging ctest.
void WithinSeconds(double limit, const std::function<void()>& body) {
  auto done = std::async(std::launch::async, body);
  if (done.wait_for(std::chrono::duration<double>(limit)) != std::future_status::ready) {
    std::cerr << "FAILED: pipeline did not finish within " << limit << " s (hang); exiting\n";
    std::_Exit(1);
  }
  done.get();
}

// Stages over made-up traces: batch b of superbatch k holds node ids {k*100 + b, 7},
// written to the trace file the pipeline names.
PipelineStages FakeStages() {
  PipelineStages stages;
  stages.sample = [](int64_t epoch, int64_t k, const std::string& path, SuperbatchStats*,
                     const std::atomic<bool>&) -> Result<TraceFile> {
    SEER_ASSIGN_OR_RETURN(TraceFileWriter writer, TraceFileWriter::Create(path, epoch, k));
    for (int64_t b = 0; b < kBatchesPerSuperbatch; ++b) {
      BatchTrace batch;
      batch.epoch = epoch;
      batch.batch_index = k * kBatchesPerSuperbatch + b;
      batch.num_seeds = 1;
      batch.node_ids = {k * 100 + b, 7};
      SEER_RETURN_IF_ERROR(writer.Append(batch));
    }
    return writer.Finish();
  };
  stages.plan = [](const TraceFile&) -> Result<SuperbatchPlan> { return SuperbatchPlan(); };
  stages.fill = [](const std::vector<int64_t>&, GatherStats*) { return Status::Ok(); };
  stages.gather = [](const BatchTrace& batch, const Changeset*, std::vector<float>* rows, GatherStats* stats) {
    rows->assign(batch.node_ids.begin(), batch.node_ids.end());
    stats->rows += static_cast<int64_t>(batch.node_ids.size());
    return Status::Ok();
  };
  return stages;
}

PipelineOptions Schedule(int64_t epochs, int64_t per_epoch, bool overlap = true) {
  PipelineOptions options;
  for (int64_t e = 0; e < epochs; ++e) {
    for (int64_t k = 0; k < per_epoch; ++k) options.schedule.emplace_back(e, k);
  }
  options.overlap = overlap;
  options.runtime_dir = testing::MakeTempDir("pipeline") + "/runtime";  // made by the pipeline
  return options;
}

// Drains the pipeline as the executor does; returns the batch indices in arrival order.
std::vector<int64_t> Drain(SuperbatchPipeline& pipeline, int64_t per_epoch) {
  std::vector<int64_t> seen;
  while (std::optional<GatheredBatch> g = pipeline.Next()) {
    seen.push_back(g->batch().batch_index);
    // The batch read back from its superbatch's trace file.
    const int64_t k = g->superbatch->planned.index;
    const std::vector<int64_t> ids = {k * 100 + static_cast<int64_t>(g->index), 7};
    EXPECT_EQ(g->batch().node_ids, ids);
    const bool last = g->last;
    const int64_t epoch = g->superbatch->planned.epoch;
    const bool epoch_end = last && g->superbatch->planned.index + 1 == per_epoch;
    pipeline.Recycle(std::move(g->rows));
    if (last) pipeline.SuperbatchDone();
    if (epoch_end) pipeline.EpochDone(epoch);
  }
  return seen;
}

// Files left in the runtime directory (none once a pipeline is gone).
int64_t RuntimeFiles(const std::string& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  int64_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++n;
  }
  return n;
}

TEST(SuperbatchPipelineTest, DeliversEveryBatchInScheduleOrder) {
  for (bool overlap : {true, false}) {
    WithinSeconds(30, [&] {
      const PipelineOptions options = Schedule(2, 2, overlap);
      auto pipeline = SuperbatchPipeline::Start(FakeStages(), options);
      const std::vector<int64_t> seen = Drain(*pipeline, 2);
      EXPECT_TRUE(pipeline->Stop().ok());
      EXPECT_EQ(RuntimeFiles(options.runtime_dir), 0) << "every trace file is removed once gathered";
      const std::vector<int64_t> want = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5};
      EXPECT_EQ(seen, want) << "overlap " << overlap;
    });
  }
}

enum class Fault { kStdException, kBadAlloc, kStatusError, kC10Error, kReturnedError };

void Throw(Fault fault) {
  switch (fault) {
    case Fault::kStdException: throw std::runtime_error("injected");
    case Fault::kBadAlloc: throw std::bad_alloc();
    case Fault::kStatusError: throw StatusError(Status(StatusCode::kIoError, "injected"));
    case Fault::kC10Error: TORCH_CHECK(false, "injected");
    case Fault::kReturnedError: break;
  }
}

// Stage `stage` fails on its second call with `fault`.
PipelineStages FailingStages(const std::string& stage, Fault fault) {
  PipelineStages stages = FakeStages();
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto fail_now = [calls, fault]() -> Status {
    if (++*calls < 2) return Status::Ok();
    Throw(fault);
    return Status(StatusCode::kIoError, "injected error");
  };
  if (stage == "inspector") {
    auto inner = stages.sample;
    stages.sample = [inner, fail_now](int64_t e, int64_t k, const std::string& path, SuperbatchStats* s,
                                      const std::atomic<bool>& cancel) -> Result<TraceFile> {
      SEER_RETURN_IF_ERROR(fail_now());
      return inner(e, k, path, s, cancel);
    };
  } else if (stage == "planner") {
    auto inner = stages.plan;
    stages.plan = [inner, fail_now](const TraceFile& t) -> Result<SuperbatchPlan> {
      SEER_RETURN_IF_ERROR(fail_now());
      return inner(t);
    };
  } else {
    auto inner = stages.gather;
    stages.gather = [inner, fail_now](const BatchTrace& b, const Changeset* c, std::vector<float>* r,
                                      GatherStats* s) {
      SEER_RETURN_IF_ERROR(fail_now());
      return inner(b, c, r, s);
    };
  }
  return stages;
}

TEST(SuperbatchPipelineTest, AnyFailureInAnyStageBecomesAStatusNamingIt) {
  for (const std::string stage : {"inspector", "planner", "gather"}) {
    for (Fault fault : {Fault::kStdException, Fault::kBadAlloc, Fault::kStatusError, Fault::kC10Error,
                        Fault::kReturnedError}) {
      SCOPED_TRACE(stage + " fault " + std::to_string(static_cast<int>(fault)));
      WithinSeconds(30, [&] {
        const PipelineOptions options = Schedule(3, 4);
        auto pipeline = SuperbatchPipeline::Start(FailingStages(stage, fault), options);
        Drain(*pipeline, 4);
        const Status status = pipeline->Stop();
        pipeline.reset();
        EXPECT_EQ(RuntimeFiles(options.runtime_dir), 0) << "trace files left behind";
        ASSERT_FALSE(status.ok());
        if (fault != Fault::kBadAlloc) {
          EXPECT_NE(status.message().find("injected"), std::string::npos) << status.message();
        }
        if (fault != Fault::kReturnedError) {
          EXPECT_NE(status.message().find(stage + " stage"), std::string::npos) << status.message();
        }
        if (fault == Fault::kBadAlloc) {
          EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
        }
        if (fault == Fault::kStatusError) {
          EXPECT_EQ(status.code(), StatusCode::kIoError);
        }
        if (fault == Fault::kStdException || fault == Fault::kC10Error) {
          EXPECT_EQ(status.code(), StatusCode::kInternal);
        }
      });
    }
  }
}

TEST(SuperbatchPipelineTest, FailureWhileTheExecutorWaitsEndsNext) {
  // The executor blocks in Next() while the gather stage fails: Next() returns nullopt.
  WithinSeconds(30, [&] {
    auto pipeline = SuperbatchPipeline::Start(FailingStages("gather", Fault::kStdException), Schedule(1, 2));
    int delivered = 0;
    while (std::optional<GatheredBatch> g = pipeline->Next()) ++delivered;  // never recycles
    EXPECT_LE(delivered, 1);
    EXPECT_FALSE(pipeline->Stop().ok());
  });
}

// A resumed schedule may start after `first_epoch` (a checkpoint taken at the end of
// an epoch's superbatches, or one from another --superbatch): the gather thread used to
// wait at the epoch gate for an epoch the executor never runs, with the executor waiting
// in Next() — the reported resume hang.
TEST(SuperbatchPipelineTest, ScheduleStartingAfterFirstEpochDoesNotHang) {
  WithinSeconds(30, [&] {
    PipelineOptions options = Schedule(3, 2);
    options.schedule.erase(options.schedule.begin(), options.schedule.begin() + 2);  // epoch 0 done
    options.first_epoch = 0;
    auto pipeline = SuperbatchPipeline::Start(FakeStages(), options);
    const std::vector<int64_t> seen = Drain(*pipeline, 2);
    EXPECT_EQ(seen.size(), static_cast<size_t>(2 * 2 * kBatchesPerSuperbatch));
    EXPECT_TRUE(pipeline->Stop().ok());
  });
}

// No wait is endless: an executor that never hands its row buffers back leaves the
// gather thread waiting for a buffer while it waits for a batch. Next() ends with
// nullopt and Stop() names the deadlock and what each stage thread waits for.
TEST(SuperbatchPipelineTest, DeadlockIsReportedNotHung) {
  WithinSeconds(30, [&] {
    PipelineOptions options = Schedule(1, 4);
    options.deadlock_seconds = 0.5;
    auto pipeline = SuperbatchPipeline::Start(FakeStages(), options);
    std::vector<GatheredBatch> kept;  // never recycled
    while (std::optional<GatheredBatch> g = pipeline->Next()) kept.push_back(std::move(*g));
    EXPECT_EQ(kept.size(), 2u) << "two row buffers circulate";
    const Status s = pipeline->Stop();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kInternal);
    EXPECT_NE(s.message().find("deadlock"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("gather thread waits for a free row buffer"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << "one line";
  });
}

// Slow stages are not deadlocks: a stage call that takes longer than deadlock_seconds
// counts as work.
TEST(SuperbatchPipelineTest, SlowStageIsNotADeadlock) {
  WithinSeconds(30, [&] {
    PipelineOptions options = Schedule(1, 2);
    options.deadlock_seconds = 0.5;
    PipelineStages stages = FakeStages();
    auto plan = stages.plan;
    auto first = std::make_shared<bool>(true);
    stages.plan = [plan, first](const TraceFile& trace) {
      if (*first) std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // 3x deadlock_seconds
      *first = false;
      return plan(trace);
    };
    auto pipeline = SuperbatchPipeline::Start(stages, options);
    EXPECT_EQ(Drain(*pipeline, 2).size(), static_cast<size_t>(2 * kBatchesPerSuperbatch));
    EXPECT_TRUE(pipeline->Stop().ok());
  });
}

// The stage guard (storage/base/exception_status.h) keeps one line of libtorch's
// multi-line what().
TEST(SuperbatchPipelineTest, ExceptionSummaryIsTheFirstLine) {
  EXPECT_EQ(ExceptionSummary(std::runtime_error("bad label 7\nException raised from nll_loss at ...\nframe #0")),
            "bad label 7");
  EXPECT_EQ(ExceptionSummary(std::runtime_error("")), "unknown");
}

TEST(SuperbatchPipelineTest, StopAndDestructionJoinBlockedStages) {
  WithinSeconds(30, [&] {
    // Nobody consumes: every stage ends up blocked on a full queue or the buffer pool.
    const PipelineOptions options = Schedule(5, 4);
    auto pipeline = SuperbatchPipeline::Start(FakeStages(), options);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(pipeline->Stop().ok());
    EXPECT_TRUE(pipeline->Stop().ok()) << "Stop is idempotent";
    pipeline.reset();
    EXPECT_EQ(RuntimeFiles(options.runtime_dir), 0) << "queued trace files are removed";
  });
  WithinSeconds(30, [&] {
    auto pipeline = SuperbatchPipeline::Start(FakeStages(), Schedule(5, 4, /*overlap=*/false));
    ASSERT_TRUE(pipeline->Next().has_value());
    pipeline.reset();  // the destructor closes and joins
  });
  WithinSeconds(30, [&] {
    // The gather thread waits at the epoch gate for an epoch the executor never ends.
    auto pipeline = SuperbatchPipeline::Start(FakeStages(), Schedule(2, 2));
    for (int i = 0; i < 6; ++i) {
      std::optional<GatheredBatch> g = pipeline->Next();
      ASSERT_TRUE(g.has_value());
      pipeline->Recycle(std::move(g->rows));
    }
    EXPECT_TRUE(pipeline->Stop().ok());
  });
}

// The planner stage's input: a superbatch of random batches over `num_nodes` ids (ids
// distinct inside a batch), written to a trace file.
SuperbatchTrace RandomSuperbatch(std::mt19937_64& rng, int64_t k, int64_t batches, int64_t num_nodes) {
  SuperbatchTrace t;
  t.superbatch_index = k;
  for (int64_t b = 0; b < batches; ++b) {
    BatchTrace batch;
    batch.batch_index = k * batches + b;
    std::vector<int64_t> ids;
    const int64_t n = 1 + static_cast<int64_t>(rng() % 12);
    while (static_cast<int64_t>(ids.size()) < n) {
      // Skewed: low ids are hot, as on power-law graphs.
      const int64_t v = static_cast<int64_t>((rng() % num_nodes) * (rng() % num_nodes) / num_nodes);
      if (std::find(ids.begin(), ids.end(), v) == ids.end()) ids.push_back(v);
    }
    batch.num_seeds = 1;
    batch.node_ids = ids;
    t.batches.push_back(std::move(batch));
  }
  return t;
}

// The pipeline's planner stage plans from the trace file (TraceIdSource ->
// SuperbatchCachePlanner::Plan(BatchIdSource&): PlanBeladyStreaming with a tiny working
// memory, the first fill from first uses only). Oracle: the policy object called the
// pre-streaming way, on every batch held in RAM (InitialSlots, then Plan per superbatch,
// the content carried by applying its changesets).
TEST(SuperbatchPipelineTest, PlannerStageFromTraceFilesEqualsThePolicyInRam) {
  const std::string dir = testing::MakeTempDir("planner_stage");
  const int64_t num_nodes = 300;
  std::vector<int64_t> scores(num_nodes);
  std::mt19937_64 rng(5);
  for (int64_t& s : scores) s = static_cast<int64_t>(rng() % 4);
  for (PolicyKind kind : {PolicyKind::kBelady, PolicyKind::kLru}) {
    for (int64_t capacity : {int64_t{7}, int64_t{60}, int64_t{400}}) {  // < and > the distinct nodes
      SCOPED_TRACE(std::string(PolicyKindName(kind)) + " capacity " + std::to_string(capacity));
      auto make = [&](int64_t working_bytes) {
        PolicyOptions options;
        options.capacity_rows = capacity;
        if (kind == PolicyKind::kBelady) SetBeladyNodeScores(scores, capacity, &options);
        options.planner.device = PlannerDevice::kCpu;
        BeladyPlannerOptions streaming = options.planner;
        streaming.working_memory_bytes = working_bytes;
        streaming.runtime_dir = dir;
        streaming.changeset_budget_bytes = 256;  // spill most changesets
        streaming.spill_dir = dir;
        auto policy = MakeCachePolicy(kind, options);
        EXPECT_TRUE(policy.ok());
        return std::make_pair(std::move(policy).value(), streaming);
      };
      auto [stage_policy, streaming] = make(1024);
      SuperbatchCachePlanner stage(std::move(stage_policy), streaming);
      auto [oracle, unused] = make(0);
      (void)unused;
      std::vector<int64_t> slots;
      std::mt19937_64 trace_rng(17);
      for (int64_t k = 0; k < 4; ++k) {
        const SuperbatchTrace t = RandomSuperbatch(trace_rng, k, 9, num_nodes);
        auto writer = TraceFileWriter::Create(dir + "/sb.sbt", 0, k);
        ASSERT_TRUE(writer.ok());
        for (const BatchTrace& b : t.batches) ASSERT_TRUE(writer->Append(b).ok());
        auto file = writer->Finish();
        ASSERT_TRUE(file.ok());
        auto source = TraceIdSource::Open(*file, 64);  // a read-ahead smaller than the file
        ASSERT_TRUE(source.ok());
        auto plan = stage.Plan(*source);
        ASSERT_TRUE(plan.ok()) << plan.status().ToString();

        std::vector<IdSpan> spans;
        for (const BatchTrace& b : t.batches) spans.push_back(IdSpan{b.node_ids.data(), static_cast<int64_t>(b.node_ids.size())});
        if (k == 0) {
          slots = oracle->InitialSlots(spans);
          EXPECT_EQ(plan->fill_slots, slots);
        } else {
          EXPECT_TRUE(plan->fill_slots.empty());
        }
        auto expected = oracle->Plan(slots, spans);
        ASSERT_TRUE(expected.ok());
        ASSERT_TRUE(plan->changesets);
        ASSERT_EQ(plan->changesets->size(), expected->size());
        for (int64_t i = 0; i < expected->size(); ++i) {
          auto got = plan->changesets->Get(i);
          auto want = expected->Get(i);
          ASSERT_TRUE(got.ok() && want.ok());
          EXPECT_TRUE(*got == *want) << "superbatch " << k << " batch " << i;
          for (int32_t slot : want->out_slots) slots[static_cast<size_t>(slot)] = kFreeSlot;
          for (size_t j = 0; j < want->in_ids.size(); ++j) slots[static_cast<size_t>(want->in_slots[j])] = want->in_ids[j];
        }
        EXPECT_EQ(stage.slots(), slots);
      }
    }
  }
}

TEST(SuperbatchPipelineTest, RunGuardedPassesStatusesThrough) {
  EXPECT_TRUE(RunGuarded("x", [] { return Status::Ok(); }).ok());
  const Status s = RunGuarded("x", [] { return Corrupt("file: bad"); });
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_EQ(s.message(), "file: bad");
  const Status thrown = RunGuarded("planner stage", []() -> Status { throw 42; });
  EXPECT_NE(thrown.message().find("planner stage"), std::string::npos) << thrown.message();
}

}  // namespace
}  // namespace seer
