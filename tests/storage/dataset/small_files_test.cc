#include "storage/dataset/small_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <set>
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

class SmallFilesTest : public testing::SmallDatasetTest {};

std::string Validate(const std::string& dir) {
  auto ds = Dataset::Open(dir);
  if (!ds.ok()) return "open: " + ds.status().message();
  auto r = ValidateSmallFiles(*ds);
  return r.ok() ? "OK" : r.status().message();
}

TEST_F(SmallFilesTest, ValidDatasetPassesWithCountsFromTheLoaders) {
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto r = ValidateSmallFiles(*ds, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Oracle: the whole-array loaders.
  auto labels = ds->LoadLabels();
  auto indptr = ds->LoadIndptr();
  ASSERT_TRUE(labels.ok() && indptr.ok());
  int64_t labeled = 0, max_degree = 0, expected_bytes = 8 * (kNodes + 1) + 4 * kNodes;
  for (int32_t l : *labels) labeled += l >= 0;
  for (int64_t v = 0; v < kNodes; ++v) max_degree = std::max(max_degree, (*indptr)[v + 1] - (*indptr)[v]);
  int64_t files = 2;
  for (const char* split : {"train", "valid", "test"}) {
    auto ids = ds->LoadSplit(split);
    ASSERT_TRUE(ids.ok());
    expected_bytes += 8 * static_cast<int64_t>(ids->size());
    files += ds->manifest().files.count(std::string(split) + ".bin");
  }
  EXPECT_EQ(r->num_labeled, labeled);
  EXPECT_EQ(r->max_in_degree, max_degree);
  EXPECT_EQ(r->num_train, static_cast<int64_t>(ds->LoadSplit("train")->size()));
  EXPECT_EQ(r->bytes_read, expected_bytes);
  EXPECT_EQ(r->checksums_verified, files);
}

TEST_F(SmallFilesTest, NonMonotoneIndptrNamesFileIndexAndOffset) {
  const std::string dir = MakeDataset();
  const std::string path = dir + "/indptr.bin";
  Poke<int64_t>(path, 3, Peek<int64_t>(path, 4) + 1);
  EXPECT_NE(Validate(dir).find("indptr.bin at index 4 (byte offset 32): indptr decreases"), std::string::npos)
      << Validate(dir);
}

TEST_F(SmallFilesTest, IndptrBeyondNumEdgesIsRefusedWhereItHappens) {
  const std::string dir = MakeDataset();
  const std::string path = dir + "/indptr.bin";
  const int64_t num_edges = Peek<int64_t>(path, kNodes);
  Poke<int64_t>(path, 5, num_edges + 1000);
  EXPECT_NE(Validate(dir).find("indptr.bin at index 5 (byte offset 40): indptr " + std::to_string(num_edges + 1000) +
                               " exceeds num_edges"),
            std::string::npos)
      << Validate(dir);
}

TEST_F(SmallFilesTest, IndptrMustStartAtZeroAndEndAtNumEdges) {
  std::string dir = MakeDataset();
  Poke<int64_t>(dir + "/indptr.bin", 0, 1);
  EXPECT_NE(Validate(dir).find("indptr[0] = 1, expected 0"), std::string::npos) << Validate(dir);
  dir = MakeDataset();
  const std::string path = dir + "/indptr.bin";
  Poke<int64_t>(path, kNodes, Peek<int64_t>(path, kNodes) - 1);
  Poke<int64_t>(path, kNodes - 1, std::min(Peek<int64_t>(path, kNodes - 1), Peek<int64_t>(path, kNodes)));
  EXPECT_NE(Validate(dir).find("expected num_edges"), std::string::npos) << Validate(dir);
}

TEST_F(SmallFilesTest, LabelOutOfRange) {
  const std::string dir = MakeDataset();
  Poke<int32_t>(dir + "/labels.bin", 7, 1000000000);
  EXPECT_NE(Validate(dir).find("labels.bin at index 7 (byte offset 28): label 1000000000 out of range [-1, 5)"),
            std::string::npos)
      << Validate(dir);
}

TEST_F(SmallFilesTest, InRangeLabelChangeFailsTheChecksum) {
  const std::string dir = MakeDataset();
  const std::string path = dir + "/labels.bin";
  Poke<int32_t>(path, 11, (Peek<int32_t>(path, 11) + 1 + 1) % kClasses);  // still in [0, 5)
  EXPECT_NE(Validate(dir).find("labels.bin: xxh64 "), std::string::npos) << Validate(dir);
  EXPECT_NE(Validate(dir).find("does not match"), std::string::npos) << Validate(dir);
}

TEST_F(SmallFilesTest, InRangeSplitChangeFailsTheChecksum) {
  const std::string dir = MakeDataset();
  // Swap two train ids: same set, different bytes.
  const std::string path = dir + "/train.bin";
  const int64_t a = Peek<int64_t>(path, 0), b = Peek<int64_t>(path, 1);
  Poke<int64_t>(path, 0, b);
  Poke<int64_t>(path, 1, a);
  EXPECT_NE(Validate(dir).find("train.bin: xxh64 "), std::string::npos) << Validate(dir);
}

TEST_F(SmallFilesTest, SplitsMustBeInRangeAndDisjoint) {
  const std::string dir = MakeDataset();
  const int64_t first_train = Peek<int64_t>(dir + "/train.bin", 0);
  const int64_t first_test = Peek<int64_t>(dir + "/test.bin", 1);
  Poke<int64_t>(dir + "/test.bin", 1, first_train);
  EXPECT_NE(Validate(dir).find("test.bin at index 1 (byte offset 8): node " + std::to_string(first_train) +
                               " is already in train.bin"),
            std::string::npos)
      << Validate(dir);
  Poke<int64_t>(dir + "/test.bin", 1, first_test);
  Poke<int64_t>(dir + "/valid.bin", 2, int64_t{1} << 62);
  EXPECT_NE(Validate(dir).find("valid.bin at index 2 (byte offset 16): node id 4611686018427387904 out of range"),
            std::string::npos)
      << Validate(dir);
}

TEST_F(SmallFilesTest, FileShortenedAfterOpenIsReported) {
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok());
  ASSERT_EQ(::truncate((dir + "/labels.bin").c_str(), 100), 0);
  auto r = ValidateSmallFiles(*ds);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("labels.bin"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace seer
