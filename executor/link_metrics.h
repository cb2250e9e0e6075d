// Link prediction's ranking metrics as OGB computes them (ogbl-citation2's Evaluator):
// each positive pair is ranked among its K negatives by score,
//   rank = 1 + 0.5 * (#negatives scoring above it + #negatives scoring at least as high)
// (ties count half), MRR = mean(1 / rank), Hits@K = fraction with rank <= K. Sums, so
// shards and ranks add up (Add, and the data-parallel reduction in executor/evaluation.h).
// Torch-free plain values; bench/link_baselines.py computes the same numbers.
#pragma once

#include <cstdint>

namespace seer {

struct LinkMetrics {
  int64_t pairs = 0;                 // positives ranked
  double reciprocal_rank_sum = 0;    // sum of 1 / rank
  int64_t hits1 = 0, hits10 = 0, hits50 = 0;

  double mrr() const { return pairs > 0 ? reciprocal_rank_sum / static_cast<double>(pairs) : -1; }
  double hits(int64_t k) const {
    const int64_t h = k == 1 ? hits1 : (k == 10 ? hits10 : hits50);
    return pairs > 0 ? static_cast<double>(h) / static_cast<double>(pairs) : -1;
  }
  void Add(const LinkMetrics& o) {
    pairs += o.pairs;
    reciprocal_rank_sum += o.reciprocal_rank_sum;
    hits1 += o.hits1;
    hits10 += o.hits10;
    hits50 += o.hits50;
  }
};

// The rank of a positive's score among its k negatives' (above).
inline double LinkRank(float positive, const float* negatives, int64_t k) {
  int64_t above = 0, at_least = 0;
  for (int64_t j = 0; j < k; ++j) {
    above += negatives[j] > positive ? 1 : 0;
    at_least += negatives[j] >= positive ? 1 : 0;
  }
  return 1.0 + 0.5 * static_cast<double>(above + at_least);
}

// Ranks `pairs` positives, negatives[i * k + j] being negative j of positive i.
inline void AddLinkRanks(const float* positives, const float* negatives, int64_t pairs, int64_t k, LinkMetrics* m) {
  for (int64_t i = 0; i < pairs; ++i) {
    const double rank = LinkRank(positives[i], negatives + i * k, k);
    ++m->pairs;
    m->reciprocal_rank_sum += 1.0 / rank;
    m->hits1 += rank <= 1 ? 1 : 0;
    m->hits10 += rank <= 10 ? 1 : 0;
    m->hits50 += rank <= 50 ? 1 : 0;
  }
}

}  // namespace seer
