// Feature-cache gather: the row-sized slot index (FeatureCache, NodeSlotIndex) against the
// direct per-node int32 slot table it replaced (4 B per node; its Gather loop is kept here
// verbatim as the baseline). Same cache content, same batches, A/B interleaved per round.
//
//   slot_table_bench --nodes 20000000 --rows 2000000 --row-bytes 16 --batch-ids 100000
//
// Batches draw ids as N*u^alpha (alpha > 1 skews to low ids, as hot nodes); the cached
// rows are the lowest-id ones, so the hit ratio follows from alpha. Prints, per variant,
// the median ids/s over the rounds and the ratio compact/direct (> 0.90 = within 10 %).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include <tbb/parallel_for.h>

#include "bench_report.h"
#include "cache/feature_cache.h"

namespace seer {
namespace {

struct Config {
  int64_t num_nodes = 20'000'000;
  int64_t rows = 2'000'000;
  int64_t row_bytes = 16;
  int64_t batch_ids = 100'000;
  int64_t batches = 50;
  int rounds = 5;
  double alpha = 2.0;
  uint64_t seed = 1;
  std::string json;
};

// Today's direct table before this change (cache/feature_cache.cc, FeatureCache::Gather).
struct DirectCache {
  std::vector<int32_t> slot_table;
  std::unique_ptr<char[]> slots;
  int64_t row_bytes = 0;
  int64_t Gather(const int64_t* ids, int64_t count, char* batch_buffer, std::vector<int32_t>* miss_positions) const {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, count, 256), [&](const auto& r) {
      for (int64_t p = r.begin(); p != r.end(); ++p) {
        const int32_t slot = slot_table[static_cast<size_t>(ids[p])];
        if (slot >= 0) {
          std::memcpy(batch_buffer + p * row_bytes, slots.get() + slot * row_bytes, static_cast<size_t>(row_bytes));
        }
      }
    });
    int64_t hits = 0;
    for (int64_t p = 0; p < count; ++p) {
      if (slot_table[static_cast<size_t>(ids[p])] >= 0) {
        ++hits;
      } else if (miss_positions != nullptr) {
        miss_positions->push_back(static_cast<int32_t>(p));
      }
    }
    return hits;
  }
};

int Run(const Config& c) {
  fmt::print("slot_table_bench: {} nodes, {} cached rows of {} B, {} batches of {} ids, alpha {}, {} rounds\n",
             c.num_nodes, c.rows, c.row_bytes, c.batches, c.batch_ids, c.alpha, c.rounds);
  // The cached nodes: ids 0..rows-1 at shuffled slots.
  std::mt19937_64 rng(c.seed);
  std::vector<int32_t> slot_of(static_cast<size_t>(c.rows));
  for (int64_t i = 0; i < c.rows; ++i) slot_of[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  std::shuffle(slot_of.begin(), slot_of.end(), rng);

  FeatureCacheOptions options;
  options.num_nodes = c.num_nodes;
  options.capacity_rows = c.rows;
  options.row_bytes = c.row_bytes;
  auto compact = FeatureCache::Create(options);
  if (!compact.ok()) {
    fmt::print(stderr, "{}\n", compact.status().ToString());
    return 1;
  }
  DirectCache direct;
  direct.row_bytes = c.row_bytes;
  direct.slot_table.assign(static_cast<size_t>(c.num_nodes), -1);
  direct.slots.reset(new char[static_cast<size_t>(c.rows * c.row_bytes)]);
  std::vector<char> row(static_cast<size_t>(c.row_bytes));
  for (int64_t v = 0; v < c.rows; ++v) {
    std::memset(row.data(), static_cast<int>(v & 0x7f), row.size());
    const int32_t s = slot_of[static_cast<size_t>(v)];
    compact->Install(s, v, row.data());
    direct.slot_table[static_cast<size_t>(v)] = s;
    std::memcpy(direct.slots.get() + s * c.row_bytes, row.data(), row.size());
  }
  // Batches: distinct-ish ids N*u^alpha, shuffled within the batch.
  std::vector<std::vector<int64_t>> batches(static_cast<size_t>(c.batches));
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& b : batches) {
    b.resize(static_cast<size_t>(c.batch_ids));
    for (auto& v : b) {
      v = std::min<int64_t>(c.num_nodes - 1, static_cast<int64_t>(static_cast<double>(c.num_nodes) * std::pow(u(rng), c.alpha)));
    }
  }
  std::vector<char> buffer_a(static_cast<size_t>(c.batch_ids * c.row_bytes));
  std::vector<char> buffer_b(buffer_a.size());
  std::vector<int32_t> misses;
  misses.reserve(static_cast<size_t>(c.batch_ids));
  auto time_of = [&](auto& cache, std::vector<char>& buffer, int64_t* hits) {
    const auto start = std::chrono::steady_clock::now();
    int64_t h = 0;
    for (const auto& b : batches) {
      misses.clear();
      h += cache.Gather(b.data(), static_cast<int64_t>(b.size()), buffer.data(), &misses);
    }
    *hits = h;
    return bench::SecondsSince(start);
  };
  std::vector<double> t_direct, t_compact;
  int64_t hits_direct = 0, hits_compact = 0;
  for (int round = 0; round < c.rounds; ++round) {
    // Alternate which runs first in a round.
    if (round % 2 == 0) {
      t_direct.push_back(time_of(direct, buffer_a, &hits_direct));
      t_compact.push_back(time_of(*compact, buffer_b, &hits_compact));
    } else {
      t_compact.push_back(time_of(*compact, buffer_b, &hits_compact));
      t_direct.push_back(time_of(direct, buffer_a, &hits_direct));
    }
    fmt::print("round {}: direct {:.3f} s, compact {:.3f} s\n", round, t_direct.back(), t_compact.back());
  }
  if (hits_direct != hits_compact || std::memcmp(buffer_a.data(), buffer_b.data(), buffer_a.size()) != 0) {
    fmt::print("WARNING: the two caches disagree (hits {} vs {})\n", hits_direct, hits_compact);
    return 1;
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double ids = static_cast<double>(c.batches * c.batch_ids);
  const double md = median(t_direct), mc = median(t_compact);
  fmt::print("hit ratio {:.3f}\n", static_cast<double>(hits_direct) / ids);
  fmt::print("direct table : {:.1f} M ids/s (median), table {} MiB\n", ids / md / 1e6,
             c.num_nodes * 4 >> 20);
  fmt::print("compact index: {:.1f} M ids/s (median), index {} MiB\n", ids / mc / 1e6,
             FeatureCache::IndexBytes(c.rows) >> 20);
  fmt::print("compact/direct throughput ratio {:.3f}\n", md / mc);
  if (!c.json.empty()) {
    bench::ReportJson report = {{"bench", "slot_table"},      {"nodes", c.num_nodes},
                                {"rows", c.rows},             {"row_bytes", c.row_bytes},
                                {"hit_ratio", static_cast<double>(hits_direct) / ids},
                                {"direct_ids_per_s", ids / md}, {"compact_ids_per_s", ids / mc},
                                {"ratio", md / mc}};
    auto st = bench::WriteReport(c.json, report);
    if (!st.ok()) fmt::print(stderr, "{}\n", st.ToString());
  }
  return 0;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  seer::Config c;
  CLI::App app{"Feature-cache gather: row-sized slot index vs the direct per-node table"};
  app.add_option("--nodes", c.num_nodes)->capture_default_str();
  app.add_option("--rows", c.rows, "cached rows")->capture_default_str();
  app.add_option("--row-bytes", c.row_bytes)->capture_default_str();
  app.add_option("--batch-ids", c.batch_ids)->capture_default_str();
  app.add_option("--batches", c.batches)->capture_default_str();
  app.add_option("--rounds", c.rounds)->capture_default_str();
  app.add_option("--alpha", c.alpha, "id = N*u^alpha")->capture_default_str();
  app.add_option("--seed", c.seed)->capture_default_str();
  app.add_option("--json", c.json, "write a JSON report here");
  if (auto code = seer::bench::ParseCommandLine(app, argc, argv)) return *code;
  return seer::Run(c);
}
