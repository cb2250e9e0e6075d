#include "executor/model_config.h"

namespace seer {

Result<ModelKind> ParseModelKind(const std::string& text) { return ParseName(kModelKindNames, text, "model"); }

const char* ModelKindName(ModelKind kind) { return NameOf(kModelKindNames, kind); }

Result<GcnNorm> ParseGcnNorm(const std::string& text) { return ParseName(kGcnNormNames, text, "GCN normalisation"); }

const char* GcnNormName(GcnNorm norm) { return NameOf(kGcnNormNames, norm); }

}  // namespace seer
