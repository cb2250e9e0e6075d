// --memory-budget covers the whole process (executor/memory_budget.h): the runtime's
// measured bytes are paid before every other part, a budget below them is refused naming
// them, and the budgets the messages suggest include them. The oracle is the same split
// made without a runtime from the budget minus it.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "executor/memory_budget.h"
#include "executor/runtime_footprint.h"

namespace seer {
namespace {

MemoryBudgetRequest Request(int64_t budget_bytes, int64_t runtime_bytes) {
  MemoryBudgetRequest r;
  r.budget_bytes = budget_bytes;
  r.runtime_bytes = runtime_bytes;
  r.num_nodes = 100000;
  r.feature_dim = 64;
  r.feature_row_bytes = 256;
  r.batch_size = 256;
  r.fanouts = {5, 5};
  r.topology_bytes = 100000 * 8 * 4;
  r.feature_cache_used = true;
  return r;
}

TEST(RuntimeBudgetTest, RuntimeIsPaidFirst) {
  const int64_t mib = 1 << 20;
  auto with_runtime = SplitMemoryBudget(Request(300 * mib, 150 * mib));
  auto without = SplitMemoryBudget(Request(150 * mib, 0));
  ASSERT_TRUE(with_runtime.ok()) << with_runtime.status().ToString();
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_EQ(with_runtime->budget_bytes, 300 * mib);
  EXPECT_EQ(with_runtime->runtime_bytes, 150 * mib);
  // Every other part is the split of what the runtime leaves.
  EXPECT_EQ(with_runtime->table_bytes, without->table_bytes);
  EXPECT_EQ(with_runtime->staging_bytes, without->staging_bytes);
  EXPECT_EQ(with_runtime->ncache_bytes, without->ncache_bytes);
  EXPECT_EQ(with_runtime->fcache_bytes, without->fcache_bytes);
  EXPECT_EQ(with_runtime->trace_bytes, without->trace_bytes);
  EXPECT_EQ(with_runtime->superbatch, without->superbatch);
  const std::string line = with_runtime->ToString();
  EXPECT_NE(line.find("memory budget 300.0 MiB: runtime 150.0 MiB"), std::string::npos) << line;
}

TEST(RuntimeBudgetTest, BudgetBelowTheRuntimeIsRefusedNamingIt) {
  const int64_t mib = 1 << 20;
  auto split = SplitMemoryBudget(Request(100 * mib, 150 * mib));
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), StatusCode::kResourceExhausted);
  const std::string& message = split.status().message();
  EXPECT_NE(message.find("the runtime itself took 150.0 MiB"), std::string::npos) << message;
  EXPECT_NE(message.find("--budget-scope data"), std::string::npos) << message;
  // The suggested budget holds the runtime plus a working data path.
  const size_t at = message.find("use at least ");
  ASSERT_NE(at, std::string::npos) << message;
  const int64_t suggested = std::stoll(message.substr(at + 13)) * mib;
  EXPECT_GT(suggested, 150 * mib);
  EXPECT_TRUE(SplitMemoryBudget(Request(suggested, 150 * mib)).ok()) << message;
}

TEST(RuntimeBudgetTest, TooSmallForTheTablesCountsTheRuntimeInTheAdvice) {
  MemoryBudgetRequest r = Request(0, 0);
  r.num_nodes = 50000000;  // tables of ~270 MiB
  const int64_t mib = 1 << 20;
  r.budget_bytes = 200 * mib;
  r.runtime_bytes = 150 * mib;
  auto split = SplitMemoryBudget(r);
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("memory budget 200.0 MiB is too small: the runtime took 150.0 MiB"),
            std::string::npos)
      << split.status().message();
}

TEST(RuntimeBudgetTest, MeasuredRuntimeIsTheProcessNow) {
  EXPECT_GT(MeasureRuntimeBytes(/*use_cuda=*/false), 0);
  EXPECT_EQ(RuntimeBytesToCharge(0, false), 0);
  EXPECT_EQ(RuntimeBytesToCharge(12345, false), 12345);
  EXPECT_GT(RuntimeBytesToCharge(-1, false), 0);
}

}  // namespace
}  // namespace seer
