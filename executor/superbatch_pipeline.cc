#include "executor/superbatch_pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "storage/base/exception_status.h"
#include "storage/base/file_io.h"

namespace seer {

PipelineStages TrainingStages(SuperbatchSampler& sampler, SuperbatchCachePlanner& planner, FeatureGatherer& gatherer) {
  PipelineStages stages;
  // SuperbatchSampler::SampleToFile (the same bytes), with a stop check before every
  // batch is written: a stopped pipeline does not wait for a whole superbatch's sampling.
  stages.sample = [&sampler](int64_t epoch, int64_t k, const std::string& path, SuperbatchStats* stats,
                             const std::atomic<bool>& cancel) -> Result<TraceFile> {
    SEER_ASSIGN_OR_RETURN(TraceFileWriter writer, TraceFileWriter::Create(path, epoch, k, true, sampler.num_relations()));
    auto sink = [&writer, &cancel](BatchTrace&& batch) {
      if (cancel.load(std::memory_order_relaxed)) return Status(StatusCode::kInternal, "sampling stopped");
      return writer.Append(batch);
    };
    SEER_RETURN_IF_ERROR(sampler.SampleStreaming(epoch, k, sink, stats));
    return writer.Finish();
  };
  stages.plan = [&planner](const TraceFile& trace) -> Result<SuperbatchPlan> {
    SEER_ASSIGN_OR_RETURN(TraceIdSource source, TraceIdSource::Open(trace));
    return planner.Plan(source);
  };
  stages.fill = [&gatherer](const std::vector<int64_t>& slots, GatherStats* stats) {
    return gatherer.Fill(slots, stats);
  };
  stages.gather = [&gatherer](const BatchTrace& batch, const Changeset* cs, std::vector<float>* rows,
                              GatherStats* stats) { return gatherer.Gather(batch, cs, rows, stats); };
  return stages;
}

SuperbatchPipeline::SuperbatchPipeline(PipelineStages stages, PipelineOptions options)
    : stages_(std::move(stages)),
      options_(std::move(options)),
      epoch_gate_(options_.schedule.empty() ? options_.first_epoch
                                            : std::max(options_.first_epoch, options_.schedule.front().first)) {
  // The row buffers (kPipelineRowBuffers): one trains, one fills.
  for (int i = 0; i < kPipelineRowBuffers; ++i) free_buffers_.Push(std::vector<float>());
}

std::unique_ptr<SuperbatchPipeline> SuperbatchPipeline::Start(PipelineStages stages, PipelineOptions options) {
  std::unique_ptr<SuperbatchPipeline> p(new SuperbatchPipeline(std::move(stages), std::move(options)));
  p->inspector_ = p->Launch("inspector", 0, &SuperbatchPipeline::InspectorStage);
  p->planner_ = p->Launch("planner", 1, &SuperbatchPipeline::PlannerStage);
  p->gatherer_ = p->Launch("gather", 2, &SuperbatchPipeline::GatherStage);
  return p;
}

SuperbatchPipeline::~SuperbatchPipeline() { (void)Stop(); }

std::thread SuperbatchPipeline::Launch(const char* name, size_t slot, Status (SuperbatchPipeline::*body)()) {
  return std::thread([this, name, slot, body] {
    Status status = RunGuarded(std::string(name) + " stage", [&] { return (this->*body)(); });
    board_.Finished(slot);
    if (!status.ok()) {
      error_.Set(std::move(status));
      CloseAll();
    }
  });
}

void SuperbatchPipeline::CloseAll() {
  stop_ = true;
  sampled_.Close();
  planned_.Close();
  ready_.Close();
  free_buffers_.Close();
  epoch_gate_.Close();
  exclusion_.Close();
}

Status SuperbatchPipeline::Stop() {
  CloseAll();
  for (std::thread* t : {&inspector_, &planner_, &gatherer_}) {
    if (t->joinable()) t->join();
  }
  return error_.Get();
}

std::optional<GatheredBatch> SuperbatchPipeline::Next(const std::atomic<int>* give_up_on) {
  using std::chrono::duration;
  const auto slice = duration<double>(std::clamp(options_.deadlock_seconds / 8, 0.001, 0.25));
  const auto start_of = [] { return std::chrono::steady_clock::now(); };
  auto standing_since = start_of();
  int64_t last_changes = -1;
  while (true) {
    bool timed_out = false;
    std::optional<GatheredBatch> g = ready_.PopFor(slice, &timed_out);
    if (!timed_out) return g;
    if (give_up_on != nullptr && give_up_on->load(std::memory_order_relaxed) != 0) return std::nullopt;
    std::string waits;
    int64_t changes = 0;
    if (!board_.NoneWorking(&waits, &changes) || changes != last_changes) {
      last_changes = changes;
      standing_since = start_of();
      continue;
    }
    if (duration<double>(start_of() - standing_since).count() < options_.deadlock_seconds) continue;
    error_.Set(Status(StatusCode::kInternal,
                      "pipeline deadlock (a bug; please report it): the executor waits for a batch while " +
                          (waits.empty() ? std::string("every stage thread has finished") : waits)));
    CloseAll();
    return std::nullopt;
  }
}

void SuperbatchPipeline::Recycle(std::vector<float> rows) {
  free_buffers_.Push(std::move(rows));
  board_.Touch();
}

void SuperbatchPipeline::SuperbatchDone() {
  if (!options_.overlap) exclusion_.Release();
  board_.Touch();
}

void SuperbatchPipeline::EpochDone(int64_t epoch) {
  epoch_gate_.Open(epoch + 1);
  board_.Touch();
}

std::string SuperbatchPipeline::TracePath(int64_t epoch, int64_t k) const {
  return options_.runtime_dir + "/seer-trace-" + std::to_string(::getpid()) + "-" +
         std::to_string(reinterpret_cast<uintptr_t>(this)) + "-e" + std::to_string(epoch) + "-sb" + std::to_string(k) +
         ".sbt";
}

Status SuperbatchPipeline::InspectorStage() {
  Status status = options_.schedule.empty() ? Status::Ok() : MakeDirectories(options_.runtime_dir);
  for (const auto& [epoch, k] : options_.schedule) {
    if (!status.ok() || stop_) break;
    {
      WaitBoard::Note note(&board_, 0, "the sampling/executing token (--no-overlap)");
      if (!options_.overlap && !exclusion_.Acquire()) break;
    }
    SuperbatchStats stats;
    Result<TraceFile> trace = stages_.sample(epoch, k, TracePath(epoch, k), &stats, stop_);
    if (!options_.overlap) exclusion_.Release();
    if (!trace.ok()) {
      if (!stop_) status = trace.status();  // after Stop() (or another stage's error): not this stage's error
      break;
    }
    WaitBoard::Note note(&board_, 0, "the planner to take superbatch " + std::to_string(k) + " of epoch " +
                                         std::to_string(epoch + 1));
    if (!sampled_.Push(SampledItem{std::move(trace).value(), stats})) break;  // a dropped handle removes its file
  }
  sampled_.Close();
  return status;
}

Status SuperbatchPipeline::PlannerStage() {
  Status status;
  while (true) {
    std::optional<SampledItem> sampled;
    {
      WaitBoard::Note note(&board_, 1, "the inspector's next superbatch");
      sampled = sampled_.Pop();
    }
    if (!sampled) break;
    PlannedItem item;
    item.trace = std::move(sampled->trace);
    PlannedSuperbatch& p = item.planned;
    p.epoch = item.trace.epoch();
    p.index = item.trace.superbatch_index();
    p.sample_stats = sampled->stats;
    Result<SuperbatchPlan> plan = stages_.plan(item.trace);
    if (!plan.ok()) {
      status = plan.status();
      break;
    }
    p.plan = std::move(plan).value();
    WaitBoard::Note note(&board_, 1, "the gather thread to take the plan of superbatch " + std::to_string(p.index) +
                                         " of epoch " + std::to_string(p.epoch + 1));
    if (!planned_.Push(std::move(item))) break;
  }
  planned_.Close();
  sampled_.Close();
  return status;
}

Status SuperbatchPipeline::GatherStage() {
  Status status;
  bool closed = false;
  while (!closed && status.ok()) {
    std::optional<PlannedItem> item;
    {
      WaitBoard::Note note(&board_, 2, "the planner's next plan");
      item = planned_.Pop();
    }
    if (!item) break;
    auto sb = std::make_shared<ExecutingSuperbatch>();
    sb->planned = std::move(item->planned);
    status = GatherSuperbatch(sb, item->trace, &closed);
    // item (and its trace file) is released here: gathered, failed or abandoned.
  }
  ready_.Close();
  return status;
}

Status SuperbatchPipeline::GatherSuperbatch(const std::shared_ptr<ExecutingSuperbatch>& sb, const TraceFile& trace,
                                            bool* closed) {
  *closed = true;
  {
    WaitBoard::Note note(&board_, 2, "the executor to finish the epochs before epoch " +
                                         std::to_string(sb->planned.epoch + 1));
    if (!epoch_gate_.WaitFor(sb->planned.epoch)) return Status::Ok();
  }
  {
    WaitBoard::Note note(&board_, 2, "the sampling/executing token (--no-overlap)");
    if (!options_.overlap && !exclusion_.Acquire()) return Status::Ok();
  }
  const SuperbatchPlan& plan = sb->planned.plan;
  if (!plan.fill_slots.empty()) SEER_RETURN_IF_ERROR(stages_.fill(plan.fill_slots, &sb->gather));
  SEER_ASSIGN_OR_RETURN(TraceRecordReader reader, TraceRecordReader::Open(trace));
  const size_t n = static_cast<size_t>(trace.num_batches());
  for (size_t i = 0; i < n; ++i) {
    std::optional<std::vector<float>> buffer;
    {
      WaitBoard::Note note(&board_, 2, "a free row buffer (the executor recycles one after each batch)");
      buffer = free_buffers_.Pop();
    }
    if (!buffer) return Status::Ok();
    std::optional<Changeset> cs;
    if (plan.changesets) {
      SEER_ASSIGN_OR_RETURN(Changeset got, plan.changesets->Get(static_cast<int64_t>(i)));
      cs.emplace(std::move(got));
    }
    GatheredBatch g;
    g.superbatch = sb;
    g.index = i;
    g.last = i + 1 == n;
    g.rows = std::move(*buffer);
    SEER_RETURN_IF_ERROR(reader.Next(&g.trace));
    SEER_RETURN_IF_ERROR(stages_.gather(g.trace, cs ? &*cs : nullptr, &g.rows, &sb->gather));
    g.hits_so_far = sb->gather.hits;
    g.rows_so_far = sb->gather.rows;
    WaitBoard::Note note(&board_, 2, "the executor to take batch " + std::to_string(i) + " of superbatch " +
                                         std::to_string(sb->planned.index));
    if (!ready_.Push(std::move(g))) return Status::Ok();
  }
  *closed = false;
  return Status::Ok();
}

}  // namespace seer
