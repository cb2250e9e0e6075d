// Without libtorch (no seer::executor library) the checkpoint fuzz target compiles
// executor/checkpoint_file.cc on its own; these are the four name-table functions it
// uses from executor/model_runner.cc, with the same tables (from model_runner.h).
#include "executor/model_runner.h"

namespace seer {

Result<ModelKind> ParseModelKind(const std::string& text) { return ParseName(kModelKindNames, text, "model"); }
const char* ModelKindName(ModelKind kind) { return NameOf(kModelKindNames, kind); }
Result<GcnNorm> ParseGcnNorm(const std::string& text) { return ParseName(kGcnNormNames, text, "GCN normalisation"); }
const char* GcnNormName(GcnNorm norm) { return NameOf(kGcnNormNames, norm); }

}  // namespace seer
