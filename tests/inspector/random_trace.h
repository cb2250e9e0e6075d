// Test support for the trace tests: a structurally valid random superbatch trace (odd
// sizes, an empty batch, a 0-edge layer) and trace equality. Header-only, no state.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "inspector/trace.h"

namespace seer {
namespace testing {

// A structurally valid random superbatch (odd sizes, an empty batch, a 0-edge layer).
inline SuperbatchTrace RandomTrace(uint64_t seed, int64_t epoch, int64_t k, int num_batches) {
  std::mt19937_64 rng(seed);
  SuperbatchTrace t;
  t.epoch = epoch;
  t.superbatch_index = k;
  for (int b = 0; b < num_batches; ++b) {
    BatchTrace bt;
    bt.epoch = epoch;
    bt.batch_index = k * 100 + b;
    bt.num_seeds = b == 1 ? 0 : 1 + static_cast<int64_t>(rng() % 7);
    int64_t n = bt.num_seeds;
    for (int64_t i = 0; i < n; ++i) bt.node_ids.push_back(static_cast<int64_t>(rng() % (1LL << 40)));
    std::vector<LayerBlock> hops;
    for (int layer = 0; layer < 3; ++layer) {
      LayerBlock l;
      l.num_dst = n;
      const int64_t extra = n == 0 ? 0 : static_cast<int64_t>(rng() % 5);
      for (int64_t i = 0; i < extra; ++i) bt.node_ids.push_back(static_cast<int64_t>(rng() % 1000));
      l.num_src = n + extra;
      l.row_ptr.push_back(0);
      for (int64_t d = 0; d < l.num_dst; ++d) {
        const int64_t deg = layer == 1 ? 0 : static_cast<int64_t>(rng() % 4);
        for (int64_t j = 0; j < deg; ++j) l.col_idx.push_back(static_cast<int32_t>(rng() % l.num_src));
        l.row_ptr.push_back(static_cast<int64_t>(l.col_idx.size()));
      }
      n = l.num_src;
      hops.push_back(std::move(l));
    }
    bt.blocks.assign(hops.rbegin(), hops.rend());  // input layer first
    t.batches.push_back(std::move(bt));
  }
  return t;
}

inline bool Same(const SuperbatchTrace& a, const SuperbatchTrace& b) {
  return a.epoch == b.epoch && a.superbatch_index == b.superbatch_index && a.batches == b.batches;
}

}  // namespace testing
}  // namespace seer
