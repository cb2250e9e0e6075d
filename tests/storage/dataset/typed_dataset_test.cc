// Typed (heterogeneous) datasets in the one dataset format (storage/dataset/dataset.h):
// the manifest's node_types/relations round trip, the version rule, the refusals of a
// damaged typed manifest, homogeneous manifests written exactly as before, Dataset::Open
// refusing a typed dataset, and `seer check`'s rules on a hand-written typed dataset.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/checksum.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/dataset_check.h"
#include "support/small_dataset.h"
#include "support/test_support.h"

namespace seer {
namespace {

// A manifest of two types (paper with features, labels and splits; tag without
// features) and two relations, with made-up file sizes and checksums.
DatasetManifest TwoTypeManifest() {
  DatasetManifest m;
  DatasetNodeType paper;
  paper.name = "paper";
  paper.count = 7;
  paper.feature_dim = 3;
  paper.feature_dtype = FeatureDtype::kFloat16;
  paper.features = "paper.features.bin";
  paper.labels = "paper.labels.bin";
  paper.num_classes = 4;
  paper.train = "paper.train.bin";
  paper.test = "paper.test.bin";
  DatasetNodeType tag;
  tag.name = "tag";
  tag.count = 2;
  m.node_types = {paper, tag};
  DatasetRelation cites{"paper", "cites", "paper", 9, IndexDtype::kUint32, "", ""};
  cites.indptr = RelationFileName(cites, "indptr");
  cites.indices = RelationFileName(cites, "indices");
  DatasetRelation tagged{"tag", "tags", "paper", 5, IndexDtype::kUint32, "", ""};
  tagged.indptr = RelationFileName(tagged, "indptr");
  tagged.indices = RelationFileName(tagged, "indices");
  m.relations = {cites, tagged};
  m.num_nodes = 9;
  m.num_edges = 14;
  m.index_dtype = IndexDtypeFor(m.num_nodes);
  m.files["paper.features.bin"] = {4096, "xxh64", "0123456789abcdef"};
  m.files["paper.labels.bin"] = {28, "xxh64", "1111111111111111"};
  m.files["paper.train.bin"] = {16, "xxh64", "2222222222222222"};
  m.files["paper.test.bin"] = {8, "xxh64", "3333333333333333"};
  m.files["paper__cites__paper.indptr.bin"] = {64, "xxh64", "4444444444444444"};
  m.files["paper__cites__paper.indices.bin"] = {36, "xxh64", "5555555555555555"};
  m.files["tag__tags__paper.indptr.bin"] = {64, "xxh64", "6666666666666666"};
  m.files["tag__tags__paper.indices.bin"] = {20, "xxh64", "7777777777777777"};
  m.created_by = "typed_dataset_test";
  return m;
}

// FromJson's error for `m` after `edit` changed its JSON text (one replacement of `from`).
std::string ErrorAfterEdit(const DatasetManifest& m, const std::string& from, const std::string& to) {
  std::string json = m.ToJson();
  const size_t at = json.find(from);
  if (at == std::string::npos) return "test bug: '" + from + "' not in the JSON";
  json.replace(at, from.size(), to);
  auto parsed = DatasetManifest::FromJson(json, "D/dataset.json");
  return parsed.ok() ? "OK" : parsed.status().message();
}

TEST(TypedManifestTest, RoundTripsThroughJsonAsVersion2) {
  const DatasetManifest m = TwoTypeManifest();
  EXPECT_TRUE(m.typed());
  EXPECT_EQ(m.FormatVersion(), 2);
  const std::string json = m.ToJson();
  EXPECT_NE(json.find("\"version\": 2"), std::string::npos) << json;
  EXPECT_NE(json.find("\"indptr\": \"paper__cites__paper.indptr.bin\""), std::string::npos) << json;
  auto back = DatasetManifest::FromJson(json, "D/dataset.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), json);
  EXPECT_EQ(back->Identity(), m.Identity());
  ASSERT_EQ(back->node_types.size(), 2u);
  const DatasetNodeType& paper = back->node_types[0];
  EXPECT_EQ(paper.name, "paper");
  EXPECT_EQ(paper.count, 7);
  EXPECT_EQ(paper.feature_dtype, FeatureDtype::kFloat16);
  EXPECT_EQ(paper.feature_row_bytes(), 6);
  EXPECT_EQ(paper.valid, "");
  EXPECT_EQ(paper.test, "paper.test.bin");
  EXPECT_EQ(back->node_types[1].features, "");
  EXPECT_EQ(back->node_types[1].num_classes, 0);
  ASSERT_EQ(back->relations.size(), 2u);
  EXPECT_EQ(back->relations[1].key(), "tag__tags__paper");
  EXPECT_EQ(back->relations[1].num_edges, 5);
  EXPECT_EQ(back->TypedShape(), "2 node types, 2 relations");
  // The identity covers the typed fields, not created_by.
  DatasetManifest other = m;
  other.created_by = "another tool";
  EXPECT_EQ(other.Identity(), m.Identity());
  other.relations[0].num_edges = 8;
  other.num_edges = 13;
  EXPECT_NE(other.Identity(), m.Identity());
}

// dataset.json as the code before typed graphs wrote it (tests/fuzz/corpus/manifest):
// read and written back byte for byte, and its identity is the XXH64 of that text with
// created_by emptied (computed here from the text, not through ToJson).
TEST(TypedManifestTest, HomogeneousManifestsAreWrittenExactlyAsBefore) {
  const std::string v1 = R"({
  "created_by": "seer gen --nodes 60 --seed 1",
  "feature_dim": 4,
  "feature_dtype": "float32",
  "files": {
    "features.bin": {
      "bytes": 4096,
      "xxh64": "438c5264e01701a4"
    },
    "indices.bin": {
      "bytes": 720,
      "xxh64": "5eec22839aa2d704"
    },
    "indptr.bin": {
      "bytes": 488,
      "xxh64": "0fd8e4f59a4f9902"
    },
    "labels.bin": {
      "bytes": 240,
      "xxh64": "09a7a14c29d27951"
    },
    "test.bin": {
      "bytes": 16,
      "xxh64": "9324aef83f9c6007"
    },
    "train.bin": {
      "bytes": 184,
      "xxh64": "94d3971581ca9461"
    },
    "valid.bin": {
      "bytes": 8,
      "xxh64": "0876cd406afde455"
    }
  },
  "format": "seer-dataset",
  "index_dtype": "uint32",
  "num_classes": 3,
  "num_edges": 180,
  "num_nodes": 60,
  "version": 1
}
)";
  auto m = DatasetManifest::FromJson(v1, "old/dataset.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->typed());
  EXPECT_EQ(m->FormatVersion(), 1);
  EXPECT_EQ(m->ToJson(), v1);
  std::string anonymous = v1;
  const std::string creator = "\"seer gen --nodes 60 --seed 1\"";
  anonymous.replace(anonymous.find(creator), creator.size(), "\"\"");
  EXPECT_EQ(m->Identity(), Xxh64::ToHex(Xxh64::Hash(anonymous.data(), anonymous.size())));
  EXPECT_EQ(m->Identity(), "b4ebcdca73afaaf9");  // recorded by derived files: must never change
}

TEST(TypedManifestTest, DamagedTypedManifestsAreRefusedNamingTheField) {
  const DatasetManifest m = TwoTypeManifest();
  // A version-1 manifest cannot hold types.
  EXPECT_NE(ErrorAfterEdit(m, "\"version\": 2", "\"version\": 1").find("uses node_types, which needs version 2"),
            std::string::npos);
  EXPECT_NE(ErrorAfterEdit(m, "\"src\": \"tag\"", "\"src\": \"user\"")
                .find("relations[1] user__tags__paper): field 'src' names 'user', which is not a node type"),
            std::string::npos)
      << ErrorAfterEdit(m, "\"src\": \"tag\"", "\"src\": \"user\"");
  EXPECT_NE(ErrorAfterEdit(m, "\"name\": \"tag\"", "\"name\": \"ta__g\"").find("field 'name' is 'ta__g'"),
            std::string::npos);
  EXPECT_NE(ErrorAfterEdit(m, "\"indices\": \"tag__tags__paper.indices.bin\"",
                           "\"indices\": \"paper.labels.bin\"")
                .find("names 'paper.labels.bin', already named by D/dataset.json (node_types[0] paper).labels"),
            std::string::npos);
  EXPECT_NE(ErrorAfterEdit(m, "\"labels\": \"paper.labels.bin\"", "\"labels\": \"missing.bin\"")
                .find("names 'missing.bin', which is not in files"),
            std::string::npos);
  // num_nodes must be the types' sum.
  EXPECT_NE(ErrorAfterEdit(m, "\"num_nodes\": 9", "\"num_nodes\": 10").find("num_nodes = 9 (the node types' sum)"),
            std::string::npos);
  // A listed file no type or relation names.
  DatasetManifest extra = m;
  extra.files["stray.bin"] = {8, "xxh64", "0000000000000000"};
  auto parsed = DatasetManifest::FromJson(extra.ToJson(), "D/dataset.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("lists 'stray.bin', which no node type or relation names"),
            std::string::npos)
      << parsed.status().message();
  // A uint32 relation whose source type holds more ids than uint32 does.
  DatasetManifest wide = m;
  wide.node_types[1].count = (int64_t{1} << 32) + 1;
  wide.num_nodes = 7 + wide.node_types[1].count;
  wide.index_dtype = IndexDtypeFor(wide.num_nodes);
  parsed = DatasetManifest::FromJson(wide.ToJson(), "D/dataset.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("field 'index_dtype' is uint32 but the source type tag"), std::string::npos)
      << parsed.status().message();
}

TEST(TypedManifestTest, TypeNamesSplitBackFromRelationKeys) {
  for (const char* good : {"paper", "written_by", "fos2", "A_b_C"}) EXPECT_TRUE(ValidTypeName(good)) << good;
  for (const char* bad : {"", "_paper", "paper_", "a__b", "a.b", "a/b", "a-b", "é"}) {
    EXPECT_FALSE(ValidTypeName(bad)) << bad;
  }
  EXPECT_EQ(NodeTypeFileName("paper", "features"), "paper.features.bin");
}

// A real typed dataset written through DatasetWriter: 3 papers, 2 tags.
//   paper__cites__paper: CSC over papers, lists {1, 2}, {}, {0}
//   tag__tags__paper:    lists {0}, {0, 1}, {1}
Status WriteTinyTypedDataset(const std::string& dir) {
  SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(dir, false));
  DatasetManifest m;
  DatasetNodeType paper{"paper", 3, 2, FeatureDtype::kFloat32, "paper.features.bin", "paper.labels.bin", 2,
                        "paper.train.bin", "", "paper.test.bin"};
  DatasetNodeType tag{"tag", 2, 0, FeatureDtype::kFloat32, "", "", 0, "", "", ""};
  m.node_types = {paper, tag};
  m.relations = {{"paper", "cites", "paper", 3, IndexDtype::kUint32, "paper__cites__paper.indptr.bin",
                  "paper__cites__paper.indices.bin"},
                 {"tag", "tags", "paper", 4, IndexDtype::kUint32, "tag__tags__paper.indptr.bin",
                  "tag__tags__paper.indices.bin"}};
  m.num_nodes = 5;
  m.num_edges = 7;
  auto put = [&writer](const std::string& name, const auto& values) -> Status {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * file, writer.OpenFile(name));
    return file->AppendValues(values.data(), static_cast<int64_t>(values.size()));
  };
  SEER_RETURN_IF_ERROR(put("paper.features.bin", std::vector<float>{0.5f, 1, 2, 3, 4, 5}));
  SEER_RETURN_IF_ERROR(put("paper.labels.bin", std::vector<int32_t>{1, -1, 0}));
  SEER_RETURN_IF_ERROR(put("paper.train.bin", std::vector<int64_t>{0}));
  SEER_RETURN_IF_ERROR(put("paper.test.bin", std::vector<int64_t>{2}));
  SEER_RETURN_IF_ERROR(put("paper__cites__paper.indptr.bin", std::vector<int64_t>{0, 2, 2, 3}));
  SEER_RETURN_IF_ERROR(put("paper__cites__paper.indices.bin", std::vector<uint32_t>{1, 2, 0}));
  SEER_RETURN_IF_ERROR(put("tag__tags__paper.indptr.bin", std::vector<int64_t>{0, 1, 3, 4}));
  SEER_RETURN_IF_ERROR(put("tag__tags__paper.indices.bin", std::vector<uint32_t>{0, 0, 1, 1}));
  return writer.Commit(m);
}

std::string CheckError(const std::string& dir, bool deep = false) {
  auto r = CheckDataset(dir, DatasetCheckOptions{deep, false});
  return r.ok() ? "OK" : r.status().message();
}

TEST(TypedDatasetTest, WrittenDatasetOpensOnlyAsTyped) {
  const std::string dir = testing::MakeTempDir("typed") + "/ds";
  ASSERT_TRUE(WriteTinyTypedDataset(dir).ok());
  auto any = Dataset::OpenAnyKind(dir);
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_EQ(any->manifest().files.at("paper.features.bin").bytes, 4096);  // padded like features.bin
  EXPECT_EQ(any->manifest().FormatVersion(), 2);
  auto homogeneous = Dataset::Open(dir);
  ASSERT_FALSE(homogeneous.ok());
  EXPECT_EQ(homogeneous.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(homogeneous.status().message(),
            dir + ": typed dataset (2 node types, 2 relations): this command does not support typed datasets yet "
                  "(`seer check` reads them)");
  auto summary = CheckDataset(dir, DatasetCheckOptions{true, false});
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->checksums_verified, 8);  // every file
  ASSERT_EQ(summary->node_types.size(), 2u);
  EXPECT_EQ(summary->node_types[0].num_labeled, 2);
  EXPECT_EQ(summary->node_types[0].num_train, 1);
  EXPECT_EQ(summary->node_types[0].num_test, 1);
  ASSERT_EQ(summary->relations.size(), 2u);
  EXPECT_EQ(summary->relations[0].max_in_degree, 2);
  EXPECT_EQ(summary->relations[1].max_in_degree, 2);
}

TEST(TypedDatasetTest, CheckNamesFileAndPositionOfEachProblem) {
  using testing::Poke;
  const std::string root = testing::MakeTempDir("typed_check");
  int n = 0;
  auto fresh = [&] {
    const std::string dir = root + "/ds" + std::to_string(n++);
    EXPECT_TRUE(WriteTinyTypedDataset(dir).ok());
    return dir;
  };
  std::string dir = fresh();
  Poke<uint32_t>(dir + "/tag__tags__paper.indices.bin", 2, 2);  // tags has 2 nodes
  EXPECT_EQ(CheckError(dir), dir + "/tag__tags__paper.indices.bin at index 2 (byte offset 8): tag id 2 out of range "
                                   "[0, 2) (the source type of tag__tags__paper)");
  dir = fresh();
  Poke<int64_t>(dir + "/paper__cites__paper.indptr.bin", 2, 1);  // 0, 2, 1, 3
  EXPECT_EQ(CheckError(dir), dir + "/paper__cites__paper.indptr.bin at index 2 (byte offset 16): indptr decreases "
                                   "(2 then 1)");
  dir = fresh();
  Poke<int64_t>(dir + "/tag__tags__paper.indptr.bin", 3, 3);  // ends before num_edges = 4
  EXPECT_EQ(CheckError(dir), dir + "/tag__tags__paper.indptr.bin at index 3 (byte offset 24): last indptr = 3, "
                                   "expected the relation's num_edges = 4");
  dir = fresh();
  Poke<int32_t>(dir + "/paper.labels.bin", 1, 2);  // 2 classes
  EXPECT_EQ(CheckError(dir), dir + "/paper.labels.bin at index 1 (byte offset 4): label 2 out of range [-1, 2) "
                                   "(node type paper)");
  dir = fresh();
  Poke<int64_t>(dir + "/paper.test.bin", 0, 0);  // paper 0 is in train
  EXPECT_EQ(CheckError(dir), dir + "/paper.test.bin at index 0 (byte offset 0): paper node 0 is already in "
                                   "paper.train.bin");
  // A change that breaks no rule: the checksum (shallow for the topology and labels).
  dir = fresh();
  Poke<uint32_t>(dir + "/paper__cites__paper.indices.bin", 0, 0);
  EXPECT_NE(CheckError(dir).find(dir + "/paper__cites__paper.indices.bin: xxh64 "), std::string::npos)
      << CheckError(dir);
  // Features: --deep only (values finite, checksum).
  dir = fresh();
  Poke<float>(dir + "/paper.features.bin", 3, 7.0f);
  EXPECT_EQ(CheckError(dir), "OK");
  EXPECT_NE(CheckError(dir, true).find(dir + "/paper.features.bin: xxh64 "), std::string::npos)
      << CheckError(dir, true);
  dir = fresh();
  Poke<uint32_t>(dir + "/paper.features.bin", 5, 0x7fc00000u);  // NaN: paper 2, feature 1
  EXPECT_NE(CheckError(dir, true).find(dir + "/paper.features.bin: node 2, feature 1 (byte offset 20)"),
            std::string::npos)
      << CheckError(dir, true);
}

}  // namespace
}  // namespace seer
