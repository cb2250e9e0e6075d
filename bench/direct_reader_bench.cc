// Random 4 KiB read rate of the DirectReader: io_uring at several queue depths, ring
// counts and submission modes (one calling thread; rings > 1 adds helper threads,
// "threads" = rings) against the pread thread pool at several pool sizes, in one run, on
// one file, every configuration repeated --repeats times interleaved (medians reported).
// Reads use O_DIRECT, so the page cache does not serve them and the file size
// only has to exceed what the device's own cache holds; a WARNING: line says when the
// numbers are not to be trusted (debug build, tmpfs, O_DIRECT refused).
//
//   direct_reader_bench --file /data/seer_bench.bin --size 8G --seconds 15 --json out.json
//
// The file is created once (random bytes) when absent or of another size, then reused.
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <optional>
#include <random>
#include <sstream>
#include <utility>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "bench_report.h"
#include "storage/base/aligned_buffer.h"
#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/io/block_reader.h"
#include "storage/io/direct_reader.h"

namespace seer {
namespace {

struct Point {
  std::string backend;
  int queue_depth = 0;
  int threads = 0;
  int rings = 0;        // DirectReaderOptions::rings as asked (0 = auto)
  bool submit_per_read = false;
  double seconds = 0;
  int64_t device_reads = 0;
  int64_t device_bytes = 0;
  double iops() const { return device_reads / seconds; }
  double mb_per_s() const { return device_bytes / seconds / 1e6; }
};

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(std::stoi(item));
  }
  return out;
}

// The rings a ReadBatch of `batch` scattered 4 KiB reads uses, by the rule documented at
// DirectReaderOptions::rings (auto = CPUs this process may run on, at most 4; at least 64
// device reads per ring; no more rings than queue depth).
int RingsUsed(int rings, int queue_depth, int batch) {
  if (rings <= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    rings = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    rings = std::clamp(rings, 1, 4);
  }
  return std::max(1, std::min({rings, queue_depth, std::max(1, batch / 64)}));
}

Status EnsureFile(const std::string& path, int64_t size_bytes) {
  auto existing = FileSizeBytes(path);
  if (existing.ok() && *existing == size_bytes) {
    fmt::print("reusing {} ({})\n", path, FormatBytes(size_bytes));
    return Status::Ok();
  }
  fmt::print("creating {} ({}) ...\n", path, FormatBytes(size_bytes));
  std::fflush(stdout);
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_WRONLY | O_CREAT | O_TRUNC));
  constexpr int64_t kChunk = 8 << 20;
  AlignedBuffer chunk(kChunk);
  std::mt19937_64 rng(42);
  for (int64_t off = 0; off < size_bytes; off += kChunk) {
    uint64_t* words = chunk.as<uint64_t>();
    for (int64_t i = 0; i < kChunk / 8; ++i) words[i] = rng();
    const int64_t n = std::min(kChunk, size_bytes - off);
    SEER_RETURN_IF_ERROR(PwriteFull(fd.get(), chunk.data(), n, off, path));
  }
  if (::fsync(fd.get()) != 0) return ErrnoStatus(errno, "fsync", path);
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  return fd.Close(path);
}

// Issues batches of `batch` random block-aligned 4 KiB reads until `seconds` passed.
Result<Point> RunPoint(const std::string& path, const DirectReaderOptions& options,
                       int batch, double seconds, uint64_t seed) {
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<BlockReader> reader, OpenDirectReader(path, options));
  const int64_t blocks = reader->file_size_bytes() / 4096;
  AlignedBuffer dest(static_cast<size_t>(batch) * 4096);
  std::vector<ReadRequest> requests(static_cast<size_t>(batch));
  std::mt19937_64 rng(seed);
  ReadStats stats;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    for (int i = 0; i < batch; ++i) {
      requests[i] = {static_cast<int64_t>(rng() % static_cast<uint64_t>(blocks)) * 4096, 4096,
                     dest.data() + static_cast<int64_t>(i) * 4096};
    }
    SEER_RETURN_IF_ERROR(reader->ReadBatch(requests, &stats));
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < seconds);
  Point p;
  p.backend = IoModeName(reader->mode());
  p.seconds = elapsed;
  p.device_reads = stats.device_reads;
  p.device_bytes = stats.device_bytes;
  return p;
}

// ---- configuration ------------------------------------------------------------------

struct BenchConfig {
  std::string path = "seer_direct_reader_bench.bin";
  std::string size_text = "8G";
  int64_t size_bytes = 0;  // size_text, rounded down to 4 KiB
  double seconds = 10;
  std::string qd_text = "1,16,64,256";
  std::string threads_text = "1,4,16,64";
  std::string rings_text = "1,0";
  std::string submit_text = DirectReaderOptions().submit_per_read ? "1" : "0";
  int repeats = 1;
  int batch = 4096;
  std::string json_path;
};

// One reader configuration of the sweep.
struct ReaderConfig {
  std::string backend;
  int queue_depth = 0;
  int threads = 0;
  int rings = 0;
  bool submit_per_read = false;
};

// Parses the flags; returns the exit code when the bench should not run.
std::optional<int> ParseFlags(int argc, char** argv, BenchConfig* c) {
  CLI::App app{"Random 4 KiB O_DIRECT reads/s: io_uring queue depths vs pread thread pools"};
  app.add_option("--file", c->path, "bench file (created once, reused)")->capture_default_str();
  app.add_option("--size", c->size_text, "file size (e.g. 8G)")->capture_default_str();
  app.add_option("--seconds", c->seconds, "seconds per point")->capture_default_str();
  app.add_option("--qd", c->qd_text, "io_uring queue depths")->capture_default_str();
  app.add_option("--threads", c->threads_text, "pread pool sizes")->capture_default_str();
  app.add_option("--rings", c->rings_text,
                 "io_uring ring counts per queue depth (0 = the reader's auto choice)")
      ->capture_default_str();
  app.add_option("--submit-per-read", c->submit_text,
                 "io_uring: values of DirectReaderOptions::submit_per_read to run (0, 1 or 0,1)")
      ->capture_default_str();
  app.add_option("--repeats", c->repeats,
                 "run the whole set this many times, interleaved; the table shows medians")
      ->capture_default_str();
  app.add_option("--batch", c->batch, "requests per ReadBatch call")->capture_default_str();
  app.add_option("--json", c->json_path, "write results as JSON here (empty = no JSON)")
      ->capture_default_str();
  if (std::optional<int> exit_code = bench::ParseCommandLine(app, argc, argv)) return exit_code;
  c->repeats = std::max(1, c->repeats);
  return std::nullopt;
}

Status CheckSizes(BenchConfig* c) {
  SEER_ASSIGN_OR_RETURN(const int64_t size, ParseBytes(c->size_text));
  c->size_bytes = AlignDown(size, 4096);
  if (c->size_bytes < 4096 || c->batch < 1) {
    return InvalidArgument("--size must be >= 4K and --batch >= 1");
  }
  return Status::Ok();
}

// Every pread pool size, then every io_uring (queue depth x rings x submit mode).
std::vector<ReaderConfig> ExpandConfigs(const BenchConfig& c) {
  std::vector<ReaderConfig> configs;
  for (int threads : ParseList(c.threads_text)) configs.push_back({"pread", 0, threads, 0});
  for (int qd : ParseList(c.qd_text)) {
    for (int rings : ParseList(c.rings_text)) {
      for (int submit : ParseList(c.submit_text)) {
        configs.push_back({"uring", qd, 0, rings, submit != 0});
      }
    }
  }
  return configs;
}

// ---- setup ----------------------------------------------------------------------------

// The reasons not to trust the numbers; also prints the file's reader setup.
std::vector<std::string> CheckEnvironment(const BenchConfig& c) {
  std::vector<std::string> warnings;
#ifndef NDEBUG
  warnings.push_back("built without NDEBUG (Debug build): numbers are not representative");
#endif
  double load[1] = {0};
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  if (getloadavg(load, 1) == 1 && load[0] > 0.5 * cpus) {
    warnings.push_back(fmt::format(
        "load average {:.1f} on {} CPUs: other work shares the machine, numbers are noisy "
        "(compare configurations within one run; use --repeats)",
        load[0], cpus));
  }
  struct statfs fs;
  if (statfs(c.path.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
    warnings.push_back("the file is on tmpfs: this measures memory, not a device");
  }
  DirectReaderOptions probe_options;
  probe_options.quiet = true;
  auto probe = OpenDirectReader(c.path, probe_options);
  if (probe.ok() && !(*probe)->direct()) {
    warnings.push_back("O_DIRECT refused: reads may be served by the page cache");
  }
  if (probe.ok() && (*probe)->mode() != IoMode::kUring) {
    warnings.push_back("io_uring unavailable: the uring rows run on the pread pool");
  }
  if (probe.ok()) {
    fmt::print("file {} size {} alignment {} direct {} hardware threads {}\n", c.path,
               FormatBytes(c.size_bytes), (*probe)->alignment_bytes(), (*probe)->direct(),
               std::thread::hardware_concurrency());
  }
  return warnings;
}

// ---- measurement ----------------------------------------------------------------------

DirectReaderOptions ReaderOptionsFor(const ReaderConfig& config) {
  DirectReaderOptions options;
  options.quiet = true;
  if (config.backend == "pread") {
    options.mode = IoMode::kPread;
    options.pread_threads = config.threads;
  } else {
    options.mode = IoMode::kUring;
    options.queue_depth = config.queue_depth;
    options.rings = config.rings;
    options.submit_per_read = config.submit_per_read;
  }
  return options;
}

// Every configuration runs once per repeat, repeats interleaved (A B C A B C), so a
// neighbour's load drifting over the run hits all configurations alike. Returns the
// samples of each configuration.
Result<std::vector<std::vector<Point>>> Measure(const BenchConfig& c,
                                                const std::vector<ReaderConfig>& configs) {
  std::vector<std::vector<Point>> samples(configs.size());
  uint64_t seed = 1;
  for (int rep = 0; rep < c.repeats; ++rep) {
    for (size_t i = 0; i < configs.size(); ++i) {
      const ReaderConfig& config = configs[i];
      SEER_ASSIGN_OR_RETURN(Point p, RunPoint(c.path, ReaderOptionsFor(config), c.batch,
                                              c.seconds, seed++));
      p.queue_depth = config.queue_depth;
      p.rings = config.rings;
      p.submit_per_read = config.submit_per_read;
      p.threads = config.backend == "pread"
                      ? config.threads
                      : RingsUsed(config.rings, config.queue_depth, c.batch);
      samples[i].push_back(p);
      if (config.backend == "pread") {
        fmt::print("  [{}] pread threads {:>3}: {:>10.0f} IOPS\n", rep + 1, config.threads,
                   p.iops());
      } else {
        fmt::print("  [{}] uring qd {:>3} rings {:>2}{}: {:>10.0f} IOPS\n", rep + 1,
                   config.queue_depth, p.threads,
                   config.submit_per_read ? " per-read submit" : "", p.iops());
      }
      std::fflush(stdout);
    }
  }
  return samples;
}

// The median sample of each configuration (by IOPS) stands for it.
struct Summary {
  std::vector<Point> points;
  std::vector<std::pair<double, double>> ranges;  // min, max IOPS
  double best_pread = 0;
  int best_pread_threads = 0;
  double RatioToBestPread(const Point& p) const {
    return best_pread > 0 ? p.iops() / best_pread : 0.0;
  }
};

Summary Summarize(std::vector<std::vector<Point>>& samples) {
  Summary s;
  for (std::vector<Point>& runs : samples) {
    std::sort(runs.begin(), runs.end(),
              [](const Point& a, const Point& b) { return a.iops() < b.iops(); });
    s.points.push_back(runs[runs.size() / 2]);
    s.ranges.emplace_back(runs.front().iops(), runs.back().iops());
  }
  for (const Point& p : s.points) {
    if (p.backend == "pread" && p.iops() > s.best_pread) {
      s.best_pread = p.iops();
      s.best_pread_threads = p.threads;
    }
  }
  return s;
}

// ---- report ---------------------------------------------------------------------------

void PrintTable(const BenchConfig& c, const Summary& s) {
  fmt::print("\nmedians of {} interleaved repeat(s); submit: batch = all ready reads per "
             "io_uring_enter, each = one per read\n",
             c.repeats);
  fmt::print("{:<8} {:>4} {:>8} {:>6} {:>12} {:>21} {:>10} {:>16}\n", "backend", "qd",
             "threads", "submit", "IOPS", "min..max", "MB/s", "vs best pread");
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Point& p = s.points[i];
    fmt::print("{:<8} {:>4} {:>8} {:>6} {:>12.0f} {:>10.0f}..{:<10.0f} {:>10.1f} {:>15.2f}x\n",
               p.backend, p.queue_depth > 0 ? std::to_string(p.queue_depth) : "-", p.threads,
               p.backend == "pread" ? "-" : (p.submit_per_read ? "each" : "batch"), p.iops(),
               s.ranges[i].first, s.ranges[i].second, p.mb_per_s(), s.RatioToBestPread(p));
  }
  fmt::print("best pread pool: {} threads, {:.0f} IOPS\n", s.best_pread_threads, s.best_pread);
}

bench::ReportJson ReportOf(const BenchConfig& c, const std::vector<std::string>& warnings,
                           const Summary& s, const std::vector<std::vector<Point>>& samples) {
  bench::ReportJson points = bench::ReportJson::array();
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Point& p = s.points[i];
    bench::ReportJson runs = bench::ReportJson::array();
    for (const Point& run : samples[i]) runs.push_back(bench::Rounded(run.iops(), 1));
    points.push_back({{"backend", p.backend},
                      {"queue_depth", p.queue_depth},
                      {"threads", p.threads},
                      {"rings", p.rings},
                      {"submit_per_read", p.submit_per_read},
                      {"seconds", bench::Rounded(p.seconds, 3)},
                      {"device_reads", p.device_reads},
                      {"iops", bench::Rounded(p.iops(), 1)},
                      {"iops_runs", runs},
                      {"mb_per_s", bench::Rounded(p.mb_per_s(), 2)},
                      {"ratio_to_best_pread", bench::Rounded(s.RatioToBestPread(p), 3)}});
  }
  return {{"file", c.path},        {"size_bytes", c.size_bytes}, {"seconds_per_point", c.seconds},
          {"batch", c.batch},      {"repeats", c.repeats},       {"warnings", warnings},
          {"points", points}};
}

Status Run(BenchConfig& c) {
  SEER_RETURN_IF_ERROR(CheckSizes(&c));
  SEER_RETURN_IF_ERROR(EnsureFile(c.path, c.size_bytes));
  const std::vector<std::string> warnings = CheckEnvironment(c);
  fmt::print("seconds/point {} batch {} requests of 4096 B at random 4 KiB-aligned offsets\n",
             c.seconds, c.batch);
  for (const std::string& w : warnings) fmt::print("WARNING: {}\n", w);
  std::fflush(stdout);
  SEER_ASSIGN_OR_RETURN(std::vector<std::vector<Point>> samples, Measure(c, ExpandConfigs(c)));
  const Summary summary = Summarize(samples);
  PrintTable(c, summary);
  if (!c.json_path.empty()) {
    Status st = bench::WriteReport(c.json_path, ReportOf(c, warnings, summary, samples));
    if (!st.ok()) return st.WithContext("cannot write " + c.json_path);
    fmt::print("wrote {}\n", c.json_path);
  }
  return Status::Ok();
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  return seer::bench::BenchMain<seer::BenchConfig>(argc, argv, seer::ParseFlags, seer::Run,
                                                   "direct_reader_bench: ");
}
