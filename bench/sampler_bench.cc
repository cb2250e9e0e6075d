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
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "bench_flags.h"
#include "bench_report.h"
#include "cache/degrees.h"
#include "cache/neighbor_cache.h"
#include "inspector/superbatch_driver.h"
#include "inspector/topology.h"
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

// ---- configuration ------------------------------------------------------------------

// The sampling flags (bench_flags.h), with superbatch 0 = 4 x threads; no --seed.
struct BenchConfig : bench::SamplingFlags {
  BenchConfig()
      : SamplingFlags("10,10,10", /*batch_size=*/1000, /*superbatch=*/0,
                      static_cast<int>(std::thread::hardware_concurrency()), /*seed=*/0) {}
  std::string io = "auto";
  int queue_depth = 64;
  int64_t superbatches = 2;
  int64_t ceiling_bytes = 4096;
  double ceiling_seconds = 5;
};

// Parses the flags; returns the exit code when the bench should not run.
std::optional<int> ParseFlags(int argc, char** argv, BenchConfig* c) {
  CLI::App app{"Sampling throughput vs neighbor cache size and the random-read ceiling"};
  bench::AddSamplingFlags(app, c,
                          {/*dataset_positional=*/true, "--superbatch", "Batches per superbatch (0 = 4 x threads)",
                           "Sampling / ceiling threads", /*seed_help=*/nullptr});
  app.add_option("--queue-depth", c->queue_depth, "Reads in flight per thread")->capture_default_str();
  app.add_option("--superbatches", c->superbatches, "Superbatches per configuration")->capture_default_str();
  app.add_option("--ceiling-bytes", c->ceiling_bytes, "Read size of the ceiling run")->capture_default_str();
  app.add_option("--ceiling-seconds", c->ceiling_seconds, "Duration of the ceiling run")->capture_default_str();
  app.add_option("--io", c->io, "auto | uring | pread")->capture_default_str();
  if (std::optional<int> exit_code = bench::ParseCommandLine(app, argc, argv)) return exit_code;
  if (c->superbatch == 0) c->superbatch = 4 * c->threads;
  return std::nullopt;
}

// ---- setup ----------------------------------------------------------------------------

// What every configuration samples: the dataset, its seeds and topology arrays, and a
// reader on indices.bin (for the ceiling run and the printed configuration).
struct BenchInputs {
  explicit BenchInputs(Dataset opened) : dataset(std::move(opened)) {}
  Dataset dataset;
  std::vector<int> fanouts;
  DirectReaderOptions reader_options;
  std::string indices_path;
  int64_t topology_bytes = 0;
  std::vector<int64_t> seeds;
  std::vector<int64_t> indptr;
  std::vector<int64_t> out_degrees;
  std::unique_ptr<BlockReader> probe;
};

Result<BenchInputs> OpenInputs(const BenchConfig& c) {
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::Open(c.dataset_dir));
  BenchInputs in(std::move(dataset));
  SEER_ASSIGN_OR_RETURN(in.fanouts, ParseFanouts(c.fanouts_text));
  SEER_ASSIGN_OR_RETURN(in.reader_options.mode, ParseIoMode(c.io));
  in.reader_options.queue_depth = c.queue_depth;
  const DatasetManifest& m = in.dataset.manifest();
  in.indices_path = in.dataset.PathOf(dataset_files::kIndices);
  in.topology_bytes = m.num_edges * m.index_bytes();
  SEER_ASSIGN_OR_RETURN(in.seeds, in.dataset.LoadSplit("train"));
  SEER_ASSIGN_OR_RETURN(in.indptr, in.dataset.LoadIndptr());
  SEER_ASSIGN_OR_RETURN(in.out_degrees, ComputeOutDegrees(in.dataset));
  SEER_ASSIGN_OR_RETURN(in.probe, OpenDirectReader(in.indices_path, in.reader_options));
  return in;
}

void PrintConfiguration(const BenchConfig& c, const BenchInputs& in) {
  const DatasetManifest& m = in.dataset.manifest();
  fmt::print("config: {}, {} nodes, {} edges, indices.bin {} ({}), {} train seeds, fanouts {}, "
             "batch {}, superbatch {}, {} superbatches/config, {} threads, QD {}, io {} {}, "
             "alignment {}\n",
             c.dataset_dir, m.num_nodes, m.num_edges, FormatBytes(in.topology_bytes),
             IndexDtypeName(m.index_dtype), in.seeds.size(), c.fanouts_text, c.batch_size,
             c.superbatch, c.superbatches, c.threads, c.queue_depth, IoModeName(in.probe->mode()),
             in.probe->direct() ? "O_DIRECT" : "buffered", in.probe->alignment_bytes());
  if (!in.probe->direct()) {
    fmt::print("WARNING: O_DIRECT is not in effect: reads may be served by the page cache\n");
  }
#ifndef NDEBUG
  fmt::print("WARNING: debug build\n");
#endif
}

// ---- measurement ----------------------------------------------------------------------

// The ceiling: random aligned reads, `threads` threads x QD, on indices.bin. Reads/s.
double MeasureCeiling(const BenchConfig& c, const BenchInputs& in) {
  std::atomic<int64_t> reads{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  const int64_t read_bytes = c.ceiling_bytes;
  const int64_t blocks = std::max<int64_t>(1, in.topology_bytes / read_bytes);
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < c.threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      std::vector<char> buf(static_cast<size_t>(c.queue_depth * read_bytes));
      std::vector<ReadRequest> reqs(static_cast<size_t>(c.queue_depth));
      while (!stop.load()) {
        for (int i = 0; i < c.queue_depth; ++i) {
          reqs[i] = ReadRequest{static_cast<int64_t>(rng() % blocks) * read_bytes, read_bytes,
                                buf.data() + i * read_bytes};
        }
        if (!in.probe->ReadBatch(reqs).ok()) return;
        reads += c.queue_depth;
        if (bench::SecondsSince(start) > c.ceiling_seconds) stop = true;
      }
    });
  }
  for (auto& w : workers) w.join();
  const double seconds = bench::SecondsSince(start);
  const double reads_per_s = reads.load() / seconds;
  fmt::print("ceiling: {} random {}-byte reads in {:.2f} s = {:.0f} reads/s ({:.1f} MB/s)\n",
             reads.load(), read_bytes, seconds, reads_per_s, reads_per_s * read_bytes / 1e6);
  return reads_per_s;
}

struct Row {
  std::string config;
  double seconds = 0;
  SampleStats stats;
  int64_t ncache_bytes = 0;
};

// Samples the first superbatches of epoch 0 through `reader` and `cache`, prints a line.
Result<Row> MeasureSampling(const BenchConfig& c, const BenchInputs& in, const std::string& name,
                            std::unique_ptr<BlockReader> reader, NeighborCache cache,
                            double ceiling_reads_per_s) {
  Row row;
  row.config = name;
  row.ncache_bytes = cache.stats().bytes;
  Topology topology(in.indptr, std::move(reader), in.dataset.manifest().index_dtype,
                    std::move(cache));
  const SuperbatchOptions o = MakeSuperbatchOptions(c.batch_size, c.superbatch, c.threads, in.fanouts,
                                                    /*seed=*/0, /*shuffle=*/true);
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler,
                        SuperbatchSampler::Create(topology.view(), in.seeds, o));
  const int64_t n = std::min(c.superbatches, sampler.num_superbatches());
  for (int64_t k = 0; k < n; ++k) {
    SuperbatchStats s;
    SEER_RETURN_IF_ERROR(sampler.Sample(0, k, &s).status());
    row.seconds += s.seconds;
    row.stats.Add(s.sample);
  }
  const double edges_s = row.stats.edges / row.seconds;
  const double reads_s = row.stats.reads.device_reads / row.seconds;
  fmt::print("{:<12} ncache {:>10}  hit {:5.1f}%  {:9.0f} sampled edges/s  {:9.0f} topology "
             "reads/s ({:5.1f}% of ceiling)  {:9.0f} requests/s  {:.2f} s\n",
             name, FormatBytes(row.ncache_bytes), 100 * row.stats.ncache_hit_ratio(), edges_s,
             reads_s, 100 * reads_s / ceiling_reads_per_s,
             row.stats.topology_requests / row.seconds, row.seconds);
  return row;
}

// The neighbor cache at 0%, 25% and 100% of the topology over the direct reader, then
// the whole topology in RAM.
Result<std::vector<Row>> MeasureConfigurations(const BenchConfig& c, const BenchInputs& in,
                                               double ceiling_reads_per_s) {
  std::vector<Row> rows;
  for (const char* pct : {"0%", "25%", "100%"}) {
    SEER_ASSIGN_OR_RETURN(const int64_t budget,
                          ParseNeighborCacheBudget(pct, in.dataset.manifest()));
    SEER_ASSIGN_OR_RETURN(NeighborCache cache, NeighborCache::BuildWithOutDegrees(
                                                   in.dataset, in.indptr, in.out_degrees, budget));
    SEER_ASSIGN_OR_RETURN(std::unique_ptr<BlockReader> reader,
                          OpenDirectReader(in.indices_path, in.reader_options));
    SEER_ASSIGN_OR_RETURN(Row row, MeasureSampling(c, in, std::string("ncache-") + pct,
                                                   std::move(reader), std::move(cache),
                                                   ceiling_reads_per_s));
    rows.push_back(std::move(row));
  }
  SEER_ASSIGN_OR_RETURN(const std::string bytes, ReadWholeFile(in.indices_path));
  auto in_ram = std::make_unique<InMemoryBlockReader>(
      in.indices_path, std::vector<char>(bytes.begin(), bytes.end()));
  SEER_ASSIGN_OR_RETURN(Row row, MeasureSampling(c, in, "in-RAM", std::move(in_ram),
                                                 NeighborCache(), ceiling_reads_per_s));
  rows.push_back(std::move(row));
  return rows;
}

// ---- report ---------------------------------------------------------------------------

bench::ReportJson ReportOf(const BenchConfig& c, const BenchInputs& in,
                           double ceiling_reads_per_s, const std::vector<Row>& rows) {
  bench::ReportJson items = bench::ReportJson::array();
  for (const Row& r : rows) {
    items.push_back({{"config", r.config},
                     {"ncache_bytes", r.ncache_bytes},
                     {"seconds", bench::Rounded(r.seconds, 4)},
                     {"edges", r.stats.edges},
                     {"device_reads", r.stats.reads.device_reads},
                     {"requests", r.stats.topology_requests},
                     {"ncache_hit_ratio", bench::Rounded(r.stats.ncache_hit_ratio(), 4)}});
  }
  return {{"dataset", c.dataset_dir},
          {"threads", c.threads},
          {"queue_depth", c.queue_depth},
          {"ceiling_reads_per_s", bench::Rounded(ceiling_reads_per_s, 1)},
          {"direct", in.probe->direct()},
          {"rows", items}};
}

Status Run(const BenchConfig& c) {
  SEER_ASSIGN_OR_RETURN(const BenchInputs in, OpenInputs(c));
  PrintConfiguration(c, in);
  const double ceiling_reads_per_s = MeasureCeiling(c, in);
  SEER_ASSIGN_OR_RETURN(const std::vector<Row> rows,
                        MeasureConfigurations(c, in, ceiling_reads_per_s));
  if (c.json_path.empty()) return Status::Ok();
  return bench::WriteReport(c.json_path, ReportOf(c, in, ceiling_reads_per_s, rows));
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  return seer::bench::BenchMain<seer::BenchConfig>(argc, argv, seer::ParseFlags, seer::Run,
                                                   "sampler_bench: error: ");
}
