#include "inspector/trace_directory.h"

#include <cerrno>
#include <cstdio>
#include <limits>
#include <optional>

#include <unistd.h>

#include <fmt/format.h>

#include "inspector/trace_format.h"
#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"
#include "storage/base/json_file.h"
#include "storage/base/parse_number.h"
#include "storage/dataset/dataset.h"

namespace seer {

namespace {
constexpr const char* kTraceManifest = "trace.json";

std::string TraceFileName(int64_t epoch, int64_t k) {
  return fmt::format("e{:04d}_sb{:06d}.sbt", epoch, k);
}

Json SuperbatchEntry(const TraceSuperbatchInfo& f) {
  Json item = Json::object();
  item["epoch"] = f.epoch;
  item["superbatch_index"] = f.superbatch_index;
  item["num_batches"] = f.num_batches;
  item["file"] = f.path;
  return item;
}

// The seed is a decimal string: a uint64 does not fit every JSON reader's numbers.
Result<uint64_t> ParseSeed(const std::string& text, const std::string& path) {
  const std::optional<uint64_t> seed = ParseNumber<uint64_t>(text);
  if (!seed) {
    return Corrupt(fmt::format("{}: field 'seed' must be a decimal uint64 string, found \"{}\"", path, text));
  }
  return *seed;
}

// A fan-out list of ints (field `field` of `object`; errors name it).
Result<std::vector<int>> ReadFanouts(const Json& object, const std::string& field, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const std::vector<int64_t> fanouts, JsonIntArray(object, field, path));
  std::vector<int> out;
  for (int64_t f : fanouts) {
    if (f < std::numeric_limits<int>::min() || f > std::numeric_limits<int>::max()) {
      return Corrupt(path + ": field '" + field + "' holds " + std::to_string(f) + ", outside the int range");
    }
    out.push_back(static_cast<int>(f));
  }
  return out;
}

// "target_type" and "relation_fanouts" of a typed dataset's trace (both absent otherwise).
Status ReadTypedRunInfo(const Json& root, const std::string& path, TraceRunInfo* run) {
  if (!root.contains("target_type")) return Status::Ok();
  SEER_ASSIGN_OR_RETURN(run->target_type, JsonString(root, "target_type", path));
  SEER_ASSIGN_OR_RETURN(const Json* fanouts, JsonMember(root, "relation_fanouts", path));
  if (!fanouts->is_object()) {
    return Corrupt(path + ": field 'relation_fanouts' must be an object, found " + fanouts->type_name());
  }
  for (const auto& [key, list] : fanouts->items()) {
    (void)list;
    SEER_ASSIGN_OR_RETURN(std::vector<int> lists, ReadFanouts(*fanouts, key, path + ": relation_fanouts"));
    run->relation_fanouts.emplace_back(key, std::move(lists));
  }
  return Status::Ok();
}

Result<TraceRunInfo> ReadRunInfo(const Json& root, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const std::string format, JsonString(root, "format", path));
  if (format != "seer-trace") return Corrupt(path + ": format is not seer-trace");
  SEER_ASSIGN_OR_RETURN(const int64_t version, JsonInt(root, "version", path));
  if (version != 1) return Corrupt(path + ": unsupported trace version " + std::to_string(version));
  TraceRunInfo run;
  SEER_ASSIGN_OR_RETURN(run.dataset_dir, JsonString(root, "dataset", path));
  SEER_ASSIGN_OR_RETURN(run.fanouts, ReadFanouts(root, "fanouts", path));
  SEER_ASSIGN_OR_RETURN(run.batch_size, JsonInt(root, "batch_size", path));
  SEER_ASSIGN_OR_RETURN(run.superbatch, JsonInt(root, "superbatch", path));
  SEER_ASSIGN_OR_RETURN(run.epochs, JsonInt(root, "epochs", path));
  SEER_ASSIGN_OR_RETURN(const std::string seed, JsonString(root, "seed", path));
  SEER_ASSIGN_OR_RETURN(run.seed, ParseSeed(seed, path));
  SEER_ASSIGN_OR_RETURN(run.dataset_identity, JsonOptionalString(root, "dataset_identity", "", path));
  if (root.contains("link")) {
    SEER_ASSIGN_OR_RETURN(const Json* link, JsonMember(root, "link", path));
    run.link = true;
    SEER_ASSIGN_OR_RETURN(run.link_options.negatives, JsonInt(*link, "negatives", path));
    SEER_ASSIGN_OR_RETURN(const std::string dist, JsonString(*link, "distribution", path));
    auto parsed = ParseNegativeDistribution(dist);
    if (!parsed.ok()) return Corrupt(path + ": field 'link.distribution': " + parsed.status().message());
    run.link_options.distribution = *parsed;
    SEER_ASSIGN_OR_RETURN(run.link_options.shared, JsonBool(*link, "shared", path));
  }
  SEER_RETURN_IF_ERROR(ReadTypedRunInfo(root, path, &run));
  return run;
}

// The "superbatches" list; errors name the element ("trace.json: superbatches[2]: ...").
Result<std::vector<TraceSuperbatchInfo>> ReadSuperbatchList(const Json& root,
                                                            const std::string& dir,
                                                            const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* list, JsonMember(root, "superbatches", path));
  if (!list->is_array()) {
    return Corrupt(path + ": field 'superbatches' must be an array, found " + list->type_name());
  }
  std::vector<TraceSuperbatchInfo> infos;
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    const std::string where = path + ": superbatches[" + std::to_string(i) + "]";
    TraceSuperbatchInfo info;
    SEER_ASSIGN_OR_RETURN(info.epoch, JsonInt(item, "epoch", where));
    SEER_ASSIGN_OR_RETURN(info.superbatch_index, JsonInt(item, "superbatch_index", where));
    SEER_ASSIGN_OR_RETURN(info.num_batches, JsonInt(item, "num_batches", where));
    SEER_ASSIGN_OR_RETURN(const std::string file, JsonString(item, "file", where));
    info.path = dir + "/" + file;
    infos.push_back(std::move(info));
  }
  return infos;
}

}  // namespace

Result<TraceDirectoryWriter> TraceDirectoryWriter::Create(const std::string& dir, TraceRunInfo info,
                                                          bool force) {
  SEER_RETURN_IF_ERROR(MakeDirectories(dir));
  const std::string manifest = dir + "/" + kTraceManifest;
  SEER_RETURN_IF_ERROR(RemoveManifestBeforeRewrite(manifest, force, "a trace directory"));
  if (info.dataset_identity.empty() && !info.dataset_dir.empty()) {
    auto dataset = Dataset::Open(info.dataset_dir);
    if (dataset.ok()) info.dataset_identity = dataset->manifest().Identity();
  }
  return TraceDirectoryWriter(dir, std::move(info));
}

Status TraceDirectoryWriter::Add(const SuperbatchTrace& trace) {
  const std::string name = TraceFileName(trace.epoch, trace.superbatch_index);
  SEER_RETURN_IF_ERROR(WriteTraceFile(dir_ + "/" + name, trace));
  files_.push_back(TraceSuperbatchInfo{name, trace.epoch, trace.superbatch_index,
                                       static_cast<int64_t>(trace.batches.size())});
  return Status::Ok();
}

std::string TraceDirectoryWriter::TempPathFor(int64_t epoch, int64_t k) const {
  return fmt::format("{}/.{}.tmp.{}.0", dir_, TraceFileName(epoch, k), ::getpid());
}

Status TraceDirectoryWriter::AddFile(TraceFile file) {
  const std::string name = TraceFileName(file.epoch(), file.superbatch_index());
  const std::string final_path = dir_ + "/" + name;
  if (::rename(file.path().c_str(), final_path.c_str()) != 0) {
    return ErrnoStatus(errno, "rename " + file.path() + " to", final_path);
  }
  file.Release();
  files_.push_back(TraceSuperbatchInfo{name, file.epoch(), file.superbatch_index(), file.num_batches()});
  return Status::Ok();
}

Status TraceDirectoryWriter::Close() {
  Json root = Json::object();
  root["format"] = "seer-trace";
  root["version"] = 1;
  root["dataset"] = info_.dataset_dir;
  root["fanouts"] = info_.fanouts;
  root["batch_size"] = info_.batch_size;
  root["superbatch"] = info_.superbatch;
  root["epochs"] = info_.epochs;
  root["seed"] = std::to_string(info_.seed);
  if (!info_.dataset_identity.empty()) root["dataset_identity"] = info_.dataset_identity;
  if (info_.link) {
    root["link"] = {{"negatives", info_.link_options.negatives},
                    {"distribution", NegativeDistributionName(info_.link_options.distribution)},
                    {"shared", info_.link_options.shared}};
  }
  if (!info_.target_type.empty()) {
    root["target_type"] = info_.target_type;
    Json fanouts = Json::object();  // nlohmann orders keys; the reader keeps its order
    for (const auto& [key, list] : info_.relation_fanouts) fanouts[key] = list;
    root["relation_fanouts"] = std::move(fanouts);
  }
  Json files = Json::array();
  for (const TraceSuperbatchInfo& f : files_) files.push_back(SuperbatchEntry(f));
  root["superbatches"] = std::move(files);
  return WriteJsonFileAtomically(dir_ + "/" + kTraceManifest, root);
}

Result<TraceDirectoryReader> TraceDirectoryReader::Open(const std::string& dir) {
  const std::string path = dir + "/" + kTraceManifest;
  SEER_ASSIGN_OR_RETURN(const Json root, ReadJsonFile(path));
  TraceDirectoryReader reader;
  SEER_ASSIGN_OR_RETURN(reader.run_, ReadRunInfo(root, path));
  SEER_ASSIGN_OR_RETURN(reader.infos_, ReadSuperbatchList(root, dir, path));
  return reader;
}

Result<SuperbatchTrace> TraceDirectoryReader::Read(int64_t i) const {
  const TraceSuperbatchInfo& meta = info(i);
  SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, ReadTraceFile(meta.path));
  if (trace.epoch != meta.epoch || trace.superbatch_index != meta.superbatch_index ||
      static_cast<int64_t>(trace.batches.size()) != meta.num_batches) {
    return Corrupt(fmt::format(
        "{}: header (epoch {}, superbatch {}, {} batches) does not match trace.json", meta.path,
        trace.epoch, trace.superbatch_index, trace.batches.size()));
  }
  return trace;
}

}  // namespace seer
