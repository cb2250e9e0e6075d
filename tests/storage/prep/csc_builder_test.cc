#include "storage/prep/csc_builder.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include "storage/base/file_io.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

std::string MakeTempDir() { return testing::MakeTempDir("csc_builder"); }

class VectorEdgeSource : public EdgeSource {
 public:
  explicit VectorEdgeSource(std::vector<Edge> edges, int64_t num_nodes = -1)
      : edges_(std::move(edges)), num_nodes_(num_nodes) {}
  Status Rewind() override {
    next_ = 0;
    ++rewinds_;
    return Status::Ok();
  }
  Result<int64_t> Read(Edge* out, int64_t max_edges) override {
    int64_t n = std::min<int64_t>(max_edges, static_cast<int64_t>(edges_.size()) - next_);
    std::copy(edges_.begin() + next_, edges_.begin() + next_ + n, out);
    next_ += n;
    return n;
  }
  int64_t num_nodes() const override { return num_nodes_; }
  std::string name() const override { return "test edges"; }
  int rewinds_ = 0;

 private:
  std::vector<Edge> edges_;
  int64_t num_nodes_;
  int64_t next_ = 0;
};

struct Csc {
  std::vector<int64_t> indptr;
  std::vector<int64_t> indices;  // widened from the file's dtype
  bool operator==(const Csc& o) const { return indptr == o.indptr && indices == o.indices; }
};

template <typename T>
std::vector<T> ReadArray(const std::string& path) {
  auto data = ReadWholeFile(path);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size() % sizeof(T), 0u);
  std::vector<T> out(data->size() / sizeof(T));
  std::copy_n(data->data(), out.size() * sizeof(T), reinterpret_cast<char*>(out.data()));
  return out;
}

Result<std::pair<Csc, CscBuildStats>> Build(EdgeSource& source, const CscBuildOptions& options,
                                            const std::string& dir) {
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter indptr, AtomicFileWriter::Create(dir + "/indptr.bin"));
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter indices, AtomicFileWriter::Create(dir + "/indices.bin"));
  SEER_ASSIGN_OR_RETURN(CscBuildStats stats, BuildCsc(source, options, indptr, indices));
  SEER_RETURN_IF_ERROR(indptr.Close());
  SEER_RETURN_IF_ERROR(indices.Close());
  Csc csc;
  csc.indptr = ReadArray<int64_t>(dir + "/indptr.bin");
  if (stats.index_dtype == IndexDtype::kUint32) {
    for (uint32_t v : ReadArray<uint32_t>(dir + "/indices.bin")) csc.indices.push_back(v);
  } else {
    csc.indices = ReadArray<int64_t>(dir + "/indices.bin");
  }
  return std::make_pair(csc, stats);
}

// Oracle: expand, sort (dst, src), optionally unique, count.
Csc BruteForce(const std::vector<Edge>& edges, int64_t num_nodes, bool undirected, bool dedup,
               bool drop_self_loops) {
  std::vector<std::pair<int64_t, int64_t>> pairs;  // (dst, src)
  for (const Edge& e : edges) {
    if (e.src == e.dst && drop_self_loops) continue;
    pairs.emplace_back(e.dst, e.src);
    if (undirected && e.src != e.dst) pairs.emplace_back(e.src, e.dst);
  }
  std::sort(pairs.begin(), pairs.end());
  if (dedup) pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  Csc csc;
  csc.indptr.assign(static_cast<size_t>(num_nodes) + 1, 0);
  for (auto& [dst, src] : pairs) {
    ++csc.indptr[static_cast<size_t>(dst) + 1];
    csc.indices.push_back(src);
  }
  for (int64_t v = 0; v < num_nodes; ++v) csc.indptr[v + 1] += csc.indptr[v];
  return csc;
}

std::vector<Edge> RandomEdges(int64_t num_nodes, int64_t num_edges, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Edge> edges(static_cast<size_t>(num_edges));
  // Skewed destinations (some nodes get many in-edges) and a few repeats / self-loops.
  std::uniform_int_distribution<int64_t> any(0, num_nodes - 1);
  std::uniform_int_distribution<int64_t> hot(0, 15);
  for (auto& e : edges) {
    e.src = any(rng);
    e.dst = (rng() % 4 == 0) ? hot(rng) : any(rng);
    if (rng() % 50 == 0) e.src = e.dst;
  }
  return edges;
}

// Options for a build at `budget` spilling into `dir`; the rest at their defaults.
CscBuildOptions OptionsFor(bool undirected, int64_t budget, const std::string& dir) {
  CscBuildOptions options;
  options.undirected = undirected;
  options.memory_budget_bytes = budget;
  options.spill_dir = dir;
  return options;
}

bool DirIsEmptyOfSpill(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  bool clean = true;
  while (dirent* entry = ::readdir(d)) {
    if (std::string(entry->d_name).rfind(".seer-csc-spill", 0) == 0) clean = false;
  }
  ::closedir(d);
  return clean;
}

TEST(CscBuilderTest, HandWrittenEdgeListMatchesHandComputedCsc) {
  // src -> dst puts src in dst's in-neighbor list.
  std::vector<Edge> edges = {{0, 1}, {2, 1}, {3, 0}, {1, 3}, {0, 3}, {2, 3}, {3, 1}};
  VectorEdgeSource source(edges, 5);  // node 4 has no in-neighbors
  std::string dir = MakeTempDir();
  auto built = Build(source, CscBuildOptions{}, dir);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const Csc& csc = built->first;
  EXPECT_EQ(csc.indptr, (std::vector<int64_t>{0, 1, 4, 4, 7, 7}));
  EXPECT_EQ(csc.indices, (std::vector<int64_t>{3, 0, 2, 3, 0, 1, 2}));
  EXPECT_EQ(built->second.index_dtype, IndexDtype::kUint32);
  EXPECT_EQ(built->second.num_partitions, 1);
}

TEST(CscBuilderTest, NumNodesInferredFromLargestId) {
  VectorEdgeSource source({{7, 2}, {2, 7}});
  std::string dir = MakeTempDir();
  auto built = Build(source, CscBuildOptions{}, dir);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(built->second.num_nodes, 8);
  EXPECT_EQ(built->first.indptr.size(), 9u);
  EXPECT_EQ(built->first.indices, (std::vector<int64_t>{7, 2}));
}

TEST(CscBuilderTest, EmptyEdgeListGivesZeroIndptr) {
  VectorEdgeSource source({}, 3);
  std::string dir = MakeTempDir();
  auto built = Build(source, CscBuildOptions{}, dir);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(built->first.indptr, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_TRUE(built->first.indices.empty());
}

TEST(CscBuilderTest, TinyBudgetExternalBuildMatchesInMemoryBuild) {
  const uint64_t seed = 20240521;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t num_nodes = 40000;
  std::vector<Edge> edges = RandomEdges(num_nodes, 1000000, seed);
  std::string dir = MakeTempDir();

  CscBuildOptions in_memory;
  in_memory.spill_dir = dir;
  VectorEdgeSource source(edges, num_nodes);
  auto one = Build(source, in_memory, dir);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->second.num_partitions, 1);
  EXPECT_TRUE(one->first == BruteForce(edges, num_nodes, false, false, false));

  CscBuildOptions tiny = in_memory;
  tiny.memory_budget_bytes = 1 << 20;  // table 320 KiB + 256 KiB chunk: ~450 KiB of edges
  auto many = Build(source, tiny, dir);
  ASSERT_TRUE(many.ok()) << many.status().ToString();
  EXPECT_GE(many->second.num_partitions, 8);
  EXPECT_GT(many->second.spill_bytes_written, 0);
  EXPECT_LE(many->second.largest_partition_edges * 4, tiny.memory_budget_bytes);
  EXPECT_TRUE(many->first == one->first);
  EXPECT_TRUE(DirIsEmptyOfSpill(dir));
}

TEST(CscBuilderTest, OptionsMatchBruteForceInBothModes) {
  const uint64_t seed = 99;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t num_nodes = 3001;
  std::vector<Edge> edges = RandomEdges(num_nodes, 60000, seed);
  for (int i = 0; i < 2000; ++i) edges.push_back(edges[static_cast<size_t>(i) * 7]);  // duplicates
  std::string dir = MakeTempDir();
  for (bool undirected : {false, true}) {
    for (bool dedup : {false, true}) {
      for (bool drop : {false, true}) {
        for (int64_t budget : {int64_t{64} << 20, int64_t{256} << 10}) {
          SCOPED_TRACE(::testing::Message() << "undirected " << undirected << " dedup " << dedup
                                          << " drop " << drop << " budget " << budget);
          CscBuildOptions options = OptionsFor(undirected, budget, dir);
          options.dedup = dedup;
          options.drop_self_loops = drop;
          VectorEdgeSource source(edges, num_nodes);
          auto built = Build(source, options, dir);
          ASSERT_TRUE(built.ok()) << built.status().ToString();
          if (budget < (1 << 20)) {
            EXPECT_GT(built->second.num_partitions, 1);
          }
          EXPECT_TRUE(built->first == BruteForce(edges, num_nodes, undirected, dedup, drop));
          EXPECT_EQ(built->second.num_edges, static_cast<int64_t>(built->first.indices.size()));
        }
      }
    }
  }
}

TEST(CscBuilderTest, Uint32AndInt64PathsAgree) {
  std::vector<Edge> edges = RandomEdges(5000, 200000, 7);
  std::string dir = MakeTempDir();
  CscBuildOptions options;
  options.memory_budget_bytes = 600 << 10;  // several partitions for both widths
  options.spill_dir = dir;
  options.index_dtype = IndexDtype::kUint32;
  VectorEdgeSource source(edges, 5000);
  auto narrow = Build(source, options, dir);
  ASSERT_TRUE(narrow.ok()) << narrow.status().ToString();
  options.index_dtype = IndexDtype::kInt64;
  auto wide = Build(source, options, dir);
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ(wide->second.index_dtype, IndexDtype::kInt64);
  EXPECT_GT(wide->second.num_partitions, narrow->second.num_partitions);
  EXPECT_TRUE(narrow->first == wide->first);
}

TEST(CscBuilderTest, IdOutOfRangeNamesTheEdge) {
  VectorEdgeSource source({{0, 1}, {1, 2}, {4, 0}}, 4);
  std::string dir = MakeTempDir();
  auto built = Build(source, CscBuildOptions{}, dir);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(built.status().message().find("test edges: edge #2 (4 -> 0)"), std::string::npos)
      << built.status().message();
}

TEST(CscBuilderTest, BudgetBelowDegreeTableIsRefused) {
  VectorEdgeSource source({{0, 1}}, 1000000);
  std::string dir = MakeTempDir();
  CscBuildOptions options;
  options.memory_budget_bytes = 1 << 20;
  auto built = Build(source, options, dir);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(built.status().message().find("--memory-budget"), std::string::npos);
}

TEST(CscBuilderTest, Uint32RefusedForTooManyNodes) {
  VectorEdgeSource source({{0, 1}}, (int64_t{1} << 32) + 6);
  std::string dir = MakeTempDir();
  CscBuildOptions options;
  options.index_dtype = IndexDtype::kUint32;
  options.memory_budget_bytes = int64_t{1} << 40;  // never allocated: fails before
  auto built = Build(source, options, dir);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("uint32"), std::string::npos);
}

// The build runs on every thread of the caller's arena; the files must not depend on
// how many (1 thread against several, in memory and with spill partitions), and both
// must match the brute-force oracle.
TEST(CscBuilderTest, OneThreadAndManyThreadsWriteIdenticalFiles) {
  const int64_t num_nodes = 20000;
  std::vector<Edge> edges = RandomEdges(num_nodes, 300000, 31);
  std::string dir = MakeTempDir();
  for (bool undirected : {false, true}) {
    for (int64_t budget : {int64_t{64} << 20, int64_t{1} << 20}) {
      SCOPED_TRACE(::testing::Message() << "undirected " << undirected << " budget " << budget);
      CscBuildOptions options = OptionsFor(undirected, budget, dir);
      options.dedup = true;
      options.drop_self_loops = true;
      std::string bytes[2][2];
      CscBuildStats stats[2];
      int run = 0;
      for (int threads : {1, 4}) {
        tbb::task_arena arena(threads);
        arena.execute([&] {
          VectorEdgeSource source(edges, num_nodes);
          auto built = Build(source, options, dir);
          ASSERT_TRUE(built.ok()) << built.status().ToString();
          EXPECT_TRUE(built->first == BruteForce(edges, num_nodes, undirected, true, true));
          stats[run] = built->second;
          bytes[run][0] = ReadWholeFile(dir + "/indptr.bin").value();
          bytes[run][1] = ReadWholeFile(dir + "/indices.bin").value();
        });
        ++run;
      }
      EXPECT_EQ(bytes[0][0], bytes[1][0]);
      EXPECT_EQ(bytes[0][1], bytes[1][1]);
      EXPECT_EQ(stats[0].num_partitions, stats[1].num_partitions);
      EXPECT_EQ(stats[0].duplicates_dropped, stats[1].duplicates_dropped);
      EXPECT_EQ(stats[0].self_loops_dropped, stats[1].self_loops_dropped);
      if (budget < (2 << 20)) {
        EXPECT_GT(stats[0].num_partitions, 1);
      }
    }
  }
  EXPECT_TRUE(DirIsEmptyOfSpill(dir));
}

// Builds `edges` on `threads` threads (a task arena of that size) into `dir`, expects the
// oracle's CSC and returns the build's stats.
CscBuildStats BuildExpectingOracle(const std::vector<Edge>& edges, int64_t num_nodes, const CscBuildOptions& options,
                                   int threads, const std::string& dir, const Csc& oracle) {
  CscBuildStats stats;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    VectorEdgeSource source(edges, num_nodes);
    auto built = Build(source, options, dir);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    EXPECT_TRUE(built->first == oracle);
    stats = built->second;
  });
  return stats;
}

// The sweep of the oracle tests: for each direction (with its oracle, BruteForce with
// `dedup`), budget and thread count, body(options, threads, oracle) under a trace naming
// them, where options = OptionsFor(direction, budget, dir) with `dedup`.
void ForEachBuild(const std::vector<Edge>& edges, int64_t num_nodes, bool dedup,
                  std::initializer_list<int64_t> budgets, std::initializer_list<int> thread_counts,
                  const std::string& dir,
                  const std::function<void(CscBuildOptions options, int threads, const Csc& oracle)>& body) {
  for (bool undirected : {false, true}) {
    const Csc oracle = BruteForce(edges, num_nodes, undirected, dedup, false);
    for (int64_t budget : budgets) {
      for (int threads : thread_counts) {
        SCOPED_TRACE(::testing::Message() << "undirected " << undirected << " budget " << budget << " threads "
                                          << threads);
        CscBuildOptions options = OptionsFor(undirected, budget, dir);
        options.dedup = dedup;
        body(options, threads, oracle);
      }
    }
  }
}

// Sorted lists are appended in segments whose writes overlap the next segment's sort;
// with dedup, compaction moves lists left across segment boundaries while an earlier
// segment is still being written. Tiny segments (and a segment size of 1) cross many
// boundaries, in one partition and spilled, on the one-owner path (1 thread; the
// prefetching direct placement when nothing is expanded) and the routed one (3 threads):
// always the oracle's CSC.
TEST(CscBuilderTest, SegmentedWritesMatchOracle) {
  const int64_t num_nodes = 2000;
  std::vector<Edge> edges = RandomEdges(num_nodes, 300000, 53);
  std::string dir = MakeTempDir();
  for (bool dedup : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "dedup " << dedup);
    ForEachBuild(edges, num_nodes, dedup, {int64_t{64} << 20, int64_t{1} << 20}, {1, 3}, dir,
                 [&](CscBuildOptions options, int threads, const Csc& oracle) {
                   for (int64_t segment : {int64_t{1}, int64_t{5000}}) {
                     SCOPED_TRACE(::testing::Message() << "segment " << segment);
                     options.write_segment_edges = segment;
                     const CscBuildStats stats =
                         BuildExpectingOracle(edges, num_nodes, options, threads, dir, oracle);
                     if (options.memory_budget_bytes < (2 << 20)) {
                       EXPECT_GT(stats.num_partitions, 1);
                     }
                   }
                 });
  }
  EXPECT_TRUE(DirIsEmptyOfSpill(dir));
}

// Spilled builds at budgets giving a few partitions, with the spill on the real disk
// (O_DIRECT spill files with carried tails and padded, truncated ends) and on the test
// temp dir: the oracle's CSC for every budget, thread count and direction.
TEST(CscBuilderTest, SpilledPartitionsMatchOracleOnDiskAndTemp) {
  const int64_t num_nodes = 30000;
  std::vector<Edge> edges = RandomEdges(num_nodes, 200000, 47);
  std::vector<std::string> dirs = {MakeTempDir()};
#ifdef SEER_IO_TEST_DIR
  dirs.push_back(std::string(SEER_IO_TEST_DIR) + "/csc_spill_test");
  ::mkdir(dirs.back().c_str(), 0700);
#endif
  bool saw_direct = false, saw_several = false;
  for (const std::string& dir : dirs) {
    SCOPED_TRACE(dir);
    ForEachBuild(edges, num_nodes, /*dedup=*/false, {int64_t{3} << 19, int64_t{3} << 20}, {1, 3}, dir,
                 [&](const CscBuildOptions& options, int threads, const Csc& oracle) {
                   const CscBuildStats stats = BuildExpectingOracle(edges, num_nodes, options, threads, dir, oracle);
                   saw_several |= stats.num_partitions > 1;
                   saw_direct |= stats.spill_direct;
#ifdef SEER_IO_TEST_DIR
                   // The build tree's disk takes O_DIRECT: indices.bin's blocks go that way.
                   if (dir != dirs.front()) {
                     EXPECT_TRUE(stats.indices_direct);
                   }
#endif
                 });
    EXPECT_TRUE(DirIsEmptyOfSpill(dir));
  }
  EXPECT_TRUE(saw_several);
  if (!saw_direct) std::printf("note: no O_DIRECT spill here (file system refused it)\n");
}

// A source that says re-reading it is costly (like text): pass 1's edges are staged and
// the source is read once; the CSC is the oracle's in memory and spilled, 1 and 3 threads.
TEST(CscBuilderTest, CostlySourceIsReadOnceAndStagedEdgesGiveTheOracle) {
  class CostlySource : public VectorEdgeSource {
   public:
    using VectorEdgeSource::VectorEdgeSource;
    bool CostlyToReread() const override { return true; }
    void ReleaseBuffers() override { ++releases_; }
    int releases_ = 0;
  };
  const int64_t num_nodes = 20000;
  std::vector<Edge> edges = RandomEdges(num_nodes, 260000, 53);
  std::string dir = MakeTempDir();
  for (bool known : {true, false}) {
    SCOPED_TRACE(::testing::Message() << "known " << known);
    ForEachBuild(edges, num_nodes, /*dedup=*/true, {int64_t{64} << 20, int64_t{1} << 20}, {1, 3}, dir,
                 [&](const CscBuildOptions& options, int threads, const Csc& oracle) {
                   tbb::task_arena arena(threads);
                   arena.execute([&] {
                     CostlySource source(edges, known ? num_nodes : -1);
                     auto built = Build(source, options, dir);
                     ASSERT_TRUE(built.ok()) << built.status().ToString();
                     Csc got = built->first;
                     // Unknown node count: 1 + the largest id (the oracle has every node).
                     EXPECT_EQ(got.indices, oracle.indices);
                     EXPECT_EQ(got.indptr, std::vector<int64_t>(oracle.indptr.begin(),
                                                                oracle.indptr.begin() + got.indptr.size()));
                     EXPECT_TRUE(built->second.staged_edges);
                     EXPECT_EQ(source.rewinds_, 1);
                     EXPECT_EQ(source.releases_, 1);
                     if (options.memory_budget_bytes < (4 << 20)) {
                       EXPECT_GT(built->second.num_partitions, 1);
                     }
                   });
                 });
  }
  EXPECT_TRUE(DirIsEmptyOfSpill(dir));
}

}  // namespace
}  // namespace seer
