// Fuzz target: the JSON layer (storage/base/json_file.h) and the dataset manifest reader
// (DatasetManifest::FromJson). An accepted manifest must survive a round trip: ToJson
// parses back to the same identity.
#include "storage/base/json_file.h"
#include "storage/dataset/dataset.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto json = seer::ParseJson(text, "dataset.json");
  if (!json.ok()) seer::fuzz::CheckRefusal(json.status(), "dataset.json");
  auto manifest = seer::DatasetManifest::FromJson(text, "dataset.json");
  if (!manifest.ok()) {
    seer::fuzz::CheckRefusal(manifest.status(), "dataset.json");
    return 0;
  }
  const std::string again = manifest->ToJson();
  auto reparsed = seer::DatasetManifest::FromJson(again, "roundtrip.json");
  if (!reparsed.ok()) {
    std::fprintf(stderr, "accepted manifest does not parse back: %s\n", reparsed.status().message().c_str());
    std::abort();
  }
  if (reparsed->Identity() != manifest->Identity()) std::abort();
  return 0;
}
