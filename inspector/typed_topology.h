// TypedTopology: what sampling a typed (heterogeneous) dataset reads (storage/dataset/dataset.h
// "typed dataset"): per relation R = src__name__dst, in manifest order, its CSC over the
// destination type — R.indptr.bin in RAM (CompactIndptr, count_dst + 1 entries) and
// R.indices.bin (source-type local ids) behind a BlockReader — plus an optional neighbor
// cache per relation (keyed by destination local id, lists of source local ids), and the
// node types' offsets: global id of local id l of type t = type_offsets[t] + l.
//
// view() lends all of it to a NeighborSampler / SuperbatchSampler as a TopologyView whose
// `typed` points into this object (inspector/sampler.h: TypedTopologyView); the object is
// neither copyable nor movable (hold it by unique_ptr) so that pointer stays valid, and it
// must outlive every sampler holding its view. Open() blocks on the indptr reads. After
// construction the object is immutable; reads through the readers follow the
// BlockReader's thread-safety (both of ours allow concurrent ReadBatch calls).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cache/neighbor_cache.h"
#include "inspector/sampler.h"
#include "storage/base/status.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"
#include "storage/io/block_reader.h"
#include "storage/io/direct_reader.h"

namespace seer {

// One relation as a TypedTopology holds it (the constructor's input).
struct TypedRelationParts {
  CompactIndptr indptr;                  // the destination type's count + 1 entries
  std::unique_ptr<BlockReader> indices;  // the relation's indices file
  IndexDtype index_dtype = IndexDtype::kUint32;
  int32_t src_type = 0, dst_type = 0;    // node type indices (manifest order)
  NeighborCache ncache;                  // optional (disabled = none): keyed by dst local id
};

// A typed manifest's node type offsets: T + 1 entries, offsets[t] = the sum of the counts
// of the types before t (manifest order), offsets[T] = num_nodes.
std::vector<int64_t> NodeTypeOffsets(const DatasetManifest& manifest);
// The relations' keys "src__name__dst", manifest order (what ParseRelationFanouts names).
std::vector<std::string> RelationKeys(const DatasetManifest& manifest);
// (src type, dst type) of every relation, manifest order (type indices in manifest order).
// kCorrupt naming the relation when it names a type the manifest does not have.
Result<std::vector<std::pair<int32_t, int32_t>>> RelationTypes(const DatasetManifest& manifest);

class TypedTopology {
 public:
  // LayerBlock::edge_rel is a uint8: at most this many relations.
  static constexpr int64_t kMaxRelations = 256;

  // Loads every relation's indptr (checked: starts at 0, never decreases, ends at the
  // relation's num_edges) and opens its indices file with `reader` (O_DIRECT io_uring or
  // pread). No neighbor caches. A homogeneous dataset or one of more than kMaxRelations
  // relations is kInvalidArgument; errors name the file.
  static Result<std::unique_ptr<TypedTopology>> Open(const Dataset& dataset, const DirectReaderOptions& reader);
  // Over readers opened elsewhere (mmap readers, in-RAM readers of tests). Throws
  // std::invalid_argument when the parts do not fit together: type_offsets not T + 1 >= 2
  // entries from 0 and non-decreasing, a relation's types out of range, its indptr not
  // count_dst + 1 entries, a null reader, an enabled ncache covering fewer than count_dst
  // nodes, or more than kMaxRelations relations. An ncache must hold the relation's lists
  // (destination local id -> source local ids, in the relation's order).
  TypedTopology(std::vector<int64_t> type_offsets, std::vector<TypedRelationParts> relations);
  TypedTopology(const TypedTopology&) = delete;
  TypedTopology& operator=(const TypedTopology&) = delete;

  // The sampler's view: indptr/indices null, `typed` -> typed_view() (this object's).
  TopologyView view() const;
  const TypedTopologyView& typed_view() const { return view_; }

  int64_t num_nodes() const { return type_offsets_.back(); }
  int32_t num_types() const { return static_cast<int32_t>(type_offsets_.size()) - 1; }
  int32_t num_relations() const { return static_cast<int32_t>(relations_.size()); }
  const std::vector<int64_t>& type_offsets() const { return type_offsets_; }
  const TypedRelationParts& relation(int32_t r) const { return relations_.at(static_cast<size_t>(r)); }

  // RAM the relations' indptrs hold (CompactIndptr::ResidentBytes summed): the memory
  // split's topology share. Neighbor caches are counted apart (ncache_bytes).
  int64_t indptr_bytes() const;
  int64_t ncache_bytes() const;
  // What indptr_bytes() will be for `manifest` before loading (CompactIndptr::EstimateBytes
  // of each relation's count_dst + 1 entries).
  static int64_t EstimateIndptrBytes(const DatasetManifest& manifest);

 private:
  std::vector<int64_t> type_offsets_;
  std::vector<TypedRelationParts> relations_;
  TypedTopologyView view_;  // points into relations_
};

}  // namespace seer
