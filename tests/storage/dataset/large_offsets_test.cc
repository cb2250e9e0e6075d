// 64-bit offsets in the storage layer: a dataset whose indptr passes 2^32 (node 0 has
// in-degree 2^32 + 100, a sparse indices.bin of ~16 GiB that takes a few KiB on disk)
// opens, its indptr streams into a CompactIndptr equal to the file (the first block spans
// more than 2^32 edges: the wide fallback), and its lists beyond 2^32 read back at their
// byte offsets (> 2^34).
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"
#include "support/sparse_graph.h"
#include "support/test_support.h"

namespace seer {
namespace {

TEST(LargeOffsetsTest, SparseDatasetOpensAndItsIndptrIsExact) {
  testing::SparseGraph g;
  testing::WriteSparseGraph(testing::MakeTempDir("large_offsets") + "/ds", 200, 5, &g);
  auto ds = Dataset::Open(g.dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_GT(ds->manifest().num_edges, int64_t{1} << 32);
  struct stat st {};
  ASSERT_EQ(::stat(ds->PathOf(dataset_files::kIndices).c_str(), &st), 0);
  EXPECT_GT(st.st_size, int64_t{1} << 34);
  EXPECT_LT(st.st_blocks * 512, int64_t{64} << 20) << "the fixture must stay sparse";

  auto indptr = CompactIndptr::Load(*ds);
  ASSERT_TRUE(indptr.ok()) << indptr.status().ToString();
  EXPECT_EQ(indptr->ToVector(), testing::ReadArray<int64_t>(ds->PathOf(dataset_files::kIndptr)));
  EXPECT_EQ(indptr->ToVector(), g.indptr);
  EXPECT_EQ(indptr->Degree(0), g.huge_degree());
  EXPECT_EQ(indptr->wide_blocks(), 1);  // block 0 spans node 0's list
  EXPECT_LT(indptr->ResidentBytes(), 8 * 201 + 64 * 8 + 64);

  // Every list beyond 2^32 reads back from its byte offset.
  auto fd = UniqueFd::Open(ds->PathOf(dataset_files::kIndices), O_RDONLY);
  ASSERT_TRUE(fd.ok());
  for (int64_t v = 1; v < 200; ++v) {
    const int64_t begin = (*indptr)[v];
    const int64_t degree = indptr->Degree(v);
    ASSERT_GE(begin, int64_t{1} << 32);
    std::vector<uint32_t> got(static_cast<size_t>(degree));
    if (degree > 0) {
      ASSERT_TRUE(PreadFull(fd->get(), got.data(), 4 * degree, 4 * begin, "indices").ok());
    }
    ASSERT_EQ(std::vector<int64_t>(got.begin(), got.end()), g.lists[static_cast<size_t>(v)]) << "node " << v;
  }
}

}  // namespace
}  // namespace seer
