// Train/valid/test splits drawn by fraction: the one rule of `seer gen` and of
// `seer prep --train-fraction/--valid-fraction/--test-fraction`. Node y draws
// u = SplitMix64(SplitMixFinalize(seed ^ salt) ^ SplitMixFinalize(y)).Uniform() in [0, 1)
// and goes to train when u < train, valid when u < train + valid, test when
// u < train + valid + test, else to none: each node independently, so the split sizes
// are binomial around fraction × nodes and a node's split depends only on (seed, y).
// `seer gen` draws for every node; `seer prep` only for labeled nodes (an unlabeled node
// is in no split). SplitRegistry checks split lists given as files: ids in range, no node
// in two splits. Pure functions; SplitRegistry is not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"

namespace seer {

struct SplitFractions {
  double train = 0, valid = 0, test = 0;
  bool any() const { return train > 0 || valid > 0 || test > 0; }
};

enum class NodeSplit : uint8_t { kNone = 0, kTrain = 1, kValid = 2, kTest = 3 };
inline constexpr const char* kSplitNames[] = {"", "train", "valid", "test"};

// Each fraction in [0, 1] and their sum at most 1; kInvalidArgument naming the fraction
// ("train-fraction = 1.5 is out of range [0, 1]") otherwise.
Status ValidateSplitFractions(const SplitFractions& fractions);

NodeSplit DrawNodeSplit(const SplitFractions& fractions, uint64_t seed, int64_t node);

// One byte per node: which split a node is in. Add rejects an id outside [0, num_nodes)
// and a node already in a split, naming `where` ("train.npy: element 4").
class SplitRegistry {
 public:
  explicit SplitRegistry(int64_t num_nodes);
  Status Add(int64_t node, NodeSplit split, const std::string& where);

 private:
  int64_t num_nodes_;
  std::vector<uint8_t> owner_;
};

}  // namespace seer
