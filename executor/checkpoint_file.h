// The checkpoint file format (torch-free; ModelRunner fills the payload):
//
//   line 1   a JSON header: {"format":"seer-checkpoint","version":1,
//            "config":{ModelConfig}, "position":{TrainPosition}, "has_best":bool,
//            "payload_bytes":N, "payload_xxh64":"16 hex digits"}
//   then     exactly N payload bytes (ModelRunner's torch archive: weights, Adam state,
//            the best-validation weights when has_best)
//
// The header carries the payload's size and XXH64, so truncation and bit flips are both
// detected; every refusal is kCorrupt naming the path (and the field when the header is
// at fault). Files are written atomically (temp + fsync + rename). The position's seed
// is stored as a decimal string (uint64 does not fit JSON's int64). ModelConfig's own
// JSON (ModelConfig::ToJson / FromJson, also stored in model files) is defined here.
// Pure functions over files; thread-safe.
#pragma once

#include <string>

#include "executor/model_runner.h"
#include "storage/base/json_file.h"
#include "storage/base/status.h"

namespace seer {

struct CheckpointHeader {
  ModelConfig config;
  TrainPosition position;
  bool has_best = false;
};

struct CheckpointContents {
  CheckpointHeader header;
  std::string payload;
};

Json ModelConfigToJson(const ModelConfig& config);
Result<ModelConfig> ModelConfigFromJson(const Json& json, const std::string& path);
Json TrainPositionToJson(const TrainPosition& position);
Result<TrainPosition> TrainPositionFromJson(const Json& json, const std::string& path);

// The file's bytes: header line, '\n', payload.
std::string EncodeCheckpoint(const CheckpointHeader& header, const std::string& payload);
Status WriteCheckpointFile(const std::string& path, const CheckpointHeader& header, const std::string& payload);
// Reads and verifies (format, version, size, checksum) a whole checkpoint.
Result<CheckpointContents> ReadCheckpointFile(const std::string& path);

// A checkpoint's position or model config, without building a model.
Result<TrainPosition> ReadCheckpointPosition(const std::string& path);
Result<ModelConfig> ReadCheckpointConfig(const std::string& path);

}  // namespace seer
