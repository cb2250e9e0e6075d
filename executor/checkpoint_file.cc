#include "executor/checkpoint_file.h"

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <optional>

#include "storage/base/atomic_file.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/base/parse_number.h"

namespace seer {
namespace {

constexpr const char* kCheckpointFormat = "seer-checkpoint";
constexpr int kCheckpointVersion = 2;

std::string PayloadChecksum(const std::string& payload) {
  return Xxh64::ToHex(Xxh64::Hash(payload.data(), payload.size()));
}


// Format, version and the header's own checksum.
Status VerifyHeaderOnly(const Json& header, const std::string& path) {
  auto format = JsonString(header, "format", path);
  if (!format.ok() || *format != kCheckpointFormat) {
    return Corrupt(path + ": not a Seer checkpoint (format field missing or wrong)");
  }
  auto version = JsonInt(header, "version", path);
  if (!version.ok()) return Corrupt(path + ": checkpoint has no readable version field");
  if (*version == 1) {
    return Corrupt(path + ": checkpoint version 1 (written before checkpoints recorded their dataset and batching "
                          "flags) cannot be resumed safely; start a new run (another --checkpoint-dir)");
  }
  if (*version != kCheckpointVersion) {
    return Corrupt(path + ": unsupported checkpoint version " + std::to_string(*version) + " (this Seer reads " +
                   std::to_string(kCheckpointVersion) + ")");
  }
  auto sum = JsonString(header, "header_xxh64", path);
  if (!sum.ok()) return Corrupt(path + ": checkpoint header has no header_xxh64 field");
  const std::string actual = CheckpointHeaderChecksum(header);
  if (actual != *sum) {
    return Corrupt(path + ": checkpoint header is corrupt: header xxh64 " + actual + " != recorded " + *sum);
  }
  return Status::Ok();
}

// Size and checksum of the payload against its header.
Status VerifyPayload(const Json& header, const std::string& payload, const std::string& path) {
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

Result<Json> ParseHeaderLine(const std::string& line, const std::string& path) {
  auto header = ParseJson(line, path);
  if (!header.ok()) return Corrupt(path + ": not a Seer checkpoint (unreadable header: " + header.status().message() + ")");
  if (!header->is_object()) return Corrupt(path + ": not a Seer checkpoint (header is not a JSON object)");
  SEER_RETURN_IF_ERROR(VerifyHeaderOnly(*header, path));
  return header;
}

Result<CheckpointHeader> DecodeHeader(const Json& header, const std::string& path) {
  CheckpointHeader h;
  SEER_ASSIGN_OR_RETURN(const Json* config, JsonMember(header, "config", path));
  SEER_ASSIGN_OR_RETURN(h.config, ModelConfigFromJson(*config, path));
  SEER_ASSIGN_OR_RETURN(const Json* position, JsonMember(header, "position", path));
  SEER_ASSIGN_OR_RETURN(h.position, TrainPositionFromJson(*position, path));
  SEER_ASSIGN_OR_RETURN(h.has_best, JsonBool(header, "has_best", path));
  return h;
}

}  // namespace

std::string CheckpointHeaderChecksum(Json header) {
  header.erase("header_xxh64");
  const std::string text = header.dump();
  return Xxh64::ToHex(Xxh64::Hash(text.data(), text.size()));
}

Json ModelConfigToJson(const ModelConfig& c) {
  Json j = {{"kind", ModelKindName(c.kind)}, {"in_dim", c.in_dim},       {"hidden", c.hidden},
            {"num_classes", c.num_classes},  {"num_layers", c.num_layers}, {"dropout", c.dropout},
            {"heads", c.heads}};
  if (c.kind == ModelKind::kGcn) j["gcn_norm"] = GcnNormName(c.gcn_norm);
  if (!c.dataset.empty()) j["dataset"] = c.dataset;
  if (c.task == ModelTask::kLink) {
    j["task"] = ModelTaskName(c.task);
    j["scorer"] = LinkScorerName(c.scorer);
  }
  // The relational models' node types and relations (homogeneous configs keep their bytes).
  if (c.relational()) {
    j["node_type_offsets"] = c.node_type_offsets;
    Json relations = Json::array();
    for (const auto& [src, dst] : c.relation_types) relations.push_back({src, dst});
    j["relation_types"] = relations;
    j["target_type"] = c.target_type;
  }
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
  if (j.contains("dataset")) {
    SEER_ASSIGN_OR_RETURN(c.dataset, JsonString(j, "dataset", path));
  }
  // Files without "task" are node classifiers (link prediction came later).
  if (j.contains("task")) {
    SEER_ASSIGN_OR_RETURN(std::string text, JsonString(j, "task", path));
    auto task = ParseModelTask(text);
    if (!task.ok()) return Corrupt(path + ": field 'task': " + task.status().message());
    c.task = *task;
  }
  if (c.task == ModelTask::kLink && j.contains("scorer")) {
    SEER_ASSIGN_OR_RETURN(std::string text, JsonString(j, "scorer", path));
    auto scorer = ParseLinkScorer(text);
    if (!scorer.ok()) return Corrupt(path + ": field 'scorer': " + scorer.status().message());
    c.scorer = *scorer;
  }
  if (c.relational()) {
    SEER_ASSIGN_OR_RETURN(c.node_type_offsets, JsonIntArray(j, "node_type_offsets", path));
    SEER_ASSIGN_OR_RETURN(const Json* relations, JsonMember(j, "relation_types", path));
    if (!relations->is_array()) return Corrupt(path + ": field 'relation_types' is not an array");
    for (size_t r = 0; r < relations->size(); ++r) {
      const Json& pair = (*relations)[r];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() || !pair[1].is_number_integer() ||
          pair[0].get<int64_t>() < INT32_MIN || pair[0].get<int64_t>() > INT32_MAX ||
          pair[1].get<int64_t>() < INT32_MIN || pair[1].get<int64_t>() > INT32_MAX) {
        return Corrupt(path + ": field 'relation_types' element " + std::to_string(r) +
                       " must be [src type, dst type], found " + pair.dump());
      }
      c.relation_types.emplace_back(pair[0].get<int32_t>(), pair[1].get<int32_t>());
    }
    SEER_ASSIGN_OR_RETURN(int64_t target, JsonInt(j, "target_type", path));
    if (target < INT32_MIN || target > INT32_MAX) {
      return Corrupt(path + ": field 'target_type' out of range: " + std::to_string(target));
    }
    c.target_type = static_cast<int32_t>(target);
    const Status types = c.CheckRelationalTypes();
    if (!types.ok()) return Corrupt(path + ": " + types.message());
  }
  return c;
}

std::string ModelConfig::ToJson() const { return ModelConfigToJson(*this).dump(); }

Result<ModelConfig> ModelConfig::FromJson(const std::string& json, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(Json j, ParseJson(json, path));
  return ModelConfigFromJson(j, path);
}

Json TrainPositionToJson(const TrainPosition& p) {
  Json run = Json::object();
  for (const auto& [name, value] : p.run) run[name] = value;
  Json j = {{"epoch", p.epoch},
            {"next_superbatch", p.next_superbatch},
            {"global_step", p.global_step},
            {"seed", std::to_string(p.seed)},
            {"best_valid_accuracy", p.best_valid_accuracy},
            {"best_epoch", p.best_epoch},
            {"run", run},
            {"epoch_partial",
             {{"loss_sum", p.epoch_loss_sum},
              {"loss_batches", p.epoch_loss_batches},
              {"correct", p.epoch_correct},
              {"labeled", p.epoch_labeled},
              {"batches", p.epoch_batches},
              {"seeds", p.epoch_seeds}}}};
  // Inside a superbatch only: checkpoints at superbatch boundaries keep their bytes.
  if (p.next_batch > 0) j["next_batch"] = p.next_batch;
  // Written by `seer train` only; library runs (and older files) have none.
  if (!p.settings.empty()) {
    Json settings = Json::object();
    for (const auto& [name, value] : p.settings) settings[name] = value;
    j["settings"] = settings;
  }
  return j;
}

Result<TrainPosition> TrainPositionFromJson(const Json& j, const std::string& path) {
  TrainPosition p;
  SEER_ASSIGN_OR_RETURN(p.epoch, JsonInt(j, "epoch", path));
  SEER_ASSIGN_OR_RETURN(p.next_superbatch, JsonInt(j, "next_superbatch", path));
  SEER_ASSIGN_OR_RETURN(p.global_step, JsonInt(j, "global_step", path));
  SEER_ASSIGN_OR_RETURN(p.best_epoch, JsonInt(j, "best_epoch", path));
  SEER_ASSIGN_OR_RETURN(p.best_valid_accuracy, JsonNumber(j, "best_valid_accuracy", path));
  if (j.contains("next_batch")) {
    SEER_ASSIGN_OR_RETURN(p.next_batch, JsonInt(j, "next_batch", path));
  }
  if (p.epoch < 0 || p.next_superbatch < 0 || p.next_batch < 0 || p.global_step < 0) {
    return Corrupt(path + ": position fields 'epoch', 'next_superbatch', 'next_batch' and 'global_step' must be >= 0");
  }
  SEER_ASSIGN_OR_RETURN(std::string seed, JsonString(j, "seed", path));
  const std::optional<uint64_t> parsed_seed = ParseNumber<uint64_t>(seed);
  if (!parsed_seed) return Corrupt(path + ": field 'seed' is not a decimal uint64: '" + seed + "'");
  p.seed = *parsed_seed;
  if (j.contains("run")) {
    SEER_ASSIGN_OR_RETURN(const Json* run, JsonMember(j, "run", path));
    if (!run->is_object()) return Corrupt(path + ": field 'run' is not an object");
    for (const auto& [name, value] : run->items()) {
      if (!value.is_string()) return Corrupt(path + ": field 'run." + name + "' is not a string");
      p.run[name] = value.get<std::string>();
    }
  }
  if (j.contains("settings")) {
    SEER_ASSIGN_OR_RETURN(const Json* settings, JsonMember(j, "settings", path));
    if (!settings->is_object()) return Corrupt(path + ": field 'settings' is not an object");
    for (const auto& [name, value] : settings->items()) {
      if (!value.is_string()) return Corrupt(path + ": field 'settings." + name + "' is not a string");
      p.settings[name] = value.get<std::string>();
    }
  }
  if (j.contains("epoch_partial")) {
    SEER_ASSIGN_OR_RETURN(const Json* e, JsonMember(j, "epoch_partial", path));
    SEER_ASSIGN_OR_RETURN(p.epoch_loss_sum, JsonNumber(*e, "loss_sum", path));
    SEER_ASSIGN_OR_RETURN(p.epoch_loss_batches, JsonInt(*e, "loss_batches", path));
    SEER_ASSIGN_OR_RETURN(p.epoch_correct, JsonInt(*e, "correct", path));
    SEER_ASSIGN_OR_RETURN(p.epoch_labeled, JsonInt(*e, "labeled", path));
    SEER_ASSIGN_OR_RETURN(p.epoch_batches, JsonInt(*e, "batches", path));
    SEER_ASSIGN_OR_RETURN(p.epoch_seeds, JsonInt(*e, "seeds", path));
  }
  return p;
}

std::string DescribeRunDifferences(const std::map<std::string, std::string>& saved,
                                   const std::map<std::string, std::string>& now) {
  std::string out;
  auto add = [&](const std::string& name, const std::string* a, const std::string* b) {
    if (a != nullptr && b != nullptr && *a == *b) return;
    if (!out.empty()) out += "\n  ";
    out += name + ": checkpoint " + (a ? *a : "(none)") + ", this run " + (b ? *b : "(none)");
  };
  for (const auto& [name, value] : saved) {
    auto it = now.find(name);
    add(name, &value, it == now.end() ? nullptr : &it->second);
  }
  for (const auto& [name, value] : now) {
    if (saved.count(name) == 0) add(name, nullptr, &value);
  }
  return out;
}

std::string EncodeCheckpoint(const CheckpointHeader& header, const std::string& payload) {
  Json j = {{"format", kCheckpointFormat},
            {"version", kCheckpointVersion},
            {"config", ModelConfigToJson(header.config)},
            {"position", TrainPositionToJson(header.position)},
            {"has_best", header.has_best},
            {"payload_bytes", static_cast<int64_t>(payload.size())},
            {"payload_xxh64", PayloadChecksum(payload)}};
  j["header_xxh64"] = CheckpointHeaderChecksum(j);
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
  SEER_ASSIGN_OR_RETURN(Json header, ParseHeaderLine(bytes.substr(0, newline), path));
  CheckpointContents file;
  file.payload = bytes.substr(newline + 1);
  SEER_RETURN_IF_ERROR(VerifyPayload(header, file.payload, path));
  SEER_ASSIGN_OR_RETURN(file.header, DecodeHeader(header, path));
  return file;
}

Result<CheckpointHeader> ReadCheckpointHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoStatus(errno, "open checkpoint", path);
  std::string line;
  // A header is a few KiB; a longer first line is not one.
  constexpr size_t kMaxHeaderBytes = 1 << 20;
  char c;
  bool newline = false;
  while (in.get(c)) {
    if (c == '\n') {
      newline = true;
      break;
    }
    if (line.size() >= kMaxHeaderBytes) break;
    line.push_back(c);
  }
  if (!newline) return Corrupt(path + ": not a Seer checkpoint (no header line; truncated or foreign file)");
  SEER_ASSIGN_OR_RETURN(Json header, ParseHeaderLine(line, path));
  return DecodeHeader(header, path);
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
