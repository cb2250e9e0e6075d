// The CLI on a dataset whose edge offsets pass 2^32 (tests/support/sparse_graph.h: node 0
// of in-degree 2^32 + 100 in a sparse 16 GiB indices.bin, every other list beyond edge
// 2^32): `seer sample` samples the seeds' lists from their offsets, and where the binary
// trains (libtorch builds) `seer train` runs and trains one epoch on them and `seer predict`
// writes predictions. Passes that read every edge (out-degrees, neighbor-cache ranking)
// are kept off (--feature-cache lru, --ncache-budget 0): they would read 16 GiB of holes.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/sparse_graph.h"
#include "support/test_support.h"

namespace {

using seer::testing::CliRun;
using seer::testing::RunSeer;

// A .npy file of int64 ids (format 1.0, header padded to 64 bytes).
void WriteIdsNpy(const std::string& path, const std::vector<int64_t>& ids) {
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (" + std::to_string(ids.size()) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(ids.data()), static_cast<std::streamsize>(8 * ids.size()));
}

TEST(LargeOffsetsCliTest, SampleTrainPredictOnEdgeOffsetsBeyondTwoToThe32) {
  ASSERT_TRUE(seer::testing::HaveSeerBinary()) << "SEER_BINARY not set (run through ctest)";
  const std::string tmp = seer::testing::MakeTempDir("large_offsets_cli");
  seer::testing::SparseGraph g;
  seer::testing::WriteSparseGraph(tmp + "/ds", 120, 17, &g);  // train = {1, 2, 3}
  const CliRun sample = RunSeer("sample " + g.dir + " --fanouts -1 --batch-size 3 --epochs 1 --out " + tmp + "/traces");
  ASSERT_EQ(sample.exit_code, 0) << sample.output;
  // 3 seeds, their lists (fan-out -1: every entry, read beyond byte 2^34).
  int64_t edges = 0;
  for (int64_t v : {1, 2, 3}) edges += static_cast<int64_t>(g.lists[static_cast<size_t>(v)].size());
  EXPECT_NE(sample.output.find(" " + std::to_string(edges) + " edges"), std::string::npos) << sample.output;

  const CliRun help = RunSeer("train --help");
  if (help.exit_code != 0) GTEST_SKIP() << "this seer binary does not train (no libtorch)";
  const std::string common = " --feature-cache lru --ncache-budget 0 --fanouts -1 --batch-size 3 --epochs 1"
                             " --memory-budget 64M --budget-scope data --hidden 8 --quiet";
  const CliRun no_train = RunSeer("train " + g.dir + " --no-train" + common);
  ASSERT_EQ(no_train.exit_code, 0) << no_train.output;
  const CliRun train = RunSeer("train " + g.dir + common + " --save-model " + tmp + "/model.pt");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  WriteIdsNpy(tmp + "/nodes.npy", {1, 2, 3, 4, 5, 119});
  const CliRun predict = RunSeer("predict " + g.dir + " --model " + tmp + "/model.pt --batch-size 3 --memory-budget 64M --budget-scope data"
                                 " --nodes " + tmp + "/nodes.npy --out " + tmp + "/p.npy");
  ASSERT_EQ(predict.exit_code, 0) << predict.output;
  EXPECT_NE(predict.output.find("6 nodes"), std::string::npos) << predict.output;
  EXPECT_TRUE(seer::testing::FileExists(tmp + "/p.npy"));
}

}  // namespace
