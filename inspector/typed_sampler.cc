// NeighborSampler's typed path (inspector/sampler.h; the view: inspector/typed_topology.h).
//
// The homogeneous sampler generalised relation by relation: per hop, every destination
// (global id v of type t, local id l = v - type_offsets[t]) is expanded through each
// relation r into t, in relation (manifest) order, exactly as the homogeneous sampler
// expands a node: min(fan-out of r at the hop, degree) positions of r's list at l with
// Floyd's algorithm (all of them when the degree is not above the fan-out or the fan-out
// is -1), drawn from SamplerRng::ForRelation(seed, epoch, v, hop, r); hits of r's neighbor
// cache are copied, every other position becomes one ReadRequest on r's indices file, and
// each relation's requests of the hop go to its reader in one ReadBatch. The picks (source
// type local ids) become global ids (type_offsets[src type] + local); the block's edges of
// a destination are its relations' picks in relation order, LayerBlock::edge_rel tagging
// each with r. Kept apart from sampler.cc so the homogeneous loop has no per-edge branch.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "inspector/sampler.h"

namespace seer {

Status NeighborSampler::SampleTypedBatch(const int64_t* seeds, int64_t num_seeds, int64_t epoch,
                                         int64_t batch_index, BatchTrace* trace, SampleStats* stats) const {
  const TypedTopologyView& typed = *topology_.typed;
  const std::vector<int64_t>& offsets = typed.type_offsets;
  const int64_t num_nodes = offsets.back();
  const size_t num_relations = typed.relations.size();
  const int num_layers = static_cast<int>(options_.fanouts.size());

  std::unordered_map<int64_t, int32_t> local =
      BeginTrace(seeds, num_seeds, epoch, batch_index, num_layers, num_nodes, trace);

  // Per relation: its neighbor cache when enabled, and its element size.
  std::vector<const NeighborCache*> ncaches(num_relations, nullptr);
  std::vector<int64_t> index_bytes(num_relations, 0);
  for (size_t r = 0; r < num_relations; ++r) {
    const RelationView& rel = typed.relations[r];
    if (rel.ncache != nullptr && rel.ncache->enabled()) ncaches[r] = rel.ncache;
    index_bytes[r] = IndexDtypeBytes(rel.index_dtype);
  }

  SampleStats batch_stats;
  batch_stats.batches = 1;
  std::vector<int64_t> picks;         // source-type local ids of the layer, CSR order
  std::vector<int64_t> pick_element;  // element index in the relation's indices file (for errors)
  std::vector<int64_t> positions;
  std::vector<int32_t> dst_type;      // per destination of the layer
  std::vector<std::vector<ReadRequest>> requests(num_relations);

  int64_t num_dst = num_seeds;
  for (int hop = 0; hop < num_layers; ++hop) {
    LayerBlock& block = trace->blocks[static_cast<size_t>(num_layers - 1 - hop)];
    block.num_dst = num_dst;
    block.row_ptr.assign(static_cast<size_t>(num_dst) + 1, 0);
    dst_type.resize(static_cast<size_t>(num_dst));
    for (int64_t d = 0; d < num_dst; ++d) {
      const int64_t v = trace->node_ids[static_cast<size_t>(d)];
      const int32_t t = typed.TypeOf(v);
      const int64_t l = v - offsets[static_cast<size_t>(t)];
      dst_type[static_cast<size_t>(d)] = t;
      int64_t total = 0;
      for (int32_t r : relations_into_[static_cast<size_t>(t)]) {
        const CompactIndptr& indptr = *typed.relations[static_cast<size_t>(r)].indptr;
        const int64_t degree = indptr[l + 1] - indptr[l];
        const int64_t fanout = relation_fanouts_[static_cast<size_t>(r)][static_cast<size_t>(hop)];
        total += (fanout < 0 || degree <= fanout) ? degree : fanout;
      }
      block.row_ptr[d + 1] = block.row_ptr[d] + total;
    }
    const int64_t num_edges = block.row_ptr[num_dst];
    picks.assign(static_cast<size_t>(num_edges), 0);
    pick_element.assign(static_cast<size_t>(num_edges), -1);
    block.edge_rel.resize(static_cast<size_t>(num_edges));
    for (std::vector<ReadRequest>& list : requests) list.clear();

    // 1. positions (the RNG sees only degrees), 2. cache hits or read requests, per
    // (destination, relation) in relation order.
    for (int64_t d = 0; d < num_dst; ++d) {
      const int64_t v = trace->node_ids[static_cast<size_t>(d)];
      const int32_t t = dst_type[static_cast<size_t>(d)];
      const int64_t l = v - offsets[static_cast<size_t>(t)];
      int64_t first = block.row_ptr[d];
      for (int32_t r : relations_into_[static_cast<size_t>(t)]) {
        const size_t ri = static_cast<size_t>(r);
        const CompactIndptr& indptr = *typed.relations[ri].indptr;
        const int64_t begin = indptr[l];
        const int64_t degree = indptr[l + 1] - begin;
        const int64_t fanout = relation_fanouts_[ri][static_cast<size_t>(hop)];
        const int64_t take = (fanout < 0 || degree <= fanout) ? degree : fanout;
        if (take == 0) continue;
        ++batch_stats.neighbor_lookups;
        std::fill(block.edge_rel.begin() + first, block.edge_rel.begin() + first + take, static_cast<uint8_t>(r));
        positions.resize(static_cast<size_t>(take));
        if (take == degree) {
          for (int64_t i = 0; i < take; ++i) positions[static_cast<size_t>(i)] = i;
        } else {
          SamplerRng rng = SamplerRng::ForRelation(options_.seed, epoch, v, hop, r);
          SamplePositions(rng, degree, take, positions.data());
        }
        const NeighborCache* ncache = ncaches[ri];
        const int64_t cached = ncache != nullptr ? ncache->Find(l) : -1;
        if (cached >= 0) {
          ++batch_stats.ncache_hits;
          for (int64_t i = 0; i < take; ++i) {
            picks[static_cast<size_t>(first + i)] = ncache->NeighborAt(cached, positions[static_cast<size_t>(i)]);
          }
        } else {
          const int64_t bytes = index_bytes[ri];
          for (int64_t i = 0; i < take; ++i) {
            const int64_t element = begin + positions[static_cast<size_t>(i)];
            pick_element[static_cast<size_t>(first + i)] = element;
            requests[ri].push_back(ReadRequest{element * bytes, bytes, &picks[static_cast<size_t>(first + i)]});
          }
        }
        first += take;
      }
    }
    for (size_t r = 0; r < num_relations; ++r) {
      if (requests[r].empty()) continue;
      ReadStats read_stats;
      Status st = typed.relations[r].indices->ReadBatch(requests[r], &read_stats);
      batch_stats.reads.Add(read_stats);
      batch_stats.topology_requests += static_cast<int64_t>(requests[r].size());
      if (!st.ok()) {
        return st.WithContext(fmt::format("sampling epoch {} batch {} hop {} relation {}", epoch, batch_index,
                                          hop + 1, r));
      }
    }

    // 3. the block in local ids; new nodes (global ids) appended in first-seen order.
    block.col_idx.resize(static_cast<size_t>(num_edges));
    for (int64_t j = 0; j < num_edges; ++j) {
      const size_t r = block.edge_rel[static_cast<size_t>(j)];
      const RelationView& rel = typed.relations[r];
      const int64_t src_begin = offsets[static_cast<size_t>(rel.src_type)];
      const int64_t src_count = offsets[static_cast<size_t>(rel.src_type) + 1] - src_begin;
      const int64_t u = picks[static_cast<size_t>(j)];
      if (u < 0 || u >= src_count) {
        const int64_t element = pick_element[static_cast<size_t>(j)];
        return Corrupt(rel.indices->path() + ": neighbor id " + std::to_string(u) +
                       (element >= 0 ? " at byte offset " + std::to_string(element * index_bytes[r])
                                     : std::string(" in the neighbor cache")) +
                       " is >= " + std::to_string(src_count) + ", the count of its source type " +
                       std::to_string(rel.src_type) + " (relation " + std::to_string(r) + ")");
      }
      const int64_t next = static_cast<int64_t>(trace->node_ids.size());
      if (next > INT32_MAX) {
        return InvalidArgument(
            fmt::format("sampling epoch {} batch {}: more than 2^31 nodes in a batch", epoch, batch_index));
      }
      auto it = local.emplace(src_begin + u, static_cast<int32_t>(next));
      if (it.second) trace->node_ids.push_back(src_begin + u);
      block.col_idx[static_cast<size_t>(j)] = it.first->second;
    }
    block.num_src = static_cast<int64_t>(trace->node_ids.size());
    batch_stats.edges += num_edges;
    num_dst = block.num_src;
  }
  batch_stats.sampled_nodes = static_cast<int64_t>(trace->node_ids.size());
  if (stats != nullptr) stats->Add(batch_stats);
  return Status::Ok();
}

}  // namespace seer
