// sampler_bench: sampling throughput (sampled edges/s) and topology reads/s with the
// neighbor cache at several sizes, against the whole topology in RAM (upper bound) and
// against the direct reader's random-read ceiling measured in the same run (random
// aligned reads of --ceiling-bytes at queue depth --queue-depth per thread on
// indices.bin, same thread count as sampling).
//
//   seer gen --nodes 4000000 --avg-degree 20 --out /data/g   # topology ~320 MB
//   sampler_bench /data/g --threads 16 --superbatches 2 --json out.json
//
// indices.bin is read with O_DIRECT, so the page cache does not hold the topology
// whatever its size; the bench prints a WARNING when O_DIRECT is not in effect.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "cache/degrees.h"
#include "cache/neighbor_cache.h"
#include "inspector/superbatch_driver.h"
#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/dataset/dataset.h"
#include "storage/io/block_reader.h"
#include "storage/io/direct_reader.h"

namespace seer {
namespace {

// The whole indices.bin in RAM behind the BlockReader seam (the upper bound).
class InMemoryBlockReader : public BlockReader {
 public:
  InMemoryBlockReader(std::string path, std::vector<char> bytes)
      : path_(std::move(path)), bytes_(std::move(bytes)) {}
  Status ReadBatch(const ReadRequest* requests, size_t count, ReadStats* stats) override {
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(requests[i].dest, bytes_.data() + requests[i].offset_bytes,
                  static_cast<size_t>(requests[i].length_bytes));
    }
    if (stats) {
      stats->requests += static_cast<int64_t>(count);
      stats->device_reads += static_cast<int64_t>(count);
      for (size_t i = 0; i < count; ++i) stats->device_bytes += requests[i].length_bytes;
    }
    return Status::Ok();
  }
  const std::string& path() const override { return path_; }
  int64_t file_size_bytes() const override { return static_cast<int64_t>(bytes_.size()); }
  int64_t alignment_bytes() const override { return 1; }
  IoMode mode() const override { return IoMode::kPread; }
  bool direct() const override { return false; }

 private:
  std::string path_;
  std::vector<char> bytes_;
};

struct Row {
  std::string config;
  double seconds = 0;
  SampleStats stats;
  int64_t ncache_bytes = 0;
};

int Main(int argc, char** argv) {
  CLI::App app{"Sampling throughput vs neighbor cache size and the random-read ceiling"};
  std::string dir, json_path, io = "auto", fanouts_text = "10,10,10";
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  int queue_depth = 64;
  int64_t batch_size = 1000, superbatch = 0, superbatches = 2, ceiling_bytes = 4096;
  double ceiling_seconds = 5;
  app.add_option("dataset", dir, "Dataset directory")->required();
  app.add_option("--threads", threads, "Sampling / ceiling threads")->capture_default_str();
  app.add_option("--queue-depth", queue_depth, "Reads in flight per thread")->capture_default_str();
  app.add_option("--fanouts", fanouts_text, "Fan-outs")->capture_default_str();
  app.add_option("--batch-size", batch_size, "Seeds per batch")->capture_default_str();
  app.add_option("--superbatch", superbatch, "Batches per superbatch (0 = 4 x threads)")
      ->capture_default_str();
  app.add_option("--superbatches", superbatches, "Superbatches per configuration")->capture_default_str();
  app.add_option("--ceiling-bytes", ceiling_bytes, "Read size of the ceiling run")->capture_default_str();
  app.add_option("--ceiling-seconds", ceiling_seconds, "Duration of the ceiling run")->capture_default_str();
  app.add_option("--io", io, "auto | uring | pread")->capture_default_str();
  app.add_option("--json", json_path, "Write results as JSON here")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (superbatch == 0) superbatch = 4 * threads;

  auto fail = [](const Status& st) {
    std::fprintf(stderr, "sampler_bench: error: %s\n", st.message().c_str());
    return 1;
  };
  auto dataset = Dataset::Open(dir);
  if (!dataset.ok()) return fail(dataset.status());
  auto fanouts = ParseFanouts(fanouts_text);
  if (!fanouts.ok()) return fail(fanouts.status());
  auto mode = ParseIoMode(io);
  if (!mode.ok()) return fail(mode.status());
  const DatasetManifest& m = dataset->manifest();
  const std::string indices_path = dataset->PathOf(dataset_files::kIndices);
  const int64_t topo_bytes = m.num_edges * m.index_bytes();
  auto seeds = dataset->LoadSplit("train");
  if (!seeds.ok()) return fail(seeds.status());
  auto indptr = dataset->LoadIndptr();
  if (!indptr.ok()) return fail(indptr.status());
  auto out_degrees = ComputeOutDegrees(*dataset);
  if (!out_degrees.ok()) return fail(out_degrees.status());

  DirectReaderOptions ropts;
  ropts.mode = *mode;
  ropts.queue_depth = queue_depth;
  auto probe = OpenDirectReader(indices_path, ropts);
  if (!probe.ok()) return fail(probe.status());
  std::printf("config: %s, %lld nodes, %lld edges, indices.bin %s (%s), %zu train seeds, fanouts %s, "
              "batch %lld, superbatch %lld, %lld superbatches/config, %d threads, QD %d, io %s %s, "
              "alignment %lld\n",
              dir.c_str(), static_cast<long long>(m.num_nodes), static_cast<long long>(m.num_edges),
              FormatBytes(topo_bytes).c_str(), IndexDtypeName(m.index_dtype), seeds->size(),
              fanouts_text.c_str(), static_cast<long long>(batch_size),
              static_cast<long long>(superbatch), static_cast<long long>(superbatches), threads,
              queue_depth, IoModeName((*probe)->mode()), (*probe)->direct() ? "O_DIRECT" : "buffered",
              static_cast<long long>((*probe)->alignment_bytes()));
  if (!(*probe)->direct()) {
    std::printf("WARNING: O_DIRECT is not in effect: reads may be served by the page cache\n");
  }
#ifndef NDEBUG
  std::printf("WARNING: debug build\n");
#endif

  // 1. The ceiling: random aligned reads, `threads` threads x QD, on the same file.
  double ceiling_reads_per_s = 0;
  {
    std::atomic<int64_t> reads{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    const int64_t blocks = std::max<int64_t>(1, topo_bytes / ceiling_bytes);
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        std::mt19937_64 rng(1000 + t);
        std::vector<char> buf(static_cast<size_t>(queue_depth * ceiling_bytes));
        std::vector<ReadRequest> reqs(static_cast<size_t>(queue_depth));
        while (!stop.load()) {
          for (int i = 0; i < queue_depth; ++i) {
            reqs[i] = ReadRequest{static_cast<int64_t>(rng() % blocks) * ceiling_bytes, ceiling_bytes,
                                  buf.data() + i * ceiling_bytes};
          }
          if (!(*probe)->ReadBatch(reqs).ok()) return;
          reads += queue_depth;
          if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
              ceiling_seconds) {
            stop = true;
          }
        }
      });
    }
    for (auto& w : workers) w.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ceiling_reads_per_s = reads.load() / s;
    std::printf("ceiling: %lld random %lld-byte reads in %.2f s = %.0f reads/s (%.1f MB/s)\n",
                static_cast<long long>(reads.load()), static_cast<long long>(ceiling_bytes), s,
                ceiling_reads_per_s, ceiling_reads_per_s * ceiling_bytes / 1e6);
  }

  // 2. Sampling under each configuration (the same seeds and superbatches).
  std::vector<Row> rows;
  auto run = [&](const std::string& name, std::unique_ptr<BlockReader> reader, NeighborCache cache) {
    const int64_t cache_bytes = cache.stats().bytes;
    Topology topology(*indptr, std::move(reader), m.index_dtype, std::move(cache));
    SuperbatchOptions o;
    o.batch_size = batch_size;
    o.superbatch_size = superbatch;
    o.num_threads = threads;
    o.sampler.fanouts = *fanouts;
    auto sampler = SuperbatchSampler::Create(topology.view(), *seeds, o);
    if (!sampler.ok()) return fail(sampler.status());
    Row row;
    row.config = name;
    row.ncache_bytes = cache_bytes;
    const int64_t n = std::min(superbatches, sampler->num_superbatches());
    for (int64_t k = 0; k < n; ++k) {
      SuperbatchStats s;
      auto trace = sampler->Sample(0, k, &s);
      if (!trace.ok()) return fail(trace.status());
      row.seconds += s.seconds;
      row.stats.Add(s.sample);
    }
    const double edges_s = row.stats.edges / row.seconds;
    const double reads_s = row.stats.reads.device_reads / row.seconds;
    std::printf("%-12s ncache %10s  hit %5.1f%%  %9.0f sampled edges/s  %9.0f topology reads/s "
                "(%5.1f%% of ceiling)  %9.0f requests/s  %.2f s\n",
                name.c_str(), FormatBytes(cache_bytes).c_str(), 100 * row.stats.ncache_hit_ratio(),
                edges_s, reads_s, 100 * reads_s / ceiling_reads_per_s,
                row.stats.topology_requests / row.seconds, row.seconds);
    rows.push_back(row);
    return 0;
  };
  for (const char* pct : {"0%", "25%", "100%"}) {
    auto budget = ParseNeighborCacheBudget(pct, m);
    auto cache = NeighborCache::BuildWithOutDegrees(*dataset, *indptr, *out_degrees, *budget);
    if (!cache.ok()) return fail(cache.status());
    auto reader = OpenDirectReader(indices_path, ropts);
    if (!reader.ok()) return fail(reader.status());
    if (int rc = run(std::string("ncache-") + pct, std::move(*reader), std::move(*cache))) return rc;
  }
  {
    auto bytes = ReadWholeFile(indices_path);
    if (!bytes.ok()) return fail(bytes.status());
    std::vector<char> data(bytes->begin(), bytes->end());
    if (int rc = run("in-RAM", std::make_unique<InMemoryBlockReader>(indices_path, std::move(data)),
                     NeighborCache())) {
      return rc;
    }
  }
  if (!json_path.empty()) {
    std::FILE* f = std::fopen(json_path.c_str(), "w");
    if (f == nullptr) return fail(ErrnoStatus(errno, "open", json_path));
    std::fprintf(f, "{\"dataset\":\"%s\",\"threads\":%d,\"queue_depth\":%d,\"ceiling_reads_per_s\":%.1f,"
                    "\"direct\":%s,\"rows\":[",
                 dir.c_str(), threads, queue_depth, ceiling_reads_per_s,
                 (*probe)->direct() ? "true" : "false");
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::fprintf(f, "%s{\"config\":\"%s\",\"ncache_bytes\":%lld,\"seconds\":%.4f,\"edges\":%lld,"
                      "\"device_reads\":%lld,\"requests\":%lld,\"ncache_hit_ratio\":%.4f}",
                   i ? "," : "", r.config.c_str(), static_cast<long long>(r.ncache_bytes), r.seconds,
                   static_cast<long long>(r.stats.edges),
                   static_cast<long long>(r.stats.reads.device_reads),
                   static_cast<long long>(r.stats.topology_requests), r.stats.ncache_hit_ratio());
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  return 0;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) { return seer::Main(argc, argv); }
