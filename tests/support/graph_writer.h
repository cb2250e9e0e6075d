// Small hand-made datasets for the cache, inspector and executor tests, written with
// DatasetWriter (storage/dataset/dataset.h). `in_lists[v]` = the in-neighbors of v (CSC).
// Failures to write or open fail the calling test (gtest assertions).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "storage/dataset/dataset.h"
#include "support/temp_dir.h"

namespace seer::testing {

// Writes a dataset (feature_dim 1, labels 0) holding `in_lists`; train = `train`.
inline void WriteGraph(const std::string& dir, const std::vector<std::vector<int64_t>>& in_lists,
                       const std::vector<int64_t>& train,
                       IndexDtype dtype = IndexDtype::kUint32) {
  auto writer = DatasetWriter::Create(dir, /*force=*/true);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  const int64_t n = static_cast<int64_t>(in_lists.size());
  std::vector<int64_t> indptr{0};
  std::vector<uint32_t> idx32;
  std::vector<int64_t> idx64;
  for (const auto& list : in_lists) {
    for (int64_t u : list) {
      idx32.push_back(static_cast<uint32_t>(u));
      idx64.push_back(u);
    }
    indptr.push_back(static_cast<int64_t>(idx64.size()));
  }
  std::vector<float> features(static_cast<size_t>(n), 1.0f);
  std::vector<int32_t> labels(static_cast<size_t>(n), 0);
  auto put = [&](const char* name, const void* data, int64_t bytes) {
    auto file = writer->OpenFile(name);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE((*file)->Append(data, bytes).ok());
  };
  put(dataset_files::kIndptr, indptr.data(), 8 * static_cast<int64_t>(indptr.size()));
  if (dtype == IndexDtype::kUint32) {
    put(dataset_files::kIndices, idx32.data(), 4 * static_cast<int64_t>(idx32.size()));
  } else {
    put(dataset_files::kIndices, idx64.data(), 8 * static_cast<int64_t>(idx64.size()));
  }
  put(dataset_files::kFeatures, features.data(), 4 * n);
  put(dataset_files::kLabels, labels.data(), 4 * n);
  put(dataset_files::kTrain, train.data(), 8 * static_cast<int64_t>(train.size()));
  DatasetManifest m;
  m.num_nodes = n;
  m.num_edges = static_cast<int64_t>(idx64.size());
  m.index_dtype = dtype;
  m.feature_dim = 1;
  m.num_classes = 1;
  m.created_by = "inspector tests";
  Status st = writer->Commit(m);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

// A skewed random graph: node v gets a degree drawn from a heavy tail, neighbors uniform
// (duplicates allowed, as in real multigraphs), a few isolated nodes.
inline std::vector<std::vector<int64_t>> RandomLists(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int64_t>> lists(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) {
    const uint64_t r = rng() % 100;
    const int64_t degree = r < 5 ? 0 : r < 80 ? static_cast<int64_t>(rng() % 12)
                                              : static_cast<int64_t>(rng() % 300);
    for (int64_t i = 0; i < degree; ++i) lists[v].push_back(static_cast<int64_t>(rng() % n));
  }
  return lists;
}

// Opens a dataset the test wrote; a failure fails the test (and throws, ending it).
inline Dataset OpenWrittenDataset(const std::string& dir) {
  auto dataset = Dataset::Open(dir);
  EXPECT_TRUE(dataset.ok()) << dataset.status().ToString();
  return std::move(dataset).value();
}

// A RandomLists graph (no train split) written to a fresh temporary directory and
// opened, with its indptr: the input of the degree and neighbor-cache oracles.
struct RandomGraph {
  std::vector<std::vector<int64_t>> lists;
  Dataset dataset;
  std::vector<int64_t> indptr;
};

inline RandomGraph WriteRandomGraph(uint64_t seed, int64_t num_nodes, IndexDtype dtype) {
  auto lists = RandomLists(num_nodes, seed);
  const std::string dir = MakeTempDir("graph");
  WriteGraph(dir, lists, {}, dtype);
  Dataset dataset = OpenWrittenDataset(dir);
  auto indptr = dataset.LoadIndptr();
  EXPECT_TRUE(indptr.ok()) << indptr.status().ToString();
  return RandomGraph{std::move(lists), std::move(dataset), std::move(indptr).value()};
}

}  // namespace seer::testing
