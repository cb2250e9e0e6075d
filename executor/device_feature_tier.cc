#include "executor/device_feature_tier.h"

#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "cache/device_tier.h"
#include "executor/device_rows_internal.h"
#include "storage/base/exception_status.h"

namespace seer {
namespace {

torch::Tensor IndexTensor(const std::vector<int64_t>& v, const torch::Device& device) {
  torch::Tensor host = torch::from_blob(const_cast<int64_t*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kInt64);
  return device.is_cuda() ? host.to(device) : host.clone();
}

}  // namespace

// The tensors and, under CUDA, two pinned staging buffers used in turn and the side
// stream on which the misses are copied (the compute stream waits on an event recorded
// after the copy). Double-buffered: batch i's copy may still run while the host packs
// batch i+1 into the other buffer; the host waits only before reusing a buffer, for the
// copy of two batches ago.
struct DeviceFeatureTier::Impl {
  torch::Device device = torch::kCPU;
  torch::Tensor slots;       // [capacity x dim]
  torch::Tensor staging[2];  // pinned, CUDA only
  std::optional<c10::Event> copied[2];
  int next_staging = 0;
  std::optional<c10::Stream> side_stream;
  DeviceRows rows;
  torch::Tensor host_copy;

  ~Impl() {
    try {
      if (side_stream) side_stream->synchronize();  // no copy outlives its staging buffer
    } catch (...) {
    }
  }

  // Packed misses [m x dim] on the device.
  torch::Tensor Transfer(const float* data, int64_t m, int64_t dim) {
    torch::Tensor host = torch::from_blob(const_cast<float*>(data), {m, dim}, torch::kFloat32);
    if (!device.is_cuda()) return host;
    const int b = next_staging;
    next_staging ^= 1;
    // The copy that last read this buffer (two batches ago) is normally done; if not,
    // wait for the side stream (libtorch 1.13's c10::Event cannot be waited on alone).
    if (copied[b] && !copied[b]->query()) side_stream->synchronize();
    if (!staging[b].defined() || staging[b].numel() < m * dim) {
      staging[b] = torch::empty({std::max<int64_t>(m, 1) * dim * 2},
                                torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(true));
    }
    torch::Tensor pinned = staging[b].narrow(0, 0, m * dim).view({m, dim});
    pinned.copy_(host);
    const c10::impl::DeviceGuardImplInterface* impl = c10::impl::getDeviceGuardImpl(device.type());
    const c10::Stream compute = impl->getStream(device);
    if (!side_stream) side_stream = impl->getStreamFromGlobalPool(device);
    torch::Tensor out;
    {
      c10::StreamGuard guard(*side_stream);
      out = pinned.to(device, /*non_blocking=*/true);
    }
    copied[b].emplace(device.type());
    copied[b]->record(*side_stream);
    copied[b]->block(compute);
    return out;
  }
};

Result<std::unique_ptr<DeviceFeatureTier>> DeviceFeatureTier::Create(const DeviceTierOptions& options) {
  if (options.capacity_rows < 0 || options.feature_dim <= 0 || options.num_nodes < 0) {
    return InvalidArgument(fmt::format("device tier: bad sizes (rows {}, feature dim {})", options.capacity_rows,
                                       options.feature_dim));
  }
  FeatureCacheOptions table_options;
  table_options.num_nodes = options.num_nodes;
  table_options.capacity_rows = options.capacity_rows;
  table_options.row_bytes = 0;  // the slot table only; the rows live in the tensor
  SEER_ASSIGN_OR_RETURN(FeatureCache table, FeatureCache::Create(table_options));
  std::unique_ptr<DeviceFeatureTier> tier(new DeviceFeatureTier(options, std::move(table)));
  tier->impl_ = std::make_unique<Impl>();
  if (options.use_cuda && torch::cuda::is_available()) tier->impl_->device = torch::Device(torch::kCUDA);
  try {
    tier->impl_->slots = torch::zeros({options.capacity_rows, options.feature_dim},
                                      torch::TensorOptions().dtype(torch::kFloat32).device(tier->impl_->device));
  } catch (...) {
    // Whatever the allocator throws (std::bad_alloc, c10's out-of-memory error), the
    // tier's memory is what ran out.
    const Status cause = StatusFromCurrentException(
        fmt::format("device tier: allocating {} rows x {} floats", options.capacity_rows, options.feature_dim));
    return Status(StatusCode::kResourceExhausted, cause.message());
  }
  return tier;
}

DeviceFeatureTier::DeviceFeatureTier(const DeviceTierOptions& options, FeatureCache table)
    : options_(options), planned_slots_(EmptyCacheState(options.capacity_rows)), table_(std::move(table)) {}

DeviceFeatureTier::~DeviceFeatureTier() = default;

bool DeviceFeatureTier::on_cuda() const { return impl_->device.is_cuda(); }

Result<TraceFile> DeviceFeatureTier::PlanSuperbatch(const TraceFile& trace) {
  std::vector<BatchTrace> batches(static_cast<size_t>(trace.num_batches()));
  {
    SEER_ASSIGN_OR_RETURN(TraceRecordReader reader, TraceRecordReader::Open(trace));
    for (BatchTrace& b : batches) {
      SEER_RETURN_IF_ERROR(reader.Next(&b));
      b.blocks.clear();
    }
  }
  std::vector<IdSpan> spans;
  for (const BatchTrace& b : batches) spans.push_back(IdSpan{b.node_ids.data(), static_cast<int64_t>(b.node_ids.size())});
  SEER_ASSIGN_OR_RETURN(BeladyPlan plan, PlanBelady(planned_slots_, spans, options_.planner));
  SEER_ASSIGN_OR_RETURN(DeviceMissStream misses, ReplayDeviceTier(planned_slots_, spans, plan.changesets));
  planned_slots_ = misses.final_slots;
  SEER_ASSIGN_OR_RETURN(TraceFileWriter writer, TraceFileWriter::Create(trace.path() + ".device-misses",
                                                                        trace.epoch(), trace.superbatch_index()));
  for (size_t i = 0; i < batches.size(); ++i) {
    auto batch_plan = std::make_shared<BatchPlan>();
    SEER_ASSIGN_OR_RETURN(batch_plan->changeset, plan.changesets.Get(static_cast<int64_t>(i)));
    batch_plan->miss_positions = std::move(misses.positions[i]);
    BatchTrace& hb = batch_plan->host_batch;
    hb.epoch = batches[i].epoch;
    hb.batch_index = batches[i].batch_index;
    hb.node_ids = std::move(misses.ids[i]);
    SEER_RETURN_IF_ERROR(writer.Append(hb));
    std::lock_guard<std::mutex> lock(mu_);
    plans_[{hb.epoch, hb.batch_index}] = std::move(batch_plan);
  }
  return writer.Finish();
}

std::shared_ptr<DeviceFeatureTier::BatchPlan> DeviceFeatureTier::Find(const BatchTrace& batch, bool erase) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find({batch.epoch, batch.batch_index});
  if (it == plans_.end()) {
    throw std::logic_error(fmt::format("device tier: batch {} of epoch {} was not planned", batch.batch_index, batch.epoch));
  }
  std::shared_ptr<BatchPlan> plan = it->second;
  if (erase) plans_.erase(it);
  return plan;
}

Result<const BatchTrace*> DeviceFeatureTier::HostBatch(const BatchTrace& batch) {
  return &Find(batch, /*erase=*/false)->host_batch;
}

Result<const DeviceRows*> DeviceFeatureTier::Assemble(const BatchTrace& batch, const std::vector<float>& miss_rows,
                                                      DeviceTierStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<BatchPlan> plan = Find(batch, /*erase=*/true);
  const int64_t n = static_cast<int64_t>(batch.node_ids.size());
  const int64_t dim = options_.feature_dim;
  const int64_t m = static_cast<int64_t>(plan->miss_positions.size());
  if (static_cast<int64_t>(miss_rows.size()) != m * dim) {
    throw std::logic_error(fmt::format("device tier: {} floats for {} missed rows of {}", miss_rows.size(), m, dim));
  }
  // The tier's own table must see exactly the planned misses.
  std::vector<int32_t> misses;
  const int64_t hits = table_.capacity_rows() > 0 ? table_.Gather(batch.node_ids.data(), n, nullptr, &misses) : 0;
  if (table_.capacity_rows() == 0) {
    for (int64_t p = 0; p < n; ++p) misses.push_back(static_cast<int32_t>(p));
  }
  if (misses != plan->miss_positions) {
    throw std::logic_error(fmt::format("device tier: batch {} of epoch {}: the plan's misses differ from the tier's",
                                       batch.batch_index, batch.epoch));
  }
  std::vector<int64_t> miss_pos(misses.begin(), misses.end()), hit_pos, hit_slot;
  hit_pos.reserve(static_cast<size_t>(hits));
  hit_slot.reserve(static_cast<size_t>(hits));
  for (int64_t p = 0, k = 0; p < n; ++p) {
    if (k < m && miss_pos[static_cast<size_t>(k)] == p) {
      ++k;
      continue;
    }
    hit_pos.push_back(p);
    hit_slot.push_back(table_.SlotOf(batch.node_ids[static_cast<size_t>(p)]));
  }
  Impl& d = *impl_;
  torch::Tensor out = torch::empty({n, dim}, torch::TensorOptions().dtype(torch::kFloat32).device(d.device));
  if (m > 0) out.index_copy_(0, IndexTensor(miss_pos, d.device), d.Transfer(miss_rows.data(), m, dim));
  if (!hit_pos.empty()) {
    out.index_copy_(0, IndexTensor(hit_pos, d.device), d.slots.index_select(0, IndexTensor(hit_slot, d.device)));
  }
  // C_i -> C_{i+1}: inserted rows come from the assembled batch (already on the device).
  const Changeset& cs = plan->changeset;
  if (!cs.in_ids.empty()) {
    std::vector<int64_t> in_slots(cs.in_slots.begin(), cs.in_slots.end());
    std::vector<int64_t> in_positions(cs.in_positions.begin(), cs.in_positions.end());
    d.slots.index_copy_(0, IndexTensor(in_slots, d.device), out.index_select(0, IndexTensor(in_positions, d.device)));
  }
  if (table_.capacity_rows() > 0) table_.Apply(cs, batch.node_ids.data(), n, nullptr);
  d.rows.tensor = out;
  d.host_copy = torch::Tensor();
  if (stats != nullptr) {
    stats->rows += n;
    stats->hits += hits;
    stats->h2d_rows += m;
    stats->h2d_bytes += m * row_bytes();
    stats->transfer_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return &d.rows;
}

const float* DeviceFeatureTier::HostRows() {
  Impl& d = *impl_;
  if (!d.rows.tensor.defined()) return nullptr;
  if (!d.device.is_cuda()) return d.rows.tensor.data_ptr<float>();
  if (!d.host_copy.defined()) d.host_copy = d.rows.tensor.to(torch::kCPU).contiguous();
  return d.host_copy.data_ptr<float>();
}

PipelineStages WithDeviceTier(PipelineStages stages, DeviceFeatureTier* tier) {
  if (tier == nullptr) return stages;
  auto plan = stages.plan;
  stages.plan = [plan, tier](const TraceFile& trace) -> Result<SuperbatchPlan> {
    SEER_ASSIGN_OR_RETURN(TraceFile host, tier->PlanSuperbatch(trace));
    return plan(host);  // the host file is removed when `host` goes
  };
  auto gather = stages.gather;
  stages.gather = [gather, tier](const BatchTrace& batch, const Changeset* changeset, std::vector<float>* rows,
                                 GatherStats* stats) -> Status {
    SEER_ASSIGN_OR_RETURN(const BatchTrace* host, tier->HostBatch(batch));
    return gather(*host, changeset, rows, stats);
  };
  return stages;
}

int64_t DeviceCacheRows(int64_t requested_bytes, int64_t feature_dim, bool cuda_device, int64_t device_free_bytes,
                        std::string* reason) {
  const int64_t row_bytes = feature_dim * static_cast<int64_t>(sizeof(float));
  if (requested_bytes == 0 || row_bytes <= 0) {
    *reason = "off";
    return 0;
  }
  if (requested_bytes > 0) {
    const int64_t rows = requested_bytes / row_bytes;
    *reason = fmt::format("{} rows ({} B float32 rows) on the {}", rows, row_bytes, cuda_device ? "GPU" : "CPU (no CUDA device: the tier is a CPU tensor)");
    return rows;
  }
  if (!cuda_device) {
    *reason = "auto = 0 (no CUDA device)";
    return 0;
  }
  const int64_t rows = std::max<int64_t>(0, device_free_bytes) / row_bytes;
  *reason = fmt::format("auto = {} rows: the device's {} free bytes after the model's measured working set", rows,
                        device_free_bytes);
  return rows;
}

}  // namespace seer
