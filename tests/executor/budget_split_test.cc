// The memory split without a model (executor/memory_budget.h): it stays within the
// budget and honours the per-cache overrides and the neighbor cache's share, spends the
// budget where it pays (caches capped at what they can use, trace buffers at their need,
// warnings naming the budget that fixes a cache that got nothing), chooses the automatic
// superbatch, and charges the per-node tables and every cache row's bookkeeping.
#include "executor/memory_budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget_requests.h"
#include "cache/degrees.h"
#include "cache/feature_cache.h"
#include "storage/base/byte_size.h"
#include "storage/dataset/compact_indptr.h"

namespace seer {
namespace {

// ---- the split without a model --------------------------------------------------

// 1,000,003 nodes of 100 float32 features (400 B rows), batches of 100, fan-outs 10,10,
// a 256 MiB budget; no model reserved.
MemoryBudgetRequest MillionNodeRequest() {
  MemoryBudgetRequest r;
  r.budget_bytes = 256 << 20;
  r.num_nodes = 1000003;
  r.feature_dim = 100;
  r.feature_row_bytes = 400;
  r.batch_size = 100;
  r.fanouts = {10, 10};
  return r;
}

TEST(MemoryBudgetTest, SplitStaysWithinBudgetAndHonoursOverrides) {
  MemoryBudgetRequest r = MillionNodeRequest();
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NEAR(s->estimated_batch_rows, 11100, 100);  // 11100 draws from 1M nodes: few repeats
  EXPECT_EQ(s->staging_bytes, s->estimated_batch_rows * 2 * 400);  // float32: no raw buffer
  EXPECT_EQ(s->table_bytes, CompactIndptr::EstimateBytes(1000003 + 1));  // no tie-rule scores asked for
  EXPECT_LE(s->table_bytes + s->staging_bytes + s->trace_bytes + s->ncache_bytes + s->fcache_bytes +
                s->fcache_index_bytes,
            r.budget_bytes);
  EXPECT_GT(s->fcache_rows, 0);
  EXPECT_EQ(s->fcache_bytes, s->fcache_rows * 400);
  EXPECT_EQ(s->fcache_index_bytes, FeatureCache::IndexBytes(s->fcache_rows));
  EXPECT_NE(s->ToString().find("feature cache"), std::string::npos);

  r.fcache_budget_bytes = 40000;  // exactly 100 rows
  r.ncache_budget_bytes = 0;
  s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->fcache_rows, 100);
  EXPECT_EQ(s->ncache_bytes, 0);

  r.fcache_budget_bytes = int64_t{1} << 40;  // more than the budget
  EXPECT_EQ(SplitMemoryBudget(r).status().code(), StatusCode::kResourceExhausted);

  // An explicit feature cache with an automatic neighbor cache: the neighbor cache gets
  // what the rows and their slot index leave (it once took the slot index's bytes too, and
  // the split then refused its own choice). Oracle: the sum of the parts.
  r.ncache_budget_bytes = -1;
  r.topology_bytes = int64_t{1} << 40;  // a neighbor cache could use everything
  for (int64_t fc : {int64_t{40000}, int64_t{4} << 20, int64_t{20} << 20}) {
    r.fcache_budget_bytes = fc;
    s = SplitMemoryBudget(r);
    ASSERT_TRUE(s.ok()) << fc << ": " << s.status().message();
    EXPECT_EQ(s->fcache_rows, fc / 400);
    EXPECT_GT(s->ncache_bytes, 0) << fc;
    EXPECT_LE(s->table_bytes + s->staging_bytes + s->trace_bytes + s->ncache_bytes + s->fcache_bytes +
                  s->fcache_index_bytes,
              r.budget_bytes)
        << fc;
  }
  r.topology_bytes = 0;
  r.ncache_budget_bytes = 0;

  // Tables fit but the staging of a huge batch does not: refused, naming the staging.
  r.fcache_budget_bytes = -1;
  r.batch_size = 1000;
  r.fanouts = {10, 10, 10};
  s = SplitMemoryBudget(r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("staging"), std::string::npos) << s.status().message();
}

// The split was one 630-760-character line. Now: a head line with the runtime's share
// and the parts' total, then one short row per part, sizes in one right-aligned column;
// the rows are the split's own fields and add up to the total.
TEST(MemoryBudgetTest, SplitPrintsAsAShortAlignedTable) {
  MemoryBudgetRequest r = MillionNodeRequest();
  r.runtime_bytes = int64_t{150} << 20;
  r.budget_bytes += r.runtime_bytes;
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::string text = s->ToString();
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 6u) << text;
  const double runtime_percent = 100.0 * static_cast<double>(s->runtime_bytes) / static_cast<double>(s->budget_bytes);
  EXPECT_EQ(lines[0].rfind("memory budget " + FormatBytes(s->budget_bytes) + ": runtime " +
                               FormatBytes(s->runtime_bytes) + fmt::format(" ({:.0f}% of the budget", runtime_percent),
                           0),
            0u)
      << lines[0];
  const std::map<std::string, int64_t> expected = {
      {"per-node tables", s->table_bytes},  {"staging", s->staging_bytes},
      {"trace buffers", s->trace_bytes},    {"neighbor cache", s->ncache_bytes},
      {"feature cache", s->fcache_bytes + s->fcache_index_bytes}};
  int64_t total = 0;
  size_t size_end = std::string::npos;
  std::set<std::string> seen;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    EXPECT_LT(line.size(), 140u) << line;
    if (line.rfind("  superbatch ", 0) == 0) continue;
    const std::string name = line.substr(2, line.find("  ", 2) - 2);
    // The size column: right-aligned, the same end on every row.
    const size_t end = line.find("  ", 18);
    if (size_end == std::string::npos) size_end = end;
    EXPECT_EQ(end, size_end) << line;
    seen.insert(name);
    const auto it = expected.find(name);
    if (it != expected.end()) {
      EXPECT_NE(line.find(FormatBytes(it->second) + "  "), std::string::npos) << line;
      total += it->second;
    }
  }
  for (const auto& [name, bytes] : expected) EXPECT_EQ(seen.count(name), 1u) << name << "\n" << text;
  total += s->model_bytes + s->inspector_bytes;
  EXPECT_NE(lines[0].find("Seer's parts " + FormatBytes(total)), std::string::npos) << text;
  EXPECT_LE(total + s->runtime_bytes, s->budget_bytes);
}

TEST(MemoryBudgetTest, CacheSplitSharesTheCacheMemory) {
  MemoryBudgetRequest r = MillionNodeRequest();  // 400 MB of features: more than the caches can hold
  r.ncache_share = 0;
  auto none = SplitMemoryBudget(r);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->ncache_bytes, 0);
  // The feature cache's rows and slot index (420 B per row), rounded down to rows.
  auto fcache = [](const MemoryBudgetSplit& x) { return x.fcache_bytes + x.fcache_index_bytes; };
  const int64_t caches = fcache(*none) + 420;
  for (double share : {0.25, 0.5, 0.75}) {
    r.ncache_share = share;
    auto s = SplitMemoryBudget(r);
    ASSERT_TRUE(s.ok());
    EXPECT_NEAR(static_cast<double>(s->ncache_bytes), share * fcache(*none), 421) << share;
    EXPECT_LE(s->ncache_bytes + fcache(*s), caches) << share;
    EXPECT_GT(s->ncache_bytes + fcache(*s), caches - 840) << share;
  }
  r.ncache_share = 1;
  auto all = SplitMemoryBudget(r);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->fcache_rows, 0);
  // A share too small for the neighbor cache's 8 B/node table goes to the features.
  r.ncache_share = 0.0005;
  auto tiny = SplitMemoryBudget(r);
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->ncache_bytes, 0);
  EXPECT_EQ(tiny->fcache_rows, none->fcache_rows);
}

TEST(MemoryBudgetTest, RefusesBudgetBelowPerNodeTables) {
  MemoryBudgetRequest r;
  r.budget_bytes = 10 << 20;
  r.num_nodes = 1 << 20;  // 12 MiB of tables
  r.feature_dim = 8;
  r.feature_row_bytes = 32;
  auto s = SplitMemoryBudget(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("per-node tables"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("--memory-budget"), std::string::npos);
}

TEST(MemoryBudgetTest, BatchEstimateIsCappedByNodes) {
  EXPECT_EQ(EstimateBatchRows(int64_t{1} << 40, 10, {2, 3}), 10 + 20 + 60);
  EXPECT_EQ(EstimateBatchRows(50, 10, {10, 10}), 50);  // 1110 draws from 50 nodes
  EXPECT_EQ(EstimateBatchRows(0, 10, {10}), 0);
  // 111000 draws from 100000 nodes: 100000 (1 - e^-1.11) = 67044 distinct.
  EXPECT_NEAR(EstimateBatchRows(100000, 1000, {10, 10}), 67044, 2);
  EXPECT_EQ(EstimateBatchRows(100000, 1000, {}), 1000);
}

// ---- the split spends the budget where it pays (issue 12) ------------------------

// At a large budget the neighbor cache's share is capped at the whole topology (Ginex
// scale: 894 MiB reserved for a 2.8 MiB topology) and the surplus goes to the features.
TEST(MemoryBudgetTest, NeighborCacheIsCappedAtTheTopology) {
  MemoryBudgetRequest r = MillionNodeRequest();
  r.budget_bytes = int64_t{1} << 30;
  r.feature_dim = 1000;  // 4 GB of features: more than the caches can hold
  r.feature_row_bytes = 4000;
  const int64_t topology = NeighborCacheFullBytes(r.num_nodes, 3000000, 4);
  EXPECT_EQ(topology, 16 * ((r.num_nodes + 63) / 64) + 8 * r.num_nodes + 4 * 3000000);
  auto uncapped = SplitMemoryBudget(r);
  ASSERT_TRUE(uncapped.ok());
  ASSERT_GT(uncapped->ncache_bytes, topology) << "the test needs a share larger than the topology";
  r.topology_bytes = topology;
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->ncache_bytes, topology);
  // Nothing is lost: the caches together get what they got before (to a row).
  EXPECT_NEAR(static_cast<double>(s->ncache_bytes + FcacheAll(*s)),
              static_cast<double>(uncapped->ncache_bytes + FcacheAll(*uncapped)), 2.0 * (r.feature_row_bytes + 20));
  EXPECT_NE(s->ToString().find(fmt::format("neighbor cache  {:>11}", FormatBytes(topology))), std::string::npos)
      << s->ToString();
  // An explicit share (--cache-split) is capped the same way.
  r.ncache_share = 0.9;
  s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ncache_bytes, topology);
}

// A feature cache that could hold every row takes no more; the rest goes to the neighbor
// cache (up to the topology), and with --feature-cache none the feature cache gets nothing.
TEST(MemoryBudgetTest, FeatureCacheIsCappedAtEveryRow) {
  MemoryBudgetRequest r = MillionNodeRequest();
  r.num_nodes = 100000;  // 40 MB of features in a 256 MiB budget
  r.topology_bytes = NeighborCacheFullBytes(r.num_nodes, 50000000, 4);  // 200 MB of lists
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->fcache_rows, r.num_nodes);
  const int64_t left = r.budget_bytes - s->table_bytes - s->staging_bytes - s->trace_bytes;
  EXPECT_EQ(s->ncache_bytes, std::min(r.topology_bytes, left - r.num_nodes * r.feature_row_bytes));
  r.feature_cache_used = false;
  auto none = SplitMemoryBudget(r);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->fcache_rows, 0);
  EXPECT_EQ(none->ncache_bytes, std::min(r.topology_bytes, left));
  EXPECT_TRUE(none->warnings.empty()) << none->warnings[0];  // nothing to warn about: it is not read
}

// The trace buffers get what one queued superbatch trace and one superbatch of
// changesets need (each half), not an eighth of the budget.
TEST(MemoryBudgetTest, TraceBuffersAreCappedAtTheirNeed) {
  MemoryBudgetRequest r = MillionNodeRequest();
  r.budget_bytes = int64_t{1} << 30;
  r.superbatch = 4;
  r.measured_batch_rows = 5000;
  r.measured_batches = 2;
  r.measured_blocks = {{500, 5000, 5000}, {100, 500, 500}};
  r.measured_trace_bytes = 100000;
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const int64_t rows = static_cast<int64_t>(std::ceil(kPilotMargin * 5000));
  const int64_t trace = static_cast<int64_t>(std::ceil(kPilotMargin * 100000));
  const int64_t need = std::max<int64_t>(1 << 20, 2 * 4 * std::max(trace, 16 * rows));
  EXPECT_EQ(s->trace_bytes, need);
  EXPECT_EQ(TraceBufferNeed(r, rows), need);
  EXPECT_LT(s->trace_bytes, (r.budget_bytes - s->table_bytes - s->staging_bytes) / 8);
  // The caches take everything else (to a row).
  const int64_t total = s->table_bytes + s->staging_bytes + s->trace_bytes + s->ncache_bytes + FcacheAll(*s);
  EXPECT_LE(total, r.budget_bytes);
  EXPECT_GT(total, r.budget_bytes - r.feature_row_bytes - 20);
}

// A training split whose model takes the whole feature cache warns, naming a
// --memory-budget that gives the cache 10 % of the rows (checked by re-splitting).
TEST(MemoryBudgetTest, WarnsWhenACacheGetsNothing) {
  MemoryBudgetRequest r = BenchLikeRequest();
  r.reserve_model = true;
  r.topology_bytes = NeighborCacheFullBytes(r.num_nodes, 10000000, 4);
  const MemoryBudgetSplit fixed_parts = SizeFixedParts(r);  // the model takes both caches:
  r.budget_bytes = fixed_parts.table_bytes + fixed_parts.staging_bytes + fixed_parts.model_bytes + (3 << 20);
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->fcache_rows, 0);
  ASSERT_EQ(s->ncache_bytes, 0);
  ASSERT_EQ(s->warnings.size(), 2u);
  const std::string& fc = s->warnings[0];
  EXPECT_EQ(fc.rfind("the feature cache gets nothing", 0), 0u) << fc;
  EXPECT_NE(fc.find("the model's working set"), std::string::npos) << fc;
  const size_t at = fc.find("--memory-budget ");
  ASSERT_NE(at, std::string::npos) << fc;
  auto suggested = ParseBytes(fc.substr(at + 16, fc.find(' ', at + 16) - at - 16));
  ASSERT_TRUE(suggested.ok()) << fc;
  MemoryBudgetRequest fixed = r;
  fixed.budget_bytes = *suggested;
  auto with = SplitMemoryBudget(fixed);
  ASSERT_TRUE(with.ok());
  EXPECT_GE(with->fcache_rows, r.num_nodes / 10) << fc;
  fixed.budget_bytes = *suggested - (2 << 20);
  EXPECT_LT(SplitMemoryBudget(fixed)->fcache_rows, r.num_nodes / 10) << "not the smallest such budget: " << fc;
  EXPECT_EQ(s->warnings[1].rfind("the neighbor cache gets nothing", 0), 0u) << s->warnings[1];
  EXPECT_NE(s->warnings[1].find("--memory-budget "), std::string::npos) << s->warnings[1];
  // GAT's working set at 256M (both caches 0) warns the same way.
  r.budget_bytes = int64_t{256} << 20;
  r.model.kind = ModelKind::kGat;
  r.model.hidden = 64;
  r.fanouts = {5, 5};
  auto gat = SplitMemoryBudget(r);
  ASSERT_TRUE(gat.ok()) << gat.status().message();
  if (gat->fcache_rows == 0) {
    EXPECT_FALSE(gat->warnings.empty());
  }
  // A cache set to nothing on purpose is not warned about.
  r = BenchLikeRequest();
  r.reserve_model = true;
  r.budget_bytes = fixed_parts.table_bytes + fixed_parts.staging_bytes + fixed_parts.model_bytes + (3 << 20);
  r.fcache_budget_bytes = 0;
  r.ncache_budget_bytes = 0;
  auto off = SplitMemoryBudget(r);
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_TRUE(off->warnings.empty());
}

// --superbatch auto: the largest S whose S-dependent inspector RAM (traces in flight,
// planner, trace buffers) fits an eighth of the memory the caches could have, capped by
// the epoch; the split is the split for that S, and the line says why.
TEST(MemoryBudgetTest, AutoSuperbatchIsTheLongestThatFitsItsShare) {
  MemoryBudgetRequest r = BenchLikeRequest();
  r.budget_bytes = int64_t{1} << 30;
  r.traces_in_flight = 3;
  r.planner_bytes_per_access = 32;
  r.measured_batch_rows = 20000;
  r.measured_batches = 2;
  r.measured_blocks = {{2000, 20000, 20000}, {1000, 2000, 10000}};
  r.measured_trace_bytes = 500000;
  r.epoch_batches = 10000;
  // Oracle: the cost of S from splits with S given, against the memory left for caches.
  auto cost = [&](int64_t sb) {
    MemoryBudgetRequest q = r;
    q.superbatch = sb;
    auto s = SplitMemoryBudget(q);
    EXPECT_TRUE(s.ok());
    return s->inspector_bytes + TraceBufferNeed(q, s->estimated_batch_rows);
  };
  MemoryBudgetRequest q = r;
  q.superbatch = 1;
  auto one = SplitMemoryBudget(q);
  ASSERT_TRUE(one.ok());
  const int64_t room = r.budget_bytes - one->table_bytes - one->staging_bytes - one->model_bytes;
  r.superbatch = 0;
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const int64_t chosen = s->superbatch;
  ASSERT_GT(chosen, 1);
  ASSERT_LT(chosen, r.epoch_batches);
  EXPECT_LE(cost(chosen), room / 8 + (1 << 20));
  EXPECT_GT(cost(chosen + 1), room / 8);
  EXPECT_NE(s->ToString().find("superbatch " + std::to_string(chosen) + " (auto"), std::string::npos) << s->ToString();
  q.superbatch = chosen;
  auto same = SplitMemoryBudget(q);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->fcache_rows, s->fcache_rows);
  EXPECT_EQ(same->inspector_bytes, s->inspector_bytes);
  // A short epoch: the whole epoch.
  r.epoch_batches = 7;
  auto whole = SplitMemoryBudget(r);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->superbatch, 7);
  EXPECT_NE(whole->ToString().find("the whole epoch"), std::string::npos) << whole->ToString();
  // Streaming inspector: nothing in RAM grows with S, so the whole epoch (up to the cap),
  // and the reservation is the same at every S.
  r.streaming_inspector = true;
  r.planner_working_bytes = 32 << 20;
  r.planner_bytes_per_access = 0;  // Belady streams; LRU would read the ids into RAM
  r.epoch_batches = 200;
  auto streaming = SplitMemoryBudget(r);
  ASSERT_TRUE(streaming.ok()) << streaming.status().message();
  EXPECT_EQ(streaming->superbatch, 200);
  EXPECT_NE(streaming->ToString().find("does not grow with S"), std::string::npos) << streaming->ToString();
  q = r;
  q.superbatch = 100;  // the planner's sort buffer is full from here on
  EXPECT_EQ(SplitMemoryBudget(q)->inspector_bytes, streaming->inspector_bytes);
  r.epoch_batches = 100000;
  EXPECT_EQ(SplitMemoryBudget(r)->superbatch, kAutoSuperbatchMax);
  r.streaming_inspector = false;
  r.epoch_batches = 7;
  // A given S is kept and not explained.
  r.superbatch = 5;
  auto given = SplitMemoryBudget(r);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->superbatch, 5);
  EXPECT_EQ(given->ToString().find("(auto"), std::string::npos);
}


// The feature cache's rows for a share: the most rows whose bytes plus slot index fit
// (oracle: a linear search over FeatureCacheBytes).
TEST(MemoryBudgetTest, FeatureCacheRowsPayTheirSlotIndex) {
  for (int64_t row_bytes : {1, 16, 400}) {
    for (int64_t bytes : {int64_t{0}, int64_t{7}, int64_t{28}, int64_t{36}, int64_t{1000}, int64_t{123457}}) {
      int64_t want = 0;
      while (FeatureCacheBytes(want + 1, row_bytes) <= bytes) ++want;
      EXPECT_EQ(FeatureCacheRowsFor(bytes, row_bytes), want) << bytes << " " << row_bytes;
    }
  }
  EXPECT_EQ(FeatureCacheBytes(0, 16), 0);
  EXPECT_EQ(FeatureCacheBytes(10, 16), 160 + FeatureCache::IndexBytes(10));
  EXPECT_EQ(FeatureCacheRowsFor(1000, 0), 0);
  // With the policy's per-row bookkeeping.
  for (int64_t policy : {int64_t{40}, int64_t{112}}) {
    for (int64_t bytes : {int64_t{0}, int64_t{100}, int64_t{1000}, int64_t{123457}}) {
      int64_t want = 0;
      while (FeatureCacheBytes(want + 1, 16, policy) <= bytes) ++want;
      EXPECT_EQ(FeatureCacheRowsFor(bytes, 16, policy), want) << bytes << " " << policy;
    }
    EXPECT_EQ(FeatureCacheBytes(10, 16, policy), 10 * (16 + policy) + FeatureCache::IndexBytes(10));
  }
}

// The split charges the policy's per-row bookkeeping with the slot index: an automatic
// feature cache gets fewer rows, and rows + index + bookkeeping stay within its share.
TEST(MemoryBudgetTest, PolicyBookkeepingPerRowIsCharged) {
  MemoryBudgetRequest r;
  r.budget_bytes = int64_t{256} << 20;
  r.num_nodes = 10'000'000;
  r.feature_dim = 8;
  r.feature_row_bytes = 16;
  r.batch_size = 1000;
  r.fanouts = {10, 5};
  r.ncache_budget_bytes = 0;
  auto plain = SplitMemoryBudget(r);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  r.policy_bytes_per_row = 112;
  auto charged = SplitMemoryBudget(r);
  ASSERT_TRUE(charged.ok()) << charged.status().ToString();
  EXPECT_GT(plain->fcache_rows, charged->fcache_rows);
  EXPECT_EQ(charged->fcache_index_bytes, FeatureCache::IndexBytes(charged->fcache_rows) + 112 * charged->fcache_rows);
  EXPECT_EQ(charged->fcache_bytes + charged->fcache_index_bytes,
            FeatureCacheBytes(charged->fcache_rows, 16, 112));
  // Same total feature-cache memory either way (the share is spent, on fewer rows).
  EXPECT_NEAR(static_cast<double>(charged->fcache_bytes + charged->fcache_index_bytes),
              static_cast<double>(plain->fcache_bytes + plain->fcache_index_bytes), 200.0);
}

// A billion nodes under 12 GiB with Belady: the split line reports the per-node tables
// at <= 8 B per node (compact indptr 4.13 + tie-rule scores 1 + neighbor-cache bitmap 0.25).
TEST(MemoryBudgetTest, PerNodeBytesOfABillionNodesInTheSplitLine) {
  MemoryBudgetRequest r;
  r.budget_bytes = int64_t{12} << 30;
  r.num_nodes = 1'000'000'000;
  r.feature_dim = 8;
  r.feature_row_bytes = 16;
  r.batch_size = 1000;
  r.fanouts = {10, 5};
  r.node_score_bytes_per_node = kBeladyScoreBytesPerNode;
  r.topology_bytes = NeighborCacheFullBytes(r.num_nodes, 3 * r.num_nodes, 4);
  auto s = SplitMemoryBudget(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->indptr_bytes, CompactIndptr::EstimateBytes(r.num_nodes + 1));
  EXPECT_EQ(s->node_score_bytes, r.num_nodes);
  EXPECT_EQ(s->table_bytes, s->indptr_bytes + s->node_score_bytes);
  const double bitmap = s->ncache_bytes > 0 ? 0.25 : 0;
  EXPECT_NEAR(s->PerNodeBytes(), 4.125 + 1 + bitmap, 1e-6);
  EXPECT_LE(s->PerNodeBytes(), 8.0);
  const std::string line = s->ToString();
  EXPECT_NE(line.find(fmt::format("{:.2f} B/node: indptr 4.13 + tie-rule scores 1.00", s->PerNodeBytes())),
            std::string::npos) << line;
  EXPECT_NE(line.find("slot index"), std::string::npos) << line;
  EXPECT_LE(s->table_bytes + s->staging_bytes + s->trace_bytes + s->ncache_bytes + s->fcache_bytes +
                s->fcache_index_bytes + s->inspector_bytes + s->model_bytes,
            r.budget_bytes);
  // The old layout (int64 indptr + int32 slot table) alone was 12 B per node.
  EXPECT_LT(s->table_bytes, 8 * (r.num_nodes + 1) + 4 * r.num_nodes);
}


// Belady's streaming sort buffer is 1 % of the budget, within [1 MiB, 8 MiB], and at most
// what the superbatch's accesses need (24 B each); the split charges exactly that to the
// inspector, the feature cache pays it, and the split line shows it. Oracle: the rule
// written out with comparisons, and splits of the same request without a planner.
TEST(MemoryBudgetTest, PlannerSortBufferScalesWithTheBudget) {
  const int64_t mib = int64_t{1} << 20;
  auto rule = [&](int64_t budget) {
    int64_t b = budget / 100;
    if (b < mib) b = mib;
    if (b > 8 * mib) b = 8 * mib;
    return b;
  };
  for (int64_t budget : {16 * mib, 100 * mib, 200 * mib, 256 * mib, 304 * mib, 819 * mib, 1024 * mib, 4096 * mib}) {
    EXPECT_EQ(PlannerWorkingBytesFor(budget), rule(budget)) << budget;
  }
  EXPECT_EQ(PlannerWorkingBytesFor(256 * mib), 2684354);  // 2.56 MiB at the Ginex-like 256M
  EXPECT_EQ(PlannerWorkingBytesFor(0), 8 * mib);          // no budget: the largest buffer

  MemoryBudgetRequest r = BenchLikeRequest();
  r.streaming_inspector = true;
  r.traces_in_flight = 3;
  r.superbatch = 200;
  r.policy_bytes_per_row = 112;
  for (int64_t budget : {256 * mib, 304 * mib, 2048 * mib}) {
    r.budget_bytes = budget;
    r.planner_working_bytes = kPlannerWorkingAuto;
    auto s = SplitMemoryBudget(r);
    ASSERT_TRUE(s.ok()) << s.status().message();
    MemoryBudgetRequest none = r;
    none.planner_working_bytes = 0;
    auto base = SplitMemoryBudget(none);
    ASSERT_TRUE(base.ok()) << base.status().message();
    EXPECT_EQ(s->planner_working_bytes, rule(budget));
    EXPECT_EQ(base->planner_working_bytes, 0);
    EXPECT_EQ(s->inspector_bytes - base->inspector_bytes, rule(budget));
    // The feature cache pays it (within one row's bytes, index and bookkeeping).
    EXPECT_EQ(s->ncache_bytes, base->ncache_bytes);
    EXPECT_EQ(s->trace_bytes, base->trace_bytes);
    const int64_t paid = FcacheAll(*base) - FcacheAll(*s);
    const int64_t one_row = FeatureCacheBytes(1, r.feature_row_bytes, r.policy_bytes_per_row);
    EXPECT_GE(paid, rule(budget) - one_row);
    EXPECT_LE(paid, rule(budget) + one_row);
    EXPECT_NE(s->ToString().find("its sort buffer " + FormatBytes(rule(budget))), std::string::npos) << s->ToString();
    // A constant 8 MiB (the old reservation) costs more rows below an 800 MiB budget.
    MemoryBudgetRequest fixed = r;
    fixed.planner_working_bytes = 8 * mib;
    auto eight = SplitMemoryBudget(fixed);
    ASSERT_TRUE(eight.ok());
    EXPECT_EQ(eight->planner_working_bytes, 8 * mib);
    if (budget < 800 * mib) {
      EXPECT_GT(s->fcache_rows, eight->fcache_rows);
    } else {
      EXPECT_EQ(s->fcache_rows, eight->fcache_rows);
    }
  }
  // A superbatch whose accesses need less: only that (24 B per access of S batches).
  r.budget_bytes = 2048 * mib;
  r.superbatch = 1;
  r.measured_batch_rows = 10000;
  r.measured_batches = 2;
  r.measured_blocks = {{2000, 10000, 20000}, {1000, 2000, 10000}};
  r.measured_trace_bytes = 200000;
  auto small = SplitMemoryBudget(r);
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->planner_working_bytes, 24 * small->estimated_batch_rows);
  EXPECT_LT(small->planner_working_bytes, rule(r.budget_bytes));
}

}  // namespace
}  // namespace seer
