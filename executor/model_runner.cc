// libtorch implementation of ModelRunner: the GNN layers on per-layer blocks, Adam,
// checkpoint payloads and model files (the checkpoint container — header, size,
// checksum — is executor/checkpoint_file.cc). One of the few executor TUs that include
// torch (with the device tier and the process group); keep them few, every torch TU
// costs ~a minute of compile time on 2 cores.
//
// Model-file key names (SaveModel; l = layer index, input layer first):
//   sage: layer{l}.self.weight [out,in], layer{l}.self.bias [out], layer{l}.neigh.weight [out,in]
//         h_dst' = self(h_dst) + neigh(mean of h_src over the dst's in-neighbors)
//   gcn:  layer{l}.lin.weight [out,in], layer{l}.lin.bias [out]
//         gcn_norm=graph: h_d' = lin(h_d/(D_d+1) + (D_d/k_d) sum_{s in S(d)} h_s/sqrt((D_d+1)(D_s+1)))
//           with full-graph in-degrees D (model_runner.h, GcnNorm)
//         gcn_norm=block: h_d' = lin(sum over S(d)+{d} of h_s / sqrt((k_d+1)(outdeg_s+1))),
//           degrees inside the sampled block
//   gat:  layer{l}.fc.weight [H*F,in], layer{l}.attn_l [H,F], layer{l}.attn_r [H,F],
//         layer{l}.bias [H*F] (hidden layers, heads concatenated) or [F] (last, mean)
//   mlp:  layer{l}.lin.weight, layer{l}.lin.bias   (seed features only)
//   Relational models (typed datasets; R relations, T node types, r's dst type t_r):
//   type_embedding [T,in]: added to every input row of its node's type (zero-initialised)
//   rgcn: layer{l}.root_weight [out,in], layer{l}.bias [out], layer{l}.rel_weight [R,out,in]
//         h_d' = root_weight h_d + bias + sum_r rel_weight[r] mean_{s in S_r(d)} h_s
//   rsage: layer{l}.rel_weight [R,out,in], layer{l}.root_weight [R,out,in], layer{l}.bias [R,out]
//         h_d' = sum_{r: t_r = type(d)} rel_weight[r] mean_{S_r(d)} h_s + root_weight[r] h_d + bias[r]
//   rgat: layer{l}.rel_weight [R,H*F,in], layer{l}.attn_l [R,H,F], layer{l}.attn_r [R,H,F],
//         layer{l}.root_weight [T,out,in], layer{l}.bias [T,out]
//         h_d' = sum_r GAT_r(d) (no self loop; heads concatenated, or averaged in the last
//         layer) + root_weight[type(d)] h_d + bias[type(d)]
//   (a relation with no sampled neighbour of d adds nothing; rsage still adds its root term)
//   seer.config: str, the ModelConfig as JSON; seer.training: str, the TrainingRecord as
//   JSON; seer.checksum: str, XXH64 of every other entry (ModelFileChecksum).
// Hidden layers are followed by ReLU (ELU for GAT and R-GAT) and dropout. The user's
// version of all this, exact enough to rebuild the model in PyTorch: docs/formats.md
// ("Model file"), held to the code by ModelFileTest.ForwardPassIsTheDocumentedOne,
// RelationalModelTest.ForwardPassMatchesPlainLoopsOnTheModelFile and
// PredictCliTest.DocumentedPyTorchForwardPassEqualsPredict.
#include "executor/model_runner.h"

#include <torch/torch.h>
#include <torch/serialize.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "executor/checkpoint_file.h"
#include "executor/device_rows_internal.h"
#include "executor/process_group_internal.h"
#include "storage/base/atomic_file.h"
#include "storage/base/checksum.h"
#include "storage/base/json_file.h"
#include "storage/base/file_io.h"
#include "storage/base/random.h"

namespace seer {
namespace {

using torch::Tensor;

// ---- blocks as tensors --------------------------------------------------------------

// One relation's edges in a block: the destinations that sampled at least one neighbour
// through it (U of them) and its E edges as positions into those.
struct RelationEdges {
  int32_t relation = 0;
  int64_t num_dst = 0;  // U
  Tensor dst;           // int64 [U] local dst ids, ascending
  Tensor src;           // int64 [E] local src ids
  Tensor edge_pos;      // int64 [E] each edge's destination as a position in `dst`
  Tensor degree;        // float [U, 1] the relation's sampled neighbours of each (>= 1)
  // R-GAT: the relation's distinct sources (V) and each edge's source as a position in them.
  Tensor src_unique;    // int64 [V]
  Tensor src_pos;       // int64 [E]
};

struct BlockTensors {
  int64_t num_dst = 0;
  int64_t num_src = 0;
  Tensor edge_dst;   // int64 [E]
  Tensor edge_src;   // int64 [E]
  Tensor in_degree;  // float [num_dst], sampled in-neighbors per dst (k_d)
  Tensor graph_degree;  // float [num_src], full-graph in-degree (GCN graph norm only)
  // Relational models only (edge_dst/edge_src/in_degree are then undefined):
  std::vector<RelationEdges> relations;  // the relations with an edge in the block
  std::vector<Tensor> dst_of_type;  // per node type: int64 local dst ids (undefined: none)
  Tensor node_type;                 // int64 [num_src], blocks[0] only: the input rows' types
};

BlockTensors ToBlockTensors(const LayerBlock& block, const torch::Device& device) {
  if (static_cast<int64_t>(block.row_ptr.size()) != block.num_dst + 1 ||
      block.num_dst > block.num_src) {
    throw std::invalid_argument("malformed LayerBlock (row_ptr size or num_dst > num_src)");
  }
  const int64_t num_edges = block.row_ptr.back();
  BlockTensors t;
  t.num_dst = block.num_dst;
  t.num_src = block.num_src;
  auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  Tensor dst = torch::empty({num_edges}, i64);
  Tensor src = torch::empty({num_edges}, i64);
  Tensor deg = torch::empty({block.num_dst}, torch::kFloat32);
  int64_t* dst_p = dst.data_ptr<int64_t>();
  int64_t* src_p = src.data_ptr<int64_t>();
  float* deg_p = deg.data_ptr<float>();
  for (int64_t d = 0; d < block.num_dst; ++d) {
    deg_p[d] = static_cast<float>(block.row_ptr[d + 1] - block.row_ptr[d]);
    for (int64_t e = block.row_ptr[d]; e < block.row_ptr[d + 1]; ++e) {
      const int32_t s = block.col_idx[e];
      if (s < 0 || s >= block.num_src) throw std::invalid_argument("LayerBlock col_idx out of range");
      dst_p[e] = d;
      src_p[e] = s;
    }
  }
  t.edge_dst = dst.to(device);
  t.edge_src = src.to(device);
  t.in_degree = deg.to(device);
  return t;
}

// The node type of each of node_ids[0 .. n) (global ids: type t holds
// [offsets[t], offsets[t + 1])).
std::vector<int32_t> NodeTypes(const BatchTrace& batch, int64_t n, const std::vector<int64_t>& offsets) {
  if (static_cast<int64_t>(batch.node_ids.size()) < n) {
    throw std::invalid_argument("batch has fewer node_ids than blocks[0].num_src");
  }
  std::vector<int32_t> types(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = batch.node_ids[static_cast<size_t>(i)];
    if (id < 0 || id >= offsets.back()) {
      throw std::invalid_argument("relational model: node id " + std::to_string(id) + " outside the typed dataset's " +
                                  std::to_string(offsets.back()) + " nodes");
    }
    // The last type starting at or before id (empty types start where the next one does).
    types[static_cast<size_t>(i)] =
        static_cast<int32_t>(std::upper_bound(offsets.begin(), offsets.end(), id) - offsets.begin()) - 1;
  }
  return types;
}

// A typed batch's block as the relational layers read it, checked: every edge's relation
// is one of the model's and joins the node types the relation joins. types: the node type
// of each local id (at least num_src of them).
BlockTensors ToRelationalBlock(const LayerBlock& block, size_t layer, const std::vector<int32_t>& types,
                               const ModelConfig& c, const torch::Device& device) {
  if (static_cast<int64_t>(block.row_ptr.size()) != block.num_dst + 1 || block.num_dst > block.num_src ||
      block.num_src > static_cast<int64_t>(types.size()) || block.row_ptr.front() != 0 ||
      block.row_ptr.back() != static_cast<int64_t>(block.col_idx.size())) {
    throw std::invalid_argument("malformed LayerBlock (row_ptr size, num_dst > num_src or col_idx size)");
  }
  const int64_t num_edges = block.row_ptr.back();
  if (static_cast<int64_t>(block.edge_rel.size()) != num_edges) {
    throw std::invalid_argument(fmt::format(
        "model {}: block {} has {} relation indices (edge_rel) for {} edges; a relational model needs the batches "
        "of a typed dataset",
        ModelKindName(c.kind), layer, block.edge_rel.size(), num_edges));
  }
  const int32_t num_relations = c.num_relations();
  // Pass 1: check, and count each relation's edges and destinations.
  std::vector<int64_t> edges(static_cast<size_t>(num_relations), 0), dsts(edges), last(edges.size(), -1);
  for (int64_t d = 0; d < block.num_dst; ++d) {
    if (block.row_ptr[d + 1] < block.row_ptr[d]) throw std::invalid_argument("malformed LayerBlock (row_ptr decreases)");
    for (int64_t e = block.row_ptr[d]; e < block.row_ptr[d + 1]; ++e) {
      const int32_t s = block.col_idx[static_cast<size_t>(e)];
      if (s < 0 || s >= block.num_src) throw std::invalid_argument("LayerBlock col_idx out of range");
      const int32_t r = block.edge_rel[static_cast<size_t>(e)];
      if (r >= num_relations) {
        throw std::invalid_argument(fmt::format("model {}: block {} edge {} has relation {}, the model has {} relations",
                                                ModelKindName(c.kind), layer, e, r, num_relations));
      }
      const auto [src_type, dst_type] = c.relation_types[static_cast<size_t>(r)];
      if (types[static_cast<size_t>(s)] != src_type || types[static_cast<size_t>(d)] != dst_type) {
        throw std::invalid_argument(fmt::format(
            "model {}: block {} edge {} of relation {} joins node types {} -> {}, the relation joins {} -> {}",
            ModelKindName(c.kind), layer, e, r, types[static_cast<size_t>(s)], types[static_cast<size_t>(d)],
            src_type, dst_type));
      }
      ++edges[static_cast<size_t>(r)];
      if (last[static_cast<size_t>(r)] != d) {
        last[static_cast<size_t>(r)] = d;
        ++dsts[static_cast<size_t>(r)];
      }
    }
  }
  // Pass 2: fill each relation's index tensors (CPU), then move them to the device.
  BlockTensors t;
  t.num_dst = block.num_dst;
  t.num_src = block.num_src;
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  struct Cursor {
    int64_t *dst, *src, *pos;
    float* degree;
    int64_t edge = 0, dst_count = 0;
  };
  std::vector<Cursor> cursors(static_cast<size_t>(num_relations));
  std::vector<RelationEdges> cpu;
  std::vector<int32_t> slot(static_cast<size_t>(num_relations), -1);
  for (int32_t r = 0; r < num_relations; ++r) {
    if (edges[static_cast<size_t>(r)] == 0) continue;
    RelationEdges rel;
    rel.relation = r;
    rel.num_dst = dsts[static_cast<size_t>(r)];
    rel.dst = torch::empty({rel.num_dst}, i64);
    rel.src = torch::empty({edges[static_cast<size_t>(r)]}, i64);
    rel.edge_pos = torch::empty({edges[static_cast<size_t>(r)]}, i64);
    rel.degree = torch::zeros({rel.num_dst, 1}, torch::kFloat32);
    cursors[static_cast<size_t>(r)] = Cursor{rel.dst.data_ptr<int64_t>(), rel.src.data_ptr<int64_t>(),
                                             rel.edge_pos.data_ptr<int64_t>(), rel.degree.data_ptr<float>()};
    slot[static_cast<size_t>(r)] = static_cast<int32_t>(cpu.size());
    cpu.push_back(std::move(rel));
  }
  std::fill(last.begin(), last.end(), -1);
  for (int64_t d = 0; d < block.num_dst; ++d) {
    for (int64_t e = block.row_ptr[d]; e < block.row_ptr[d + 1]; ++e) {
      const size_t r = block.edge_rel[static_cast<size_t>(e)];
      Cursor& cur = cursors[r];
      if (last[r] != d) {
        last[r] = d;
        cur.dst[cur.dst_count++] = d;
      }
      cur.degree[cur.dst_count - 1] += 1;
      cur.src[cur.edge] = block.col_idx[static_cast<size_t>(e)];
      cur.pos[cur.edge] = cur.dst_count - 1;
      ++cur.edge;
    }
  }
  if (c.kind == ModelKind::kRgat) {
    // Each relation's distinct sources, so fc_r runs once per source, not per edge.
    std::vector<int32_t> stamp(static_cast<size_t>(block.num_src), -1);
    std::vector<int64_t> position(static_cast<size_t>(block.num_src));
    std::vector<int64_t> unique;
    for (RelationEdges& rel : cpu) {
      unique.clear();
      rel.src_pos = torch::empty_like(rel.src);
      const int64_t* src = rel.src.data_ptr<int64_t>();
      int64_t* pos = rel.src_pos.data_ptr<int64_t>();
      for (int64_t e = 0; e < rel.src.size(0); ++e) {
        const size_t s = static_cast<size_t>(src[e]);
        if (stamp[s] != rel.relation) {
          stamp[s] = rel.relation;
          position[s] = static_cast<int64_t>(unique.size());
          unique.push_back(src[e]);
        }
        pos[e] = position[s];
      }
      rel.src_unique = torch::tensor(unique, i64);
    }
  }
  for (RelationEdges& rel : cpu) {
    rel.dst = rel.dst.to(device);
    rel.src = rel.src.to(device);
    rel.edge_pos = rel.edge_pos.to(device);
    rel.degree = rel.degree.to(device);
    if (rel.src_unique.defined()) {
      rel.src_unique = rel.src_unique.to(device);
      rel.src_pos = rel.src_pos.to(device);
    }
  }
  t.relations = std::move(cpu);
  std::vector<std::vector<int64_t>> of_type(static_cast<size_t>(c.num_node_types()));
  for (int64_t d = 0; d < block.num_dst; ++d) of_type[static_cast<size_t>(types[static_cast<size_t>(d)])].push_back(d);
  t.dst_of_type.resize(of_type.size());
  for (size_t k = 0; k < of_type.size(); ++k) {
    if (!of_type[k].empty()) t.dst_of_type[k] = torch::tensor(of_type[k], i64).to(device);
  }
  return t;
}

// Sum of rows[src] into dst rows: deterministic on the CPU (index_add_ walks the index
// in order), and its backward is an index_select.
Tensor ScatterSum(const Tensor& messages, const Tensor& index, int64_t num_rows) {
  std::vector<int64_t> shape = messages.sizes().vec();
  shape[0] = num_rows;
  return torch::zeros(shape, messages.options()).index_add(0, index, messages);
}

// ---- layers -------------------------------------------------------------------------

struct GnnLayerImpl : torch::nn::Module {
  GnnLayerImpl(ModelKind kind, int64_t in, int64_t out, int64_t heads, bool last)
      : kind_(kind), heads_(heads), last_(last) {
    switch (kind) {
      case ModelKind::kSage:
        self_ = register_module("self", torch::nn::Linear(in, out));
        neigh_ = register_module("neigh", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)));
        break;
      case ModelKind::kGcn:
      case ModelKind::kMlp:
        lin_ = register_module("lin", torch::nn::Linear(in, out));
        break;
      case ModelKind::kGat: {
        const int64_t per_head = last ? out : out / heads;
        per_head_ = per_head;
        fc_ = register_module("fc", torch::nn::Linear(torch::nn::LinearOptions(in, heads * per_head).bias(false)));
        attn_l_ = register_parameter("attn_l", torch::empty({heads, per_head}));
        attn_r_ = register_parameter("attn_r", torch::empty({heads, per_head}));
        bias_ = register_parameter("bias", torch::zeros({last ? per_head : heads * per_head}));
        torch::NoGradGuard no_grad;
        const double bound = std::sqrt(6.0 / static_cast<double>(1 + per_head));
        attn_l_.uniform_(-bound, bound);
        attn_r_.uniform_(-bound, bound);
        break;
      }
      case ModelKind::kRgcn:
      case ModelKind::kRsage:
      case ModelKind::kRgat:
        throw std::logic_error("GnnLayer of a relational model kind (RelationalLayer builds those)");
    }
  }

  // h: [num_src, in] rows of the block's src nodes (dst = first num_dst rows).
  Tensor Forward(const Tensor& h, const BlockTensors& b) {
    const Tensor h_dst = h.narrow(0, 0, b.num_dst);
    switch (kind_) {
      case ModelKind::kSage: {
        Tensor sum = ScatterSum(h.index_select(0, b.edge_src), b.edge_dst, b.num_dst);
        Tensor mean = sum / b.in_degree.clamp_min(1).unsqueeze(1);
        return self_(h_dst) + neigh_(mean);
      }
      case ModelKind::kGcn: {
        if (b.graph_degree.defined()) {
          // Full-graph symmetric normalisation; D_d/k_d rescales the sampled sum to an
          // unbiased estimate of the full neighbourhood's (exact when k_d = D_d).
          Tensor norm = (b.graph_degree + 1).rsqrt().unsqueeze(1);   // [num_src, 1]
          Tensor norm_dst = norm.narrow(0, 0, b.num_dst);
          Tensor scale = (b.graph_degree.narrow(0, 0, b.num_dst) / b.in_degree.clamp_min(1)).unsqueeze(1);
          Tensor msgs = h.index_select(0, b.edge_src) * norm.index_select(0, b.edge_src);
          Tensor agg = ScatterSum(msgs, b.edge_dst, b.num_dst) * scale + h_dst * norm_dst;
          return lin_(agg * norm_dst);
        }
        Tensor out_degree = ScatterSum(torch::ones({b.edge_src.size(0)}, h.options()), b.edge_src, b.num_src);
        Tensor norm_src = (out_degree + 1).rsqrt().unsqueeze(1);
        Tensor norm_dst = (b.in_degree + 1).rsqrt().unsqueeze(1);
        Tensor msgs = h.index_select(0, b.edge_src) * norm_src.index_select(0, b.edge_src);
        Tensor agg = ScatterSum(msgs, b.edge_dst, b.num_dst) + h_dst * norm_src.narrow(0, 0, b.num_dst);
        return lin_(agg * norm_dst);
      }
      case ModelKind::kGat: {
        const int64_t n_src = h.size(0);
        Tensor z = fc_(h).view({n_src, heads_, per_head_});
        Tensor el = (z * attn_l_).sum(-1);                        // [num_src, H]
        Tensor er = (z.narrow(0, 0, b.num_dst) * attn_r_).sum(-1);  // [num_dst, H]
        // Self loops so every destination attends to at least itself.
        Tensor loops = torch::arange(b.num_dst, b.edge_dst.options());
        Tensor src = torch::cat({b.edge_src, loops});
        Tensor dst = torch::cat({b.edge_dst, loops});
        Tensor e = torch::leaky_relu(el.index_select(0, src) + er.index_select(0, dst), 0.2);
        Tensor e_max;
        {
          // Softmax is invariant to a per-destination shift; the max only keeps exp() finite.
          torch::NoGradGuard no_grad;
          Tensor idx = dst.unsqueeze(1).expand({dst.size(0), heads_});
          e_max = torch::zeros({b.num_dst, heads_}, e.options())
                      .scatter_reduce(0, idx, e, "amax", /*include_self=*/false);
        }
        Tensor w = torch::exp(e - e_max.index_select(0, dst));
        Tensor denom = ScatterSum(w, dst, b.num_dst);
        Tensor alpha = w / denom.index_select(0, dst);
        Tensor out = ScatterSum(z.index_select(0, src) * alpha.unsqueeze(-1), dst, b.num_dst);
        if (last_) return out.mean(1) + bias_;
        return out.flatten(1) + bias_;
      }
      case ModelKind::kMlp:
        return lin_(h_dst);
      case ModelKind::kRgcn:
      case ModelKind::kRsage:
      case ModelKind::kRgat:
        break;
    }
    throw std::logic_error("unknown model kind");
  }

  ModelKind kind_;
  int64_t heads_;
  int64_t per_head_ = 0;
  bool last_;
  torch::nn::Linear self_{nullptr}, neigh_{nullptr}, lin_{nullptr}, fc_{nullptr};
  Tensor attn_l_, attn_r_, bias_;
};
TORCH_MODULE(GnnLayer);

// The rows of parts[i] summed into rows index[i] of a [num_rows, width] result (zeros
// when there are no parts): one scatter for every relation's and type's contribution.
Tensor ScatterParts(const std::vector<Tensor>& parts, const std::vector<Tensor>& index, int64_t num_rows,
                    int64_t width, const torch::TensorOptions& options) {
  if (parts.empty()) return torch::zeros({num_rows, width}, options);
  return ScatterSum(torch::cat(parts), torch::cat(index), num_rows);
}

// One layer of a relational model (R-GCN, R-SAGE, R-GAT) on a typed block
// (ToRelationalBlock). Weights are stacked per relation (and per node type), model-file
// names as in this file's opening comment. Every relation aggregates into its own
// destinations only (RelationEdges::dst), so a relation costs its edges and destinations,
// not the block's.
struct RelationalLayerImpl : torch::nn::Module {
  RelationalLayerImpl(const ModelConfig& c, int64_t in, int64_t out, bool last)
      : kind_(c.kind), heads_(c.heads), out_(out), last_(last) {
    const int64_t relations = c.num_relations(), types = c.num_node_types();
    relations_into_.resize(static_cast<size_t>(types));
    for (int32_t r = 0; r < relations; ++r) relations_into_[static_cast<size_t>(c.relation_types[r].second)].push_back(r);
    // torch::nn::Linear's default: weights and biases uniform in +-1/sqrt(in).
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    auto uniform = [](std::vector<int64_t> shape, double b) { return torch::empty(shape).uniform_(-b, b); };
    switch (kind_) {
      case ModelKind::kRgcn:
        root_weight_ = register_parameter("root_weight", uniform({out, in}, bound));
        bias_ = register_parameter("bias", uniform({out}, bound));
        rel_weight_ = register_parameter("rel_weight", uniform({relations, out, in}, bound));
        break;
      case ModelKind::kRsage:
        rel_weight_ = register_parameter("rel_weight", uniform({relations, out, in}, bound));
        root_weight_ = register_parameter("root_weight", uniform({relations, out, in}, bound));
        bias_ = register_parameter("bias", uniform({relations, out}, bound));
        break;
      case ModelKind::kRgat: {
        per_head_ = last ? out : out / heads_;
        const double attn_bound = std::sqrt(6.0 / static_cast<double>(1 + per_head_));
        rel_weight_ = register_parameter("rel_weight", uniform({relations, heads_ * per_head_, in}, bound));
        attn_l_ = register_parameter("attn_l", uniform({relations, heads_, per_head_}, attn_bound));
        attn_r_ = register_parameter("attn_r", uniform({relations, heads_, per_head_}, attn_bound));
        root_weight_ = register_parameter("root_weight", uniform({types, out, in}, bound));
        bias_ = register_parameter("bias", uniform({types, out}, bound));
        break;
      }
      default:
        throw std::logic_error("RelationalLayer of a homogeneous model kind");
    }
  }

  // h: [num_src, in] rows of the block's src nodes (dst = first num_dst rows).
  Tensor Forward(const Tensor& h, const BlockTensors& b) {
    const Tensor h_dst = h.narrow(0, 0, b.num_dst);
    std::vector<Tensor> parts, index;
    switch (kind_) {
      case ModelKind::kRgcn:
      case ModelKind::kRsage: {
        // Per relation: the mean of the relation's neighbours (input width), then its weight.
        for (const RelationEdges& rel : b.relations) {
          Tensor mean = ScatterSum(h.index_select(0, rel.src), rel.edge_pos, rel.num_dst) / rel.degree;
          parts.push_back(torch::matmul(mean, rel_weight_[rel.relation].t()));
          index.push_back(rel.dst);
        }
        if (kind_ == ModelKind::kRgcn) {
          Tensor root = torch::linear(h_dst, root_weight_, bias_);
          return parts.empty() ? root : root + ScatterParts(parts, index, b.num_dst, out_, h.options());
        }
        // R-SAGE: every relation into a node's type adds its root term, neighbours or not
        // (PyG's to_hetero): the sum of those relations' root weights and biases.
        for (size_t t = 0; t < relations_into_.size(); ++t) {
          if (!b.dst_of_type[t].defined() || relations_into_[t].empty()) continue;
          Tensor weight = root_weight_[relations_into_[t][0]];
          Tensor bias = bias_[relations_into_[t][0]];
          for (size_t k = 1; k < relations_into_[t].size(); ++k) {
            weight = weight + root_weight_[relations_into_[t][k]];
            bias = bias + bias_[relations_into_[t][k]];
          }
          parts.push_back(torch::linear(h_dst.index_select(0, b.dst_of_type[t]), weight, bias));
          index.push_back(b.dst_of_type[t]);
        }
        return ScatterParts(parts, index, b.num_dst, out_, h.options());
      }
      case ModelKind::kRgat: {
        for (const RelationEdges& rel : b.relations) {
          const Tensor weight = rel_weight_[rel.relation];  // [H*F, in]
          const int64_t num_sources = rel.src_unique.size(0);
          Tensor z = torch::matmul(h.index_select(0, rel.src_unique), weight.t()).view({num_sources, heads_, per_head_});
          Tensor el = (z * attn_l_[rel.relation]).sum(-1);  // [V, H]
          // attn_r . (W h_d) per head = h_d . (W^T attn_r): no z for the destinations.
          Tensor right = (weight.view({heads_, per_head_, -1}) * attn_r_[rel.relation].unsqueeze(-1)).sum(1);  // [H, in]
          Tensor er = torch::matmul(h_dst.index_select(0, rel.dst), right.t());  // [U, H]
          Tensor e = torch::leaky_relu(el.index_select(0, rel.src_pos) + er.index_select(0, rel.edge_pos), 0.2);
          Tensor e_max;
          {
            // Softmax is invariant to a per-destination shift; the max only keeps exp() finite.
            torch::NoGradGuard no_grad;
            Tensor idx = rel.edge_pos.unsqueeze(1).expand({rel.edge_pos.size(0), heads_});
            e_max = torch::zeros({rel.num_dst, heads_}, e.options()).scatter_reduce(0, idx, e, "amax", false);
          }
          Tensor w = torch::exp(e - e_max.index_select(0, rel.edge_pos));
          Tensor alpha = w / ScatterSum(w, rel.edge_pos, rel.num_dst).index_select(0, rel.edge_pos);
          Tensor o = ScatterSum(z.index_select(0, rel.src_pos) * alpha.unsqueeze(-1), rel.edge_pos, rel.num_dst);
          parts.push_back(last_ ? o.mean(1) : o.flatten(1));
          index.push_back(rel.dst);
        }
        // Seer's addition to HeteroConv(GATConv): a root term per node type, so a node
        // without sampled neighbours keeps its own signal.
        for (size_t t = 0; t < b.dst_of_type.size(); ++t) {
          if (!b.dst_of_type[t].defined()) continue;
          const auto k = static_cast<int64_t>(t);
          parts.push_back(torch::linear(h_dst.index_select(0, b.dst_of_type[t]), root_weight_[k], bias_[k]));
          index.push_back(b.dst_of_type[t]);
        }
        return ScatterParts(parts, index, b.num_dst, out_, h.options());
      }
      default:
        break;
    }
    throw std::logic_error("RelationalLayer of a homogeneous model kind");
  }

  ModelKind kind_;
  int64_t heads_;
  int64_t per_head_ = 0;
  int64_t out_;
  bool last_;
  std::vector<std::vector<int64_t>> relations_into_;  // per node type: relations whose dst it is
  Tensor rel_weight_, root_weight_, bias_, attn_l_, attn_r_;
};
TORCH_MODULE(RelationalLayer);

struct GnnNetImpl : torch::nn::Module {
  explicit GnnNetImpl(const ModelConfig& c) : config_(c) {
    if (c.relational()) {
      // A learned input per node type, so featureless types (all-zero rows) are told apart.
      type_embedding_ = register_parameter("type_embedding", torch::zeros({c.num_node_types(), c.in_dim}));
    }
    for (int64_t l = 0; l < c.num_layers; ++l) {
      const bool last = l + 1 == c.num_layers;
      const int64_t in = l == 0 ? c.in_dim : c.hidden;
      const int64_t out = last ? c.output_dim() : c.hidden;
      const std::string name = "layer" + std::to_string(l);
      if (c.relational()) {
        rel_layers_.push_back(register_module(name, RelationalLayer(c, in, out, last)));
      } else {
        layers_.push_back(register_module(name, GnnLayer(c.kind, in, out, c.heads, last)));
      }
    }
    if (c.task == ModelTask::kLink && c.scorer == LinkScorer::kMlp) {
      score0_ = register_module("score0", torch::nn::Linear(c.hidden, c.hidden));
      score1_ = register_module("score1", torch::nn::Linear(c.hidden, 1));
    }
  }

  // Link prediction: the logit of pairs of final embeddings (broadcast over leading dims).
  Tensor Score(const Tensor& h_u, const Tensor& h_v) {
    if (config_.scorer == LinkScorer::kDot) return (h_u * h_v).sum(-1);
    return score1_(torch::relu(score0_(h_u * h_v))).squeeze(-1);
  }

  // x: [>= blocks[0].num_src, in_dim]. Returns logits [num_seeds, C]; *embedding (if
  // given) = the last layer's input restricted to the seeds.
  Tensor Forward(const Tensor& x, const std::vector<BlockTensors>& blocks, int64_t num_seeds,
                 Tensor* embedding) {
    if (config_.kind == ModelKind::kMlp) {
      // Features only: every layer sees the seed rows, never a neighbor.
      Tensor h = x.narrow(0, 0, num_seeds);
      for (size_t l = 0; l < layers_.size(); ++l) {
        if (l + 1 == layers_.size() && embedding) *embedding = h;
        BlockTensors self_block;
        self_block.num_dst = num_seeds;
        self_block.num_src = num_seeds;
        h = layers_[l]->Forward(h, self_block);
        if (l + 1 < layers_.size()) h = torch::dropout(torch::relu(h), config_.dropout, is_training());
      }
      return h;
    }
    if (config_.relational()) {
      Tensor h = x.narrow(0, 0, blocks[0].num_src) + type_embedding_.index_select(0, blocks[0].node_type);
      for (size_t l = 0; l < rel_layers_.size(); ++l) {
        if (l + 1 == rel_layers_.size() && embedding) *embedding = h.narrow(0, 0, num_seeds);
        h = rel_layers_[l]->Forward(h, blocks[l]);
        if (l + 1 < rel_layers_.size()) {
          h = config_.kind == ModelKind::kRgat ? torch::elu(h) : torch::relu(h);
          h = torch::dropout(h, config_.dropout, is_training());
        }
      }
      return h;
    }
    Tensor h = x.narrow(0, 0, blocks[0].num_src);
    for (size_t l = 0; l < layers_.size(); ++l) {
      if (l + 1 == layers_.size() && embedding) *embedding = h.narrow(0, 0, num_seeds);
      h = layers_[l]->Forward(h, blocks[l]);
      if (l + 1 < layers_.size()) {
        h = config_.kind == ModelKind::kGat ? torch::elu(h) : torch::relu(h);
        h = torch::dropout(h, config_.dropout, is_training());
      }
    }
    return h;
  }

  ModelConfig config_;
  std::vector<GnnLayer> layers_;
  std::vector<RelationalLayer> rel_layers_;  // relational models (layers_ is then empty)
  Tensor type_embedding_;                    // relational models: [node types, in_dim]
  torch::nn::Linear score0_{nullptr}, score1_{nullptr};  // link prediction's MLP scorer
};
TORCH_MODULE(GnnNet);

// A batch's link pairs as device index tensors.
struct PairIndex {
  Tensor src, dst, neg;  // int64 [P], [P], [P*k] or [k]
};

Tensor PositionsTensor(const std::vector<int32_t>& positions, const torch::Device& device) {
  return torch::from_blob(const_cast<int32_t*>(positions.data()), {static_cast<int64_t>(positions.size())},
                          torch::kInt32)
      .to(torch::kInt64)
      .to(device);
}

// Scores of a batch's pairs from the seeds' final embeddings h [num_seeds, hidden]:
// *pos [P], *neg [P, k] (each positive's source against its k negatives).
void ScorePairs(GnnNetImpl& net, const Tensor& h, const LinkPairs& link, const torch::Device& device, Tensor* pos,
                Tensor* neg) {
  const int64_t p = link.num_pairs(), k = link.negatives_per_pair;
  Tensor h_src = h.index_select(0, PositionsTensor(link.src, device));
  *pos = net.Score(h_src, h.index_select(0, PositionsTensor(link.dst, device)));
  Tensor h_neg = h.index_select(0, PositionsTensor(link.neg, device));
  h_neg = link.shared_negatives ? h_neg.unsqueeze(0) : h_neg.view({p, k, h.size(1)});
  *neg = net.Score(h_src.unsqueeze(1), h_neg);
  if (link.shared_negatives) *neg = neg->expand({p, k});
}

// The per-step dropout seed from (seed, epoch, batch): a resumed run draws the same masks.
uint64_t DropoutSeed(uint64_t seed, const BatchTrace& batch) {
  return SplitMixHash(seed ^ SplitMixHash(static_cast<uint64_t>(batch.epoch) * 0x100000001b3ULL +
                                          static_cast<uint64_t>(batch.batch_index)));
}

// This process's half of a training step (ForwardBackward).
struct LocalStep {
  double loss = 0;      // mean cross-entropy over the labeled seeds
  int64_t correct = 0;  // argmax == label among them
};


// ---- model files ------------------------------------------------------------------

constexpr const char* kChecksumKey = "seer.checksum";

std::string TrainingRecordJson(const TrainingRecord& r) {
  Json j = {{"fanouts", r.fanouts}, {"batch_size", r.batch_size}};
  if (!r.relation_fanouts.empty()) j["relation_fanouts"] = r.relation_fanouts;  // typed runs only
  return j.dump();
}

Result<TrainingRecord> TrainingRecordFromJson(const std::string& text, const std::string& path) {
  TrainingRecord r;
  try {
    const Json j = Json::parse(text);
    r.fanouts = j.at("fanouts").get<std::vector<int>>();
    r.batch_size = j.at("batch_size").get<int64_t>();
    if (j.contains("relation_fanouts")) r.relation_fanouts = j.at("relation_fanouts").get<std::string>();
  } catch (const Json::exception& e) {
    return Corrupt(path + ": model file's 'seer.training' is malformed: " + std::string(e.what()));
  }
  return r;
}

// XXH64 over every entry but the checksum itself, keys in byte order: per entry the key,
// a 0 byte, then a str's bytes, or a tensor's dtype name, a 0 byte, its dims (int64
// little-endian each, after their count) and its contiguous little-endian data. The same
// bytes in Python: docs/formats.md.
uint64_t ModelFileChecksum(const c10::impl::GenericDict& dict) {
  std::vector<std::string> keys;
  for (const auto& entry : dict) {
    if (entry.key().isString() && entry.key().toStringRef() != kChecksumKey) keys.push_back(entry.key().toStringRef());
  }
  std::sort(keys.begin(), keys.end());
  Xxh64 hash;
  const char zero = 0;
  for (const std::string& key : keys) {
    hash.Update(key.data(), key.size());
    hash.Update(&zero, 1);
    const c10::IValue& value = dict.at(key);
    if (value.isString()) {
      const std::string& text = value.toStringRef();
      hash.Update(text.data(), text.size());
    } else if (value.isTensor()) {
      const Tensor t = value.toTensor().detach().to(torch::kCPU).contiguous();
      const std::string dtype(c10::toString(t.scalar_type()));
      hash.Update(dtype.data(), dtype.size());
      hash.Update(&zero, 1);
      const int64_t dims = t.dim();
      hash.Update(&dims, sizeof(dims));
      for (int64_t d : t.sizes()) hash.Update(&d, sizeof(d));
      hash.Update(t.data_ptr(), t.numel() * t.element_size());
    }
  }
  return hash.Digest();
}

std::mutex& InitMutex() {
  static std::mutex mu;
  return mu;
}

class TorchModelRunner final : public ModelRunner {
 public:
  TorchModelRunner(const ModelConfig& config, double lr, uint64_t seed, bool use_cuda)
      : config_(config),
        seed_(seed),
        device_(use_cuda && torch::cuda::is_available() ? torch::Device(torch::kCUDA)
                                                         : torch::Device(torch::kCPU)),
        net_(nullptr) {
    if (config.in_dim <= 0 || config.output_dim() <= 0 || config.num_layers <= 0 || config.hidden <= 0) {
      throw std::invalid_argument(config.task == ModelTask::kLink
                                      ? "model config needs in_dim, num_layers, hidden > 0"
                                      : "model config needs in_dim, num_classes, num_layers, hidden > 0");
    }
    if (config.kind == ModelKind::kGat && config.hidden % config.heads != 0) {
      throw std::invalid_argument("GAT: --hidden must be a multiple of --heads");
    }
    const Status relational = config.CheckRelationalTypes();
    if (!relational.ok()) throw std::invalid_argument(relational.message());
    if (config.kind == ModelKind::kRgat && (config.heads <= 0 || config.hidden % config.heads != 0)) {
      throw std::invalid_argument("R-GAT: --hidden must be a multiple of --heads");
    }
    {
      // The generator is process-wide: runners built at the same time (data-parallel ranks
      // in one process, as the tests run them) must each get the weights their seed gives.
      std::lock_guard<std::mutex> lock(InitMutex());
      torch::manual_seed(seed);
      net_ = GnnNet(config);
    }
    net_->to(device_);
    optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(),
                                                      torch::optim::AdamOptions(lr));
  }

  const ModelConfig& config() const override { return config_; }
  void SetGraphIndptr(const CompactIndptr* indptr) override { graph_indptr_ = indptr; }
  bool on_cuda() const override { return device_.is_cuda(); }
  int64_t num_parameters() const override {
    int64_t n = 0;
    for (const auto& p : net_->parameters()) n += p.numel();
    return n;
  }
  int64_t embedding_dim() const override {
    if (config_.task == ModelTask::kLink) return config_.hidden;  // the final output
    return config_.num_layers == 1 ? config_.in_dim : config_.hidden;
  }

  StepResult TrainStep(const BatchTrace& batch, const float* rows,
                       const int32_t* seed_labels) override {
    CheckBatch(batch);
    return Train(batch, Stage(batch, rows), seed_labels);
  }

  StepResult TrainStepRows(const BatchTrace& batch, const DeviceRows& rows,
                           const int32_t* seed_labels) override {
    CheckBatch(batch);
    TORCH_CHECK(rows.tensor.dim() == 2 && rows.tensor.size(0) >= StagedRows(batch) &&
                    rows.tensor.size(1) == config_.in_dim,
                "device rows of the wrong shape");
    return Train(batch, rows.tensor.narrow(0, 0, StagedRows(batch)).to(device_), seed_labels);
  }

  // One step on the staged input rows x: the one training step of both modes. Alone, a
  // batch without labeled seeds does no update; with a process group every rank joins the
  // gradient allreduce (weight 0 without labeled seeds) and updates with the mean.
  StepResult Train(const BatchTrace& batch, const Tensor& x, const int32_t* seed_labels) {
    StepResult result;
    const bool link = config_.task == ModelTask::kLink;
    if (link != !batch.link.empty()) {
      throw std::invalid_argument(link ? "link prediction model given a batch without link pairs"
                                       : "node classification model given a link prediction batch");
    }
    Tensor labels;
    if (link) {
      result.num_labeled = batch.link.num_pairs() * (1 + batch.link.negatives_per_pair);
    } else {
      labels = torch::from_blob(const_cast<int32_t*>(seed_labels), {batch.num_seeds}, torch::kInt32).to(torch::kInt64);
      result.num_labeled = (labels >= 0).sum().item<int64_t>();
    }
    LocalStep local;
    if (result.num_labeled > 0) {
      local = link ? ForwardBackwardLink(batch, x) : ForwardBackward(batch, x, labels);
    } else if (group_ == nullptr) {
      return result;
    } else {
      optimizer_->zero_grad();
    }
    if (group_ != nullptr) {
      result = AllreduceGradients(batch, result.num_labeled, local);
      if (result.num_labeled == 0) return result;
    } else {
      result.loss = local.loss;
      result.num_correct = local.correct;
    }
    optimizer_->step();
    return result;
  }

  // Forward and backward on this process's batch, after zeroing the gradients; the
  // dropout RNG is reseeded from (seed, epoch, batch). No update.
  LocalStep ForwardBackward(const BatchTrace& batch, const Tensor& x, const Tensor& labels) {
    optimizer_->zero_grad();
    torch::manual_seed(DropoutSeed(seed_, batch));
    net_->train();
    std::vector<BlockTensors> blocks = Blocks(batch);
    Tensor dev_labels = labels.to(device_);
    Tensor logits = net_->Forward(x, blocks, batch.num_seeds, nullptr);
    Tensor loss = torch::nn::functional::cross_entropy(
        logits, dev_labels, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
    loss.backward();
    LocalStep local;
    local.loss = loss.item<double>();
    local.correct = ((logits.argmax(1) == dev_labels) & (dev_labels >= 0)).sum().item<int64_t>();
    return local;
  }

  // Link prediction's step: the mean BCE of the positives (target 1) plus that of the
  // negatives (target 0) (OGB's link prediction loss); "correct" counts the scored pairs
  // on the right side of 0.
  LocalStep ForwardBackwardLink(const BatchTrace& batch, const Tensor& x) {
    optimizer_->zero_grad();
    torch::manual_seed(DropoutSeed(seed_, batch));
    net_->train();
    std::vector<BlockTensors> blocks = Blocks(batch);
    Tensor h = net_->Forward(x, blocks, batch.num_seeds, nullptr);
    Tensor pos, neg;
    ScorePairs(*net_, h, batch.link, device_, &pos, &neg);
    Tensor loss = torch::nn::functional::softplus(-pos).mean() + torch::nn::functional::softplus(neg).mean();
    loss.backward();
    LocalStep local;
    local.loss = loss.item<double>();
    local.correct = (pos > 0).sum().item<int64_t>() + (neg < 0).sum().item<int64_t>();
    return local;
  }

  void ScoreLinks(const BatchTrace& batch, const float* rows, std::vector<float>* pos,
                  std::vector<float>* neg) override {
    CheckBatch(batch);
    if (config_.task != ModelTask::kLink || batch.link.empty()) {
      throw std::invalid_argument("ScoreLinks needs a link prediction model and a batch with link pairs");
    }
    torch::NoGradGuard no_grad;
    net_->eval();
    std::vector<BlockTensors> blocks = Blocks(batch);
    Tensor h = net_->Forward(Stage(batch, rows), blocks, batch.num_seeds, nullptr);
    Tensor p, n;
    ScorePairs(*net_, h, batch.link, device_, &p, &n);
    p = p.to(torch::kCPU, torch::kFloat32).contiguous();
    n = n.to(torch::kCPU, torch::kFloat32).contiguous();
    pos->assign(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
    neg->assign(n.data_ptr<float>(), n.data_ptr<float>() + n.numel());
  }

  void ScoreEmbeddings(const float* u, const float* v, int64_t count, float* scores) override {
    if (config_.task != ModelTask::kLink) throw std::invalid_argument("ScoreEmbeddings needs a link prediction model");
    torch::NoGradGuard no_grad;
    net_->eval();
    auto rows = [&](const float* p) {
      return torch::from_blob(const_cast<float*>(p), {count, config_.hidden}, torch::kFloat32).to(device_);
    };
    Tensor s = net_->Score(rows(u), rows(v)).to(torch::kCPU, torch::kFloat32).contiguous();
    std::memcpy(scores, s.data_ptr<float>(), sizeof(float) * static_cast<size_t>(count));
  }

  // The data-parallel half (SetProcessGroup): one allreduce of [grad * labeled ...,
  // labeled, loss * labeled, correct], then each gradient becomes the mean over every
  // rank's labeled seeds. The mean of per-rank means weighted by their seed counts is the
  // mean over the union, so the step equals one process's step on the union. Returns the
  // whole step's result (num_labeled 0: no rank had a labeled seed, no update).
  StepResult AllreduceGradients(const BatchTrace& batch, int64_t labeled, const LocalStep& local) {
    StepResult result;
    const double loss_sum = local.loss * static_cast<double>(labeled);
    const double correct = static_cast<double>(local.correct);
    std::vector<Tensor> params = net_->parameters();
    std::vector<Tensor> parts;
    parts.reserve(params.size() + 1);
    for (Tensor& p : params) {
      Tensor g = p.grad();
      parts.push_back(g.defined() ? g.reshape(-1) * static_cast<double>(labeled)
                                  : torch::zeros({p.numel()}, p.options()));
    }
    parts.push_back(torch::tensor({static_cast<float>(labeled), static_cast<float>(loss_sum), static_cast<float>(correct)},
                                  torch::TensorOptions().dtype(torch::kFloat32)).to(device_));
    Tensor flat = torch::cat(parts);
    const Status st = AllreduceSumTensor(
        *group_, flat, fmt::format("gradient allreduce (epoch {}, batch {})", batch.epoch + 1, batch.batch_index));
    if (!st.ok()) throw CollectiveError(st);
    const int64_t n = flat.numel() - 3;
    Tensor tail = flat.narrow(0, n, 3).to(torch::kCPU);
    const double total = static_cast<double>(tail[0].item<float>());
    result.num_labeled = static_cast<int64_t>(std::llround(total));
    if (result.num_labeled == 0) return result;
    result.loss = static_cast<double>(tail[1].item<float>()) / total;
    result.num_correct = static_cast<int64_t>(std::llround(tail[2].item<float>()));
    flat.narrow(0, 0, n).div_(total);
    int64_t offset = 0;
    torch::NoGradGuard no_grad;
    for (Tensor& p : params) {
      Tensor mean = flat.narrow(0, offset, p.numel()).view(p.sizes());
      if (p.grad().defined()) {
        p.mutable_grad().copy_(mean);
      } else {
        p.mutable_grad() = mean.clone();
      }
      offset += p.numel();
    }
    return result;
  }

  void SetProcessGroup(ProcessGroup* group) override { group_ = group; }

  Status BroadcastParameters(ProcessGroup& group, int root) override {
    torch::NoGradGuard no_grad;
    std::vector<Tensor> params = net_->parameters();
    std::vector<Tensor> parts;
    for (const Tensor& p : params) parts.push_back(p.detach().reshape(-1).to(torch::kCPU));
    Tensor flat = torch::cat(parts).contiguous();
    SEER_RETURN_IF_ERROR(group.Broadcast(flat.data_ptr<float>(), flat.numel(), root, "parameter broadcast from rank " +
                                                                                         std::to_string(root)));
    int64_t offset = 0;
    for (Tensor& p : params) {
      p.copy_(flat.narrow(0, offset, p.numel()).view(p.sizes()));
      offset += p.numel();
    }
    return Status::Ok();
  }

  void Predict(const BatchTrace& batch, const float* rows, int64_t* classes,
               std::vector<float>* embeddings, std::vector<float>* logits_out) override {
    CheckBatch(batch);
    torch::NoGradGuard no_grad;
    net_->eval();
    std::vector<BlockTensors> blocks = Blocks(batch);
    Tensor x = Stage(batch, rows);
    Tensor emb;
    const bool link = config_.task == ModelTask::kLink;
    Tensor logits = net_->Forward(x, blocks, batch.num_seeds, embeddings && !link ? &emb : nullptr);
    if (link) {
      // A link model's output is the node's embedding (what its scorer compares); no class.
      emb = logits;
      std::fill(classes, classes + batch.num_seeds, int64_t{-1});
    } else {
      Tensor pred = logits.argmax(1).to(torch::kCPU).contiguous();
      std::memcpy(classes, pred.data_ptr<int64_t>(), sizeof(int64_t) * batch.num_seeds);
    }
    if (embeddings) {
      Tensor e = emb.to(torch::kCPU).contiguous();
      embeddings->assign(e.data_ptr<float>(), e.data_ptr<float>() + e.numel());
    }
    if (logits_out) {
      Tensor l = logits.to(torch::kCPU, torch::kFloat32).contiguous();
      logits_out->assign(l.data_ptr<float>(), l.data_ptr<float>() + l.numel());
    }
  }

  void SnapshotBest() override {
    torch::NoGradGuard no_grad;
    best_.clear();
    for (const auto& item : net_->named_parameters()) best_[item.key()] = item.value().detach().clone();
  }
  void RestoreBest() override {
    if (best_.empty()) return;
    torch::NoGradGuard no_grad;
    for (auto& item : net_->named_parameters()) item.value().copy_(best_.at(item.key()));
  }
  bool has_best() const override { return !best_.empty(); }

  Status SaveCheckpoint(const std::string& path, const TrainPosition& position) override {
    torch::serialize::OutputArchive archive;
    for (const auto& item : net_->named_parameters()) archive.write("model." + item.key(), item.value());
    for (const auto& [name, t] : best_) archive.write("best." + name, t);
    torch::serialize::OutputArchive optim_archive;
    optimizer_->save(optim_archive);
    archive.write("optimizer", optim_archive);
    std::ostringstream payload_stream;
    archive.save_to(payload_stream);
    const std::string payload = payload_stream.str();

    return WriteCheckpointFile(path, CheckpointHeader{config_, position, !best_.empty()}, payload);
  }

  Result<TrainPosition> LoadCheckpoint(const std::string& path) override {
    SEER_ASSIGN_OR_RETURN(CheckpointContents file, ReadCheckpointFile(path));
    if (file.header.config.ToJson() != config_.ToJson()) {
      return InvalidArgument(path + ": checkpoint was written for model " + file.header.config.ToJson() +
                             ", this run builds " + config_.ToJson());
    }
    try {
      torch::serialize::InputArchive archive;
      std::istringstream in(file.payload);
      archive.load_from(in, device_);
      torch::NoGradGuard no_grad;
      for (auto& item : net_->named_parameters()) {
        Tensor t;
        archive.read("model." + item.key(), t);
        item.value().copy_(t);
      }
      best_.clear();
      if (file.header.has_best) {
        for (const auto& item : net_->named_parameters()) {
          Tensor t;
          archive.read("best." + item.key(), t);
          best_[item.key()] = t.to(device_).clone();
        }
      }
      torch::serialize::InputArchive optim_archive;
      archive.read("optimizer", optim_archive);
      optimizer_->load(optim_archive);
    } catch (const c10::Error& e) {
      return Corrupt(path + ": checkpoint payload unreadable: " + std::string(e.what_without_backtrace()));
    }
    return file.header.position;
  }

  void SetTrainingRecord(const TrainingRecord& record) override { training_ = record; }
  const TrainingRecord& training_record() const override { return training_; }

  Status SaveModel(const std::string& path, bool best) override {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    for (const auto& item : net_->named_parameters()) {
      Tensor t = (best && !best_.empty()) ? best_.at(item.key()) : item.value();
      dict.insert(item.key(), t.detach().to(torch::kCPU).contiguous());
    }
    dict.insert("seer.config", config_.ToJson());
    dict.insert("seer.training", TrainingRecordJson(training_));
    dict.insert(kChecksumKey, Xxh64::ToHex(ModelFileChecksum(dict)));
    std::vector<char> bytes = torch::pickle_save(dict);
    return WriteFileAtomically(path, std::string(bytes.begin(), bytes.end()));
  }

  Status LoadWeights(const c10::impl::GenericDict& dict, const std::string& path) {
    torch::NoGradGuard no_grad;
    for (auto& item : net_->named_parameters()) {
      if (!dict.contains(item.key())) return Corrupt(path + ": model file lacks tensor '" + item.key() + "'");
      const c10::IValue& value = dict.at(item.key());
      if (!value.isTensor()) return Corrupt(path + ": model file entry '" + item.key() + "' is not a tensor");
      Tensor t = value.toTensor();
      if (t.sizes() != item.value().sizes()) {
        return Corrupt(path + ": tensor '" + item.key() + "' has the wrong shape");
      }
      if (!torch::isfinite(t).all().item<bool>()) {
        return Corrupt(path + ": tensor '" + item.key() + "' holds a NaN or infinite weight");
      }
      item.value().copy_(t);
    }
    return Status::Ok();
  }

 private:
  void CheckBatch(const BatchTrace& batch) const {
    if (config_.kind != ModelKind::kMlp &&
        static_cast<int64_t>(batch.blocks.size()) != config_.num_layers) {
      throw std::invalid_argument("batch has " + std::to_string(batch.blocks.size()) +
                                  " blocks, model has " + std::to_string(config_.num_layers) + " layers");
    }
    if (batch.num_seeds <= 0) throw std::invalid_argument("batch without seeds");
  }

  std::vector<BlockTensors> Blocks(const BatchTrace& batch) const {
    std::vector<BlockTensors> blocks;
    if (config_.kind == ModelKind::kMlp) return blocks;
    if (config_.relational()) return RelationalBlocks(batch);
    for (const LayerBlock& b : batch.blocks) blocks.push_back(ToBlockTensors(b, device_));
    if (config_.kind == ModelKind::kGcn && config_.gcn_norm == GcnNorm::kGraph) {
      Tensor degree = GraphDegrees(batch).to(device_);
      for (BlockTensors& b : blocks) b.graph_degree = degree.narrow(0, 0, b.num_src);
    }
    return blocks;
  }

  // A typed batch's blocks: the node types of its rows (from the global ids), each block's
  // relations checked against the model's, the seeds of the target type.
  std::vector<BlockTensors> RelationalBlocks(const BatchTrace& batch) const {
    const std::vector<int32_t> types = NodeTypes(batch, batch.blocks[0].num_src, config_.node_type_offsets);
    if (batch.num_seeds > static_cast<int64_t>(types.size())) throw std::invalid_argument("batch has more seeds than rows");
    for (int64_t i = 0; i < batch.num_seeds; ++i) {
      if (types[static_cast<size_t>(i)] != config_.target_type) {
        throw std::invalid_argument(fmt::format("model {}: seed {} (node {}) is of node type {}, the model predicts type {}",
                                                ModelKindName(config_.kind), i, batch.node_ids[static_cast<size_t>(i)],
                                                types[static_cast<size_t>(i)], config_.target_type));
      }
    }
    std::vector<BlockTensors> blocks;
    for (size_t l = 0; l < batch.blocks.size(); ++l) {
      blocks.push_back(ToRelationalBlock(batch.blocks[l], l, types, config_, device_));
    }
    blocks[0].node_type = torch::tensor(std::vector<int64_t>(types.begin(), types.end()),
                                        torch::TensorOptions().dtype(torch::kInt64)).to(device_);
    return blocks;
  }

  // Full-graph in-degrees of node_ids[0 .. blocks[0].num_src) (every block's src are a
  // prefix of those), checked against each block: a node cannot have more sampled
  // in-neighbors than in-neighbors.
  Tensor GraphDegrees(const BatchTrace& batch) const {
    if (graph_indptr_ == nullptr) {
      throw std::logic_error("GCN with gcn_norm=graph needs the graph's degrees: call SetGraphIndptr first");
    }
    const CompactIndptr& indptr = *graph_indptr_;
    const int64_t num_nodes = static_cast<int64_t>(indptr.size()) - 1;
    const int64_t n = batch.blocks[0].num_src;
    if (static_cast<int64_t>(batch.node_ids.size()) < n) {
      throw std::invalid_argument("batch has fewer node_ids than blocks[0].num_src");
    }
    Tensor degree = torch::empty({n}, torch::kFloat32);
    float* deg_p = degree.data_ptr<float>();
    for (int64_t r = 0; r < n; ++r) {
      const int64_t v = batch.node_ids[static_cast<size_t>(r)];
      if (v < 0 || v >= num_nodes) {
        throw std::invalid_argument("GCN: node id " + std::to_string(v) + " outside the graph's indptr (" +
                                    std::to_string(num_nodes) + " nodes)");
      }
      deg_p[r] = static_cast<float>(indptr[static_cast<size_t>(v) + 1] - indptr[static_cast<size_t>(v)]);
    }
    for (const LayerBlock& b : batch.blocks) {
      for (int64_t d = 0; d < b.num_dst; ++d) {
        if (static_cast<float>(b.row_ptr[d + 1] - b.row_ptr[d]) > deg_p[d]) {
          throw std::invalid_argument("GCN: node " + std::to_string(batch.node_ids[static_cast<size_t>(d)]) +
                                      " has more sampled in-neighbors than its in-degree in the graph "
                                      "(indptr of another graph?)");
        }
      }
    }
    return degree;
  }

  // The rows the model reads: the first blocks[0].num_src (MLP: num_seeds) of the batch.
  int64_t StagedRows(const BatchTrace& batch) const {
    return (config_.kind == ModelKind::kMlp || batch.blocks.empty()) ? batch.num_seeds : batch.blocks[0].num_src;
  }
  Tensor Stage(const BatchTrace& batch, const float* rows) {
    const int64_t n = StagedRows(batch);
    Tensor host = torch::from_blob(const_cast<float*>(rows), {n, config_.in_dim}, torch::kFloat32);
    if (!device_.is_cuda()) return host;
    // Pinned staging, then an asynchronous copy on the current stream; the step's
    // loss.item() synchronises before the staging buffer is reused.
    if (!staging_.defined() || staging_.numel() < n * config_.in_dim) {
      staging_ = torch::empty({std::max<int64_t>(n, 1) * config_.in_dim * 2},
                              torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(true));
    }
    Tensor pinned = staging_.narrow(0, 0, n * config_.in_dim).view({n, config_.in_dim});
    pinned.copy_(host);
    return pinned.to(device_, /*non_blocking=*/true);
  }

  ModelConfig config_;
  uint64_t seed_;
  torch::Device device_;
  GnnNet net_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::map<std::string, Tensor> best_;
  Tensor staging_;
  TrainingRecord training_;
  const CompactIndptr* graph_indptr_ = nullptr;  // borrowed (SetGraphIndptr)
  ProcessGroup* group_ = nullptr;                       // borrowed (SetProcessGroup)
};

}  // namespace

std::unique_ptr<ModelRunner> ModelRunner::Create(const ModelConfig& config, double learning_rate,
                                                 uint64_t seed, bool use_cuda) {
  return std::make_unique<TorchModelRunner>(config, learning_rate, seed, use_cuda);
}

Result<std::unique_ptr<ModelRunner>> ModelRunner::LoadModel(const std::string& path, bool use_cuda,
                                                         std::string* warning) {
  SEER_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  try {
    torch::IValue value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
    if (!value.isGenericDict()) return Corrupt(path + ": model file is not a dict of tensors");
    c10::impl::GenericDict dict = value.toGenericDict();
    if (!dict.contains("seer.config") || !dict.at("seer.config").isString()) {
      return Corrupt(path + ": model file lacks 'seer.config' (not written by seer train --save-model)");
    }
    if (dict.contains(kChecksumKey)) {
      const c10::IValue& stored = dict.at(kChecksumKey);
      const std::string actual = Xxh64::ToHex(ModelFileChecksum(dict));
      if (!stored.isString() || stored.toStringRef() != actual) {
        return Corrupt(path + ": model file is corrupt (checksum " + (stored.isString() ? stored.toStringRef() : "?") +
                       " recorded, " + actual + " computed over its contents)");
      }
    } else if (warning != nullptr) {
      *warning = path + ": model file has no checksum (written by an older seer): its weights cannot be verified; "
                        "train again with --save-model to get a checked file";
    }
    SEER_ASSIGN_OR_RETURN(ModelConfig config,
                          ModelConfig::FromJson(dict.at("seer.config").toStringRef(), path));
    auto runner = std::make_unique<TorchModelRunner>(config, 1e-3, 0, use_cuda);
    SEER_RETURN_IF_ERROR(runner->LoadWeights(dict, path));
    if (dict.contains("seer.training")) {
      if (!dict.at("seer.training").isString()) return Corrupt(path + ": model file's 'seer.training' is not a str");
      SEER_ASSIGN_OR_RETURN(TrainingRecord record, TrainingRecordFromJson(dict.at("seer.training").toStringRef(), path));
      runner->SetTrainingRecord(record);
    }
    return std::unique_ptr<ModelRunner>(std::move(runner));
  } catch (const c10::Error& e) {
    return Corrupt(path + ": model file unreadable: " + std::string(e.what_without_backtrace()));
  }
}

}  // namespace seer
