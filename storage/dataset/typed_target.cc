#include "storage/dataset/typed_target.h"

#include <fcntl.h>

#include <fmt/format.h>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"

namespace seer {

namespace {

std::string TypeNames(const std::vector<const DatasetNodeType*>& types) {
  std::string names;
  for (const DatasetNodeType* t : types) names += (names.empty() ? "" : ", ") + t->name;
  return names;
}

}  // namespace

Result<TypedTarget> ResolveTarget(const DatasetManifest& m, const std::string& requested) {
  if (!m.typed()) return InvalidArgument("--target-type: the dataset is not typed (it has no node types)");
  std::vector<const DatasetNodeType*> labeled;
  for (const DatasetNodeType& t : m.node_types) {
    if (!t.labels.empty()) labeled.push_back(&t);
  }
  const DatasetNodeType* chosen = nullptr;
  if (requested.empty()) {
    if (labeled.size() != 1) {
      return InvalidArgument(labeled.empty()
                                 ? std::string("typed dataset without labels on any node type: nothing to classify")
                                 : "typed dataset with labels on several node types (" + TypeNames(labeled) +
                                       "): choose one with --target-type");
    }
    chosen = labeled.front();
  } else {
    chosen = m.FindNodeType(requested);
    if (chosen == nullptr) {
      std::vector<const DatasetNodeType*> all;
      for (const DatasetNodeType& t : m.node_types) all.push_back(&t);
      return InvalidArgument("--target-type " + requested + ": no such node type (the dataset has " + TypeNames(all) +
                             ")");
    }
    if (chosen->labels.empty()) {
      return InvalidArgument("--target-type " + requested + ": that node type has no labels" +
                             (labeled.empty() ? std::string() : " (labeled: " + TypeNames(labeled) + ")"));
    }
  }
  TypedTarget target;
  target.type = static_cast<int32_t>(chosen - m.node_types.data());
  target.name = chosen->name;
  for (int32_t t = 0; t < target.type; ++t) target.offset += m.node_types[static_cast<size_t>(t)].count;
  target.count = chosen->count;
  return target;
}

Result<DatasetManifest> TypedTrainingView(const DatasetManifest& m, const TypedTarget& target) {
  DatasetManifest view = m;
  const DatasetNodeType* widest = nullptr;
  for (const DatasetNodeType& t : m.node_types) {
    if (t.feature_dim <= 0) continue;
    if (widest != nullptr && t.feature_dtype != widest->feature_dtype) {
      return InvalidArgument(fmt::format("node types {} and {} store features as {} and {}: typed training reads one "
                                         "dtype (convert one of them again)",
                                         widest->name, t.name, FeatureDtypeName(widest->feature_dtype),
                                         FeatureDtypeName(t.feature_dtype)));
    }
    if (widest != nullptr && t.feature_dtype == FeatureDtype::kInt8 && t.feature_dim != widest->feature_dim) {
      return InvalidArgument(fmt::format("node types {} and {} have int8 features of {} and {} columns: int8 rows "
                                         "(codes, then scale and bias) cannot be padded to one width",
                                         widest->name, t.name, widest->feature_dim, t.feature_dim));
    }
    if (widest == nullptr || t.feature_dim > widest->feature_dim) widest = &t;
  }
  // No type with features: one zero column, so the rows exist (the model's type
  // embeddings are then the only input).
  view.feature_dim = widest != nullptr ? widest->feature_dim : 1;
  view.feature_dtype = widest != nullptr ? widest->feature_dtype : FeatureDtype::kFloat32;
  view.num_classes = m.node_types[static_cast<size_t>(target.type)].num_classes;
  return view;
}

Result<std::vector<int64_t>> LoadTargetSplit(const Dataset& dataset, const TypedTarget& target,
                                             const std::string& name) {
  const DatasetNodeType& type = dataset.manifest().node_types[static_cast<size_t>(target.type)];
  const std::string& file = name == "train" ? type.train : name == "valid" ? type.valid : type.test;
  if (file.empty()) return std::vector<int64_t>{};
  const std::string path = dataset.PathOf(file);
  auto it = dataset.manifest().files.find(file);
  const int64_t bytes = it != dataset.manifest().files.end() ? it->second.bytes : 0;
  std::vector<int64_t> ids(static_cast<size_t>(bytes / 8));
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_RETURN_IF_ERROR(PreadFull(fd.get(), ids.data(), bytes / 8 * 8, 0, path));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= target.count) {
      return Corrupt(fmt::format("{}: id {} at index {} (byte offset {}) is out of range [0, {}) (node type {})", path,
                                 ids[i], i, i * 8, target.count, target.name));
    }
    ids[i] += target.offset;
  }
  return ids;
}

}  // namespace seer
