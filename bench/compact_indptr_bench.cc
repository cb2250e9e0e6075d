// CompactIndptr on a dataset's indptr.bin: load time and rate (streamed), resident bytes
// per node, and random lookups (Degree(v) = indptr[v+1] - indptr[v]) against the plain
// int64 array — the plain array is loaded too only with --compare (it needs 8 B per node).
//
//   compact_indptr_bench DATASET [--lookups 20000000] [--compare]
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_report.h"
#include "storage/base/process_memory.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"

namespace seer {
namespace {

template <typename Indptr>
double LookupSeconds(const Indptr& indptr, int64_t num_nodes, const std::vector<int64_t>& ids, int64_t* sum) {
  const auto start = std::chrono::steady_clock::now();
  int64_t s = 0;
  for (int64_t v : ids) s += indptr[v + 1] - indptr[v];
  *sum = s;
  (void)num_nodes;
  return bench::SecondsSince(start);
}

int Run(const std::string& dir, int64_t lookups, bool compare) {
  auto ds = Dataset::Open(dir);
  if (!ds.ok()) {
    std::fprintf(stderr, "%s\n", ds.status().ToString().c_str());
    return 1;
  }
  const int64_t n = ds->manifest().num_nodes;
  const auto start = std::chrono::steady_clock::now();
  auto compact = CompactIndptr::Load(*ds);
  const double load_s = bench::SecondsSince(start);
  if (!compact.ok()) {
    std::fprintf(stderr, "%s\n", compact.status().ToString().c_str());
    return 1;
  }
  const double mb = 8.0 * static_cast<double>(n + 1) / 1e6;
  fmt::print("{}: {} nodes, {} edges\n", dir, n, ds->manifest().num_edges);
  fmt::print("compact load {:.2f} s ({:.0f} MB/s of indptr.bin), resident {:.1f} MiB = {:.3f} B/node, wide blocks {}, peak RSS {:.1f} MiB\n",
             load_s, mb / load_s, static_cast<double>(compact->ResidentBytes()) / (1 << 20),
             static_cast<double>(compact->ResidentBytes()) / static_cast<double>(n), compact->wide_blocks(),
             static_cast<double>(PeakRssBytes()) / (1 << 20));
  std::mt19937_64 rng(1);
  std::vector<int64_t> ids(static_cast<size_t>(lookups));
  for (auto& v : ids) v = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
  int64_t sum_c = 0;
  const double tc = LookupSeconds(*compact, n, ids, &sum_c);
  fmt::print("compact: {:.1f} M random degree lookups/s\n", static_cast<double>(lookups) / tc / 1e6);
  if (compare) {
    auto plain = ds->LoadIndptr();
    if (!plain.ok()) return 1;
    int64_t sum_p = 0;
    double tp = LookupSeconds(*plain, n, ids, &sum_p);
    const double tc2 = LookupSeconds(*compact, n, ids, &sum_c);  // again, after the plain run (A/B/A)
    fmt::print("plain  : {:.1f} M random degree lookups/s; compact again {:.1f} M/s; ratio compact/plain {:.3f}\n",
               static_cast<double>(lookups) / tp / 1e6, static_cast<double>(lookups) / tc2 / 1e6,
               tp / ((tc + tc2) / 2));
    if (sum_p != sum_c) {
      fmt::print("WARNING: degree sums differ ({} vs {})\n", sum_p, sum_c);
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  std::string dir;
  int64_t lookups = 20'000'000;
  bool compare = false;
  CLI::App app{"CompactIndptr: load rate, bytes per node, random lookups vs the plain array"};
  app.add_option("dataset", dir)->required();
  app.add_option("--lookups", lookups)->capture_default_str();
  app.add_flag("--compare", compare, "also load the plain int64 array and compare lookups");
  if (auto code = seer::bench::ParseCommandLine(app, argc, argv)) return *code;
  return seer::Run(dir, lookups, compare);
}
