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

}  // namespace seer
