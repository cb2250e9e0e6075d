#include "inspector/typed_topology.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace seer {

std::vector<int64_t> NodeTypeOffsets(const DatasetManifest& manifest) {
  std::vector<int64_t> offsets(1, 0);
  for (const DatasetNodeType& t : manifest.node_types) offsets.push_back(offsets.back() + t.count);
  return offsets;
}

std::vector<std::string> RelationKeys(const DatasetManifest& manifest) {
  std::vector<std::string> keys;
  for (const DatasetRelation& r : manifest.relations) keys.push_back(r.key());
  return keys;
}

Result<std::vector<std::pair<int32_t, int32_t>>> RelationTypes(const DatasetManifest& manifest) {
  const auto index_of = [&](const std::string& name) {
    for (size_t t = 0; t < manifest.node_types.size(); ++t) {
      if (manifest.node_types[t].name == name) return static_cast<int32_t>(t);
    }
    return int32_t{-1};
  };
  std::vector<std::pair<int32_t, int32_t>> out;
  for (const DatasetRelation& r : manifest.relations) {
    const int32_t src = index_of(r.src), dst = index_of(r.dst);
    if (src < 0 || dst < 0) {
      return Corrupt("relation " + r.key() + " names node type '" + (src < 0 ? r.src : r.dst) +
                     "', which the manifest does not have");
    }
    out.emplace_back(src, dst);
  }
  return out;
}

TypedTopology::TypedTopology(std::vector<int64_t> type_offsets, std::vector<TypedRelationParts> relations)
    : type_offsets_(std::move(type_offsets)), relations_(std::move(relations)) {
  if (static_cast<int64_t>(relations_.size()) > kMaxRelations) {
    throw std::invalid_argument(fmt::format("TypedTopology: {} relations, at most {} are supported",
                                            relations_.size(), kMaxRelations));
  }
  view_.type_offsets = type_offsets_;
  for (size_t r = 0; r < relations_.size(); ++r) {
    const TypedRelationParts& parts = relations_[r];
    RelationView rel;
    rel.indptr = &parts.indptr;
    rel.indices = parts.indices.get();
    rel.index_dtype = parts.index_dtype;
    rel.ncache = parts.ncache.enabled() ? &parts.ncache : nullptr;
    rel.src_type = parts.src_type;
    rel.dst_type = parts.dst_type;
    view_.relations.push_back(rel);
  }
  // The sampler's checks of the view (offsets, types, indptr sizes, readers, caches).
  const Status st = CheckSamplerOptions(view(), SamplerOptions{});
  if (!st.ok()) throw std::invalid_argument("TypedTopology: " + st.message());
}

TopologyView TypedTopology::view() const {
  TopologyView view;
  view.typed = &view_;
  return view;
}

int64_t TypedTopology::indptr_bytes() const {
  int64_t bytes = 0;
  for (const TypedRelationParts& parts : relations_) bytes += parts.indptr.ResidentBytes();
  return bytes;
}

int64_t TypedTopology::ncache_bytes() const {
  int64_t bytes = 0;
  for (const TypedRelationParts& parts : relations_) bytes += parts.ncache.enabled() ? parts.ncache.stats().bytes : 0;
  return bytes;
}

int64_t TypedTopology::EstimateIndptrBytes(const DatasetManifest& manifest) {
  int64_t bytes = 0;
  for (const DatasetRelation& r : manifest.relations) {
    const DatasetNodeType* dst = manifest.FindNodeType(r.dst);
    if (dst != nullptr) bytes += CompactIndptr::EstimateBytes(dst->count + 1);
  }
  return bytes;
}

Result<std::unique_ptr<TypedTopology>> TypedTopology::Open(const Dataset& dataset, const DirectReaderOptions& reader) {
  const DatasetManifest& m = dataset.manifest();
  if (!m.typed()) {
    return InvalidArgument(dataset.dir() + ": not a typed dataset (no node types): open it as a Topology");
  }
  if (static_cast<int64_t>(m.relations.size()) > kMaxRelations) {
    return InvalidArgument(fmt::format("{}: {} relations; the sampler tags edges with 8 bits, at most {}",
                                       dataset.dir(), m.relations.size(), kMaxRelations));
  }
  Result<std::vector<std::pair<int32_t, int32_t>>> types = RelationTypes(m);
  if (!types.ok()) return types.status().WithContext(dataset.PathOf(dataset_files::kManifest));
  std::vector<TypedRelationParts> relations;
  relations.reserve(m.relations.size());
  for (size_t r = 0; r < m.relations.size(); ++r) {
    const DatasetRelation& rel = m.relations[r];
    TypedRelationParts parts;
    parts.src_type = (*types)[r].first;
    parts.dst_type = (*types)[r].second;
    parts.index_dtype = rel.index_dtype;
    const int64_t count_dst = m.node_types[static_cast<size_t>(parts.dst_type)].count;
    SEER_ASSIGN_OR_RETURN(parts.indptr,
                          CompactIndptr::LoadFile(dataset.PathOf(rel.indptr), count_dst + 1, rel.num_edges));
    SEER_ASSIGN_OR_RETURN(parts.indices, OpenDirectReader(dataset.PathOf(rel.indices), reader));
    relations.push_back(std::move(parts));
  }
  return std::make_unique<TypedTopology>(NodeTypeOffsets(m), std::move(relations));
}

}  // namespace seer
