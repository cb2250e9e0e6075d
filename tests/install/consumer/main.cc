// Uses installed Seer headers and libraries the way a user's project would: plans a tiny
// trace with the exact Belady policy and with LRU, and checks Belady misses no more.
#include <iostream>
#include <vector>

#include "cache/hit_simulator.h"
#include "cache/policies.h"
#include "storage/base/status.h"

namespace {

seer::Result<seer::PolicyStats> Simulate(seer::PolicyKind kind,
                                          const std::vector<std::vector<int64_t>>& batches) {
  seer::PolicyOptions options;
  options.capacity_rows = 2;
  SEER_ASSIGN_OR_RETURN(auto policy, seer::MakeCachePolicy(kind, options));
  std::vector<seer::IdSpan> spans;
  for (const auto& b : batches) spans.push_back({b.data(), static_cast<int64_t>(b.size())});
  seer::SimulationOptions sim;
  sim.num_nodes = 8;
  sim.row_bytes = 16;
  return seer::SimulatePolicy(*policy, {spans}, sim);
}

}  // namespace

int main() {
  const std::vector<std::vector<int64_t>> batches = {{0, 1}, {2, 3}, {0, 4}, {1, 2}, {0, 5}};
  auto belady = Simulate(seer::PolicyKind::kBelady, batches);
  auto lru = Simulate(seer::PolicyKind::kLru, batches);
  if (!belady.ok() || !lru.ok()) {
    std::cerr << "error: " << (belady.ok() ? lru.status() : belady.status()).ToString() << "\n";
    return 1;
  }
  std::cout << "belady misses " << belady->misses << ", lru misses " << lru->misses << " (of "
            << belady->accesses << " accesses)\n";
  return belady->misses <= lru->misses && belady->accesses == 10 ? 0 : 1;
}
