// Tests for the storage basics: Status/errno helper, atomic writer, xxh64, JSON,
// byte-size parsing, dataset manifest + writer + reader.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/atomic_file.h"
#include "storage/base/byte_size.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/base/json.h"
#include "storage/dataset/dataset.h"

namespace seer {
namespace {

std::string MakeTempDir() {
  std::string tmpl = ::testing::TempDir() + "seer_storage_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* dir = ::mkdtemp(buf.data());
  if (!dir) throw std::runtime_error("mkdtemp failed");
  return dir;
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

TEST(StatusTest, ErrnoStatusNamesOperationPathAndRange) {
  Status st = ErrnoStatus(-EIO, "read", "/data/features.bin", 4096, 512);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.sys_errno(), EIO);
  EXPECT_NE(st.message().find("read /data/features.bin at offset 4096 (+512 bytes)"),
            std::string::npos) << st.message();
  EXPECT_EQ(ErrnoStatus(ENOENT, "open", "x").code(), StatusCode::kNotFound);
}

TEST(StatusTest, ResultCarriesValueOrError) {
  Result<int> good(7);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  Result<int> bad(InvalidArgument("nope"));
  EXPECT_FALSE(bad.ok());
  EXPECT_THROW(bad.value(), StatusError);
}

TEST(Xxh64Test, MatchesReferenceVectors) {
  // Reference values from the xxHash specification's sanity checks.
  EXPECT_EQ(Xxh64::Hash("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(Xxh64::Hash("a", 1), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(Xxh64::Hash("abc", 3), 0x44BC2CF5AD770999ULL);
}

TEST(Xxh64Test, StreamingEqualsOneShotForEverySplit) {
  std::mt19937_64 rng(12345);
  std::vector<unsigned char> data(1000);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  uint64_t whole = Xxh64::Hash(data.data(), data.size(), 99);
  for (size_t split : {0, 1, 7, 31, 32, 33, 64, 500, 999, 1000}) {
    Xxh64 h(99);
    h.Update(data.data(), split);
    h.Update(data.data() + split, data.size() - split);
    EXPECT_EQ(h.Digest(), whole) << "split " << split;
  }
  EXPECT_NE(Xxh64::Hash(data.data(), data.size(), 0), whole);
}

TEST(JsonTest, RoundTripsNestedValues) {
  JsonValue root = JsonValue::Object();
  root.Set("n", JsonValue::Int(-42));
  root.Set("big", JsonValue::Int(int64_t{1} << 40));
  root.Set("x", JsonValue::Double(0.25));
  root.Set("s", JsonValue::String("a \"quoted\"\nline"));
  JsonValue arr = JsonValue::Array();
  arr.Push(JsonValue::Bool(true));
  arr.Push(JsonValue::Null());
  root.Set("arr", std::move(arr));
  for (int indent : {-1, 2}) {
    auto parsed = JsonValue::Parse(root.Dump(indent), "mem");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->Find("n")->as_int(), -42);
    EXPECT_EQ(parsed->Find("big")->as_int(), int64_t{1} << 40);
    EXPECT_DOUBLE_EQ(parsed->Find("x")->as_double(), 0.25);
    EXPECT_EQ(parsed->Find("s")->as_string(), "a \"quoted\"\nline");
    EXPECT_EQ(parsed->Find("arr")->items().size(), 2u);
  }
}

TEST(JsonTest, ErrorsNameLineAndColumn) {
  auto bad = JsonValue::Parse("{\n  \"a\": 1,\n  \"b\" 2\n}", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.json:3:7"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(JsonValue::Parse("[1, 2", "m.json").ok());
  EXPECT_FALSE(JsonValue::Parse("{} x", "m.json").ok());
}

TEST(ParseBytesTest, AcceptsSuffixesAndRejectsGarbage) {
  EXPECT_EQ(*ParseBytes("4096"), 4096);
  EXPECT_EQ(*ParseBytes("512K"), 512 * 1024);
  EXPECT_EQ(*ParseBytes("512M"), 512LL * 1024 * 1024);
  EXPECT_EQ(*ParseBytes("2GiB"), 2LL * 1024 * 1024 * 1024);
  EXPECT_EQ(*ParseBytes("1.5g"), 3LL * 512 * 1024 * 1024);
  auto bad = ParseBytes("12Q");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'12Q'"), std::string::npos);
  EXPECT_FALSE(ParseBytes("").ok());
  EXPECT_FALSE(ParseBytes("-5").ok());
}

TEST(AtomicFileWriterTest, NothingAppearsUntilClose) {
  std::string dir = MakeTempDir();
  std::string path = dir + "/out.bin";
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    std::vector<char> data(3 << 20, 'x');  // bigger than the internal buffer
    ASSERT_TRUE(writer->Append(data.data(), static_cast<int64_t>(data.size())).ok());
    ASSERT_TRUE(writer->Append("tail", 4).ok());
    EXPECT_FALSE(Exists(path));
    EXPECT_EQ(writer->xxh64(), [&] {
      Xxh64 h;
      h.Update(data.data(), data.size());
      h.Update("tail", 4);
      return h.Digest();
    }());
    ASSERT_TRUE(writer->Close().ok());
  }
  EXPECT_EQ(*FileSizeBytes(path), (3 << 20) + 4);
  // An abandoned writer leaves neither the final file nor its temporary.
  {
    auto writer = AtomicFileWriter::Create(dir + "/never.bin");
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Append("abc", 3).ok());
  }
  EXPECT_FALSE(Exists(dir + "/never.bin"));
  int leftovers = 0;
  for (const char* probe : {"/never.bin"}) (void)probe;
  std::string cmd = "ls " + dir;
  FILE* ls = ::popen(cmd.c_str(), "r");
  char line[512];
  while (std::fgets(line, sizeof line, ls)) ++leftovers;
  ::pclose(ls);
  EXPECT_EQ(leftovers, 1);  // only out.bin
}

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
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* f, writer.OpenFile(dataset_files::kIndptr));
  SEER_RETURN_IF_ERROR(f->AppendValues(indptr.data(), 6));
  SEER_ASSIGN_OR_RETURN(f, writer.OpenFile(dataset_files::kIndices));
  SEER_RETURN_IF_ERROR(f->AppendValues(indices.data(), 4));
  SEER_ASSIGN_OR_RETURN(f, writer.OpenFile(dataset_files::kFeatures));
  SEER_RETURN_IF_ERROR(f->AppendValues(features.data(), 15));
  SEER_ASSIGN_OR_RETURN(f, writer.OpenFile(dataset_files::kLabels));
  SEER_RETURN_IF_ERROR(f->AppendValues(labels.data(), 5));
  SEER_ASSIGN_OR_RETURN(f, writer.OpenFile(dataset_files::kTrain));
  SEER_RETURN_IF_ERROR(f->AppendValues(train.data(), 2));
  SEER_ASSIGN_OR_RETURN(f, writer.OpenFile(dataset_files::kValid));
  SEER_RETURN_IF_ERROR(f->AppendValues(valid.data(), 1));
  SEER_ASSIGN_OR_RETURN(f, writer.OpenFile(dataset_files::kTest));
  SEER_RETURN_IF_ERROR(f->AppendValues(test.data(), 1));
  m.created_by = "basics_test";
  return writer.Commit(m);
}

TEST(DatasetTest, WriterAndReaderRoundTrip) {
  std::string dir = MakeTempDir() + "/ds";
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
  // The raw layout is what DESIGN.md says: indices are little-endian uint32.
  auto raw = ReadWholeFile(dir + "/indices.bin");
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(raw->size(), 16u);
  uint32_t third;
  std::memcpy(&third, raw->data() + 8, 4);
  EXPECT_EQ(third, 2u);
}

TEST(DatasetTest, ExistingDatasetNeedsForce) {
  std::string dir = MakeTempDir() + "/ds";
  ASSERT_TRUE(WriteTinyDataset(dir).ok());
  Status again = WriteTinyDataset(dir);
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.message().find("--force"), std::string::npos);
  EXPECT_TRUE(WriteTinyDataset(dir, /*force=*/true).ok());
  EXPECT_TRUE(Dataset::Open(dir).ok());
}

TEST(DatasetTest, UncommittedWriterLeavesNoManifest) {
  std::string dir = MakeTempDir() + "/ds";
  {
    auto writer = DatasetWriter::Create(dir, false);
    ASSERT_TRUE(writer.ok());
    auto f = writer->OpenFile(dataset_files::kIndptr);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("12345678", 8).ok());
  }
  EXPECT_FALSE(Exists(dir + "/dataset.json"));
  EXPECT_FALSE(Exists(dir + "/indptr.bin"));
  auto ds = Dataset::Open(dir);
  EXPECT_EQ(ds.status().code(), StatusCode::kNotFound);
  EXPECT_NE(ds.status().message().find("not a Seer dataset"), std::string::npos);
}

TEST(DatasetTest, OpenRejectsTruncatedFilesAndBadManifests) {
  std::string dir = MakeTempDir() + "/ds";
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

}  // namespace
}  // namespace seer
