// A dataset whose edge offsets pass 2^32 but that stays small on disk and in RAM:
// node 0 has in-degree 2^32 + kHugeExtra, its list a hole of a sparse indices.bin (ftruncate:
// reads as neighbor 0) except its last kHugeExtra entries; nodes 1..n-1 have short random
// lists that all lie beyond offset 2^32 (written with pwrite at their byte offsets, ~16 GiB
// into the file). The manifest gives the real sizes; indices.bin's checksum is not its
// content's (no test reads all 16 GiB), indptr.bin's is. For the 64-bit tests.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/dataset.h"
#include "support/files.h"
#include "support/graph_writer.h"

namespace seer::testing {

struct SparseGraph {
  std::string dir;
  std::vector<int64_t> indptr;                  // the oracle
  std::vector<std::vector<int64_t>> lists;      // in-neighbors of 1..n-1 (lists[0]: node 0's tail)
  static constexpr int64_t kHugeExtra = 100;
  int64_t huge_degree() const { return (int64_t{1} << 32) + kHugeExtra; }
};

inline void WriteSparseGraph(const std::string& dir, int64_t n, uint64_t seed, SparseGraph* g) {
  g->dir = dir;
  // A small dataset first (right manifest fields, files, checksums), then indptr.bin and
  // indices.bin replaced and the manifest patched.
  std::vector<std::vector<int64_t>> small(static_cast<size_t>(n));
  WriteGraph(dir, small, {1, 2, 3});
  std::mt19937_64 rng(seed);
  g->lists.assign(static_cast<size_t>(n), {});
  for (int64_t k = 0; k < SparseGraph::kHugeExtra; ++k) g->lists[0].push_back(static_cast<int64_t>(rng() % n));
  g->indptr.assign(1, 0);
  g->indptr.push_back(g->huge_degree());
  for (int64_t v = 1; v < n; ++v) {
    const int64_t degree = static_cast<int64_t>(rng() % 9);
    for (int64_t k = 0; k < degree; ++k) g->lists[static_cast<size_t>(v)].push_back(static_cast<int64_t>(rng() % n));
    g->indptr.push_back(g->indptr.back() + degree);
  }
  const int64_t num_edges = g->indptr.back();
  const std::string indices_path = dir + "/" + dataset_files::kIndices;
  {
    auto fd = UniqueFd::Open(indices_path, O_WRONLY | O_TRUNC);
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    ASSERT_EQ(::ftruncate(fd->get(), num_edges * 4), 0);
    // Node 0's last kHugeExtra entries, then every other list, at their offsets.
    std::vector<uint32_t> tail;
    for (const auto& list : g->lists) for (int64_t u : list) tail.push_back(static_cast<uint32_t>(u));
    const int64_t first = g->huge_degree() - SparseGraph::kHugeExtra;
    ASSERT_TRUE(PwriteFull(fd->get(), tail.data(), 4 * static_cast<int64_t>(tail.size()), 4 * first, indices_path).ok());
  }
  const std::string indptr_path = dir + "/" + dataset_files::kIndptr;
  ASSERT_TRUE(WriteFileAtomically(indptr_path, std::string(reinterpret_cast<const char*>(g->indptr.data()),
                                                           8 * g->indptr.size()))
                  .ok());
  const std::string manifest_path = dir + "/" + dataset_files::kManifest;
  auto m = DatasetManifest::FromJson(ReadFileBytes(manifest_path), manifest_path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  m->num_edges = num_edges;
  m->files[dataset_files::kIndices].bytes = num_edges * 4;
  auto sum = FileXxh64(indptr_path);
  ASSERT_TRUE(sum.ok());
  m->files[dataset_files::kIndptr].checksum = *sum;
  ASSERT_TRUE(WriteFileAtomically(manifest_path, m->ToJson()).ok());
}

}  // namespace seer::testing
