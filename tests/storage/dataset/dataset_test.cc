// The dataset format (storage/dataset/dataset.h): DatasetWriter + Dataset round trip,
// the manifest's JSON and the errors a damaged dataset produces.
#include "storage/dataset/dataset.h"

#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/atomic_file.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "support/test_support.h"

namespace seer {
namespace {

// Writes a tiny dataset: 5 nodes, edges 0->1, 2->1, 4->3, 1->0 (CSC by destination).
Status WriteTinyDataset(const std::string& dir, bool force = false) {
  SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(dir, force));
  DatasetManifest m;
  m.num_nodes = 5;
  m.num_edges = 4;
  m.index_dtype = IndexDtype::kUint32;
  m.feature_dim = 3;
  m.feature_dtype = FeatureDtype::kFloat32;
  m.num_classes = 2;
  std::vector<int64_t> indptr = {0, 1, 3, 3, 4, 4};
  std::vector<uint32_t> indices = {1, 0, 2, 4};
  std::vector<float> features(15);
  for (int i = 0; i < 15; ++i) features[i] = static_cast<float>(i) * 0.5f;
  std::vector<int32_t> labels = {0, 1, -1, 1, 0};
  std::vector<int64_t> train = {0, 1}, valid = {3}, test = {4};
  auto put = [&writer](const char* name, const auto& values) -> Status {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(name));
    return file->AppendValues(values.data(), static_cast<int64_t>(values.size()));
  };
  SEER_RETURN_IF_ERROR(put(dataset_files::kIndptr, indptr));
  SEER_RETURN_IF_ERROR(put(dataset_files::kIndices, indices));
  SEER_RETURN_IF_ERROR(put(dataset_files::kFeatures, features));
  SEER_RETURN_IF_ERROR(put(dataset_files::kLabels, labels));
  SEER_RETURN_IF_ERROR(put(dataset_files::kTrain, train));
  SEER_RETURN_IF_ERROR(put(dataset_files::kValid, valid));
  SEER_RETURN_IF_ERROR(put(dataset_files::kTest, test));
  m.created_by = "dataset_test";
  return writer.Commit(m);
}

TEST(DatasetTest, WriterAndReaderRoundTrip) {
  std::string dir = testing::MakeTempDir("dataset") + "/ds";
  ASSERT_TRUE(WriteTinyDataset(dir).ok());
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  const DatasetManifest& m = ds->manifest();
  EXPECT_EQ(m.num_nodes, 5);
  EXPECT_EQ(m.num_edges, 4);
  EXPECT_EQ(m.feature_row_bytes(), 12);
  EXPECT_EQ(m.files.at("features.bin").bytes, 4096);  // padded
  EXPECT_EQ(*ds->LoadIndptr(), (std::vector<int64_t>{0, 1, 3, 3, 4, 4}));
  EXPECT_EQ(*ds->LoadLabels(), (std::vector<int32_t>{0, 1, -1, 1, 0}));
  EXPECT_EQ(*ds->LoadSplit("train"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(*ds->LoadSplit("test"), (std::vector<int64_t>{4}));
  // Checksums recorded while writing equal a re-read of the files.
  for (const auto& [name, entry] : m.files) {
    EXPECT_EQ(*FileXxh64(dir + "/" + name), entry.checksum) << name;
  }
  // The raw layout is what docs/formats.md says: indices are little-endian uint32.
  auto raw = ReadWholeFile(dir + "/indices.bin");
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(raw->size(), 16u);
  uint32_t third;
  std::memcpy(&third, raw->data() + 8, 4);
  EXPECT_EQ(third, 2u);
}

TEST(DatasetTest, ExistingDatasetNeedsForce) {
  std::string dir = testing::MakeTempDir("dataset") + "/ds";
  ASSERT_TRUE(WriteTinyDataset(dir).ok());
  Status again = WriteTinyDataset(dir);
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.message().find("--force"), std::string::npos);
  EXPECT_TRUE(WriteTinyDataset(dir, /*force=*/true).ok());
  EXPECT_TRUE(Dataset::Open(dir).ok());
}

// A dataset another process is writing: Create is refused, naming it; once that
// process is gone the dataset can be written.
TEST(DatasetTest, DatasetAnotherProcessWritesIsRefused) {
  const std::string dir = testing::MakeTempDir("dataset") + "/ds";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    auto writer = DatasetWriter::Create(dir, false);
    const char ok = writer.ok() ? '1' : '0';
    (void)!::write(fds[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  char ok = '0';
  ASSERT_EQ(::read(fds[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  auto second = DatasetWriter::Create(dir, true);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("in use by another Seer run (pid " + std::to_string(child)),
            std::string::npos)
      << second.status().ToString();
  EXPECT_NE(second.status().message().find("writing the dataset " + dir), std::string::npos);
  EXPECT_TRUE(WriteTinyDataset(dir).ok());
}

// --force over a dataset: until Commit() the new files live in a staging directory beside
// it, so a writer dropped midway (a failed conversion) leaves the old dataset intact. The
// old code removed the old manifest first (old .bin files left without one).
TEST(DatasetTest, ForcedWriterDroppedMidwayKeepsTheOldDataset) {
  const std::string parent = testing::MakeTempDir("dataset");
  const std::string dir = parent + "/ds";
  ASSERT_TRUE(WriteTinyDataset(dir).ok());
  const std::string manifest_before = *ReadWholeFile(dir + "/dataset.json");
  const std::string indptr_before = *ReadWholeFile(dir + "/indptr.bin");
  {
    auto writer = DatasetWriter::Create(dir, /*force=*/true);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    EXPECT_NE(writer->dir(), dir);
    EXPECT_EQ(writer->target(), dir);
    auto f = writer->OpenFile(dataset_files::kIndptr);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("12345678", 8).ok());
    ASSERT_TRUE((*f)->Close().ok());  // even a closed new file stays out of the dataset
  }
  EXPECT_EQ(*ReadWholeFile(dir + "/dataset.json"), manifest_before);
  EXPECT_EQ(*ReadWholeFile(dir + "/indptr.bin"), indptr_before);
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  for (const auto& [name, entry] : ds->manifest().files) {
    EXPECT_EQ(*FileXxh64(dir + "/" + name), entry.checksum) << name;
  }
  // No staging directory is left beside it.
  std::vector<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(parent)) entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, (std::vector<std::string>{"ds"}));
}

// A committed --force rewrite replaces the files, removes the old dataset's files the new
// manifest does not list, and leaves the user's other files alone.
TEST(DatasetTest, ForcedCommitReplacesTheDatasetFiles) {
  const std::string parent = testing::MakeTempDir("dataset");
  const std::string dir = parent + "/ds";
  ASSERT_TRUE(WriteTinyDataset(dir).ok());
  { std::ofstream(dir + "/my_notes.txt") << "mine"; }
  {
    auto writer = DatasetWriter::Create(dir, /*force=*/true);
    ASSERT_TRUE(writer.ok());
    DatasetManifest m;
    m.num_nodes = 2;
    m.num_edges = 1;
    m.feature_dim = 0;
    m.num_classes = 0;
    std::vector<int64_t> indptr = {0, 0, 1};
    std::vector<uint32_t> indices = {0};
    std::vector<int32_t> labels = {-1, -1};
    ASSERT_TRUE((*writer->OpenFile(dataset_files::kIndptr))->AppendValues(indptr.data(), 3).ok());
    ASSERT_TRUE((*writer->OpenFile(dataset_files::kIndices))->AppendValues(indices.data(), 1).ok());
    ASSERT_TRUE(writer->OpenFile(dataset_files::kFeatures).ok());
    ASSERT_TRUE((*writer->OpenFile(dataset_files::kLabels))->AppendValues(labels.data(), 2).ok());
    ASSERT_TRUE(writer->Commit(m).ok());
  }
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(ds->manifest().num_nodes, 2);
  EXPECT_EQ(*ds->LoadIndptr(), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_FALSE(testing::FileExists(dir + "/train.bin"));
  EXPECT_FALSE(testing::FileExists(dir + "/test.bin"));
  EXPECT_TRUE(testing::FileExists(dir + "/my_notes.txt"));
  std::vector<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(parent)) entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, (std::vector<std::string>{"ds"}));
}

// --force through a symlinked directory stages beside the real directory (same file
// system as the files it replaces) and leaves nothing beside the link.
TEST(DatasetTest, ForcedWriteThroughASymlinkStagesBesideTheRealDirectory) {
  const std::string real_parent = testing::MakeTempDir("dataset_real");
  const std::string link_parent = testing::MakeTempDir("dataset_link");
  ASSERT_TRUE(WriteTinyDataset(real_parent + "/ds").ok());
  std::filesystem::create_directory_symlink(real_parent + "/ds", link_parent + "/ds");
  {
    auto writer = DatasetWriter::Create(link_parent + "/ds", /*force=*/true);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    EXPECT_EQ(writer->dir().rfind(std::filesystem::canonical(real_parent).string() + "/.seer-prep-", 0), 0u)
        << writer->dir();
  }
  EXPECT_TRUE(WriteTinyDataset(link_parent + "/ds", /*force=*/true).ok());
  EXPECT_TRUE(Dataset::Open(real_parent + "/ds").ok());
  std::vector<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(real_parent)) entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, (std::vector<std::string>{"ds"}));
}

// Counts whose file sizes overflow int64 (num_nodes * feature_dim * 4) are refused naming
// the field; they were accepted before (signed overflow in the size checks).
TEST(DatasetTest, ManifestCountsBeyondTheSupportedRangeAreRefused) {
  const std::string base = R"({"format":"seer-dataset","version":1,"num_nodes":NN,"num_edges":EE,)"
                           R"("index_dtype":"int64","feature_dim":FF,"feature_dtype":"float32","num_classes":CC,)"
                           R"("files":{}})";
  struct Case {
    const char* field;
    std::string nn, ee, ff, cc;
  } cases[] = {{"num_nodes", "4611686018427387904", "0", "4", "2"},
               {"num_edges", "10", "4611686018427387904", "4", "2"},
               {"feature_dim", "10", "0", "4611686018427387904", "2"},
               {"num_classes", "10", "0", "4", "4294967296"}};
  for (const Case& c : cases) {
    std::string json = base;
    json.replace(json.find("NN"), 2, c.nn);
    json.replace(json.find("EE"), 2, c.ee);
    json.replace(json.find("FF"), 2, c.ff);
    json.replace(json.find("CC"), 2, c.cc);
    auto m = DatasetManifest::FromJson(json, "d/dataset.json");
    ASSERT_FALSE(m.ok()) << c.field;
    EXPECT_NE(m.status().message().find("d/dataset.json: field '" + std::string(c.field) + "' is "), std::string::npos)
        << m.status().message();
  }
  auto fine = DatasetManifest::FromJson(
      R"({"format":"seer-dataset","version":1,"num_nodes":1099511627776,"num_edges":0,"index_dtype":"int64",)"
      R"("feature_dim":1048576,"feature_dtype":"float32","num_classes":2147483647,"files":{}})",
      "d/dataset.json");
  EXPECT_TRUE(fine.ok()) << fine.status().ToString();
}

TEST(DatasetTest, UncommittedWriterLeavesNoManifest) {
  std::string dir = testing::MakeTempDir("dataset") + "/ds";
  {
    auto writer = DatasetWriter::Create(dir, false);
    ASSERT_TRUE(writer.ok());
    auto f = writer->OpenFile(dataset_files::kIndptr);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("12345678", 8).ok());
  }
  EXPECT_FALSE(testing::FileExists(dir + "/dataset.json"));
  EXPECT_FALSE(testing::FileExists(dir + "/indptr.bin"));
  auto ds = Dataset::Open(dir);
  EXPECT_EQ(ds.status().code(), StatusCode::kNotFound);
  EXPECT_NE(ds.status().message().find("not a Seer dataset"), std::string::npos);
}

TEST(DatasetTest, OpenRejectsTruncatedFilesAndBadManifests) {
  std::string dir = testing::MakeTempDir("dataset") + "/ds";
  ASSERT_TRUE(WriteTinyDataset(dir).ok());
  ASSERT_EQ(::truncate((dir + "/labels.bin").c_str(), 12), 0);
  auto ds = Dataset::Open(dir);
  ASSERT_FALSE(ds.ok());
  EXPECT_NE(ds.status().message().find("labels.bin"), std::string::npos) << ds.status().message();

  std::string manifest_text = *ReadWholeFile(dir + "/dataset.json");
  auto pos = manifest_text.find("\"version\": 1");
  ASSERT_NE(pos, std::string::npos);
  manifest_text.replace(pos, 12, "\"version\": 7");
  auto m = DatasetManifest::FromJson(manifest_text, "x/dataset.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("unsupported dataset format version 7"), std::string::npos);
  auto missing = DatasetManifest::FromJson("{\"format\":\"seer-dataset\",\"version\":1}", "y.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("num_nodes"), std::string::npos);
}

// Replaces the first `from` in dir/dataset.json with `to`.
void EditManifest(const std::string& dir, const std::string& from, const std::string& to) {
  std::string text = testing::ReadFileBytes(dir + "/dataset.json");
  auto pos = text.find(from);
  ASSERT_NE(pos, std::string::npos) << from << " not in " << text;
  text.replace(pos, from.size(), to);
  ASSERT_TRUE(WriteFileAtomically(dir + "/dataset.json", text).ok());
}

TEST(DatasetTest, WrongTypedManifestFieldNamesFileAndField) {
  const std::string dir = testing::MakeTempDir("dataset") + "/ds";
  ASSERT_TRUE(WriteTinyDataset(dir).ok());
  EditManifest(dir, "\"num_nodes\": 5", "\"num_nodes\": \"5\"");
  auto ds = Dataset::Open(dir);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), StatusCode::kCorrupt);
  const std::string& message = ds.status().message();
  EXPECT_NE(message.find(dir + "/dataset.json"), std::string::npos) << message;
  EXPECT_NE(message.find("'num_nodes' must be an integer, found string \"5\""), std::string::npos)
      << message;

  struct Case {
    std::string json;
    std::string expected;
  } cases[] = {
      {R"({"format":"seer-dataset","version":1.0})", "'version' must be an integer"},
      {R"({"format":"seer-dataset","version":1,"num_nodes":-3})", "'num_nodes' must be >= 0"},
      {R"({"format":7})", "'format' must be a string"},
      {R"([1, 2])", "not a JSON object"},
      {R"({"format":"seer-dataset","version":1,"num_nodes":1,"num_edges":0,"feature_dim":1,)"
       R"("num_classes":1,"index_dtype":"uint32","feature_dtype":"float32","files":[]})",
       "'files' must be an object"},
      {R"({"format":"seer-dataset","version":1,"num_nodes":1,"num_edges":0,"feature_dim":1,)"
       R"("num_classes":1,"index_dtype":"uint32","feature_dtype":"float32",)"
       R"("files":{"labels.bin":{"bytes":"4"}}})",
       "m.json (files.labels.bin): field 'bytes' must be an integer"},
      {R"({"format":"seer-dataset","version":1,"num_nodes":1,"num_edges":0,"feature_dim":1,)"
       R"("num_classes":1,"index_dtype":"uint8","feature_dtype":"float32","files":{}})",
       "'index_dtype' is 'uint8' (expected uint32 or int64)"},
      {R"({"format":"seer-dataset",)", "m.json: invalid JSON at byte"},
  };
  for (const Case& c : cases) {
    auto m = DatasetManifest::FromJson(c.json, "m.json");
    ASSERT_FALSE(m.ok()) << c.json;
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
  }
}

TEST(DatasetTest, ManifestWrittenByEarlierVersionsStillReads) {
  // dataset.json as Seer wrote it before the move to nlohmann::json (keys in insertion
  // order, not sorted): same keys and meanings, so it must read the same.
  const std::string old_manifest = R"({
  "format": "seer-dataset",
  "version": 1,
  "num_nodes": 5,
  "num_edges": 4,
  "index_dtype": "uint32",
  "feature_dim": 3,
  "feature_dtype": "float32",
  "num_classes": 2,
  "files": {
    "features.bin": {
      "bytes": 4096,
      "xxh64": "0123456789abcdef"
    },
    "indptr.bin": {
      "bytes": 48
    }
  },
  "created_by": "seer gen"
}
)";
  auto m = DatasetManifest::FromJson(old_manifest, "old/dataset.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_nodes, 5);
  EXPECT_EQ(m->num_edges, 4);
  EXPECT_EQ(m->index_dtype, IndexDtype::kUint32);
  EXPECT_EQ(m->feature_dim, 3);
  EXPECT_EQ(m->feature_dtype, FeatureDtype::kFloat32);
  EXPECT_EQ(m->num_classes, 2);
  EXPECT_EQ(m->created_by, "seer gen");
  ASSERT_EQ(m->files.size(), 2u);
  EXPECT_EQ(m->files.at("features.bin").bytes, 4096);
  EXPECT_EQ(m->files.at("features.bin").checksum_kind, "xxh64");
  EXPECT_EQ(m->files.at("features.bin").checksum, "0123456789abcdef");
  EXPECT_EQ(m->files.at("indptr.bin").checksum_kind, "");
  // And what we write now reads back to the same manifest.
  auto again = DatasetManifest::FromJson(m->ToJson(), "new/dataset.json");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->ToJson(), m->ToJson());
}

TEST(DatasetTest, IdentityFollowsContentNotCreator) {
  DatasetManifest m;
  m.num_nodes = 10;
  m.num_edges = 20;
  m.feature_dim = 4;
  m.num_classes = 3;
  m.files["indptr.bin"] = {88, "xxh64", "0123456789abcdef"};
  m.created_by = "seer 1";
  const std::string id = m.Identity();
  EXPECT_EQ(id.size(), 16u);
  // The identity is the XXH64 of the manifest's JSON without created_by.
  DatasetManifest plain = m;
  plain.created_by.clear();
  const std::string json = plain.ToJson();
  EXPECT_EQ(id, Xxh64::ToHex(Xxh64::Hash(json.data(), json.size())));

  DatasetManifest other_tool = m;
  other_tool.created_by = "seer 2";
  EXPECT_EQ(other_tool.Identity(), id);
  DatasetManifest changed_file = m;
  changed_file.files["indptr.bin"].checksum = "0123456789abcdee";
  EXPECT_NE(changed_file.Identity(), id);
  DatasetManifest changed_count = m;
  changed_count.num_classes = 4;
  EXPECT_NE(changed_count.Identity(), id);
}

}  // namespace
}  // namespace seer
