#include "storage/dataset/dataset_check.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "support/small_dataset.h"

namespace seer {
namespace {

using testing::Peek;
using testing::Poke;

class DatasetCheckTest : public testing::SmallDatasetTest {};

std::string CheckError(const std::string& dir, bool deep = false) {
  auto r = CheckDataset(dir, DatasetCheckOptions{deep});
  if (r.ok()) return "OK";
  return r.status().message();
}

TEST_F(DatasetCheckTest, ValidDatasetPasses) {
  std::string dir = MakeDataset();
  auto r = CheckDataset(dir, DatasetCheckOptions{true});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->checksums_verified, 7);
  EXPECT_EQ(r->num_labeled, kNodes);
}

TEST_F(DatasetCheckTest, DecreasingIndptrNamesIndexAndOffset) {
  std::string dir = MakeDataset();
  std::string path = dir + "/indptr.bin";
  Poke<int64_t>(path, 3, Peek<int64_t>(path, 4) + 1);
  EXPECT_NE(CheckError(dir).find("indptr.bin at index 4 (byte offset 32): indptr decreases"),
            std::string::npos) << CheckError(dir);
}

TEST_F(DatasetCheckTest, IndptrMustEndAtNumEdges) {
  std::string dir = MakeDataset();
  std::string path = dir + "/indptr.bin";
  const int64_t num_edges = Peek<int64_t>(path, kNodes);
  Poke<int64_t>(path, kNodes, num_edges + 1);
  EXPECT_NE(CheckError(dir).find("indptr.bin at index 1237 (byte offset 9896): indptr " +
                                 std::to_string(num_edges + 1) + " exceeds num_edges"),
            std::string::npos) << CheckError(dir);
  Poke<int64_t>(path, kNodes, Peek<int64_t>(path, kNodes - 1));  // still non-decreasing, short
  EXPECT_NE(CheckError(dir).find("indptr.bin at index 1237 (byte offset 9896): last indptr = "),
            std::string::npos) << CheckError(dir);
  EXPECT_NE(CheckError(dir).find("expected num_edges = " + std::to_string(num_edges)), std::string::npos)
      << CheckError(dir);
}

TEST_F(DatasetCheckTest, IndexOutOfRange) {
  std::string dir = MakeDataset();
  Poke<uint32_t>(dir + "/indices.bin", 10, kNodes);
  EXPECT_NE(CheckError(dir).find("indices.bin at index 10 (byte offset 40): node id 1237 out of range"),
            std::string::npos) << CheckError(dir);
}

TEST_F(DatasetCheckTest, LabelOutOfRange) {
  std::string dir = MakeDataset();
  Poke<int32_t>(dir + "/labels.bin", 7, kClasses);
  EXPECT_NE(CheckError(dir).find("labels.bin at index 7 (byte offset 28): label 5 out of range [-1, 5)"),
            std::string::npos) << CheckError(dir);
  // -1 (unlabeled) is in range, but the file no longer matches its checksum: the shallow
  // check hashes what it scans (it passed before, an in-range change went unnoticed).
  Poke<int32_t>(dir + "/labels.bin", 7, -1);
  EXPECT_NE(CheckError(dir).find("labels.bin: xxh64 "), std::string::npos) << CheckError(dir);
}

// An in-range change of indices.bin (two neighbor ids swapped) passed the shallow check
// before; the scan's checksum names the file now.
TEST_F(DatasetCheckTest, ShallowCheckCatchesInRangeIndexChange) {
  std::string dir = MakeDataset();
  const std::string path = dir + "/indices.bin";
  int64_t j = 1;
  while (Peek<uint32_t>(path, j) == Peek<uint32_t>(path, 0)) ++j;
  const uint32_t a = Peek<uint32_t>(path, 0), b = Peek<uint32_t>(path, j);
  Poke<uint32_t>(path, 0, b);
  Poke<uint32_t>(path, j, a);
  EXPECT_NE(CheckError(dir).find("indices.bin: xxh64 "), std::string::npos) << CheckError(dir);
  auto shallow = CheckDataset(MakeDataset(), DatasetCheckOptions{false});
  ASSERT_TRUE(shallow.ok());
  EXPECT_EQ(shallow->checksums_verified, 6);  // indptr, indices, labels, 3 splits
}

TEST_F(DatasetCheckTest, SplitsMustBeInRangeAndDisjoint) {
  std::string dir = MakeDataset();
  int64_t first_train = Peek<int64_t>(dir + "/train.bin", 0);
  int64_t first_test = Peek<int64_t>(dir + "/test.bin", 1);
  Poke<int64_t>(dir + "/test.bin", 1, first_train);
  EXPECT_NE(CheckError(dir).find("test.bin at index 1 (byte offset 8): node " +
                                 std::to_string(first_train) + " is already in train.bin"),
            std::string::npos) << CheckError(dir);
  Poke<int64_t>(dir + "/test.bin", 1, first_test);
  Poke<int64_t>(dir + "/valid.bin", 2, -3);
  EXPECT_NE(CheckError(dir).find("valid.bin at index 2 (byte offset 16): node id -3 out of range"),
            std::string::npos) << CheckError(dir);
}

TEST_F(DatasetCheckTest, TruncatedFileIsReported) {
  std::string dir = MakeDataset();
  ASSERT_EQ(::truncate((dir + "/indices.bin").c_str(), 100), 0);
  std::string error = CheckError(dir);
  EXPECT_NE(error, "OK");
  EXPECT_NE(error.find("indices.bin"), std::string::npos) << error;
}

TEST_F(DatasetCheckTest, DeepCheckCatchesFlippedFeatureByte) {
  std::string dir = MakeDataset();
  Poke<uint8_t>(dir + "/features.bin", 777, Peek<uint8_t>(dir + "/features.bin", 777) ^ 0x10);
  EXPECT_EQ(CheckError(dir, false), "OK");
  EXPECT_NE(CheckError(dir, true).find("features.bin: xxh64"), std::string::npos) << CheckError(dir, true);
}

TEST_F(DatasetCheckTest, MissingManifestIsNotADataset) {
  std::string dir = MakeDataset();
  ASSERT_EQ(::unlink((dir + "/dataset.json").c_str()), 0);
  EXPECT_NE(CheckError(dir).find("dataset.json"), std::string::npos) << CheckError(dir);
}

}  // namespace
}  // namespace seer
