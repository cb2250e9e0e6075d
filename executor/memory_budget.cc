#include "executor/memory_budget.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "cache/belady_planner.h"
#include "cache/changeset_store.h"
#include "cache/feature_cache.h"
#include "cache/neighbor_cache.h"
#include "executor/feature_gather.h"
#include "inspector/trace_stream.h"
#include "storage/base/byte_size.h"
#include "storage/dataset/compact_indptr.h"

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
  d.out = d.last ? c.output_dim() : c.hidden;
  return d;
}

// One layer of a relational model (model_runner.cc's RelationalLayer) in the terms of
// EstimateModelFootprint's timeline below. The block shape does not say how its edges
// split over the relations, so every relation's own temporaries are taken at the whole
// block's size (an upper bound; the relations' saved tensors are summed exactly):
//   u = destinations summed over the relations, at most num_dst x the most relations
//       into one node type, and at most one per edge;
//   v = R-GAT's distinct sources summed over the relations, likewise from num_src.
// Unlike the homogeneous models, layer 0's input needs a gradient (the type embedding is
// added to the rows: a new [num_src, in] tensor).
struct RelationalTally {
  int64_t block_bytes = 0, saved = 0, fwd = 0, bwd = 0;
};
RelationalTally TallyRelationalLayer(const ModelConfig& c, const BlockShape& b, int64_t l) {
  const LayerDims ld = DimsOf(c, l);
  const int64_t d = b.num_dst, s = b.num_src, e = b.num_edges, i = ld.in, o = ld.out;
  const int64_t rels = std::max(1, c.num_relations()), types = std::max(1, c.num_node_types());
  std::vector<int64_t> into(static_cast<size_t>(types), 0), out_of(static_cast<size_t>(types), 0);
  for (const auto& [src, dst] : c.relation_types) {
    if (src >= 0 && src < types) ++out_of[static_cast<size_t>(src)];
    if (dst >= 0 && dst < types) ++into[static_cast<size_t>(dst)];
  }
  const int64_t most_into = std::max<int64_t>(1, *std::max_element(into.begin(), into.end()));
  const int64_t most_out_of = std::max<int64_t>(1, *std::max_element(out_of.begin(), out_of.end()));
  const int64_t u = std::min(e, most_into * d), v = std::min(e, most_out_of * s), ud = std::min(u, d);
  const bool rgat = c.kind == ModelKind::kRgat;
  RelationalTally t;
  // Per relation: src + edge position per edge (+ R-GAT's source position), dst id +
  // degree per destination (+ R-GAT's source ids); per node type its dst ids; layer 0
  // the rows' types.
  t.block_bytes = 16 * e + 12 * u + 8 * d + (l == 0 ? 8 * s : 0) + (rgat ? 8 * (e + v) : 0);
  // Hidden layers save the activation's result, the dropout noise and the dropout output
  // (the next layer's input), all freed before the layer's own backward; the last keeps
  // its logits.
  const bool hidden = !ld.last;
  const int64_t out_saved = hidden ? 12 * d * o : 4 * d * o;
  const int64_t freed_by_backward = hidden ? out_saved : 0;
  // Layer 0: rows + type embedding (the gathered embedding rows and their sum).
  const int64_t input = l == 0 ? 4 * s * i : 0;
  int64_t internal = 0, per_relation = 0, combine = 0;
  switch (c.kind) {
    case ModelKind::kRgcn:
      // The input (root's h_dst is a view of it), each relation's neighbour mean and the
      // scatter's index. Per relation: gathered rows, zeros + sum, the parts so far;
      // then every part, their concatenation, zeros + scatter + root.
      internal = input + 4 * u * i + 8 * u;
      per_relation = 4 * (e * i + 2 * ud * i + u * o);
      combine = 4 * (2 * u * o + 3 * d * o);
      // output gradient chain, the parts' gradients, the input's gradient buffer, then per
      // relation gathered-row gradients + their scatter, or mean gradients + the
      // stacked weights' gradient
      t.bwd = 4 * (2 * d * o + u * o + s * i + std::max(e * i + s * i, 2 * ud * i + rels * o * i));
      break;
    case ModelKind::kRsage:
      // Neighbour means, the root rows per type and their summed weights, scatter index.
      internal = 4 * (u * i + d * i + types * o * i) + 8 * (u + d);
      per_relation = 4 * (e * i + 2 * ud * i + u * o);
      combine = 4 * (2 * (u + d) * o + 2 * d * o);
      t.bwd = 4 * (2 * d * o + (u + d) * o + s * i +
                   std::max({e * i + s * i, 2 * ud * i + rels * o * i, d * i + s * i + 2 * rels * o * i}));
      break;
    case ModelKind::kRgat: {
      const int64_t heads = std::max<int64_t>(1, c.heads);
      const int64_t hf = heads * (ld.last ? o : o / heads);
      // Per relation: its sources' rows and z, its destinations' rows, per-edge scores
      // (leaky input, exp, denominators, alpha) and z per edge; the root rows.
      internal = 4 * (v * i + v * hf + u * i + 4 * e * heads + e * hf + d * i) + 8 * (u + d);
      per_relation = 4 * (e * hf + 2 * u * hf + 3 * e * heads + 2 * u * heads + u * o);
      combine = 4 * (2 * (u + d) * o + 2 * d * o);
      // per relation: the message product's gradients (3 per edge), or z's gradient and
      // the sources' rows' gradient with its scatter; the stacked weights' gradients
      t.bwd = 4 * (2 * d * o + (u + d) * o + s * i + std::max(3 * e * hf + e * heads, 3 * v * hf + v * i + s * i) +
                   2 * rels * hf * i + 2 * types * o * i);
      break;
    }
    default:
      throw std::logic_error("TallyRelationalLayer of a homogeneous model kind");
  }
  t.saved = internal + out_saved;
  // The input (not kept by R-SAGE / R-GAT) lives through the layer's forward.
  t.fwd = std::max(2 * input, (c.kind == ModelKind::kRgcn ? 0 : input) + internal + std::max(per_relation, combine));
  t.bwd -= freed_by_backward;
  return t;
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
      // Relational models (model_runner.cc's RelationalLayer), R relations, T node types.
      case ModelKind::kRgcn: n += (c.num_relations() + 1) * d.in * d.out + d.out; break;  // rel, root, bias
      case ModelKind::kRsage: n += c.num_relations() * (2 * d.in * d.out + d.out); break;  // rel, root, bias per r
      case ModelKind::kRgat: {
        const int64_t per_head = d.last ? d.out : d.out / std::max<int64_t>(1, c.heads);
        const int64_t hf = c.heads * per_head;
        // per relation fc, attn_l, attn_r; per node type root weight and bias
        n += c.num_relations() * (d.in * hf + 2 * hf) + c.num_node_types() * (d.in * d.out + d.out);
        break;
      }
    }
  }
  if (c.relational()) n += c.num_node_types() * c.in_dim;  // type_embedding
  if (c.task == ModelTask::kLink && c.scorer == LinkScorer::kMlp) n += c.hidden * c.hidden + c.hidden + c.hidden + 1;
  return n;
}

// The tally follows model_runner.cc op by op (CPU, float32, int64 indices) along the
// step's timeline: the block tensors are built first; forward layer by layer adds the
// tensors autograd saves for backward ("saved") on top of which the layer's own
// temporaries ("fwd") peak; backward walks the layers in reverse, each layer's gradient
// temporaries ("bwd") on top of what is still saved, then frees the layer's saved
// tensors. The input rows are a view of the gathered batch (staging, counted there) and
// need no gradient, so layer 0 computes no message or input gradients (not so for the
// relational models: TallyRelationalLayer).
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
    if (c.relational()) {
      block_tensors = 0;
      for (size_t l = 0; l < blocks.size(); ++l) {
        block_tensors = std::max(block_tensors, TallyRelationalLayer(c, blocks[l], static_cast<int64_t>(l)).block_bytes);
      }
    }
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
    if (c.relational()) {
      const RelationalTally t = TallyRelationalLayer(c, b, static_cast<int64_t>(l));
      block_tensors += t.block_bytes;
      saved[l] = t.saved;
      fwd[l] = t.fwd;
      bwd[l] = t.bwd;
      continue;
    }
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
      case ModelKind::kRgcn:
      case ModelKind::kRsage:
      case ModelKind::kRgat:
        break;  // TallyRelationalLayer
    }
  }
  int64_t live = block_tensors, peak = live;
  for (size_t l = 0; l < num_layers; ++l) {
    peak = std::max(peak, live + fwd[l]);
    live += saved[l];
  }
  peak = std::max(peak, live + 3 * 4 * num_seeds * c.output_dim());  // log-softmax (link: scores) + gradients
  for (size_t l = num_layers; l-- > 0;) {
    peak = std::max(peak, live + bwd[l]);
    live -= saved[l];
  }
  f.activation_bytes = static_cast<int64_t>(kModelSafetyFactor * static_cast<double>(peak));
  return f;
}

int64_t NeighborCacheFullBytes(int64_t num_nodes, int64_t num_edges, int64_t index_bytes) {
  return NeighborCache::TableBytes(num_nodes) + 8 * num_nodes + num_edges * index_bytes;
}

namespace {
// The slot index plus the policy's bookkeeping for `rows` cached rows.
// The feature cache's row space: every node, or a typed dataset's units (by bytes).
int64_t FeatureRows(const MemoryBudgetRequest& r) {
  return r.feature_cache_rows_max > 0 ? r.feature_cache_rows_max : r.num_nodes;
}

int64_t SlotIndexBytes(const MemoryBudgetRequest& r, int64_t rows) {
  return rows > 0 ? FeatureCache::IndexBytes(rows) + rows * r.policy_bytes_per_row : 0;
}
}  // namespace

int64_t FeatureCacheBytes(int64_t rows, int64_t row_bytes, int64_t policy_bytes_per_row) {
  return rows > 0 ? rows * (row_bytes + policy_bytes_per_row) + FeatureCache::IndexBytes(rows) : 0;
}

int64_t FeatureCacheRowsFor(int64_t bytes, int64_t row_bytes, int64_t policy_bytes_per_row) {
  if (row_bytes <= 0 || bytes <= 0) return 0;
  // IndexBytes(rows) = 8 (rows + rows/2 + 1) + 8 rows <= 20 rows + 8: start below, step up.
  int64_t rows = std::max<int64_t>(0, (bytes - 8) / (row_bytes + policy_bytes_per_row + 20));
  while (FeatureCacheBytes(rows + 1, row_bytes, policy_bytes_per_row) <= bytes) ++rows;
  return rows;
}

double MemoryBudgetSplit::PerNodeBytes() const {
  if (num_nodes <= 0) return 0;
  const int64_t bitmap = ncache_bytes > 0 ? NeighborCache::TableBytes(num_nodes) : 0;
  return static_cast<double>(table_bytes + bitmap) / static_cast<double>(num_nodes);
}

std::string MemoryBudgetSplit::ToString() const {
  // A short aligned table, one row per part: name, bytes, what it holds.
  std::string table;
  int64_t parts_bytes = 0;
  auto row = [&](const std::string& name, int64_t bytes, const std::string& what) {
    parts_bytes += bytes;
    table += fmt::format("\n  {:<16}{:>11}  {}", name, FormatBytes(bytes), what);
  };
  const double n = std::max<double>(1, static_cast<double>(num_nodes));
  std::string per_node = fmt::format("{:.2f} B/node: indptr {:.2f}", PerNodeBytes(), static_cast<double>(indptr_bytes) / n);
  if (node_score_bytes > 0) per_node += fmt::format(" + tie-rule scores {:.2f}", static_cast<double>(node_score_bytes) / n);
  if (ncache_bytes > 0) {
    per_node += fmt::format(" + neighbor-cache bitmap {:.2f}", static_cast<double>(NeighborCache::TableBytes(num_nodes)) / n);
  }
  row("per-node tables", table_bytes, per_node);
  row("staging", staging_bytes,
      "~" + std::to_string(estimated_batch_rows) + " rows/batch (" +
          (measured_batches > 0 ? "measured on " + std::to_string(measured_batches) + " pilot batches)"
                                : std::string("estimated)")) +
          (block_buffer_bytes > 0 ? ", block reads " + FormatBytes(block_buffer_bytes) + " (wave buffer + block list)"
                                  : std::string()));
  if (model_bytes > 0) {
    row("model", model_bytes, "parameters + Adam " + FormatBytes(model_parameter_bytes) + ", activations " +
                                  FormatBytes(model_activation_bytes));
  }
  if (inspector_bytes > 0) {
    row("inspector", inspector_bytes,
        "superbatch traces in flight + planner" +
            (planner_working_bytes > 0
                 ? ", its sort buffer " + FormatBytes(planner_working_bytes) +
                       fmt::format(" = {:.1f}% of the budget", 100.0 * static_cast<double>(planner_working_bytes) /
                                                                   static_cast<double>(std::max<int64_t>(1, budget_bytes)))
                 : std::string()));
  }
  row("trace buffers", trace_bytes, "traces and changesets before they spill");
  std::string ncache = ncache_source.empty() ? "its share (not opened yet)" : "in use (" + ncache_source;
  if (!ncache_source.empty()) {
    if (ncache_edge_fraction >= 0) ncache += ", " + fmt::format("{:.1f}", 100 * ncache_edge_fraction) + "% of the edges";
    if (ncache_share_bytes >= 0 && ncache_share_bytes != ncache_bytes) ncache += ", share " + FormatBytes(ncache_share_bytes);
    ncache += ")";
  }
  row("neighbor cache", ncache_bytes, ncache);
  row("feature cache", fcache_bytes + fcache_index_bytes,
      std::to_string(fcache_rows) + (cache_units ? " units (" : " rows (") + FormatBytes(fcache_bytes) +
          ") + slot index and policy state " +
          FormatBytes(fcache_index_bytes));
  const double budget = static_cast<double>(std::max<int64_t>(1, budget_bytes));
  const std::string head =
      "memory budget " + FormatBytes(budget_bytes) + ": " +
      (runtime_bytes > 0
           ? "runtime " + FormatBytes(runtime_bytes) +
                 fmt::format(" ({:.0f}% of the budget: libtorch and the program, measured at start), ",
                             100.0 * static_cast<double>(runtime_bytes) / budget)
           : std::string("no runtime share (--budget-scope data: the runtime comes on top), ")) +
      fmt::format("Seer's parts {} ({:.0f}%)", FormatBytes(parts_bytes), 100.0 * static_cast<double>(parts_bytes) / budget) +
      (budget_bytes - runtime_bytes - parts_bytes > 0
           ? ", unused " + FormatBytes(budget_bytes - runtime_bytes - parts_bytes)
           : std::string()) +
      ":";
  return head + table + (superbatch_reason.empty() ? std::string() : "\n  superbatch " + superbatch_reason);
}

int64_t PlannerWorkingBytesFor(int64_t budget_bytes) {
  if (budget_bytes <= 0) return kPlannerWorkingMaxBytes;
  return std::clamp<int64_t>(budget_bytes / 100 * kPlannerWorkingPercent, kPlannerWorkingMinBytes,
                             kPlannerWorkingMaxBytes);
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
  // The MLP samples no hops (its layers see the seeds only): its layer count is its own.
  if (!(model.kind == ModelKind::kMlp && r.fanouts.empty())) model.num_layers = static_cast<int64_t>(r.fanouts.size());
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
int64_t TraceBytesPerBatch(const MemoryBudgetRequest& r, int64_t batch_rows) {
  if (HasMeasuredShapes(r) && r.measured_trace_bytes > 0) {
    return static_cast<int64_t>(std::ceil(kPilotMargin * static_cast<double>(r.measured_trace_bytes)));
  }
  int64_t per_batch = 8 * batch_rows;
  for (const BlockShape& b : EstimateBlockShapes(r.num_nodes, r.batch_size, r.fanouts)) {
    per_batch += 8 * (b.num_dst + 1) + 4 * b.num_edges;
  }
  return per_batch;
}

// Belady's sort buffer for the request: the asked or budget-scaled size, at most what the
// superbatch's accesses need (kBeladyInRamBytesPerAccess each: the in-RAM path when they fit).
int64_t PlannerSortBuffer(const MemoryBudgetRequest& r, int64_t batch_rows) {
  if (r.planner_working_bytes == 0) return 0;
  const int64_t asked =
      r.planner_working_bytes == kPlannerWorkingAuto ? PlannerWorkingBytesFor(r.budget_bytes) : r.planner_working_bytes;
  return std::max<int64_t>(
      0, std::min(asked, kBeladyInRamBytesPerAccess * std::max<int64_t>(1, r.superbatch) * batch_rows));
}

int64_t InspectorReservation(const MemoryBudgetRequest& r, int64_t batch_rows) {
  const int64_t sb = std::max<int64_t>(1, r.superbatch);
  if (r.streaming_inspector) {
    // The streaming parts without the changesets (the trace buffers hold those), Belady's
    // sort buffer, and a planner that still reads the ids into RAM (LRU).
    const StreamingInspectorParts parts = StreamingInspectorPartsFor(TraceBytesPerBatch(r, batch_rows), r.sampling_threads);
    // The block planner (--read-block) keeps the superbatch's accesses in RAM.
    const int64_t planner = r.read_block_bytes > 0 && r.planner_working_bytes != 0
                                ? kBeladyInRamBytesPerAccess * sb * batch_rows
                                : PlannerSortBuffer(r, batch_rows);
    return parts.total() - parts.changesets + planner + r.planner_bytes_per_access * sb * batch_rows;
  }
  return r.traces_in_flight * sb * TraceBytesPerBatch(r, batch_rows) + r.planner_bytes_per_access * sb * batch_rows;
}

// The trace buffers' need per batch of a superbatch (TraceBufferNeed without the floor
// and, streaming, without the cap); the streaming pipeline keeps only changesets there.
int64_t TraceBufferBytesPerBatch(const MemoryBudgetRequest& r, int64_t batch_rows) {
  const int64_t changesets = kChangesetBytesPerInsertedRow * batch_rows;  // at most every row changes
  if (r.streaming_inspector) return 2 * changesets;
  return 2 * std::max(TraceBytesPerBatch(r, batch_rows), changesets);
}

Status TooSmallForTheFixedParts(const MemoryBudgetRequest& r, const MemoryBudgetSplit& s, int64_t required) {
  return Status(StatusCode::kResourceExhausted,
                "memory budget " + FormatBytes(r.budget_bytes + r.runtime_bytes) + " is too small: " +
                    (r.runtime_bytes > 0 ? "the runtime took " + FormatBytes(r.runtime_bytes) + " at start, " : "") +
                    "the per-node tables of " +
                    std::to_string(r.num_nodes) + " nodes need " + FormatBytes(s.table_bytes) +
                    ", the batch staging buffers (~" + std::to_string(s.estimated_batch_rows) + " rows per batch) " +
                    FormatBytes(s.staging_bytes) +
                    (r.reserve_model ? ", the model's training working set " + FormatBytes(s.model_bytes)
                                     : std::string()) +
                    (s.inspector_bytes > 0
                         ? ", the inspector's superbatch traces and planner " + FormatBytes(s.inspector_bytes)
                         : std::string()) +
                    "; use --memory-budget " + FormatBytes(required + r.runtime_bytes) +
                    " or more, or a smaller --batch-size / --fanouts" + (r.reserve_model ? " / --hidden" : "") +
                    (s.inspector_bytes > 0 ? " / --superbatch" : ""));
}

}  // namespace

int64_t BlockReadStagingBytes(int64_t row_bytes, int64_t block_bytes, int64_t num_rows, int64_t batch_rows,
                              int64_t wave_bytes) {
  if (row_bytes <= 0 || block_bytes <= 0) return 0;
  if (wave_bytes < 0) wave_bytes = kBlockWaveBytes;
  const int64_t b = block_bytes;
  // The blocks one row touches at most (BlockWaveBufferBytes: rows start at multiples
  // of gcd(row, B) inside a block), no more than the file has.
  const int64_t row_blocks = BlockWaveBufferBytes(row_bytes, b, 0) / b;
  const int64_t file_blocks = (num_rows * row_bytes + b - 1) / b;
  const int64_t wave_blocks = std::min(BlockWaveBufferBytes(row_bytes, b, wave_bytes) / b, file_blocks);
  const int64_t batch_blocks = std::min(batch_rows * row_blocks, file_blocks);
  // One wave buffer and its read requests, plus per batch the sorted list of its blocks
  // (8 B each) and the misses by id (4 B each); the admitted rows go straight into the
  // cache's slots (no buffer).
  return wave_blocks * (b + static_cast<int64_t>(sizeof(ReadRequest))) + 8 * batch_blocks + 4 * batch_rows;
}

MemoryBudgetSplit SizeFixedParts(const MemoryBudgetRequest& r) {
  MemoryBudgetSplit s;
  s.budget_bytes = r.budget_bytes;
  s.num_nodes = r.num_nodes;
  s.cache_units = r.feature_cache_rows_max > 0;
  s.indptr_bytes = CompactIndptr::EstimateBytes(r.indptr_entries > 0 ? r.indptr_entries : r.num_nodes + 1);
  s.node_score_bytes = r.node_score_bytes_per_node * r.num_nodes;
  s.table_bytes = s.indptr_bytes + s.node_score_bytes;
  const bool measured = HasMeasuredShapes(r);
  s.estimated_batch_rows = measured ? WithMargin(r, r.measured_batch_rows)
                                    : EstimateBatchRows(r.num_nodes, r.batch_size, r.fanouts);
  s.measured_batches = measured ? r.measured_batches : 0;
  // The gather pipeline holds `pipeline_depth` float32 batch buffers (one trains while
  // the next is gathered); float16 features also need one raw batch buffer.
  const int64_t raw_row_bytes = r.feature_row_bytes == 4 * r.feature_dim ? 0 : r.feature_row_bytes;
  s.staging_bytes = s.estimated_batch_rows * (r.pipeline_depth * 4 * r.feature_dim + raw_row_bytes);
  // Cached by units (typed, by bytes): the gatherer's float buffer of the batch's units too.
  if (r.feature_cache_rows_max > 0) s.staging_bytes += s.estimated_batch_rows * 4 * r.feature_dim;
  if (r.read_block_bytes > 0 && r.feature_row_bytes > 0) {
    s.block_buffer_bytes = BlockReadStagingBytes(r.feature_row_bytes, r.read_block_bytes, r.num_nodes,
                                                 s.estimated_batch_rows);
    s.staging_bytes += s.block_buffer_bytes;
  }
  if (r.reserve_model) {
    const ModelFootprint footprint = ModelReservation(r);
    s.model_parameter_bytes = footprint.parameter_bytes;
    s.model_activation_bytes = footprint.activation_bytes;
    s.model_bytes = footprint.total_bytes();
  }
  if (r.traces_in_flight > 0) {
    s.inspector_bytes = InspectorReservation(r, s.estimated_batch_rows);
    if (r.streaming_inspector) {
      s.planner_working_bytes = r.read_block_bytes > 0 && r.planner_working_bytes != 0
                                    ? kBeladyInRamBytesPerAccess * std::max<int64_t>(1, r.superbatch) * s.estimated_batch_rows
                                    : PlannerSortBuffer(r, s.estimated_batch_rows);
    }
  }
  return s;
}

int64_t TraceBufferNeed(const MemoryBudgetRequest& r, int64_t batch_rows) {
  int64_t need = std::max<int64_t>(1, r.superbatch) * TraceBufferBytesPerBatch(r, batch_rows);
  if (r.streaming_inspector) need = std::min(need, 2 * kChangesetRamBytes);
  return std::max<int64_t>(kMinTraceBytes, need);
}

Status SplitCacheMemory(const MemoryBudgetRequest& r, MemoryBudgetSplit* s) {
  int64_t left = r.budget_bytes - s->table_bytes - s->staging_bytes;
  s->trace_bytes = std::max<int64_t>(kMinTraceBytes, std::min(left / 8, TraceBufferNeed(r, s->estimated_batch_rows)));
  left = std::max<int64_t>(0, left - s->trace_bytes);
  const int64_t ncache_table = NeighborCache::TableBytes(r.num_nodes);
  const bool nc_auto = r.ncache_budget_bytes < 0;
  const bool fc_auto = r.fcache_budget_bytes < 0;
  // What each cache can use: the whole topology; every feature row (none when the
  // feature cache is never read).
  const int64_t nc_cap = r.topology_bytes > 0 ? r.topology_bytes : std::numeric_limits<int64_t>::max();
  // (An automatic share pays the slot index too; an explicit --fcache-budget is the rows.)
  const int64_t fc_cap = !r.feature_cache_used ? 0
                         : r.feature_row_bytes > 0 && FeatureRows(r) > 0
                             ? (fc_auto ? FeatureCacheBytes(FeatureRows(r), r.feature_row_bytes, r.policy_bytes_per_row)
                                        : r.feature_row_bytes * FeatureRows(r))
                             : std::numeric_limits<int64_t>::max();
  // An explicit --fcache-budget's rows bring their slot index on top.
  auto explicit_fc_index = [&](int64_t fcache_bytes) -> int64_t {
    return !fc_auto && r.feature_row_bytes > 0
               ? SlotIndexBytes(r, std::min(FeatureRows(r), fcache_bytes / r.feature_row_bytes))
               : 0;
  };
  if (!nc_auto && !fc_auto) {
    s->ncache_bytes = std::min(r.ncache_budget_bytes, nc_cap);
    s->fcache_bytes = std::min(r.fcache_budget_bytes, fc_cap);
  } else if (!nc_auto) {
    s->ncache_bytes = std::min(r.ncache_budget_bytes, nc_cap);
    s->fcache_bytes = std::max<int64_t>(0, left - s->ncache_bytes);
  } else if (!fc_auto) {
    s->fcache_bytes = std::min(r.fcache_budget_bytes, fc_cap);
    // The automatic neighbor cache gets what the feature rows and their slot index leave.
    s->ncache_bytes = std::max<int64_t>(0, left - s->fcache_bytes - explicit_fc_index(s->fcache_bytes));
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
  // Caps: a share beyond what its cache can use goes to the other cache when that one's
  // share is automatic (the feature cache first: it saves the larger reads).
  if (s->ncache_bytes > nc_cap) {
    if (fc_auto) s->fcache_bytes += s->ncache_bytes - nc_cap;
    s->ncache_bytes = nc_cap;
  }
  if (s->fcache_bytes > fc_cap) {
    const int64_t surplus = s->fcache_bytes - fc_cap;
    s->fcache_bytes = fc_cap;
    if (nc_auto && r.ncache_share != 0) {
      s->ncache_bytes = std::min(nc_cap, s->ncache_bytes + surplus);
      if (s->ncache_bytes < ncache_table + ncache_table / 4) s->ncache_bytes = 0;
    }
  }
  const bool overridden = !nc_auto || !fc_auto;
  const int64_t fc_index = explicit_fc_index(s->fcache_bytes);
  if (s->ncache_bytes + s->fcache_bytes + fc_index > left && overridden) {
    return Status(StatusCode::kResourceExhausted,
                  "--ncache-budget + --fcache-budget (" + FormatBytes(s->ncache_bytes + s->fcache_bytes) +
                      (fc_index > 0 ? " + slot index " + FormatBytes(fc_index) : std::string()) +
                      ") exceed what the memory budget leaves after tables, staging and traces (" +
                      FormatBytes(left) + ")");
  }
  return Status::Ok();
}

Status PayReservations(const MemoryBudgetRequest& r, MemoryBudgetSplit* s) {
  const int64_t left = std::max<int64_t>(0, r.budget_bytes - s->table_bytes - s->staging_bytes - s->trace_bytes);
  const int64_t ncache_table = NeighborCache::TableBytes(r.num_nodes);
  const int64_t reserved = s->model_bytes + s->inspector_bytes;
  const int64_t fc_index = r.fcache_budget_bytes >= 0 && r.feature_row_bytes > 0
                               ? SlotIndexBytes(r, std::min(FeatureRows(r), s->fcache_bytes / r.feature_row_bytes))
                               : 0;  // an explicit --fcache-budget's slot index (on top of its rows)
  int64_t owed =
      std::max<int64_t>(0, reserved - std::max<int64_t>(0, left - s->ncache_bytes - s->fcache_bytes - fc_index));
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
                      FormatBytes(reserved) + ") in memory budget " + FormatBytes(r.budget_bytes + r.runtime_bytes) +
                      "; lower them or raise --memory-budget");
  }
  return Status::Ok();
}

void FinishFeatureCache(const MemoryBudgetRequest& r, MemoryBudgetSplit* s) {
  if (r.feature_row_bytes <= 0) {
    s->fcache_rows = 0;
  } else if (r.fcache_budget_bytes >= 0) {
    s->fcache_rows = std::min(FeatureRows(r), s->fcache_bytes / r.feature_row_bytes);  // the rows; index on top
  } else {
    s->fcache_rows =
        std::min(FeatureRows(r), FeatureCacheRowsFor(s->fcache_bytes, r.feature_row_bytes, r.policy_bytes_per_row));
  }
  s->fcache_bytes = s->fcache_rows * r.feature_row_bytes;
  s->fcache_index_bytes = SlotIndexBytes(r, s->fcache_rows);
}

namespace {

// The split for the request's own superbatch (>= 1), without warnings.
Result<MemoryBudgetSplit> SplitFixedSuperbatch(const MemoryBudgetRequest& r) {
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
  FinishFeatureCache(r, &s);
  s.superbatch = std::max<int64_t>(1, r.superbatch);
  return s;
}

// The smallest --memory-budget (rounded up to MiB) whose split satisfies `enough`, or -1
// when even 16 TiB does not.
template <typename Enough>
int64_t SmallestBudget(MemoryBudgetRequest r, Enough enough) {
  auto passes = [&](int64_t budget) {
    r.budget_bytes = budget;
    auto split = SplitFixedSuperbatch(r);
    return split.ok() && enough(*split);
  };
  int64_t lo = std::max<int64_t>(1 << 20, r.budget_bytes), hi = 2 * lo;
  while (!passes(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > (int64_t{1} << 44)) return -1;
  }
  while (hi - lo > (1 << 20)) {
    const int64_t mid = lo + (hi - lo) / 2;
    (passes(mid) ? hi : lo) = mid;
  }
  return (hi + (1 << 20) - 1) / (1 << 20) * (1 << 20);
}

std::string WhatTookTheBudget(const MemoryBudgetSplit& s) {
  std::string took = "per-node tables " + FormatBytes(s.table_bytes) + ", staging " + FormatBytes(s.staging_bytes);
  if (s.model_bytes > 0) took += ", the model's working set " + FormatBytes(s.model_bytes);
  if (s.inspector_bytes > 0) took += ", the inspector " + FormatBytes(s.inspector_bytes);
  took += ", trace buffers " + FormatBytes(s.trace_bytes);
  if (s.ncache_bytes > 0) took += ", neighbor cache " + FormatBytes(s.ncache_bytes);
  if (s.fcache_bytes > 0) took += ", feature cache " + FormatBytes(s.fcache_bytes);
  return took;
}

}  // namespace

int64_t ChooseSuperbatch(const MemoryBudgetRequest& r, std::string* reason) {
  MemoryBudgetRequest one = r;
  one.superbatch = 1;
  const MemoryBudgetSplit fixed = SizeFixedParts(one);
  const int64_t rows = fixed.estimated_batch_rows;
  // RAM that grows with S (none when streaming: the inspector's and the changesets' RAM
  // is constant, only the runtime dir's files grow).
  const int64_t per_batch = r.streaming_inspector ? r.planner_bytes_per_access * rows
                                                 : InspectorReservation(one, rows) + TraceBufferBytesPerBatch(one, rows);
  const int64_t room = r.budget_bytes - fixed.table_bytes - fixed.staging_bytes - fixed.model_bytes;
  const int64_t epoch = r.epoch_batches > 0 ? r.epoch_batches : kAutoSuperbatchMax;
  const int64_t cap = std::min(epoch, kAutoSuperbatchMax);
  const int64_t by_memory =
      room <= 0 ? 0
      : per_batch <= 0
          ? cap
          : static_cast<int64_t>(kAutoSuperbatchShare * static_cast<double>(room) / static_cast<double>(per_batch));
  const int64_t s = std::max<int64_t>(1, std::min(cap, by_memory));
  if (reason != nullptr) {
    const std::string cost = fmt::format("the inspector's traces, planner and trace buffers ({}/batch, {} in all)",
                                         FormatBytes(per_batch), FormatBytes(s * per_batch));
    if (r.streaming_inspector && per_batch == 0) {
      *reason = fmt::format(
          "{} (auto: {}; the inspector streams traces through the runtime dir, so its RAM does not grow with S; "
          "~{} of trace files per superbatch)",
          s, cap == r.epoch_batches ? "the whole epoch" : fmt::format("at most {} batches", kAutoSuperbatchMax),
          FormatBytes(s * TraceBytesPerBatch(one, rows)));
    } else if (by_memory >= cap) {
      *reason = fmt::format("{} (auto: {}; {} take {:.1f}% of the {} left for caches)",
                            s,
                            cap == r.epoch_batches ? "the whole epoch"
                                                   : fmt::format("at most {} batches", kAutoSuperbatchMax),
                            cost, room > 0 ? 100.0 * static_cast<double>(s * per_batch) / static_cast<double>(room) : 0.0,
                            FormatBytes(std::max<int64_t>(0, room)));
    } else {
      *reason = fmt::format("{} (auto: {} may take 1/{:.0f} of the {} left for caches; the epoch has {} batches)", s,
                            cost, 1 / kAutoSuperbatchShare, FormatBytes(std::max<int64_t>(0, room)),
                            r.epoch_batches > 0 ? std::to_string(r.epoch_batches) : std::string("?"));
    }
  }
  return s;
}

std::vector<std::string> SplitWarnings(const MemoryBudgetRequest& request, const MemoryBudgetSplit& s) {
  std::vector<std::string> warnings;
  MemoryBudgetRequest r = request;
  if (r.superbatch <= 0) r.superbatch = std::max<int64_t>(1, s.superbatch);
  const std::string budget = FormatBytes(r.budget_bytes + r.runtime_bytes);
  // SmallestBudget answers for what is left after the runtime: the flag needs it back.
  auto flag_mib = [&](int64_t fix) { return (fix + r.runtime_bytes + (1 << 20) - 1) >> 20; };
  if (r.feature_cache_used && r.fcache_budget_bytes != 0 && s.fcache_rows == 0 && r.num_nodes > 0 &&
      r.feature_row_bytes > 0) {
    const int64_t target = std::max<int64_t>(1, r.num_nodes / 10);
    const int64_t fix = SmallestBudget(r, [&](const MemoryBudgetSplit& x) { return x.fcache_rows >= target; });
    warnings.push_back(fmt::format(
        "the feature cache gets nothing ({} take the {} budget): every feature row is read from the SSD; {}",
        WhatTookTheBudget(s), budget,
        fix > 0 ? fmt::format("--memory-budget {}M would give it {} rows (10% of the nodes)", flag_mib(fix), target)
                : std::string("lower --batch-size, --fanouts or --hidden")));
  }
  if (r.ncache_budget_bytes != 0 && r.ncache_share != 0 && s.ncache_bytes == 0 && r.topology_bytes > 0) {
    const int64_t table = NeighborCache::TableBytes(r.num_nodes);
    const int64_t target = std::max(table + table / 4, table + (r.topology_bytes - table) / 4);
    const int64_t fix = SmallestBudget(r, [&](const MemoryBudgetSplit& x) { return x.ncache_bytes >= target; });
    warnings.push_back(fmt::format(
        "the neighbor cache gets nothing ({} take the {} budget): sampling reads every adjacency list from the "
        "SSD; {}",
        WhatTookTheBudget(s), budget,
        fix > 0 ? fmt::format("--memory-budget {}M would give it {} (a quarter of the topology's {})", flag_mib(fix),
                              FormatBytes(target), FormatBytes(r.topology_bytes))
                : std::string("lower --batch-size, --fanouts or --hidden")));
  }
  return warnings;
}

Result<MemoryBudgetSplit> SplitMemoryBudget(const MemoryBudgetRequest& request) {
  if (request.num_nodes < 0 || request.feature_row_bytes < 0 || request.batch_size <= 0) {
    return InvalidArgument("memory budget: bad graph or batch parameters");
  }
  MemoryBudgetRequest r = request;
  // The runtime is paid first; every part below is split from what it leaves (the
  // messages add it back when they name a --memory-budget).
  r.runtime_bytes = std::max<int64_t>(0, request.runtime_bytes);
  if (r.runtime_bytes > 0) {
    if (r.budget_bytes <= r.runtime_bytes) {
      MemoryBudgetRequest data_only = r;
      data_only.runtime_bytes = 0;
      data_only.budget_bytes = 1 << 20;
      const int64_t more = SmallestBudget(data_only, [](const MemoryBudgetSplit&) { return true; });
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("memory budget {} is too small: the runtime itself took {} at start (libtorch and the "
                                "program{}); --memory-budget covers the whole process: use at least {}M (or "
                                "--budget-scope data for a budget on top of the runtime)",
                                FormatBytes(r.budget_bytes), FormatBytes(r.runtime_bytes),
                                r.model_on_host ? "" : ", the CUDA context and libraries",
                                (r.runtime_bytes + std::max<int64_t>(more, 1 << 20) + (1 << 20) - 1) >> 20));
    }
    r.budget_bytes -= r.runtime_bytes;
  }
  std::string reason;
  if (r.superbatch <= 0) r.superbatch = ChooseSuperbatch(r, &reason);
  SEER_ASSIGN_OR_RETURN(MemoryBudgetSplit s, SplitFixedSuperbatch(r));
  s.superbatch_reason = reason;
  s.warnings = SplitWarnings(r, s);
  s.budget_bytes = request.budget_bytes;
  s.runtime_bytes = r.runtime_bytes;
  return s;
}

int64_t DeviceTrainingWorkingSetBytes(const MemoryBudgetRequest& request, const MemoryBudgetSplit& split) {
  MemoryBudgetRequest on_device = request;
  on_device.model_on_host = true;  // the host tally: weights, grads, Adam, best copy + autograd set
  const ModelFootprint footprint = ModelReservation(on_device);
  return footprint.total_bytes() + split.estimated_batch_rows * request.pipeline_depth * 4 * request.feature_dim;
}

}  // namespace seer
