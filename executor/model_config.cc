#include "executor/model_config.h"

namespace seer {

Result<ModelKind> ParseModelKind(const std::string& text) { return ParseName(kModelKindNames, text, "model"); }

const char* ModelKindName(ModelKind kind) { return NameOf(kModelKindNames, kind); }

Result<GcnNorm> ParseGcnNorm(const std::string& text) { return ParseName(kGcnNormNames, text, "GCN normalisation"); }

const char* GcnNormName(GcnNorm norm) { return NameOf(kGcnNormNames, norm); }

Result<ModelTask> ParseModelTask(const std::string& text) { return ParseName(kModelTaskNames, text, "task"); }

const char* ModelTaskName(ModelTask task) { return NameOf(kModelTaskNames, task); }

Result<LinkScorer> ParseLinkScorer(const std::string& text) { return ParseName(kLinkScorerNames, text, "scorer"); }

const char* LinkScorerName(LinkScorer scorer) { return NameOf(kLinkScorerNames, scorer); }

Status ModelConfig::CheckRelationalTypes() const {
  if (!relational()) return Status::Ok();
  const std::string model = std::string("model ") + ModelKindName(kind);
  if (task == ModelTask::kLink) {
    return InvalidArgument(model + ": link prediction with relational models is not supported yet");
  }
  if (node_type_offsets.size() < 2) {
    return InvalidArgument(model + " needs the typed dataset's node_type_offsets (node types + 1 entries), got " +
                           std::to_string(node_type_offsets.size()));
  }
  if (node_type_offsets[0] != 0) {
    return InvalidArgument(model + ": node_type_offsets must start at 0, not " + std::to_string(node_type_offsets[0]));
  }
  for (size_t t = 1; t < node_type_offsets.size(); ++t) {
    if (node_type_offsets[t] < node_type_offsets[t - 1]) {
      return InvalidArgument(model + ": node_type_offsets decrease at entry " + std::to_string(t) + " (" +
                             std::to_string(node_type_offsets[t - 1]) + " then " +
                             std::to_string(node_type_offsets[t]) + ")");
    }
  }
  const int32_t types = num_node_types();
  if (relation_types.empty() || static_cast<int64_t>(relation_types.size()) > kMaxModelRelations) {
    return InvalidArgument(model + " needs 1 to " + std::to_string(kMaxModelRelations) +
                           " relation_types (the typed dataset's relations), got " +
                           std::to_string(relation_types.size()));
  }
  for (size_t r = 0; r < relation_types.size(); ++r) {
    const auto [src, dst] = relation_types[r];
    if (src < 0 || src >= types || dst < 0 || dst >= types) {
      return InvalidArgument(model + ": relation " + std::to_string(r) + " joins node types (" + std::to_string(src) +
                             ", " + std::to_string(dst) + "), outside the " + std::to_string(types) + " node types");
    }
  }
  if (target_type < 0 || target_type >= types) {
    return InvalidArgument(model + ": target_type " + std::to_string(target_type) + " outside the " +
                           std::to_string(types) + " node types");
  }
  return Status::Ok();
}

}  // namespace seer
