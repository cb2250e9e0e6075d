#include "storage/prep/node_split.h"

#include <fmt/format.h>

#include "storage/base/random.h"

namespace seer {
namespace {

constexpr uint64_t kSplitSalt = 0x9b05688c2b3e6c1full;  // `seer gen`'s split stream

Status CheckFraction(const char* name, double value) {
  if (!(value >= 0 && value <= 1)) {
    return InvalidArgument(std::string(name) + " = " + std::to_string(value) + " is out of range [" +
                           std::to_string(0.0) + ", " + std::to_string(1.0) + "]");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateSplitFractions(const SplitFractions& f) {
  SEER_RETURN_IF_ERROR(CheckFraction("train-fraction", f.train));
  SEER_RETURN_IF_ERROR(CheckFraction("valid-fraction", f.valid));
  SEER_RETURN_IF_ERROR(CheckFraction("test-fraction", f.test));
  if (f.train + f.valid + f.test > 1 + 1e-9) {
    return InvalidArgument("train + valid + test fractions = " + std::to_string(f.train + f.valid + f.test) +
                           " exceed 1");
  }
  return Status::Ok();
}

NodeSplit DrawNodeSplit(const SplitFractions& f, uint64_t seed, int64_t node) {
  const double t_train = f.train;
  const double t_valid = t_train + f.valid;
  const double t_test = t_valid + f.test;
  const double u =
      SplitMix64(SplitMixFinalize(seed ^ kSplitSalt) ^ SplitMixFinalize(static_cast<uint64_t>(node))).Uniform();
  return u < t_train ? NodeSplit::kTrain : u < t_valid ? NodeSplit::kValid : u < t_test ? NodeSplit::kTest
                                                                                        : NodeSplit::kNone;
}

SplitRegistry::SplitRegistry(int64_t num_nodes) : num_nodes_(num_nodes), owner_(static_cast<size_t>(num_nodes), 0) {}

Status SplitRegistry::Add(int64_t node, NodeSplit split, const std::string& where) {
  if (node < 0 || node >= num_nodes_) {
    return InvalidArgument(where + ": split node id " + std::to_string(node) + " out of range [0, " +
                           std::to_string(num_nodes_) + ")");
  }
  uint8_t& o = owner_[static_cast<size_t>(node)];
  if (o != 0) {
    return InvalidArgument(where + ": node " + std::to_string(node) + " is already in the " + kSplitNames[o] +
                           " split");
  }
  o = static_cast<uint8_t>(split);
  return Status::Ok();
}

}  // namespace seer
