// Fuzz target: the checkpoint reader (executor/checkpoint_file.h, torch-free): header
// line, format/version/config/position fields, payload size and XXH64. Anything
// accepted must re-encode to a file that reads back the same.
#include "executor/checkpoint_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  const std::string path = seer::fuzz::WriteInput(data, size, "model.ckpt");
  auto position = seer::ReadCheckpointPosition(path);
  if (!position.ok()) seer::fuzz::CheckRefusal(position.status(), "model.ckpt");
  auto config = seer::ReadCheckpointConfig(path);
  if (!config.ok()) seer::fuzz::CheckRefusal(config.status(), "model.ckpt");
  auto contents = seer::ReadCheckpointFile(path);
  if (!contents.ok()) {
    seer::fuzz::CheckRefusal(contents.status(), "model.ckpt");
    return 0;
  }
  const std::string again = seer::EncodeCheckpoint(contents->header, contents->payload);
  const std::string path2 = seer::fuzz::WriteInput(reinterpret_cast<const uint8_t*>(again.data()), again.size(),
                                                   "again.ckpt");
  auto reread = seer::ReadCheckpointFile(path2);
  if (!reread.ok()) {
    std::fprintf(stderr, "re-encoded checkpoint refused: %s\n", reread.status().message().c_str());
    std::abort();
  }
  if (reread->payload != contents->payload || reread->header.has_best != contents->header.has_best) std::abort();
  return 0;
}
