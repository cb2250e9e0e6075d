// Hand-made graphs (stars, random graphs with a train split) opened the way the sampler
// reads them: the dataset plus a Topology (indices.bin behind a DirectReader, an optional
// neighbor cache and fault injector).
// Shared by the sampler and superbatch-driver tests; failures fail the calling test.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "inspector/superbatch_driver.h"
#include "inspector/topology.h"
#include "storage/io/block_reader.h"
#include "support/graph_writer.h"
#include "support/temp_dir.h"

namespace seer::testing {

struct OpenedGraph {
  Dataset dataset;
  std::unique_ptr<Topology> topology;
};

inline OpenedGraph OpenGraph(const std::string& dir, int64_t ncache_budget = 0,
                             std::shared_ptr<FaultInjector> faults = nullptr) {
  Dataset dataset = OpenWrittenDataset(dir);
  TopologyOptions options;
  options.ncache_budget_bytes = ncache_budget;
  options.reader.quiet = true;
  options.reader.faults = std::move(faults);
  auto topology = Topology::Open(dataset, options);
  EXPECT_TRUE(topology.ok()) << topology.status().ToString();
  return OpenedGraph{std::move(dataset), std::move(topology).value()};
}

// Writes `in_lists` (train split `train`) to a fresh temporary directory and opens it.
inline OpenedGraph WriteAndOpenGraph(const std::string& prefix,
                                     const std::vector<std::vector<int64_t>>& in_lists,
                                     const std::vector<int64_t>& train) {
  const std::string dir = MakeTempDir(prefix);
  WriteGraph(dir, in_lists, train);
  return OpenGraph(dir);
}

// A RandomLists(num_nodes, graph_seed) graph whose train split is every `step`-th node
// from `first`, written to a fresh temporary directory (opened with OpenGraph).
struct RandomTrainGraph {
  std::vector<std::vector<int64_t>> lists;
  std::vector<int64_t> seeds;  // the train split
  std::string dir;
};

inline RandomTrainGraph WriteRandomTrainGraph(const std::string& prefix, int64_t num_nodes, uint64_t graph_seed,
                                              int64_t step, int64_t first = 0) {
  RandomTrainGraph g;
  g.lists = RandomLists(num_nodes, graph_seed);
  for (int64_t v = first; v < num_nodes; v += step) g.seeds.push_back(v);
  g.dir = MakeTempDir(prefix);
  WriteGraph(g.dir, g.lists, g.seeds);
  return g;
}

// Star: node 0's in-neighbors are 1..degree (position p holds node p+1).
inline std::vector<std::vector<int64_t>> Star(int64_t degree) {
  std::vector<std::vector<int64_t>> lists(static_cast<size_t>(degree) + 1);
  for (int64_t u = 1; u <= degree; ++u) lists[0].push_back(u);
  return lists;
}

}  // namespace seer::testing
