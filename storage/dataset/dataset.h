// Seer's on-disk dataset, format versions 1 and 2 (docs/formats.md "On-disk dataset format").
//
//   dataset.json  manifest, written last (a directory without it is not a dataset)
//   indptr.bin    int64[num_nodes+1]   CSC: in-neighbors of v = indices[indptr[v]..indptr[v+1])
//   indices.bin   uint32|int64[num_edges]
//   features.bin  num_nodes rows of float32|float16|bfloat16[feature_dim] or int8 (codes + scale + bias),
//                 zero-padded to a multiple of 4096
//   labels.bin    int32[num_nodes], -1 = unlabeled
//   train.bin / valid.bin / test.bin   int64 node ids
//   node_ids.txt  optional: original id of node k on line k+1 ("node_ids" in the manifest)
//   node_order.bin optional: int64 number of node k before `seer reorder` ("node_order")
//   edges_valid.bin / edges_test.bin  optional: held-out int64 (src, dst) pairs of `seer split-edges`
//   edges_valid_negatives.bin / edges_test_negatives.bin  optional: int64 evaluation negatives, K per held-out edge
//
// A typed (heterogeneous) dataset (`node_types` in the manifest; format version 2) has
// none of the files above but, per node type T and per relation R = (src, name, dst):
//   T.features.bin  count_T rows as features.bin (optional: types without features)
//   T.labels.bin    int32[count_T] (optional), T.train.bin / T.valid.bin / T.test.bin (optional)
//   T.node_ids.txt  optional: original id of local node k on line k+1 (as node_ids.txt)
//   R.indptr.bin    int64[count_dst + 1], R.indices.bin  src-type local ids (R = "src__name__dst")
// Node ids in every file are per-type local ids. Dataset::Open refuses such a dataset
// (every command but `seer check` reads homogeneous datasets only); Dataset::OpenAnyKind
// opens both kinds.
//
// DatasetManifest is a plain value. Dataset opens a directory read-only and hands out
// paths and small arrays; big files (indices, features) are read through a BlockReader.
// DatasetWriter writes the files of a new dataset atomically: every file goes to a
// temporary name first, the manifest is written last by Commit(); a writer destroyed
// without Commit() leaves no dataset.json behind. All are single-threaded objects.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/base/atomic_file.h"
#include "storage/base/name_table.h"
#include "storage/base/output_lock.h"
#include "storage/base/status.h"

namespace seer {

enum class IndexDtype { kUint32, kInt64 };
// kInt8: 8-bit row-wise quantization (the layout of PyTorch's fused 8-bit row-wise
// embeddings): a row is `dim` uint8 codes followed by a float32 scale and a float32 bias
// (little endian, unaligned), value = code * scale + bias, with bias = the row's minimum
// and scale = (max - min) / 255: dim + 8 bytes per row, error at most scale / 2.
enum class FeatureDtype { kFloat32, kFloat16, kBFloat16, kInt8 };
inline constexpr NameValue<IndexDtype> kIndexDtypeNames[] = {{"uint32", IndexDtype::kUint32},
                                                             {"int64", IndexDtype::kInt64}};
inline constexpr NameValue<FeatureDtype> kFeatureDtypeNames[] = {{"float32", FeatureDtype::kFloat32},
                                                                 {"float16", FeatureDtype::kFloat16},
                                                                 {"bfloat16", FeatureDtype::kBFloat16},
                                                                 {"int8", FeatureDtype::kInt8}};

const char* IndexDtypeName(IndexDtype dtype);      // "uint32" / "int64"
const char* FeatureDtypeName(FeatureDtype dtype);  // "float32" / "float16" / "bfloat16" / "int8"
Result<IndexDtype> ParseIndexDtype(const std::string& text);
Result<FeatureDtype> ParseFeatureDtype(const std::string& text);
inline int64_t IndexDtypeBytes(IndexDtype d) { return d == IndexDtype::kUint32 ? 4 : 8; }
// Bytes of one stored value (int8: the code; its row also holds 8 bytes of scale and bias).
inline int64_t FeatureDtypeBytes(FeatureDtype d) {
  return d == FeatureDtype::kFloat32 ? 4 : (d == FeatureDtype::kInt8 ? 1 : 2);
}
// Bytes of one stored row of `dim` features.
inline int64_t FeatureRowBytes(FeatureDtype d, int64_t dim) {
  return dim * FeatureDtypeBytes(d) + (d == FeatureDtype::kInt8 && dim > 0 ? 8 : 0);
}
// Feature values between float32 and an element-wise stored dtype (float16/bfloat16:
// rounded to nearest even). `stored` holds count * FeatureDtypeBytes(dtype) bytes, any
// alignment. Not for kInt8 (its rows carry their scale): use the row functions.
void DecodeFeatureValues(const void* stored, FeatureDtype dtype, int64_t count, float* out);
void EncodeFeatureValues(const float* values, FeatureDtype dtype, int64_t count, void* stored);
// Whole rows, any dtype: `stored` holds rows * FeatureRowBytes(dtype, dim) bytes, `values`
// rows * dim floats. Encoding int8 picks each row's scale and bias from its finite
// minimum and maximum (a row of equal values is exact).
void DecodeFeatureRows(const void* stored, FeatureDtype dtype, int64_t dim, int64_t rows, float* out);
void EncodeFeatureRows(const float* values, FeatureDtype dtype, int64_t dim, int64_t rows, void* stored);
// uint32 whenever num_nodes < 2^32.
inline IndexDtype IndexDtypeFor(int64_t num_nodes) {
  return num_nodes < (int64_t{1} << 32) ? IndexDtype::kUint32 : IndexDtype::kInt64;
}

struct DatasetFileEntry {
  int64_t bytes = 0;
  std::string checksum_kind;   // "xxh64"
  std::string checksum;        // lowercase hex
};

// The held-out edges of `seer split-edges` (storage/dataset/edge_splits.h): two files of
// int64 (src, dst) pairs, removed from indptr/indices (with `undirected`, their reverses
// too). Absent when `valid` is empty.
struct DatasetEdgeSplits {
  std::string valid;  // the file of validation edges, one of `files`
  std::string test;   // the file of test edges, one of `files`
  int64_t num_valid = 0, num_test = 0;
  double valid_fraction = 0, test_fraction = 0;
  uint64_t seed = 0;
  bool undirected = false;
  int64_t candidate_edges = 0;  // the edges drawn from: distinct (src, dst) pairs (undirected: src <= dst)
  int64_t input_num_edges = 0;  // num_edges of the dataset the split was made from
  // Fixed evaluation negatives (`--eval-negatives K`): K destination ids per held-out edge,
  // int64[num × K], row i for pair i of the split file. 0 = none (the two names empty).
  static constexpr int64_t kMaxNegativesPerEdge = int64_t{1} << 20;
  int64_t negatives_per_edge = 0;
  std::string valid_negatives, test_negatives;  // files, both in `files`, when negatives_per_edge > 0
  bool present() const { return !valid.empty(); }
};

// A node type of a typed dataset: `count` nodes with local ids [0, count). Files are named
// here and listed in the manifest's `files`; "" = none.
struct DatasetNodeType {
  std::string name;  // letters and digits in runs joined by single '_' (no "__": relation keys use it)
  int64_t count = 0;
  int64_t feature_dim = 0;  // 0 = no features (then `features` is "")
  FeatureDtype feature_dtype = FeatureDtype::kFloat32;
  std::string features;     // count rows of feature_row_bytes(), zero-padded to 4096 like features.bin
  std::string labels;       // int32[count] in [-1, num_classes), or "" (then num_classes is 0)
  int64_t num_classes = 0;
  std::string train, valid, test;  // int64 local ids, each "" when absent
  // "" when local id k is the input's id k; else the type's mapping file of `seer prep
  // --remap-ids` (count lines, the format of node_ids.txt, storage/dataset/node_ids.h).
  // (Initialized so brace inits that stop before it name what they set.)
  std::string node_ids{};
  int64_t feature_row_bytes() const { return FeatureRowBytes(feature_dtype, feature_dim); }
};

// A relation of a typed dataset: edges src -> dst between two node types (the same type
// for paper__cites__paper), stored as a CSC over the destination type: the in-neighbors of
// dst node v are indices[indptr[v] .. indptr[v + 1]), source-type local ids.
struct DatasetRelation {
  std::string src, name, dst;  // node type names; `name` follows the node type name rule
  int64_t num_edges = 0;
  IndexDtype index_dtype = IndexDtype::kUint32;  // uint32 whenever the source type's count < 2^32
  std::string indptr;   // int64[count_dst + 1]
  std::string indices;  // index_dtype[num_edges]
  std::string key() const { return src + "__" + name + "__" + dst; }  // "paper__cites__paper"
};

// File names the writers of typed datasets use ("paper.features.bin",
// "paper__cites__paper.indptr.bin"). Readers take the names from the manifest.
std::string NodeTypeFileName(const std::string& type, const std::string& role);  // role: features, labels, train, ...
std::string RelationFileName(const DatasetRelation& relation, const std::string& role);  // role: indptr, indices
// Whether `name` may name a node type or a relation (the rule of DatasetNodeType::name).
bool ValidTypeName(const std::string& name);

struct DatasetManifest {
  // The newest format this code reads and writes. Version 2 adds `node_order`, the int8
  // feature dtype, `edge_splits` and typed graphs (`node_types`, `relations`); a manifest that uses none is written as version 1, so earlier
  // readers keep reading it, and one that does says 2, so they refuse it by its version
  // instead of misreading it (FormatVersion()).
  static constexpr int kVersion = 2;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  IndexDtype index_dtype = IndexDtype::kUint32;
  int64_t feature_dim = 0;
  FeatureDtype feature_dtype = FeatureDtype::kFloat32;
  int64_t num_classes = 0;
  std::map<std::string, DatasetFileEntry> files;
  std::string created_by;
  // "" when node k is the input's id k; else the mapping file (storage/dataset/node_ids.h)
  // of `seer prep --remap-ids`, one of `files`.
  std::string node_ids;
  // "" when the nodes keep the numbering they were written with; else the file of
  // `seer reorder` (storage/dataset/node_order.h), one of `files`, and how its order was
  // computed ("degree", "bfs").
  std::string node_order;
  std::string node_order_method;
  DatasetEdgeSplits edge_splits;
  // A typed dataset: its node types (at least one) and relations. Empty for a homogeneous
  // dataset. Then num_nodes = the sum of the types' counts, num_edges = the sum of the
  // relations' edges, index_dtype = IndexDtypeFor(num_nodes) (what a global id, the
  // type's offset in manifest order + the local id, needs), feature_dim = num_classes = 0
  // and feature_dtype float32 (each type has its own); no node_ids, node_order or edge_splits.
  std::vector<DatasetNodeType> node_types;
  std::vector<DatasetRelation> relations;

  bool typed() const { return !node_types.empty(); }
  // The node type called `name`, or nullptr.
  const DatasetNodeType* FindNodeType(const std::string& name) const;
  // "3 node types, 8 relations" (for messages).
  std::string TypedShape() const;
  int64_t feature_row_bytes() const { return FeatureRowBytes(feature_dtype, feature_dim); }
  // The version this manifest is written as: the lowest that has what it uses.
  int FormatVersion() const {
    return !node_order.empty() || feature_dtype == FeatureDtype::kInt8 || edge_splits.present() || typed() ? 2 : 1;
  }
  int64_t index_bytes() const { return IndexDtypeBytes(index_dtype); }

  std::string ToJson() const;
  // The dataset's identity: 16 hex digits of XXH64 over the manifest's content (sizes,
  // dtypes, counts and every file's checksum; not `created_by`). Files derived from a
  // dataset (neighbor cache, traces, changesets, checkpoints) record it, and a reader
  // refuses a file whose identity differs, naming both. Two ranks compare it at start.
  std::string Identity() const;
  // `path` is only used in error messages.
  static Result<DatasetManifest> FromJson(const std::string& json, const std::string& path);
};

// The fixed file names.
namespace dataset_files {
inline constexpr const char* kManifest = "dataset.json";
inline constexpr const char* kIndptr = "indptr.bin";
inline constexpr const char* kIndices = "indices.bin";
inline constexpr const char* kFeatures = "features.bin";
inline constexpr const char* kLabels = "labels.bin";
inline constexpr const char* kTrain = "train.bin";
inline constexpr const char* kValid = "valid.bin";
inline constexpr const char* kTest = "test.bin";
}  // namespace dataset_files

class Dataset {
 public:
  // Reads and validates the manifest (format, version, field types) and checks that the
  // files it lists exist with the recorded sizes. Cheap: no bulk reads. A typed dataset is
  // refused (kInvalidArgument, one line: "DIR: typed dataset (3 node types, 8 relations):
  // this command does not support typed datasets yet ..."): every command that reads a
  // dataset through Open reads the homogeneous files (indptr.bin, features.bin, ...).
  static Result<Dataset> Open(const std::string& dir);
  // The same for both kinds (`seer check`): a typed dataset's manifest().typed() is true
  // and LoadIndptr/LoadLabels/LoadSplit must not be called on it (std::logic_error).
  static Result<Dataset> OpenAnyKind(const std::string& dir);

  const DatasetManifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  std::string PathOf(const std::string& file_name) const { return dir_ + "/" + file_name; }

  // Whole-array loads (sequential reads). Sizes are checked against the manifest.
  Result<std::vector<int64_t>> LoadIndptr() const;
  Result<std::vector<int32_t>> LoadLabels() const;
  // split: "train" | "valid" | "test"; a missing split file gives an empty vector.
  Result<std::vector<int64_t>> LoadSplit(const std::string& split) const;

 private:
  Dataset(std::string dir, DatasetManifest manifest)
      : dir_(std::move(dir)), manifest_(std::move(manifest)) {}
  std::string dir_;
  DatasetManifest manifest_;
};

// Streams the files of a new dataset into `dir`. Usage:
//   auto w = DatasetWriter::Create(dir, force);   // refuses a dataset dir unless force
//   w->OpenFile("indptr.bin") ... w->file("indptr.bin").Append(...)
//   w->Commit(manifest)   // closes files, computes checksums, writes dataset.json last
// With force=true over an existing dataset, the new files are written to a staging
// directory beside it (PARENT/.seer-prep-PID-NAME) and the old dataset is left intact
// until Commit(): then its manifest is removed, the new files are renamed over the old
// ones (old files the new manifest does not list are removed) and the new manifest is
// renamed in last. A writer destroyed without Commit() removes the staging directory,
// so a failed conversion leaves the old dataset as it was. The writer holds an
// OutputLock on `dir` (storage/base/output_lock.h) for its whole life: a second writer
// of the same dataset is refused (kAlreadyExists naming the first one).
class DatasetWriter {
 public:
  static Result<DatasetWriter> Create(const std::string& dir, bool force);
  DatasetWriter(DatasetWriter&&) noexcept = default;
  DatasetWriter& operator=(DatasetWriter&&) noexcept = default;
  ~DatasetWriter() = default;

  // Starts writing `name` (temporary name until Commit()).
  Result<AtomicFileWriter*> OpenFile(const std::string& name);
  // Fills in files{} (bytes + xxh64 of every written file), closes and renames the data
  // files, then writes dataset.json. features.bin (and each node type's features file)
  // is zero-padded to 4096 here.
  Status Commit(DatasetManifest manifest);
  // Where the files are being written: the target, or the staging directory.
  const std::string& dir() const { return dir_; }
  // The dataset directory Commit() fills.
  const std::string& target() const { return target_; }

 private:
  // Removes the staging directory when the writer is dropped before Commit().
  struct Staging {
    std::string path;
    bool keep = false;
    ~Staging();
  };
  DatasetWriter(OutputLock lock, std::string dir, std::string target, std::unique_ptr<Staging> staging)
      : lock_(std::move(lock)), dir_(std::move(dir)), target_(std::move(target)), staging_(std::move(staging)) {}
  Status SwapIntoTarget(const DatasetManifest& manifest);
  OutputLock lock_;  // first: released after everything else is gone
  std::string dir_;
  std::string target_;
  std::unique_ptr<Staging> staging_;  // before files_: destroyed after their temporaries
  std::map<std::string, std::unique_ptr<AtomicFileWriter>> files_;
};

// xxh64 of a whole file, streamed (lowercase hex, 16 digits).
Result<std::string> FileXxh64(const std::string& path);

}  // namespace seer
