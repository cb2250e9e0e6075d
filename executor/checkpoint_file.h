// The checkpoint file format (torch-free; ModelRunner fills the payload):
//
//   line 1   a JSON header: {"format":"seer-checkpoint","version":2,
//            "config":{ModelConfig}, "position":{TrainPosition}, "has_best":bool,
//            "payload_bytes":N, "payload_xxh64":"16 hex digits",
//            "header_xxh64":"16 hex digits"}
//   then     exactly N payload bytes (ModelRunner's torch archive: weights, Adam state,
//            the best-validation weights when has_best)
//
// The position carries the run record (TrainPosition::run: the dataset's identity and
// every flag that shapes batches and plans) and the current epoch's partial training
// sums. header_xxh64 is the XXH64 of the header's compact JSON dump (keys sorted)
// without that field, so a changed position or record is detected like a changed
// payload; the header carries the payload's size and XXH64, so truncation and bit flips
// are both detected. Every refusal is kCorrupt naming the path (and the field when the
// header is at fault). Version 1 files (no header checksum, no run record) are refused:
// what they were trained with cannot be checked. Files are written atomically (temp +
// fsync + rename). The position's seed is stored as a decimal string (uint64 does not
// fit JSON's int64). ModelConfig's own JSON (ModelConfig::ToJson / FromJson, also stored
// in model files) is defined here. Pure functions over files; thread-safe.
#pragma once

#include <map>
#include <string>

#include "executor/model_config.h"
#include "executor/train_position.h"
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

// header_xxh64 of a header object (the field itself left out).
std::string CheckpointHeaderChecksum(Json header);

// The file's bytes: header line, '\n', payload.
std::string EncodeCheckpoint(const CheckpointHeader& header, const std::string& payload);
Status WriteCheckpointFile(const std::string& path, const CheckpointHeader& header, const std::string& payload);
// Reads and verifies (format, version, size, checksum) a whole checkpoint.
Result<CheckpointContents> ReadCheckpointFile(const std::string& path);

// The header alone (first line; its own checksum verified, the payload not read).
Result<CheckpointHeader> ReadCheckpointHeader(const std::string& path);

// A checkpoint's position or model config, without building a model.
Result<TrainPosition> ReadCheckpointPosition(const std::string& path);
Result<ModelConfig> ReadCheckpointConfig(const std::string& path);

// "" when `saved` equals `now`; else one "NAME: checkpoint X, this run Y" clause per
// differing entry (entries missing on one side show as "(none)"), one per line (joined
// by "\n  ", so a message lists every difference at once).
std::string DescribeRunDifferences(const std::map<std::string, std::string>& saved,
                                   const std::map<std::string, std::string>& now);

}  // namespace seer
