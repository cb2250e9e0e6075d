#include "executor/memory_budget.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cache/neighbor_cache.h"

#include "storage/base/byte_size.h"

namespace seer {

int64_t EstimateBatchRows(int64_t num_nodes, int64_t batch_size, const std::vector<int>& fanouts) {
  if (num_nodes <= 0) return 0;
  // Sampled ids with repetition: B × Σ_l Π_{j<=l} f_j (saturating).
  double sampled = static_cast<double>(batch_size);
  double layer = static_cast<double>(batch_size);
  for (int f : fanouts) {
    layer *= f < 0 ? 32 : f;
    sampled += layer;
    if (sampled > 1e15) break;
  }
  // Distinct ids among `sampled` draws from N nodes, as if uniform: N (1 - e^{-s/N}).
  // (Power-law graphs repeat hubs more, so this errs on the large side.)
  const double n = static_cast<double>(num_nodes);
  const double distinct = n * -std::expm1(-sampled / n);
  return std::min<int64_t>(num_nodes, std::max<int64_t>(std::min<int64_t>(batch_size, num_nodes),
                                                        static_cast<int64_t>(std::ceil(distinct))));
}

std::vector<BlockShape> EstimateBlockShapes(int64_t num_nodes, int64_t batch_size, const std::vector<int>& fanouts) {
  const size_t num_layers = fanouts.size();
  // hop[k] = distinct nodes within k hops of the seeds (hop 1 = fanouts[0], the output layer's).
  std::vector<int64_t> hop(num_layers + 1);
  for (size_t k = 0; k <= num_layers; ++k) {
    hop[k] = EstimateBatchRows(num_nodes, batch_size, std::vector<int>(fanouts.begin(), fanouts.begin() + k));
  }
  std::vector<BlockShape> blocks(num_layers);
  for (size_t l = 0; l < num_layers; ++l) {  // input layer first
    const size_t h = num_layers - l;          // block l maps hop h onto hop h - 1
    const int f = fanouts[h - 1];
    blocks[l].num_dst = hop[h - 1];
    blocks[l].num_src = hop[h];
    blocks[l].num_edges = hop[h - 1] * (f < 0 ? 32 : f);
  }
  return blocks;
}

namespace {

// Layer l's dimensions, as GnnNet builds them.
struct LayerDims {
  int64_t in = 0, out = 0;
  bool last = false;
};
LayerDims DimsOf(const ModelConfig& c, int64_t l) {
  LayerDims d;
  d.last = l + 1 == c.num_layers;
  d.in = l == 0 ? c.in_dim : c.hidden;
  d.out = d.last ? c.num_classes : c.hidden;
  return d;
}

}  // namespace

int64_t CountModelParameters(const ModelConfig& c) {
  int64_t n = 0;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LayerDims d = DimsOf(c, l);
    switch (c.kind) {
      case ModelKind::kSage: n += 2 * d.in * d.out + d.out; break;  // self (+bias), neigh
      case ModelKind::kGcn:
      case ModelKind::kMlp: n += d.in * d.out + d.out; break;
      case ModelKind::kGat: {
        const int64_t per_head = d.last ? d.out : d.out / std::max<int64_t>(1, c.heads);
        const int64_t hf = c.heads * per_head;
        n += d.in * hf + 2 * hf + (d.last ? per_head : hf);  // fc, attn_l, attn_r, bias
        break;
      }
    }
  }
  return n;
}

// The tally follows model_runner.cc op by op (CPU, float32, int64 indices) along the
// step's timeline: the block tensors are built first; forward layer by layer adds the
// tensors autograd saves for backward ("saved") on top of which the layer's own
// temporaries ("fwd") peak; backward walks the layers in reverse, each layer's gradient
// temporaries ("bwd") on top of what is still saved, then frees the layer's saved
// tensors. The input rows are a view of the gathered batch (staging, counted there) and
// need no gradient, so layer 0 computes no message or input gradients.
ModelFootprint EstimateModelFootprint(const ModelConfig& c, const std::vector<BlockShape>& blocks_in,
                                      int64_t num_seeds, bool on_host) {
  ModelFootprint f;
  f.num_parameters = CountModelParameters(c);
  std::vector<BlockShape> blocks = blocks_in;
  if (c.kind == ModelKind::kMlp) {  // every layer sees the seeds only
    blocks.assign(static_cast<size_t>(c.num_layers), BlockShape{num_seeds, num_seeds, 0});
  }
  if (static_cast<int64_t>(blocks.size()) != c.num_layers) {
    throw std::invalid_argument("EstimateModelFootprint: " + std::to_string(blocks.size()) + " blocks for " +
                                std::to_string(c.num_layers) + " layers");
  }
  const int64_t rows = c.num_layers == 0 ? 0 : blocks[0].num_src;
  if (!on_host) {
    // GPU: weights, Adam state and activations live in device memory. The host keeps
    // the pinned staging of the rows (grown to twice the largest batch) and each
    // block's index tensors between their construction and the copy.
    int64_t block_tensors = 0;
    for (const BlockShape& b : blocks) block_tensors = std::max(block_tensors, 16 * b.num_edges + 4 * b.num_dst);
    f.activation_bytes = static_cast<int64_t>(kModelSafetyFactor *
                                              static_cast<double>(2 * 4 * rows * c.in_dim + block_tensors));
    return f;
  }
  f.parameter_bytes = 5 * 4 * f.num_parameters;
  const size_t num_layers = blocks.size();
  std::vector<int64_t> saved(num_layers), fwd(num_layers), bwd(num_layers);
  int64_t block_tensors = 0;  // edge dst + src (int64) and in-degrees of every block
  for (size_t l = 0; l < num_layers; ++l) {
    const BlockShape& b = blocks[l];
    const LayerDims ld = DimsOf(c, static_cast<int64_t>(l));
    const int64_t d = b.num_dst, s = b.num_src, e = b.num_edges, i = ld.in, o = ld.out;
    const bool hidden = !ld.last;
    const bool input_grad = l > 0;  // layer 0's input rows need no gradient
    if (c.kind != ModelKind::kMlp) block_tensors += 16 * e + 4 * d;
    // Hidden layers save the activation's result, the dropout noise and the dropout
    // output (the next layer's input); the last layer keeps its logits.
    const int64_t out_saved = hidden ? 12 * d * o : 4 * d * o;
    switch (c.kind) {
      case ModelKind::kSage:
        saved[l] = 4 * d * i + out_saved;  // the neighbor mean (neigh's input)
        // messages + zeros + sum, then the two linear outputs and their sum
        fwd[l] = 4 * std::max(e * i + 2 * d * i, 3 * d * o);
        // output gradients; message gradients, the input gradient from both uses
        bwd[l] = 4 * (2 * d * o + d * i) + (input_grad ? 4 * (e * i + 2 * s * i) : 0);
        break;
      case ModelKind::kGcn:
        saved[l] = 4 * (e + s + d * i) + out_saved;  // per-edge norm, norm_src, lin input
        fwd[l] = 4 * (2 * e * i + e + 2 * s + 2 * d * i);  // selected rows + messages, degrees, sums
        bwd[l] = 4 * (2 * d * o + 2 * d * i) + (input_grad ? 4 * (2 * e * i + 2 * s * i) : 0);
        break;
      case ModelKind::kGat: {
        const int64_t heads = std::max<int64_t>(1, c.heads);
        const int64_t per_head = ld.last ? o : o / heads;
        const int64_t hf = heads * per_head;
        const int64_t ep = e + d;  // with self loops
        // z, per-edge scores (leaky input, exp, denominators, alpha), z per edge, the
        // concatenated src/dst indices; ELU input + output, dropout noise + output
        // (hidden) or mean + bias (last).
        saved[l] = 4 * (s * hf + 4 * ep * heads + ep * hf) + 16 * ep + (hidden ? 16 * d * hf : 8 * d * per_head);
        fwd[l] = 4 * (std::max(s * hf, ep * hf + 2 * d * hf) + 2 * ep * heads);
        bwd[l] = 4 * (3 * ep * hf + 2 * s * hf + 3 * ep * heads + 2 * d * hf) + (input_grad ? 4 * s * i : 0);
        break;
      }
      case ModelKind::kMlp:
        saved[l] = out_saved;
        fwd[l] = 8 * d * o;
        bwd[l] = 4 * (d * i + 2 * d * o);
        break;
    }
  }
  int64_t live = block_tensors, peak = live;
  for (size_t l = 0; l < num_layers; ++l) {
    peak = std::max(peak, live + fwd[l]);
    live += saved[l];
  }
  peak = std::max(peak, live + 3 * 4 * num_seeds * c.num_classes);  // log-softmax + gradients
  for (size_t l = num_layers; l-- > 0;) {
    peak = std::max(peak, live + bwd[l]);
    live -= saved[l];
  }
  f.activation_bytes = static_cast<int64_t>(kModelSafetyFactor * static_cast<double>(peak));
  return f;
}

std::string MemoryBudgetSplit::ToString() const {
  return "memory budget " + FormatBytes(budget_bytes) + ": per-node tables " +
         FormatBytes(table_bytes) + ", staging " + FormatBytes(staging_bytes) + " (~" +
         std::to_string(estimated_batch_rows) + " rows/batch, " +
         (measured_batches > 0 ? "measured on " + std::to_string(measured_batches) + " pilot batches)"
                               : std::string("estimated)")) +
         (model_bytes > 0 ? ", model " + FormatBytes(model_bytes) + " (parameters + Adam " +
                                FormatBytes(model_parameter_bytes) + ", activations " +
                                FormatBytes(model_activation_bytes) + ")"
                          : std::string()) +
         (inspector_bytes > 0 ? ", inspector " + FormatBytes(inspector_bytes) + " (superbatch traces in flight + planner)"
                              : std::string()) +
         ", trace buffers " +
         FormatBytes(trace_bytes) + ", neighbor cache " + FormatBytes(ncache_bytes) +
         ", feature cache " + FormatBytes(fcache_bytes) + " (" + std::to_string(fcache_rows) +
         " rows)";
}

namespace {

constexpr int64_t kMinTraceBytes = int64_t{1} << 20;

bool HasMeasuredShapes(const MemoryBudgetRequest& r) {
  return r.measured_batch_rows > 0 && r.measured_blocks.size() == r.fanouts.size();
}

// A measured size with the pilot's headroom, capped by the graph.
int64_t WithMargin(const MemoryBudgetRequest& r, int64_t v) {
  return std::min<int64_t>(r.num_nodes, static_cast<int64_t>(std::ceil(kPilotMargin * static_cast<double>(v))));
}

ModelFootprint ModelReservation(const MemoryBudgetRequest& r) {
  ModelConfig model = r.model;
  if (model.in_dim <= 0) model.in_dim = r.feature_dim;
  if (model.num_classes <= 0) model.num_classes = r.num_classes;
  model.num_layers = static_cast<int64_t>(r.fanouts.size());
  std::vector<BlockShape> blocks;
  if (HasMeasuredShapes(r)) {
    for (const BlockShape& b : r.measured_blocks) {
      // Edges scale with destinations; keep the margin on every field.
      blocks.push_back({WithMargin(r, b.num_dst), WithMargin(r, b.num_src),
                        static_cast<int64_t>(std::ceil(kPilotMargin * static_cast<double>(b.num_edges)))});
    }
  } else {
    blocks = EstimateBlockShapes(r.num_nodes, r.batch_size, r.fanouts);
  }
  return EstimateModelFootprint(model, blocks, std::min(r.batch_size, r.num_nodes), r.model_on_host);
}

// One batch's trace: global ids (8 B) + per block row_ptr (8 B per dst + 1) and col_idx
// (4 B per edge); from the pilot when measured, else from the estimated shapes.
int64_t InspectorReservation(const MemoryBudgetRequest& r, int64_t batch_rows) {
  int64_t per_batch = 0;
  if (HasMeasuredShapes(r) && r.measured_trace_bytes > 0) {
    per_batch = static_cast<int64_t>(std::ceil(kPilotMargin * static_cast<double>(r.measured_trace_bytes)));
  } else {
    per_batch = 8 * batch_rows;
    for (const BlockShape& b : EstimateBlockShapes(r.num_nodes, r.batch_size, r.fanouts)) {
      per_batch += 8 * (b.num_dst + 1) + 4 * b.num_edges;
    }
  }
  const int64_t sb = std::max<int64_t>(1, r.superbatch);
  return r.traces_in_flight * sb * per_batch + r.planner_bytes_per_access * sb * batch_rows;
}

Status TooSmallForTheFixedParts(const MemoryBudgetRequest& r, const MemoryBudgetSplit& s, int64_t required) {
  return Status(StatusCode::kResourceExhausted,
                "memory budget " + FormatBytes(r.budget_bytes) + " is too small: the per-node tables of " +
                    std::to_string(r.num_nodes) + " nodes need " + FormatBytes(s.table_bytes) +
                    ", the batch staging buffers (~" + std::to_string(s.estimated_batch_rows) + " rows per batch) " +
                    FormatBytes(s.staging_bytes) +
                    (r.reserve_model ? ", the model's training working set " + FormatBytes(s.model_bytes)
                                     : std::string()) +
                    (s.inspector_bytes > 0
                         ? ", the inspector's superbatch traces and planner " + FormatBytes(s.inspector_bytes)
                         : std::string()) +
                    "; use --memory-budget " + FormatBytes(required) +
                    " or more, or a smaller --batch-size / --fanouts" + (r.reserve_model ? " / --hidden" : "") +
                    (s.inspector_bytes > 0 ? " / --superbatch" : ""));
}

}  // namespace

MemoryBudgetSplit SizeFixedParts(const MemoryBudgetRequest& r) {
  MemoryBudgetSplit s;
  s.budget_bytes = r.budget_bytes;
  s.table_bytes = 8 * (r.num_nodes + 1) + 4 * r.num_nodes;
  const bool measured = HasMeasuredShapes(r);
  s.estimated_batch_rows = measured ? WithMargin(r, r.measured_batch_rows)
                                    : EstimateBatchRows(r.num_nodes, r.batch_size, r.fanouts);
  s.measured_batches = measured ? r.measured_batches : 0;
  // The gather pipeline holds `pipeline_depth` float32 batch buffers (one trains while
  // the next is gathered); float16 features also need one raw batch buffer.
  const int64_t raw_row_bytes = r.feature_row_bytes == 4 * r.feature_dim ? 0 : r.feature_row_bytes;
  s.staging_bytes = s.estimated_batch_rows * (r.pipeline_depth * 4 * r.feature_dim + raw_row_bytes);
  if (r.reserve_model) {
    const ModelFootprint footprint = ModelReservation(r);
    s.model_parameter_bytes = footprint.parameter_bytes;
    s.model_activation_bytes = footprint.activation_bytes;
    s.model_bytes = footprint.total_bytes();
  }
  if (r.traces_in_flight > 0) s.inspector_bytes = InspectorReservation(r, s.estimated_batch_rows);
  return s;
}

Status SplitCacheMemory(const MemoryBudgetRequest& r, MemoryBudgetSplit* s) {
  int64_t left = r.budget_bytes - s->table_bytes - s->staging_bytes;
  s->trace_bytes = std::max<int64_t>(kMinTraceBytes, left / 8);
  left = std::max<int64_t>(0, left - s->trace_bytes);
  const int64_t ncache_table = NeighborCache::TableBytes(r.num_nodes);
  if (r.ncache_budget_bytes >= 0 && r.fcache_budget_bytes >= 0) {
    s->ncache_bytes = r.ncache_budget_bytes;
    s->fcache_bytes = r.fcache_budget_bytes;
  } else if (r.ncache_budget_bytes >= 0) {
    s->ncache_bytes = r.ncache_budget_bytes;
    s->fcache_bytes = std::max<int64_t>(0, left - s->ncache_bytes);
  } else if (r.fcache_budget_bytes >= 0) {
    s->fcache_bytes = r.fcache_budget_bytes;
    s->ncache_bytes = std::max<int64_t>(0, left - s->fcache_bytes);
    if (s->ncache_bytes < ncache_table) s->ncache_bytes = 0;
  } else if (r.ncache_share >= 0) {
    s->ncache_bytes = static_cast<int64_t>(static_cast<double>(left) * std::min(1.0, r.ncache_share));
    // A share that cannot hold the neighbor cache's table caches nothing: features get it.
    if (s->ncache_bytes <= ncache_table) s->ncache_bytes = 0;
    s->fcache_bytes = left - s->ncache_bytes;
  } else {
    s->ncache_bytes = left / 4;
    // A neighbor cache smaller than its own table caches nothing: give it all to features.
    if (s->ncache_bytes < ncache_table + ncache_table / 4) s->ncache_bytes = 0;
    s->fcache_bytes = left - s->ncache_bytes;
  }
  const bool overridden = r.ncache_budget_bytes >= 0 || r.fcache_budget_bytes >= 0;
  if (s->ncache_bytes + s->fcache_bytes > left && overridden) {
    return Status(StatusCode::kResourceExhausted,
                  "--ncache-budget + --fcache-budget (" + FormatBytes(s->ncache_bytes + s->fcache_bytes) +
                      ") exceed what the memory budget leaves after tables, staging and traces (" +
                      FormatBytes(left) + ")");
  }
  return Status::Ok();
}

Status PayReservations(const MemoryBudgetRequest& r, MemoryBudgetSplit* s) {
  const int64_t left = std::max<int64_t>(0, r.budget_bytes - s->table_bytes - s->staging_bytes - s->trace_bytes);
  const int64_t ncache_table = NeighborCache::TableBytes(r.num_nodes);
  const int64_t reserved = s->model_bytes + s->inspector_bytes;
  int64_t owed = std::max<int64_t>(0, reserved - std::max<int64_t>(0, left - s->ncache_bytes - s->fcache_bytes));
  if (owed > 0 && r.fcache_budget_bytes < 0) {
    const int64_t take = std::min(owed, s->fcache_bytes);
    s->fcache_bytes -= take;
    owed -= take;
  }
  if (owed > 0 && r.ncache_budget_bytes < 0 && s->ncache_bytes > 0) {
    const int64_t take = std::min(owed, s->ncache_bytes);
    s->ncache_bytes -= take;
    owed -= take;
    // What is left cannot hold the neighbor cache's table: it caches nothing, features get it.
    if (s->ncache_bytes < ncache_table + ncache_table / 4) {
      if (r.fcache_budget_bytes < 0) s->fcache_bytes += s->ncache_bytes;
      s->ncache_bytes = 0;
    }
  }
  if (owed > 0) {
    const int64_t take = std::min(owed, s->trace_bytes - kMinTraceBytes);
    s->trace_bytes -= take;
    owed -= take;
  }
  if (owed > 0) {
    return Status(StatusCode::kResourceExhausted,
                  "--ncache-budget / --fcache-budget leave no room for the model's training working set and the "
                  "inspector's superbatch traces (" +
                      FormatBytes(reserved) + ") in memory budget " + FormatBytes(r.budget_bytes) +
                      "; lower them or raise --memory-budget");
  }
  return Status::Ok();
}

Result<MemoryBudgetSplit> SplitMemoryBudget(const MemoryBudgetRequest& r) {
  if (r.num_nodes < 0 || r.feature_row_bytes < 0 || r.batch_size <= 0) {
    return InvalidArgument("memory budget: bad graph or batch parameters");
  }
  MemoryBudgetSplit s = SizeFixedParts(r);
  const int64_t required = s.table_bytes + s.staging_bytes + s.model_bytes + s.inspector_bytes + (2 << 20);
  if (r.budget_bytes < required) return TooSmallForTheFixedParts(r, s, required);
  // Traces and caches are split as if there were no model (so --no-train and training
  // runs agree); the model and the inspector are then paid for by the caches.
  SEER_RETURN_IF_ERROR(SplitCacheMemory(r, &s));
  SEER_RETURN_IF_ERROR(PayReservations(r, &s));
  const int64_t ncache_table = NeighborCache::TableBytes(r.num_nodes);
  if (r.ncache_budget_bytes > 0 && r.ncache_budget_bytes < ncache_table) {
    return Status(StatusCode::kResourceExhausted,
                  "--ncache-budget " + FormatBytes(r.ncache_budget_bytes) +
                      " cannot hold the neighbor cache's table (" + FormatBytes(ncache_table) +
                      "); use 0 to disable it");
  }
  s.fcache_rows = r.feature_row_bytes > 0 ? std::min(r.num_nodes, s.fcache_bytes / r.feature_row_bytes) : 0;
  s.fcache_bytes = s.fcache_rows * r.feature_row_bytes;
  return s;
}

}  // namespace seer
