#include "executor/checkpoint_file.h"

#include <cerrno>
#include <cstdlib>

#include "storage/base/atomic_file.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"

namespace seer {
namespace {

constexpr const char* kCheckpointFormat = "seer-checkpoint";
constexpr int kCheckpointVersion = 1;

std::string PayloadChecksum(const std::string& payload) {
  return Xxh64::ToHex(Xxh64::Hash(payload.data(), payload.size()));
}

// Format, version, size and checksum of a header against its payload.
Status VerifyHeader(const Json& header, const std::string& payload, const std::string& path) {
  auto format = JsonString(header, "format", path);
  if (!format.ok() || *format != kCheckpointFormat) {
    return Corrupt(path + ": not a Seer checkpoint (format field missing or wrong)");
  }
  auto version = JsonInt(header, "version", path);
  if (!version.ok() || *version != kCheckpointVersion) return Corrupt(path + ": unsupported checkpoint version");
  SEER_ASSIGN_OR_RETURN(int64_t size, JsonInt(header, "payload_bytes", path));
  SEER_ASSIGN_OR_RETURN(std::string sum, JsonString(header, "payload_xxh64", path));
  if (static_cast<int64_t>(payload.size()) != size) {
    return Corrupt(path + ": checkpoint is truncated or partial: payload has " + std::to_string(payload.size()) +
                   " bytes, header says " + std::to_string(size));
  }
  const std::string actual = PayloadChecksum(payload);
  if (actual != sum) return Corrupt(path + ": checkpoint is corrupt: payload xxh64 " + actual + " != recorded " + sum);
  return Status::Ok();
}

}  // namespace

Json ModelConfigToJson(const ModelConfig& c) {
  Json j = {{"kind", ModelKindName(c.kind)}, {"in_dim", c.in_dim},       {"hidden", c.hidden},
            {"num_classes", c.num_classes},  {"num_layers", c.num_layers}, {"dropout", c.dropout},
            {"heads", c.heads}};
  if (c.kind == ModelKind::kGcn) j["gcn_norm"] = GcnNormName(c.gcn_norm);
  return j;
}

Result<ModelConfig> ModelConfigFromJson(const Json& j, const std::string& path) {
  ModelConfig c;
  SEER_ASSIGN_OR_RETURN(std::string kind, JsonString(j, "kind", path));
  SEER_ASSIGN_OR_RETURN(c.kind, ParseModelKind(kind));
  SEER_ASSIGN_OR_RETURN(c.in_dim, JsonInt(j, "in_dim", path));
  SEER_ASSIGN_OR_RETURN(c.hidden, JsonInt(j, "hidden", path));
  SEER_ASSIGN_OR_RETURN(c.num_classes, JsonInt(j, "num_classes", path));
  SEER_ASSIGN_OR_RETURN(c.num_layers, JsonInt(j, "num_layers", path));
  SEER_ASSIGN_OR_RETURN(c.heads, JsonInt(j, "heads", path));
  SEER_ASSIGN_OR_RETURN(c.dropout, JsonNumber(j, "dropout", path));
  // GCN files written before gcn_norm existed were trained with the block's degrees.
  if (c.kind == ModelKind::kGcn) c.gcn_norm = GcnNorm::kBlock;
  if (c.kind == ModelKind::kGcn && j.contains("gcn_norm")) {
    SEER_ASSIGN_OR_RETURN(std::string norm, JsonString(j, "gcn_norm", path));
    auto parsed = ParseGcnNorm(norm);
    if (!parsed.ok()) return Corrupt(path + ": field 'gcn_norm': " + parsed.status().message());
    c.gcn_norm = *parsed;
  }
  return c;
}

std::string ModelConfig::ToJson() const { return ModelConfigToJson(*this).dump(); }

Result<ModelConfig> ModelConfig::FromJson(const std::string& json, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(Json j, ParseJson(json, path));
  return ModelConfigFromJson(j, path);
}

Json TrainPositionToJson(const TrainPosition& p) {
  return {{"epoch", p.epoch},
          {"next_superbatch", p.next_superbatch},
          {"global_step", p.global_step},
          {"seed", std::to_string(p.seed)},
          {"best_valid_accuracy", p.best_valid_accuracy},
          {"best_epoch", p.best_epoch}};
}

Result<TrainPosition> TrainPositionFromJson(const Json& j, const std::string& path) {
  TrainPosition p;
  SEER_ASSIGN_OR_RETURN(p.epoch, JsonInt(j, "epoch", path));
  SEER_ASSIGN_OR_RETURN(p.next_superbatch, JsonInt(j, "next_superbatch", path));
  SEER_ASSIGN_OR_RETURN(p.global_step, JsonInt(j, "global_step", path));
  SEER_ASSIGN_OR_RETURN(p.best_epoch, JsonInt(j, "best_epoch", path));
  SEER_ASSIGN_OR_RETURN(p.best_valid_accuracy, JsonNumber(j, "best_valid_accuracy", path));
  SEER_ASSIGN_OR_RETURN(std::string seed, JsonString(j, "seed", path));
  char* end = nullptr;
  errno = 0;
  p.seed = std::strtoull(seed.c_str(), &end, 10);
  if (seed.empty() || *end != '\0' || errno != 0) {
    return Corrupt(path + ": field 'seed' is not a decimal uint64: '" + seed + "'");
  }
  return p;
}

std::string EncodeCheckpoint(const CheckpointHeader& header, const std::string& payload) {
  const Json j = {{"format", kCheckpointFormat},
                  {"version", kCheckpointVersion},
                  {"config", ModelConfigToJson(header.config)},
                  {"position", TrainPositionToJson(header.position)},
                  {"has_best", header.has_best},
                  {"payload_bytes", static_cast<int64_t>(payload.size())},
                  {"payload_xxh64", PayloadChecksum(payload)}};
  return j.dump() + "\n" + payload;
}

Status WriteCheckpointFile(const std::string& path, const CheckpointHeader& header, const std::string& payload) {
  return WriteFileAtomically(path, EncodeCheckpoint(header, payload));
}

Result<CheckpointContents> ReadCheckpointFile(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  const size_t newline = bytes.find('\n');
  if (newline == std::string::npos) {
    return Corrupt(path + ": not a Seer checkpoint (no header line; truncated or foreign file)");
  }
  auto header = ParseJson(bytes.substr(0, newline), path);
  if (!header.ok()) return Corrupt(path + ": not a Seer checkpoint (unreadable header: " + header.status().message() + ")");
  CheckpointContents file;
  file.payload = bytes.substr(newline + 1);
  SEER_RETURN_IF_ERROR(VerifyHeader(*header, file.payload, path));
  SEER_ASSIGN_OR_RETURN(const Json* config, JsonMember(*header, "config", path));
  SEER_ASSIGN_OR_RETURN(file.header.config, ModelConfigFromJson(*config, path));
  SEER_ASSIGN_OR_RETURN(const Json* position, JsonMember(*header, "position", path));
  SEER_ASSIGN_OR_RETURN(file.header.position, TrainPositionFromJson(*position, path));
  SEER_ASSIGN_OR_RETURN(file.header.has_best, JsonBool(*header, "has_best", path));
  return file;
}

Result<TrainPosition> ReadCheckpointPosition(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(CheckpointContents file, ReadCheckpointFile(path));
  return file.header.position;
}

Result<ModelConfig> ReadCheckpointConfig(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(CheckpointContents file, ReadCheckpointFile(path));
  return file.header.config;
}

}  // namespace seer
