#include "inspector/sampler.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "storage/base/parse_number.h"
#include "storage/base/random.h"

namespace seer {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the sampler reads uint32 ids into the low half of zeroed int64 slots");

void SampleStats::Add(const SampleStats& other) {
  batches += other.batches;
  sampled_nodes += other.sampled_nodes;
  edges += other.edges;
  neighbor_lookups += other.neighbor_lookups;
  ncache_hits += other.ncache_hits;
  topology_requests += other.topology_requests;
  reads.Add(other.reads);
}

Result<std::vector<int>> ParseFanouts(const std::string& text) {
  std::vector<int> fanouts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string_view item = std::string_view(text).substr(start, comma - start);
    const std::optional<int64_t> value = ParseNumber<int64_t>(item);
    if (!value || *value == 0 || *value < -1 || *value > (int64_t{1} << 30)) {
      return InvalidArgument("bad fan-out list '" + text +
                             "': expected comma-separated integers > 0 (or -1 = all), e.g. 10,10,10");
    }
    fanouts.push_back(static_cast<int>(*value));
    start = comma + 1;
  }
  return fanouts;
}

Result<std::vector<std::vector<int>>> ParseRelationFanouts(const std::string& text,
                                                           const std::vector<std::string>& relation_keys,
                                                           const std::vector<int>& default_fanouts) {
  std::vector<std::vector<int>> out(relation_keys.size(), default_fanouts);
  std::vector<bool> named(relation_keys.size(), false);
  const auto bad = [&](const std::string& why) {
    return InvalidArgument("bad per-relation fan-outs '" + text + "': " + why +
                           " (expected RELATION=F1,F2,...;... with RELATION a relation's key src__name__dst "
                           "or its unique name)");
  };
  size_t start = 0;
  while (start < text.size()) {
    size_t semi = text.find(';', start);
    if (semi == std::string::npos) semi = text.size();
    const std::string item = text.substr(start, semi - start);
    start = semi + 1;
    if (item.empty()) {
      if (semi == text.size()) break;  // a trailing ';'
      return bad("an empty item");
    }
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return bad("'" + item + "' has no '='");
    const std::string name = item.substr(0, eq);
    int64_t found = -1;
    for (size_t r = 0; r < relation_keys.size(); ++r) {  // the full key first
      if (relation_keys[r] == name) found = static_cast<int64_t>(r);
    }
    if (found < 0) {  // else the middle part of exactly one key
      for (size_t r = 0; r < relation_keys.size(); ++r) {
        const std::string& key = relation_keys[r];
        const size_t a = key.find("__");
        const size_t b = a == std::string::npos ? std::string::npos : key.find("__", a + 2);
        if (b == std::string::npos || key.substr(a + 2, b - a - 2) != name) continue;
        if (found >= 0) {
          return bad("'" + name + "' names both " + relation_keys[static_cast<size_t>(found)] + " and " + key +
                     ": use the full key");
        }
        found = static_cast<int64_t>(r);
      }
    }
    if (found < 0) {
      std::string known;
      for (const std::string& key : relation_keys) known += (known.empty() ? "" : ", ") + key;
      return bad("no relation '" + name + "' (the relations: " + known + ")");
    }
    if (named[static_cast<size_t>(found)]) {
      return bad("relation " + relation_keys[static_cast<size_t>(found)] + " is given twice");
    }
    named[static_cast<size_t>(found)] = true;
    Result<std::vector<int>> list = ParseFanouts(item.substr(eq + 1));
    if (!list.ok()) return bad("'" + item.substr(eq + 1) + "' is not a fan-out list like 10,10 (each > 0 or -1)");
    if (list->size() != default_fanouts.size()) {
      return bad(fmt::format("{} has {} fan-outs, the model has {} layers", relation_keys[static_cast<size_t>(found)],
                             list->size(), default_fanouts.size()));
    }
    out[static_cast<size_t>(found)] = std::move(list).value();
  }
  return out;
}

// ---- Randomness --------------------------------------------------------------------

namespace {

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

SamplerRng::SamplerRng(uint64_t seed, uint64_t stream_a, uint64_t stream_b) {
  // Hash the three words into one SplitMix64 state (each step is a bijection mixed
  // with the next word), then expand it into the xoshiro state, as its authors advise.
  uint64_t h = seed;
  uint64_t k = SplitMixNext(&h);
  h = k ^ stream_a;
  k = SplitMixNext(&h);
  h = k ^ stream_b;
  for (uint64_t& word : s_) word = SplitMixNext(&h);
}

SamplerRng SamplerRng::ForNode(uint64_t seed, int64_t epoch, int64_t node, int hop) {
  // Node ids are < 2^56 (int64 ids of real graphs are far below), hops < 256: the second
  // stream word is (node << 8 | hop), distinct for every (node, hop). Streams never
  // collide with the epoch shuffle's (kShuffleStream = all ones needs node >= 2^56).
  return SamplerRng(seed, static_cast<uint64_t>(epoch),
                    (static_cast<uint64_t>(node) << 8) | static_cast<uint64_t>(hop & 0xff));
}

SamplerRng SamplerRng::ForRelation(uint64_t seed, int64_t epoch, int64_t node, int hop, int relation) {
  // ForNode's second word, and the epoch with (relation + 1) XORed into bits 48..56 as
  // the first: for |epoch| < 2^48 ForNode's first word has bits 48..63 all clear (epoch
  // >= 0) or all set (epoch < 0), this one never (relation + 1 is in [1, 256]); and
  // (epoch, relation) -> first word is injective in that range.
  const uint64_t tag = static_cast<uint64_t>((relation & 0xff) + 1) << 48;
  return SamplerRng(seed, static_cast<uint64_t>(epoch) ^ tag,
                    (static_cast<uint64_t>(node) << 8) | static_cast<uint64_t>(hop & 0xff));
}

uint64_t SamplerRng::Next() {  // xoshiro256**
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint64_t SamplerRng::Below(uint64_t bound) {
  // Lemire, "Fast Random Integer Generation in an Interval" (2019): the high word of
  // x * bound is uniform on [0, bound) once the low words below 2^64 mod bound are
  // rejected — no modulo bias, every value reachable.
  if (bound == 0) throw std::invalid_argument("SamplerRng::Below(0)");
  uint64_t x = Next();
  __uint128_t m = static_cast<__uint128_t>(x) * bound;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      x = Next();
      m = static_cast<__uint128_t>(x) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

void SamplePositions(SamplerRng& rng, int64_t degree, int64_t count, int64_t* out) {
  if (count < 0 || count > degree) throw std::invalid_argument("SamplePositions: count > degree");
  // Floyd's algorithm: for j = degree-count .. degree-1 pick t uniform in [0, j]; take t
  // unless already taken, else take j. Every count-subset is equally likely.
  int64_t taken = 0;
  if (count <= 64) {
    for (int64_t j = degree - count; j < degree; ++j) {
      const int64_t t = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(j) + 1));
      bool seen = false;
      for (int64_t i = 0; i < taken; ++i) {
        if (out[i] == t) {
          seen = true;
          break;
        }
      }
      out[taken++] = seen ? j : t;
    }
  } else {
    std::unordered_set<int64_t> chosen;
    chosen.reserve(static_cast<size_t>(count) * 2);
    for (int64_t j = degree - count; j < degree; ++j) {
      const int64_t t = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(j) + 1));
      const int64_t pick = chosen.insert(t).second ? t : j;
      if (pick == j) chosen.insert(j);
      out[taken++] = pick;
    }
  }
  std::sort(out, out + count);
}

// ---- Sampler --------------------------------------------------------------------------

int32_t TypedTopologyView::TypeOf(int64_t global_id) const {
  if (type_offsets.size() < 2 || global_id < 0 || global_id >= type_offsets.back()) {
    throw std::out_of_range("TypedTopologyView::TypeOf: id " + std::to_string(global_id) + " outside the node types");
  }
  // The last type whose offset is <= id (empty types share their offset with the next).
  const auto it = std::upper_bound(type_offsets.begin(), type_offsets.end(), global_id);
  return static_cast<int32_t>(it - type_offsets.begin()) - 1;
}

Status CheckSamplerOptions(const TopologyView& topology, const SamplerOptions& options) {
  for (int f : options.fanouts) {
    if (f == 0 || f < -1) return InvalidArgument("fan-out must be > 0 or -1 (all), got " + std::to_string(f));
  }
  const TypedTopologyView* typed = topology.typed;
  if (typed == nullptr) {
    if (topology.indptr == nullptr || topology.indptr->empty() || topology.indices == nullptr) {
      return InvalidArgument("topology has no indptr or indices reader");
    }
    if (!options.relation_fanouts.empty()) {
      return InvalidArgument("per-relation fan-outs given for a dataset without relations (not typed)");
    }
    return Status::Ok();
  }
  const std::vector<int64_t>& offsets = typed->type_offsets;
  if (offsets.size() < 2 || offsets.front() != 0) {
    return InvalidArgument("typed topology: type offsets must be T + 1 >= 2 entries from 0");
  }
  for (size_t t = 0; t + 1 < offsets.size(); ++t) {
    if (offsets[t] > offsets[t + 1]) return InvalidArgument("typed topology: type offsets decrease");
  }
  const int64_t num_types = static_cast<int64_t>(offsets.size()) - 1;
  const size_t num_relations = typed->relations.size();
  if (num_relations > 256) {
    return InvalidArgument(fmt::format("typed topology: {} relations, at most 256 are supported", num_relations));
  }
  for (size_t r = 0; r < num_relations; ++r) {
    const RelationView& rel = typed->relations[r];
    if (rel.src_type < 0 || rel.src_type >= num_types || rel.dst_type < 0 || rel.dst_type >= num_types) {
      return InvalidArgument(fmt::format("typed topology: relation {} joins types {} -> {} of {}", r, rel.src_type,
                                         rel.dst_type, num_types));
    }
    const int64_t count_dst = offsets[static_cast<size_t>(rel.dst_type) + 1] - offsets[static_cast<size_t>(rel.dst_type)];
    if (rel.indptr == nullptr || rel.indptr->size() != count_dst + 1 || rel.indices == nullptr) {
      return InvalidArgument(fmt::format(
          "typed topology: relation {} needs an indptr of {} entries (its destination type's count + 1) and an "
          "indices reader",
          r, count_dst + 1));
    }
    if (rel.ncache != nullptr && rel.ncache->enabled() && rel.ncache->stats().num_nodes < count_dst) {
      return InvalidArgument(fmt::format("typed topology: relation {}'s neighbor cache covers {} nodes, its "
                                         "destination type has {}",
                                         r, rel.ncache->stats().num_nodes, count_dst));
    }
  }
  if (!options.relation_fanouts.empty()) {
    if (options.relation_fanouts.size() != num_relations) {
      return InvalidArgument(fmt::format("per-relation fan-outs: {} lists for {} relations",
                                         options.relation_fanouts.size(), num_relations));
    }
    for (size_t r = 0; r < num_relations; ++r) {
      const std::vector<int>& list = options.relation_fanouts[r];
      if (list.size() != options.fanouts.size()) {
        return InvalidArgument(fmt::format("per-relation fan-outs: relation {} has {} hops, the fan-outs {}", r,
                                           list.size(), options.fanouts.size()));
      }
      for (int f : list) {
        if (f == 0 || f < -1) {
          return InvalidArgument(fmt::format("per-relation fan-outs: relation {} has fan-out {} (must be > 0 or -1)",
                                             r, f));
        }
      }
    }
  }
  return Status::Ok();
}

NeighborSampler::NeighborSampler(TopologyView topology, SamplerOptions options)
    : topology_(topology), options_(std::move(options)) {
  const Status st = CheckSamplerOptions(topology_, options_);
  if (!st.ok()) throw std::invalid_argument("NeighborSampler: " + st.message());
  if (topology_.typed != nullptr) {
    const TypedTopologyView& typed = *topology_.typed;
    relations_into_.resize(typed.type_offsets.size() - 1);
    for (size_t r = 0; r < typed.relations.size(); ++r) {
      relations_into_[static_cast<size_t>(typed.relations[r].dst_type)].push_back(static_cast<int32_t>(r));
    }
    relation_fanouts_ = options_.relation_fanouts.empty()
                            ? std::vector<std::vector<int>>(typed.relations.size(), options_.fanouts)
                            : options_.relation_fanouts;
  }
}

std::unordered_map<int64_t, int32_t> NeighborSampler::BeginTrace(const int64_t* seeds, int64_t num_seeds,
                                                                 int64_t epoch, int64_t batch_index, int num_layers,
                                                                 int64_t num_nodes, BatchTrace* trace) {
  trace->epoch = epoch;
  trace->batch_index = batch_index;
  trace->num_seeds = num_seeds;
  trace->node_ids.assign(seeds, seeds + num_seeds);
  trace->blocks.assign(static_cast<size_t>(num_layers), LayerBlock{});
  std::unordered_map<int64_t, int32_t> local;
  local.reserve(static_cast<size_t>(num_seeds) * 16);
  for (int64_t i = 0; i < num_seeds; ++i) {
    const int64_t v = seeds[i];
    if (v < 0 || v >= num_nodes) {
      throw std::invalid_argument("SampleBatch: seed " + std::to_string(v) + " out of range");
    }
    if (!local.emplace(v, static_cast<int32_t>(i)).second) {
      throw std::invalid_argument("SampleBatch: duplicate seed " + std::to_string(v));
    }
  }
  return local;
}

Status NeighborSampler::SampleBatch(const int64_t* seeds, int64_t num_seeds, int64_t epoch,
                                    int64_t batch_index, BatchTrace* trace,
                                    SampleStats* stats) const {
  if (topology_.typed != nullptr) return SampleTypedBatch(seeds, num_seeds, epoch, batch_index, trace, stats);
  const CompactIndptr& indptr = *topology_.indptr;
  const int64_t num_nodes = topology_.num_nodes();
  const int64_t index_bytes = IndexDtypeBytes(topology_.index_dtype);
  const NeighborCache* ncache =
      (topology_.ncache != nullptr && topology_.ncache->enabled()) ? topology_.ncache : nullptr;
  const int num_layers = static_cast<int>(options_.fanouts.size());

  std::unordered_map<int64_t, int32_t> local =
      BeginTrace(seeds, num_seeds, epoch, batch_index, num_layers, num_nodes, trace);

  SampleStats batch_stats;
  batch_stats.batches = 1;
  std::vector<int64_t> picks;         // neighbor ids of the layer, CSR order
  std::vector<int64_t> pick_element;  // element index in indices.bin (for error messages)
  std::vector<int64_t> positions;
  std::vector<ReadRequest> requests;

  int64_t num_dst = num_seeds;
  for (int hop = 0; hop < num_layers; ++hop) {
    const int64_t fanout = options_.fanouts[static_cast<size_t>(hop)];
    LayerBlock& block = trace->blocks[static_cast<size_t>(num_layers - 1 - hop)];
    block.num_dst = num_dst;
    block.row_ptr.assign(static_cast<size_t>(num_dst) + 1, 0);
    for (int64_t d = 0; d < num_dst; ++d) {
      const int64_t v = trace->node_ids[static_cast<size_t>(d)];
      const int64_t degree = indptr[v + 1] - indptr[v];
      const int64_t take = (fanout < 0 || degree <= fanout) ? degree : fanout;
      block.row_ptr[d + 1] = block.row_ptr[d] + take;
    }
    const int64_t num_edges = block.row_ptr[num_dst];
    picks.assign(static_cast<size_t>(num_edges), 0);
    pick_element.assign(static_cast<size_t>(num_edges), -1);
    requests.clear();

    // 1. positions (the RNG sees only degrees), 2. cache hits or read requests.
    for (int64_t d = 0; d < num_dst; ++d) {
      const int64_t v = trace->node_ids[static_cast<size_t>(d)];
      const int64_t begin = indptr[v];
      const int64_t degree = indptr[v + 1] - begin;
      const int64_t first = block.row_ptr[d];
      const int64_t take = block.row_ptr[d + 1] - first;
      if (take == 0) continue;
      ++batch_stats.neighbor_lookups;
      positions.resize(static_cast<size_t>(take));
      if (take == degree) {
        for (int64_t i = 0; i < take; ++i) positions[i] = i;
      } else {
        // A generator per (seed, epoch, node, hop): a seed's computation tree does not
        // depend on which batch it is in, nor on the order of the batch's nodes.
        SamplerRng rng = SamplerRng::ForNode(options_.seed, epoch, v, hop);
        SamplePositions(rng, degree, take, positions.data());
      }
      const int64_t cached = ncache != nullptr ? ncache->Find(v) : -1;
      if (cached >= 0) {
        ++batch_stats.ncache_hits;
        for (int64_t i = 0; i < take; ++i) picks[first + i] = ncache->NeighborAt(cached, positions[i]);
        continue;
      }
      for (int64_t i = 0; i < take; ++i) {
        const int64_t element = begin + positions[i];
        pick_element[first + i] = element;
        requests.push_back(ReadRequest{element * index_bytes, index_bytes, &picks[first + i]});
      }
    }
    if (!requests.empty()) {
      ReadStats read_stats;
      Status st = topology_.indices->ReadBatch(requests, &read_stats);
      batch_stats.reads.Add(read_stats);
      batch_stats.topology_requests += static_cast<int64_t>(requests.size());
      if (!st.ok()) {
        return st.WithContext("sampling epoch " + std::to_string(epoch) + " batch " +
                              std::to_string(batch_index) + " hop " + std::to_string(hop + 1));
      }
    }

    // 3. the block in local ids; new nodes are appended in first-seen order.
    block.col_idx.resize(static_cast<size_t>(num_edges));
    for (int64_t j = 0; j < num_edges; ++j) {
      const int64_t u = picks[j];
      if (u < 0 || u >= num_nodes) {
        const int64_t element = pick_element[j];
        return Corrupt(topology_.indices->path() + ": neighbor id " + std::to_string(u) +
                       (element >= 0 ? " at byte offset " + std::to_string(element * index_bytes)
                                     : std::string(" in the neighbor cache")) +
                       " is >= num_nodes " + std::to_string(num_nodes));
      }
      const int64_t next = static_cast<int64_t>(trace->node_ids.size());
      if (next > INT32_MAX) {
        return InvalidArgument(
            fmt::format("sampling epoch {} batch {}: more than 2^31 nodes in a batch", epoch, batch_index));
      }
      auto it = local.emplace(u, static_cast<int32_t>(next));
      if (it.second) trace->node_ids.push_back(u);
      block.col_idx[j] = it.first->second;
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
