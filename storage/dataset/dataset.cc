#include "storage/dataset/dataset.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "storage/base/aligned_buffer.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/base/json_file.h"
#include "storage/base/parse_number.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/float16.h"

namespace seer {

const char* IndexDtypeName(IndexDtype dtype) { return NameOf(kIndexDtypeNames, dtype); }
const char* FeatureDtypeName(FeatureDtype dtype) { return NameOf(kFeatureDtypeNames, dtype); }
void DecodeFeatureValues(const void* stored, FeatureDtype dtype, int64_t count, float* out) {
  if (dtype == FeatureDtype::kInt8) throw std::logic_error("DecodeFeatureValues: int8 rows need DecodeFeatureRows");
  const char* src = static_cast<const char*>(stored);
  if (dtype == FeatureDtype::kFloat32) {
    std::memcpy(out, src, static_cast<size_t>(count) * sizeof(float));
    return;
  }
  const bool brain = dtype == FeatureDtype::kBFloat16;
  for (int64_t i = 0; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, src + 2 * i, 2);
    out[i] = brain ? BFloat16ToFloat(bits) : HalfToFloat(bits);
  }
}

void EncodeFeatureValues(const float* values, FeatureDtype dtype, int64_t count, void* stored) {
  if (dtype == FeatureDtype::kInt8) throw std::logic_error("EncodeFeatureValues: int8 rows need EncodeFeatureRows");
  char* dst = static_cast<char*>(stored);
  if (dtype == FeatureDtype::kFloat32) {
    std::memcpy(dst, values, static_cast<size_t>(count) * sizeof(float));
    return;
  }
  const bool brain = dtype == FeatureDtype::kBFloat16;
  for (int64_t i = 0; i < count; ++i) {
    const uint16_t bits = brain ? FloatToBFloat16(values[i]) : FloatToHalf(values[i]);
    std::memcpy(dst + 2 * i, &bits, 2);
  }
}

void DecodeFeatureRows(const void* stored, FeatureDtype dtype, int64_t dim, int64_t rows, float* out) {
  if (dtype != FeatureDtype::kInt8) {
    DecodeFeatureValues(stored, dtype, dim * rows, out);
    return;
  }
  const int64_t row_bytes = FeatureRowBytes(dtype, dim);
  for (int64_t r = 0; r < rows; ++r) {
    const auto* codes = static_cast<const unsigned char*>(stored) + r * row_bytes;
    float scale, bias;
    std::memcpy(&scale, codes + dim, 4);
    std::memcpy(&bias, codes + dim + 4, 4);
    float* row = out + r * dim;
    // In double: code * scale alone may pass FLT_MAX where the sum does not.
    const double s = scale, b = bias;
    for (int64_t j = 0; j < dim; ++j) row[j] = static_cast<float>(static_cast<double>(codes[j]) * s + b);
  }
}

void EncodeFeatureRows(const float* values, FeatureDtype dtype, int64_t dim, int64_t rows, void* stored) {
  if (dtype != FeatureDtype::kInt8) {
    EncodeFeatureValues(values, dtype, dim * rows, stored);
    return;
  }
  const int64_t row_bytes = FeatureRowBytes(dtype, dim);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = values + r * dim;
    auto* codes = static_cast<unsigned char*>(stored) + r * row_bytes;
    float lo = 0, hi = 0;
    bool any = false;
    for (int64_t j = 0; j < dim; ++j) {
      if (!std::isfinite(row[j])) continue;
      lo = any ? std::min(lo, row[j]) : row[j];
      hi = any ? std::max(hi, row[j]) : row[j];
      any = true;
    }
    // (hi - lo) may overflow float for values near the float limits: computed in double.
    const double range = static_cast<double>(hi) - static_cast<double>(lo);
    const float scale = range > 0 ? static_cast<float>(range / 255.0) : 1.0f;
    for (int64_t j = 0; j < dim; ++j) {
      const double x = std::isfinite(row[j]) ? row[j] : (row[j] > 0 ? hi : lo);  // NaN -> lo
      const double q = std::nearbyint((x - static_cast<double>(lo)) / static_cast<double>(scale));
      codes[j] = static_cast<unsigned char>(std::clamp(q, 0.0, 255.0));
    }
    std::memcpy(codes + dim, &scale, 4);
    std::memcpy(codes + dim + 4, &lo, 4);
  }
}

Result<IndexDtype> ParseIndexDtype(const std::string& text) {
  return ParseName(kIndexDtypeNames, text, "index dtype");
}
Result<FeatureDtype> ParseFeatureDtype(const std::string& text) {
  return ParseName(kFeatureDtypeNames, text, "feature dtype");
}

std::string NodeTypeFileName(const std::string& type, const std::string& role) {
  return type + "." + role + ".bin";
}

std::string RelationFileName(const DatasetRelation& relation, const std::string& role) {
  return relation.key() + "." + role + ".bin";
}

bool ValidTypeName(const std::string& name) {
  // Runs of [A-Za-z0-9] joined by single '_': "paper", "written_by", "fos2". So a
  // relation key "src__name__dst" splits back into its three names, and file names stay
  // plain (no '/', no '.').
  if (name.empty() || name.size() > 64 || name.front() == '_' || name.back() == '_') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '_' && name[i - 1] != '_')) return false;
  }
  return true;
}

const DatasetNodeType* DatasetManifest::FindNodeType(const std::string& name) const {
  for (const DatasetNodeType& t : node_types) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string DatasetManifest::TypedShape() const {
  return std::to_string(node_types.size()) + (node_types.size() == 1 ? " node type, " : " node types, ") +
         std::to_string(relations.size()) + (relations.size() == 1 ? " relation" : " relations");
}

std::string DatasetManifest::ToJson() const {
  Json file_map = Json::object();
  for (const auto& [name, entry] : files) {
    Json f = {{"bytes", entry.bytes}};
    if (!entry.checksum_kind.empty()) f[entry.checksum_kind] = entry.checksum;
    file_map[name] = std::move(f);
  }
  Json root = {
      {"format", "seer-dataset"},
      {"version", FormatVersion()},
      {"num_nodes", num_nodes},
      {"num_edges", num_edges},
      {"index_dtype", IndexDtypeName(index_dtype)},
      {"feature_dim", feature_dim},
      {"feature_dtype", FeatureDtypeName(feature_dtype)},
      {"num_classes", num_classes},
      {"files", std::move(file_map)},
      {"created_by", created_by},
  };
  if (!node_ids.empty()) root["node_ids"] = node_ids;
  if (!node_order.empty()) {
    root["node_order"] = node_order;
    root["node_order_method"] = node_order_method;
  }
  if (edge_splits.present()) {
    const DatasetEdgeSplits& e = edge_splits;
    root["edge_splits"] = {{"valid", e.valid},
                           {"test", e.test},
                           {"num_valid", e.num_valid},
                           {"num_test", e.num_test},
                           {"valid_fraction", e.valid_fraction},
                           {"test_fraction", e.test_fraction},
                           {"seed", std::to_string(e.seed)},  // decimal: not every JSON reader holds a uint64
                           {"undirected", e.undirected},
                           {"candidate_edges", e.candidate_edges},
                           {"input_num_edges", e.input_num_edges}};
    if (e.negatives_per_edge > 0) {  // absent without --eval-negatives: such manifests are unchanged
      root["edge_splits"]["negatives_per_edge"] = e.negatives_per_edge;
      root["edge_splits"]["valid_negatives"] = e.valid_negatives;
      root["edge_splits"]["test_negatives"] = e.test_negatives;
    }
  }
  if (typed()) {  // absent in a homogeneous manifest: its JSON (and identity) is unchanged
    Json types = Json::array();
    for (const DatasetNodeType& t : node_types) {
      Json type = {{"name", t.name},
                   {"count", t.count},
                   {"feature_dim", t.feature_dim},
                   {"feature_dtype", FeatureDtypeName(t.feature_dtype)},
                   {"features", t.features},
                   {"labels", t.labels},
                   {"num_classes", t.num_classes}};
      if (!t.train.empty() || !t.valid.empty() || !t.test.empty()) {
        type["splits"] = {{"train", t.train}, {"valid", t.valid}, {"test", t.test}};
      }
      if (!t.node_ids.empty()) type["node_ids"] = t.node_ids;  // absent without: such manifests are unchanged
      types.push_back(std::move(type));
    }
    Json rels = Json::array();
    for (const DatasetRelation& r : relations) {
      rels.push_back({{"src", r.src},
                      {"name", r.name},
                      {"dst", r.dst},
                      {"num_edges", r.num_edges},
                      {"index_dtype", IndexDtypeName(r.index_dtype)},
                      {"indptr", r.indptr},
                      {"indices", r.indices}});
    }
    root["node_types"] = std::move(types);
    root["relations"] = std::move(rels);
  }
  return root.dump(2) + "\n";
}

std::string DatasetManifest::Identity() const {
  DatasetManifest content = *this;
  content.created_by.clear();
  const std::string json = content.ToJson();
  return Xxh64::ToHex(Xxh64::Hash(json.data(), json.size()));
}

namespace {
Status FieldError(const std::string& path, const std::string& field, const std::string& what) {
  return Corrupt(path + ": field '" + field + "' " + what);
}

// An integer member that must be >= 0. `path` names where the object is in errors.
Result<int64_t> NonNegativeInt(const Json& object, const std::string& key,
                               const std::string& path) {
  SEER_ASSIGN_OR_RETURN(int64_t value, JsonInt(object, key, path));
  if (value < 0) return FieldError(path, key, "must be >= 0, found " + std::to_string(value));
  return value;
}

// A string from the file inside a message, JSON-escaped (\n, \u0001, non-ASCII) so the
// message stays one line whatever the manifest holds.
std::string Escaped(const std::string& text) {
  const std::string quoted = Json(text).dump(-1, ' ', true, Json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

// A dtype name member parsed by `parse`; an unknown name lists the accepted ones.
template <typename T>
Result<T> DtypeField(const Json& root, const std::string& key, const std::string& path,
                     Result<T> (*parse)(const std::string&), const char* expected) {
  SEER_ASSIGN_OR_RETURN(std::string name, JsonString(root, key, path));
  auto dtype = parse(name);
  if (!dtype.ok()) return FieldError(path, key, "is '" + Escaped(name) + "' (expected " + expected + ")");
  return *dtype;
}

Result<std::map<std::string, DatasetFileEntry>> FileEntries(const Json& root,
                                                           const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* files, JsonMember(root, "files", path));
  if (!files->is_object()) return FieldError(path, "files", "must be an object");
  std::map<std::string, DatasetFileEntry> out;
  for (const auto& [name, entry] : files->items()) {
    if (name.empty() || name.find('/') != std::string::npos || name == "..") {
      return FieldError(path, "files", "names an invalid file '" + Escaped(name) + "'");
    }
    if (!entry.is_object()) return FieldError(path, "files." + Escaped(name), "must be an object");
    // Errors inside an entry name it: "D/dataset.json (files.labels.bin): field 'bytes' ...".
    const std::string where = path + " (files." + Escaped(name) + ")";
    DatasetFileEntry e;
    SEER_ASSIGN_OR_RETURN(e.bytes, NonNegativeInt(entry, "bytes", where));
    if (entry.contains("xxh64")) {
      SEER_ASSIGN_OR_RETURN(e.checksum, JsonString(entry, "xxh64", where));
      e.checksum_kind = "xxh64";
    }
    out[name] = std::move(e);
  }
  return out;
}

// "edge_splits" (`seer split-edges`): both files listed and of no other role, fractions
// in [0, 1) with a sum below 1, counts within the counts they were drawn from.
Result<DatasetEdgeSplits> EdgeSplitsField(const Json& root, const DatasetManifest& m, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* object, JsonMember(root, "edge_splits", path));
  if (!object->is_object()) return FieldError(path, "edge_splits", "must be an object");
  const std::string where = path + " (edge_splits)";
  DatasetEdgeSplits e;
  SEER_ASSIGN_OR_RETURN(e.valid, JsonString(*object, "valid", where));
  SEER_ASSIGN_OR_RETURN(e.test, JsonString(*object, "test", where));
  for (const auto& [key, name] : {std::pair<const char*, const std::string&>{"valid", e.valid}, {"test", e.test}}) {
    if (m.files.count(name) == 0) return FieldError(where, key, "names '" + Escaped(name) + "', which is not in files");
    for (const std::string& other : {std::string(dataset_files::kIndptr), std::string(dataset_files::kIndices),
                                     std::string(dataset_files::kFeatures), std::string(dataset_files::kLabels),
                                     std::string(dataset_files::kTrain), std::string(dataset_files::kValid),
                                     std::string(dataset_files::kTest), m.node_ids, m.node_order}) {
      if (name == other) return FieldError(where, key, "names '" + Escaped(name) + "', a file of another role");
    }
  }
  if (e.valid == e.test) return FieldError(where, "test", "names the same file as valid");
  SEER_ASSIGN_OR_RETURN(e.num_valid, NonNegativeInt(*object, "num_valid", where));
  SEER_ASSIGN_OR_RETURN(e.num_test, NonNegativeInt(*object, "num_test", where));
  SEER_ASSIGN_OR_RETURN(e.candidate_edges, NonNegativeInt(*object, "candidate_edges", where));
  SEER_ASSIGN_OR_RETURN(e.input_num_edges, NonNegativeInt(*object, "input_num_edges", where));
  SEER_ASSIGN_OR_RETURN(e.valid_fraction, JsonNumber(*object, "valid_fraction", where));
  SEER_ASSIGN_OR_RETURN(e.test_fraction, JsonNumber(*object, "test_fraction", where));
  SEER_ASSIGN_OR_RETURN(const std::string seed, JsonString(*object, "seed", where));
  const std::optional<uint64_t> seed_value = ParseNumber<uint64_t>(seed);
  if (!seed_value) return FieldError(where, "seed", "is '" + Escaped(seed) + "', not a decimal uint64");
  e.seed = *seed_value;
  SEER_ASSIGN_OR_RETURN(e.undirected, JsonBool(*object, "undirected", where));
  if (!(e.valid_fraction >= 0 && e.valid_fraction < 1 && e.test_fraction >= 0 && e.test_fraction < 1 &&
        e.valid_fraction + e.test_fraction < 1)) {
    return FieldError(where, "valid_fraction", "and test_fraction must be in [0, 1) with a sum below 1");
  }
  // In this order, so no sum overflows: every count is at most 2^48 before two are added.
  if (e.input_num_edges > (int64_t{1} << 48) || e.candidate_edges > e.input_num_edges ||
      e.num_valid > e.candidate_edges || e.num_test > e.candidate_edges ||
      e.num_valid + e.num_test > e.candidate_edges || m.num_edges + e.num_valid + e.num_test > e.input_num_edges) {
    return FieldError(where, "num_valid",
                      "= " + std::to_string(e.num_valid) + " and num_test = " + std::to_string(e.num_test) +
                          " do not fit candidate_edges = " + std::to_string(e.candidate_edges) +
                          ", input_num_edges = " + std::to_string(e.input_num_edges) +
                          " and num_edges = " + std::to_string(m.num_edges));
  }
  if (object->contains("negatives_per_edge")) {  // --eval-negatives K: two files of K ids per held-out edge
    SEER_ASSIGN_OR_RETURN(e.negatives_per_edge, NonNegativeInt(*object, "negatives_per_edge", where));
    if (e.negatives_per_edge < 1 || e.negatives_per_edge > DatasetEdgeSplits::kMaxNegativesPerEdge ||
        std::max(e.num_valid, e.num_test) > (int64_t{1} << 48) / e.negatives_per_edge) {
      return FieldError(where, "negatives_per_edge",
                        "is " + std::to_string(e.negatives_per_edge) +
                            ": must be in [1, 2^20] with at most 2^48 negatives per split file");
    }
    SEER_ASSIGN_OR_RETURN(e.valid_negatives, JsonString(*object, "valid_negatives", where));
    SEER_ASSIGN_OR_RETURN(e.test_negatives, JsonString(*object, "test_negatives", where));
    for (const auto& [key, name] : {std::pair<const char*, const std::string&>{"valid_negatives", e.valid_negatives},
                                    {"test_negatives", e.test_negatives}}) {
      if (m.files.count(name) == 0) {
        return FieldError(where, key, "names '" + Escaped(name) + "', which is not in files");
      }
      for (const std::string& other : {std::string(dataset_files::kIndptr), std::string(dataset_files::kIndices),
                                       std::string(dataset_files::kFeatures), std::string(dataset_files::kLabels),
                                       std::string(dataset_files::kTrain), std::string(dataset_files::kValid),
                                       std::string(dataset_files::kTest), m.node_ids, m.node_order, e.valid, e.test}) {
        if (name == other) return FieldError(where, key, "names '" + Escaped(name) + "', a file of another role");
      }
    }
    if (e.valid_negatives == e.test_negatives) {
      return FieldError(where, "test_negatives", "names the same file as valid_negatives");
    }
  }
  return e;
}

// A file a node type or relation names: listed in `files` and of no other role.
Status ClaimFile(const DatasetManifest& m, const std::string& name, const std::string& where, const char* key,
                 std::map<std::string, std::string>* roles) {
  const std::string role = where + "." + key;
  if (m.files.count(name) == 0) {
    return Corrupt(role + " names '" + Escaped(name) + "', which is not in files");
  }
  const auto [it, inserted] = roles->emplace(name, role);
  if (!inserted) return Corrupt(role + " names '" + Escaped(name) + "', already named by " + it->second);
  return Status::Ok();
}

// A name member that follows the node type name rule.
Result<std::string> TypeNameField(const Json& object, const char* key, const std::string& where) {
  SEER_ASSIGN_OR_RETURN(std::string name, JsonString(object, key, where));
  if (!ValidTypeName(name)) {
    return FieldError(where, key, "is '" + Escaped(name) +
                                      "': a name is 1 to 64 letters and digits in runs joined by single '_'");
  }
  return name;
}

// "node_types" and "relations" (a typed dataset): every field present and in range, each
// named file listed in `files` with one role, every listed file named by a role, and the
// top-level counts the sums of the types' and relations'.
Status TypedGraphFields(const Json& root, const std::string& path, DatasetManifest* out) {
  DatasetManifest& m = *out;
  SEER_ASSIGN_OR_RETURN(const Json* types, JsonMember(root, "node_types", path));
  if (!types->is_array() || types->empty()) return FieldError(path, "node_types", "must be a non-empty array");
  if (m.node_ids.size() + m.node_order.size() > 0 || m.edge_splits.present()) {
    return FieldError(path, "node_types", "cannot be combined with node_ids, node_order or edge_splits");
  }
  std::map<std::string, std::string> roles;  // file name -> the field naming it
  int64_t num_nodes = 0;
  for (size_t i = 0; i < types->size(); ++i) {
    const Json& object = (*types)[i];
    std::string where = path + " (node_types[" + std::to_string(i) + "])";
    if (!object.is_object()) return Corrupt(where + ": must be an object");
    DatasetNodeType t;
    SEER_ASSIGN_OR_RETURN(t.name, TypeNameField(object, "name", where));
    where = path + " (node_types[" + std::to_string(i) + "] " + t.name + ")";
    if (m.FindNodeType(t.name) != nullptr) return FieldError(where, "name", "is '" + t.name + "' twice");
    SEER_ASSIGN_OR_RETURN(t.count, NonNegativeInt(object, "count", where));
    SEER_ASSIGN_OR_RETURN(t.feature_dim, NonNegativeInt(object, "feature_dim", where));
    SEER_ASSIGN_OR_RETURN(t.num_classes, NonNegativeInt(object, "num_classes", where));
    if (t.count > (int64_t{1} << 40)) return FieldError(where, "count", "is above the supported 2^40");
    if (t.feature_dim > (int64_t{1} << 20)) return FieldError(where, "feature_dim", "is above the supported 2^20");
    if (t.num_classes > (int64_t{1} << 31) - 1) {
      return FieldError(where, "num_classes", "is above the supported 2^31 - 1");
    }
    SEER_ASSIGN_OR_RETURN(t.feature_dtype, DtypeField(object, "feature_dtype", where, &ParseFeatureDtype,
                                                      "float32, float16, bfloat16 or int8"));
    SEER_ASSIGN_OR_RETURN(t.features, JsonString(object, "features", where));
    SEER_ASSIGN_OR_RETURN(t.labels, JsonString(object, "labels", where));
    if (t.features.empty() != (t.feature_dim == 0)) {
      return FieldError(where, "features", "must name a file exactly when feature_dim > 0");
    }
    if (t.labels.empty() != (t.num_classes == 0)) {
      return FieldError(where, "labels", "must name a file exactly when num_classes > 0");
    }
    if (object.contains("splits")) {
      const Json& splits = object["splits"];
      if (!splits.is_object()) return FieldError(where, "splits", "must be an object");
      const std::string in = where + " (splits)";
      SEER_ASSIGN_OR_RETURN(t.train, JsonOptionalString(splits, "train", "", in));
      SEER_ASSIGN_OR_RETURN(t.valid, JsonOptionalString(splits, "valid", "", in));
      SEER_ASSIGN_OR_RETURN(t.test, JsonOptionalString(splits, "test", "", in));
    }
    SEER_ASSIGN_OR_RETURN(t.node_ids, JsonOptionalString(object, "node_ids", "", where));
    for (const auto& [key, name] : {std::pair<const char*, const std::string&>{"features", t.features},
                                    {"labels", t.labels},
                                    {"splits.train", t.train},
                                    {"splits.valid", t.valid},
                                    {"splits.test", t.test},
                                    {"node_ids", t.node_ids}}) {
      if (!name.empty()) SEER_RETURN_IF_ERROR(ClaimFile(m, name, where, key, &roles));
    }
    num_nodes += t.count;  // each <= 2^40 and the sum checked as it grows: no overflow
    if (num_nodes > (int64_t{1} << 40)) return FieldError(where, "count", "makes the node types' sum pass 2^40");
    m.node_types.push_back(std::move(t));
  }
  SEER_ASSIGN_OR_RETURN(const Json* relations, JsonMember(root, "relations", path));
  if (!relations->is_array()) return FieldError(path, "relations", "must be an array");
  int64_t num_edges = 0;
  for (size_t i = 0; i < relations->size(); ++i) {
    const Json& object = (*relations)[i];
    std::string where = path + " (relations[" + std::to_string(i) + "])";
    if (!object.is_object()) return Corrupt(where + ": must be an object");
    DatasetRelation r;
    SEER_ASSIGN_OR_RETURN(r.src, TypeNameField(object, "src", where));
    SEER_ASSIGN_OR_RETURN(r.name, TypeNameField(object, "name", where));
    SEER_ASSIGN_OR_RETURN(r.dst, TypeNameField(object, "dst", where));
    where = path + " (relations[" + std::to_string(i) + "] " + r.key() + ")";
    const DatasetNodeType* src = m.FindNodeType(r.src);
    if (src == nullptr) return FieldError(where, "src", "names '" + r.src + "', which is not a node type");
    if (m.FindNodeType(r.dst) == nullptr) {
      return FieldError(where, "dst", "names '" + r.dst + "', which is not a node type");
    }
    for (const DatasetRelation& other : m.relations) {
      if (other.key() == r.key()) return Corrupt(where + ": the relation " + r.key() + " is listed twice");
    }
    SEER_ASSIGN_OR_RETURN(r.num_edges, NonNegativeInt(object, "num_edges", where));
    if (r.num_edges > (int64_t{1} << 48)) return FieldError(where, "num_edges", "is above the supported 2^48");
    SEER_ASSIGN_OR_RETURN(r.index_dtype,
                          DtypeField(object, "index_dtype", where, &ParseIndexDtype, "uint32 or int64"));
    if (r.index_dtype == IndexDtype::kUint32 && src->count > (int64_t{1} << 32)) {
      return FieldError(where, "index_dtype", "is uint32 but the source type " + r.src + " has more than 2^32 nodes");
    }
    SEER_ASSIGN_OR_RETURN(r.indptr, JsonString(object, "indptr", where));
    SEER_ASSIGN_OR_RETURN(r.indices, JsonString(object, "indices", where));
    SEER_RETURN_IF_ERROR(ClaimFile(m, r.indptr, where, "indptr", &roles));
    SEER_RETURN_IF_ERROR(ClaimFile(m, r.indices, where, "indices", &roles));
    num_edges += r.num_edges;
    if (num_edges > (int64_t{1} << 48)) return FieldError(where, "num_edges", "makes the relations' sum pass 2^48");
    m.relations.push_back(std::move(r));
  }
  for (const auto& [name, entry] : m.files) {
    if (roles.count(name) == 0) {
      return FieldError(path, "files", "lists '" + Escaped(name) + "', which no node type or relation names");
    }
  }
  if (m.num_nodes != num_nodes || m.num_edges != num_edges || m.feature_dim != 0 || m.num_classes != 0) {
    return Corrupt(path + ": a typed dataset has num_nodes = " + std::to_string(num_nodes) +
                   " (the node types' sum), num_edges = " + std::to_string(num_edges) +
                   " (the relations' sum), feature_dim = 0 and num_classes = 0; found " +
                   std::to_string(m.num_nodes) + ", " + std::to_string(m.num_edges) + ", " +
                   std::to_string(m.feature_dim) + ", " + std::to_string(m.num_classes));
  }
  return Status::Ok();
}
}  // namespace

Result<DatasetManifest> DatasetManifest::FromJson(const std::string& json, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(Json root, ParseJson(json, path));
  if (!root.is_object()) return Corrupt(path + ": not a JSON object");
  SEER_ASSIGN_OR_RETURN(std::string format, JsonString(root, "format", path));
  if (format != "seer-dataset") {
    return FieldError(path, "format", "is '" + Escaped(format) + "', expected 'seer-dataset'");
  }
  SEER_ASSIGN_OR_RETURN(int64_t version, NonNegativeInt(root, "version", path));
  if (version < 1 || version > kVersion) {
    return Corrupt(path + ": unsupported dataset format version " + std::to_string(version) +
                   " (this seer reads versions 1 to " + std::to_string(kVersion) + ")");
  }
  DatasetManifest m;
  SEER_ASSIGN_OR_RETURN(m.num_nodes, NonNegativeInt(root, "num_nodes", path));
  SEER_ASSIGN_OR_RETURN(m.num_edges, NonNegativeInt(root, "num_edges", path));
  SEER_ASSIGN_OR_RETURN(m.feature_dim, NonNegativeInt(root, "feature_dim", path));
  SEER_ASSIGN_OR_RETURN(m.num_classes, NonNegativeInt(root, "num_classes", path));
  // Bounds that keep every file size computed from them (e.g. num_nodes * feature_dim * 4)
  // inside int64: a damaged manifest is refused, never overflowed.
  struct Limit {
    const char* field;
    int64_t value, max;
    const char* max_text;
  };
  for (const Limit& l : {Limit{"num_nodes", m.num_nodes, int64_t{1} << 40, "2^40"},
                         Limit{"num_edges", m.num_edges, int64_t{1} << 48, "2^48"},
                         Limit{"feature_dim", m.feature_dim, int64_t{1} << 20, "2^20"},
                         Limit{"num_classes", m.num_classes, (int64_t{1} << 31) - 1, "2^31 - 1"}}) {
    if (l.value > l.max) {
      return FieldError(path, l.field, "is " + std::to_string(l.value) + ", above the supported " + l.max_text);
    }
  }
  SEER_ASSIGN_OR_RETURN(m.index_dtype, DtypeField(root, "index_dtype", path, &ParseIndexDtype,
                                                  "uint32 or int64"));
  if (m.index_dtype == IndexDtype::kUint32 && m.num_nodes > (int64_t{1} << 32)) {
    return FieldError(path, "index_dtype", "is uint32 but num_nodes >= 2^32");
  }
  SEER_ASSIGN_OR_RETURN(m.feature_dtype, DtypeField(root, "feature_dtype", path,
                                                    &ParseFeatureDtype, "float32, float16, bfloat16 or int8"));
  // created_by is informational: optional, but a present one must be a string.
  SEER_ASSIGN_OR_RETURN(m.created_by, JsonOptionalString(root, "created_by", "", path));
  SEER_ASSIGN_OR_RETURN(m.files, FileEntries(root, path));
  SEER_ASSIGN_OR_RETURN(m.node_ids, JsonOptionalString(root, "node_ids", "", path));
  if (!m.node_ids.empty() && m.files.count(m.node_ids) == 0) {
    return FieldError(path, "node_ids", "names '" + m.node_ids + "', which is not in files");
  }
  SEER_ASSIGN_OR_RETURN(m.node_order, JsonOptionalString(root, "node_order", "", path));
  SEER_ASSIGN_OR_RETURN(m.node_order_method, JsonOptionalString(root, "node_order_method", "", path));
  if (!m.node_order.empty() && m.files.count(m.node_order) == 0) {
    return FieldError(path, "node_order", "names '" + m.node_order + "', which is not in files");
  }
  if (!m.node_order.empty() && m.node_order == m.node_ids) {
    return FieldError(path, "node_order", "names the node_ids file");
  }
  if (root.contains("edge_splits")) {
    SEER_ASSIGN_OR_RETURN(m.edge_splits, EdgeSplitsField(root, m, path));
  }
  if (root.contains("node_types") || root.contains("relations")) {
    SEER_RETURN_IF_ERROR(TypedGraphFields(root, path, &m));
  }
  if (version < m.FormatVersion()) {
    return Corrupt(path + ": version " + std::to_string(version) + " but it uses " +
                   (!m.node_order.empty()          ? "node_order"
                    : m.edge_splits.present()      ? "edge_splits"
                    : m.typed()                    ? "node_types"
                                                   : "the int8 feature dtype") +
                   ", which needs version " +
                   std::to_string(m.FormatVersion()));
  }
  return m;
}

namespace {
// The exact size each fixed file must have for a manifest.
Result<int64_t> ExpectedBytes(const DatasetManifest& m, const std::string& name) {
  if (m.typed()) {  // the typed files (its split files are free-sized)
    for (const DatasetNodeType& t : m.node_types) {
      if (name == t.features) return AlignUp(t.count * t.feature_row_bytes(), 4096);
      if (name == t.labels) return t.count * 4;
    }
    for (const DatasetRelation& r : m.relations) {
      if (name == r.indptr) {
        const DatasetNodeType* dst = m.FindNodeType(r.dst);
        if (dst == nullptr) throw std::logic_error("relation " + r.key() + " names no node type " + r.dst);
        return (dst->count + 1) * 8;
      }
      if (name == r.indices) return r.num_edges * IndexDtypeBytes(r.index_dtype);
    }
    return int64_t{-1};
  }
  if (name == dataset_files::kIndptr) return (m.num_nodes + 1) * 8;
  if (name == dataset_files::kIndices) return m.num_edges * m.index_bytes();
  if (name == dataset_files::kFeatures) return AlignUp(m.num_nodes * m.feature_row_bytes(), 4096);
  if (name == dataset_files::kLabels) return m.num_nodes * 4;
  if (!m.node_order.empty() && name == m.node_order) return m.num_nodes * 8;
  if (m.edge_splits.present() && name == m.edge_splits.valid) return m.edge_splits.num_valid * 16;  // (src, dst)
  if (m.edge_splits.present() && name == m.edge_splits.test) return m.edge_splits.num_test * 16;
  if (m.edge_splits.negatives_per_edge > 0 && name == m.edge_splits.valid_negatives) {
    return m.edge_splits.num_valid * m.edge_splits.negatives_per_edge * 8;  // K int64 ids per held-out edge
  }
  if (m.edge_splits.negatives_per_edge > 0 && name == m.edge_splits.test_negatives) {
    return m.edge_splits.num_test * m.edge_splits.negatives_per_edge * 8;
  }
  return int64_t{-1};  // free-sized (splits: checked for a multiple of 8)
}
}  // namespace

Result<Dataset> Dataset::Open(const std::string& dir) {
  SEER_ASSIGN_OR_RETURN(Dataset dataset, OpenAnyKind(dir));
  if (dataset.manifest().typed()) {
    return InvalidArgument(dir + ": typed dataset (" + dataset.manifest().TypedShape() +
                           "): this command does not support typed datasets yet (`seer check` reads them)");
  }
  return dataset;
}

Result<Dataset> Dataset::OpenAnyKind(const std::string& dir) {
  std::string manifest_path = dir + "/" + dataset_files::kManifest;
  auto text = ReadWholeFile(manifest_path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return Status(StatusCode::kNotFound,
                    dir + " is not a Seer dataset: " + manifest_path + " is missing");
    }
    return text.status();
  }
  SEER_ASSIGN_OR_RETURN(DatasetManifest m, DatasetManifest::FromJson(*text, manifest_path));
  for (const char* required : {dataset_files::kIndptr, dataset_files::kIndices,
                               dataset_files::kFeatures, dataset_files::kLabels}) {
    if (!m.typed() && !m.files.count(required)) {  // a typed dataset's files: FromJson
      return Corrupt(manifest_path + ": files does not list required file " + required);
    }
  }
  for (const auto& [name, entry] : m.files) {
    std::string path = dir + "/" + name;
    auto size = FileSizeBytes(path);
    if (!size.ok()) return size.status();
    if (*size != entry.bytes) {
      return Corrupt(path + ": size is " + std::to_string(*size) + " bytes but " +
                     manifest_path + " records " + std::to_string(entry.bytes));
    }
    SEER_ASSIGN_OR_RETURN(int64_t expected, ExpectedBytes(m, name));
    if (expected >= 0 && expected != entry.bytes && m.typed()) {
      return Corrupt(path + ": size is " + std::to_string(entry.bytes) + " bytes, expected " +
                     std::to_string(expected) + " for the counts, dims and dtypes of " + manifest_path);
    }
    if (expected >= 0 && expected != entry.bytes) {
      return Corrupt(path + ": size is " + std::to_string(entry.bytes) + " bytes, expected " +
                     std::to_string(expected) + " for num_nodes=" + std::to_string(m.num_nodes) +
                     " num_edges=" + std::to_string(m.num_edges) +
                     " feature_dim=" + std::to_string(m.feature_dim));
    }
    const bool mapping = name == m.node_ids || std::any_of(m.node_types.begin(), m.node_types.end(),
                                                            [&](const DatasetNodeType& t) { return t.node_ids == name; });
    if (expected < 0 && !mapping && entry.bytes % 8 != 0) {  // the split files
      return Corrupt(path + ": size " + std::to_string(entry.bytes) +
                     " is not a multiple of 8 (int64 node ids)");
    }
  }
  return Dataset(dir, std::move(m));
}

namespace {
template <typename T>
Result<std::vector<T>> LoadArray(const std::string& path, int64_t count) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  int64_t want = count * static_cast<int64_t>(sizeof(T));
  if (size < want) {
    return Status(StatusCode::kUnexpectedEof, path + ": " + std::to_string(size) +
                                                  " bytes, expected " + std::to_string(want));
  }
  std::vector<T> out(static_cast<size_t>(count));
  SEER_RETURN_IF_ERROR(PreadFull(fd.get(), out.data(), want, 0, path));
  return out;
}
}  // namespace

Result<std::vector<int64_t>> Dataset::LoadIndptr() const {
  if (manifest_.typed()) throw std::logic_error("Dataset::LoadIndptr on the typed dataset " + dir_);
  std::string path = PathOf(dataset_files::kIndptr);
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> indptr,
                        LoadArray<int64_t>(path, manifest_.num_nodes + 1));
  if (indptr.front() != 0 || indptr.back() != manifest_.num_edges) {
    return Corrupt(path + ": indptr must start at 0 and end at num_edges=" +
                   std::to_string(manifest_.num_edges) + " (found " +
                   std::to_string(indptr.front()) + " .. " + std::to_string(indptr.back()) + ")");
  }
  return indptr;
}

Result<std::vector<int32_t>> Dataset::LoadLabels() const {
  if (manifest_.typed()) throw std::logic_error("Dataset::LoadLabels on the typed dataset " + dir_);
  return LoadArray<int32_t>(PathOf(dataset_files::kLabels), manifest_.num_nodes);
}

Result<std::vector<int64_t>> Dataset::LoadSplit(const std::string& split) const {
  if (split != "train" && split != "valid" && split != "test") {
    throw std::logic_error("Dataset::LoadSplit: unknown split '" + split + "'");
  }
  if (manifest_.typed()) throw std::logic_error("Dataset::LoadSplit on the typed dataset " + dir_);
  std::string name = split + ".bin";
  auto it = manifest_.files.find(name);
  if (it == manifest_.files.end()) return std::vector<int64_t>{};
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                        LoadArray<int64_t>(PathOf(name), it->second.bytes / 8));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= manifest_.num_nodes) {
      return Corrupt(PathOf(name) + ": id " + std::to_string(ids[i]) + " at index " +
                     std::to_string(i) + " (byte offset " + std::to_string(i * 8) +
                     ") is out of range [0, " + std::to_string(manifest_.num_nodes) + ")");
    }
  }
  return ids;
}

// ---- DatasetWriter ----------------------------------------------------------

DatasetWriter::Staging::~Staging() {
  if (keep || path.empty()) return;
  (void)RemoveTree(path);
}

Result<DatasetWriter> DatasetWriter::Create(const std::string& dir, bool force) {
  SEER_RETURN_IF_ERROR(MakeDirectories(dir));
  SEER_ASSIGN_OR_RETURN(OutputLock lock, OutputLock::Acquire(dir, "writing the dataset " + dir));
  std::string manifest_path = dir + "/" + dataset_files::kManifest;
  if (::access(manifest_path.c_str(), F_OK) != 0) return DatasetWriter(std::move(lock), dir, dir, nullptr);
  if (!force) {
    return Status(StatusCode::kAlreadyExists,
                  dir + " already holds a dataset (" + manifest_path + "); pass --force to overwrite it");
  }
  // Build beside the old dataset (same file system, so Commit() only renames); the old
  // one stays valid until the new one is complete. The pid in the name lets a later
  // run sweep it if this process dies (storage/base/stale_temp.h).
  // Beside the real directory (a symlinked --out may point to another file system).
  std::error_code canonical_ec;
  std::string trimmed = std::filesystem::canonical(dir, canonical_ec).string();
  if (canonical_ec) trimmed = dir;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const size_t slash = trimmed.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : trimmed.substr(0, slash);
  const std::string name = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  auto staging = std::make_unique<Staging>();
  staging->path = parent + "/.seer-prep-" + std::to_string(::getpid()) + "-" + name;
  (void)RemoveTree(staging->path);  // a leftover of this pid (reused)
  if (::mkdir(staging->path.c_str(), 0755) != 0) return ErrnoStatus(errno, "mkdir", staging->path);
  std::string path = staging->path;
  return DatasetWriter(std::move(lock), path, dir, std::move(staging));
}

Result<AtomicFileWriter*> DatasetWriter::OpenFile(const std::string& name) {
  if (files_.count(name)) throw std::logic_error("DatasetWriter::OpenFile twice for " + name);
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(dir_ + "/" + name));
  auto owned = std::make_unique<AtomicFileWriter>(std::move(writer));
  AtomicFileWriter* raw = owned.get();
  files_[name] = std::move(owned);
  return raw;
}

Status DatasetWriter::Commit(DatasetManifest manifest) {
  for (auto& [name, writer] : files_) {
    const bool type_features =
        std::any_of(manifest.node_types.begin(), manifest.node_types.end(),
                    [&name = name](const DatasetNodeType& t) { return t.features == name; });
    if (name == dataset_files::kFeatures || type_features) SEER_RETURN_IF_ERROR(writer->PadTo(4096));
    DatasetFileEntry entry;
    entry.bytes = writer->bytes_written();
    entry.checksum_kind = "xxh64";
    entry.checksum = Xxh64::ToHex(writer->xxh64());
    SEER_ASSIGN_OR_RETURN(int64_t expected, ExpectedBytes(manifest, name));
    if (expected >= 0 && expected != entry.bytes) {
      throw std::logic_error("DatasetWriter::Commit: " + name + " has " +
                             std::to_string(entry.bytes) + " bytes, manifest implies " +
                             std::to_string(expected));
    }
    manifest.files[name] = std::move(entry);
  }
  for (auto& [name, writer] : files_) SEER_RETURN_IF_ERROR(writer->Close());
  files_.clear();
  if (manifest.created_by.empty()) manifest.created_by = "seer";
  SEER_RETURN_IF_ERROR(WriteFileAtomically(dir_ + "/" + dataset_files::kManifest, manifest.ToJson()));
  if (!staging_) return Status::Ok();
  return SwapIntoTarget(manifest);
}

// The new dataset is complete in the staging directory: the target stops being a
// dataset (its manifest goes first), the new files are renamed over the old ones, old
// files the new manifest does not list are removed, the new manifest is renamed in
// last and the staging directory removed. Only renames and unlinks on one file system.
Status DatasetWriter::SwapIntoTarget(const DatasetManifest& manifest) {
  const std::string old_manifest_path = target_ + "/" + dataset_files::kManifest;
  std::map<std::string, DatasetFileEntry> old_files;
  if (auto text = ReadWholeFile(old_manifest_path); text.ok()) {
    if (auto old = DatasetManifest::FromJson(*text, old_manifest_path); old.ok()) old_files = old->files;
  }
  // Renames only work within one file system: find out before the old dataset is touched.
  struct stat staging_st, target_st;
  if (::stat(dir_.c_str(), &staging_st) != 0) return ErrnoStatus(errno, "stat", dir_);
  if (::stat(target_.c_str(), &target_st) != 0) return ErrnoStatus(errno, "stat", target_);
  if (staging_st.st_dev != target_st.st_dev) {
    return Status(StatusCode::kInvalidArgument,
                  dir_ + " and " + target_ + " are on different file systems; the old dataset is unchanged "
                         "(remove it and run again without --force)");
  }
  if (::unlink(old_manifest_path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "unlink", old_manifest_path);
  }
  SEER_RETURN_IF_ERROR(SyncDirectory(target_));
  for (const auto& [name, entry] : manifest.files) {
    const std::string from = dir_ + "/" + name, to = target_ + "/" + name;
    if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus(errno, "rename " + from + " to", to);
  }
  for (const auto& [name, entry] : old_files) {
    if (manifest.files.count(name) == 0) ::unlink((target_ + "/" + name).c_str());
  }
  const std::string from = dir_ + "/" + dataset_files::kManifest;
  if (::rename(from.c_str(), old_manifest_path.c_str()) != 0) {
    return ErrnoStatus(errno, "rename " + from + " to", old_manifest_path);
  }
  SEER_RETURN_IF_ERROR(SyncDirectory(target_));
  return Status::Ok();  // ~Staging removes the (now empty) staging directory
}

Result<std::string> FileXxh64(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  SEER_ASSIGN_OR_RETURN(const int64_t size, FileSizeBytes(fd.get(), path));
  Xxh64 hash;
  std::vector<char> buf(4 << 20);
  int64_t offset = 0;
  while (true) {
    ssize_t n = ::pread(fd.get(), buf.data(), buf.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read", path, offset);
    }
    if (n == 0) break;
    hash.Update(buf.data(), static_cast<size_t>(n));
    offset += n;
  }
  // A read that ends before the size the file had at open (truncated meanwhile, or a
  // failing device) names the offset instead of passing as a checksum mismatch.
  if (offset < size) {
    return Status(StatusCode::kUnexpectedEof, "read " + path + " at offset " + std::to_string(offset) +
                                                  ": unexpected end of file (" + std::to_string(size) +
                                                  " bytes at open)");
  }
  return Xxh64::ToHex(hash.Digest());
}

}  // namespace seer
