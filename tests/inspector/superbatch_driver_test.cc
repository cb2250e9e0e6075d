// SuperbatchSampler (superbatch_driver.h): cutting epochs into batches, identical traces
// across thread counts, with the neighbor cache and through a trace file, option checks,
// and read errors that surface with path and offset and leave the sampler usable.
#include "inspector/superbatch_driver.h"

#include <errno.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "inspector/trace_format.h"
#include "inspector/trace_stream.h"
#include "storage/base/file_io.h"
#include "opened_graph.h"

namespace seer {
namespace {

bool SameTraces(const std::vector<SuperbatchTrace>& a, const std::vector<SuperbatchTrace>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].epoch != b[i].epoch || a[i].superbatch_index != b[i].superbatch_index ||
        !(a[i].batches == b[i].batches) || SerializeTrace(a[i]) != SerializeTrace(b[i])) {
      return false;
    }
  }
  return true;
}

std::vector<SuperbatchTrace> SampleAll(const TopologyView& view, const std::vector<int64_t>& seeds,
                                       int threads, int64_t epochs, SuperbatchStats* last = nullptr) {
  SuperbatchOptions options;
  options.batch_size = 37;
  options.superbatch_size = 4;
  options.num_threads = threads;
  options.sampler = SamplerOptions{{6, 4, 3}, 99};
  auto sampler = SuperbatchSampler::Create(view, seeds, options);
  EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
  std::vector<SuperbatchTrace> out;
  for (int64_t e = 0; e < epochs; ++e) {
    for (int64_t k = 0; k < sampler->num_superbatches(); ++k) {
      auto trace = sampler->Sample(e, k, last);
      EXPECT_TRUE(trace.ok()) << trace.status().ToString();
      out.push_back(std::move(*trace));
    }
  }
  return out;
}

TEST(SuperbatchSamplerTest, CutsEveryEpochIntoBatchesWithoutDroppingAny) {
  const testing::RandomTrainGraph graph = testing::WriteRandomTrainGraph("cut", 2000, 5, /*step=*/3);  // 667 seeds
  const std::vector<int64_t>& seeds = graph.seeds;
  auto g = testing::OpenGraph(graph.dir);
  SuperbatchOptions options;
  options.batch_size = 100;
  options.superbatch_size = 3;
  auto sampler = SuperbatchSampler::Create(g.topology->view(), seeds, options);
  ASSERT_TRUE(sampler.ok());
  EXPECT_EQ(sampler->num_batches(), 7);
  EXPECT_EQ(sampler->num_superbatches(), 3);
  EXPECT_EQ(sampler->num_batches_in(2), 1);
  std::vector<int64_t> first_epoch;
  for (int64_t e = 0; e < 2; ++e) {
    std::vector<int64_t> seen;
    int64_t batch = 0;
    for (int64_t k = 0; k < 3; ++k) {
      SuperbatchStats stats;
      auto trace = sampler->Sample(e, k, &stats);
      ASSERT_TRUE(trace.ok());
      EXPECT_EQ(trace->superbatch_index, k);
      EXPECT_EQ(static_cast<int64_t>(trace->batches.size()), sampler->num_batches_in(k));
      EXPECT_EQ(stats.sample.batches, sampler->num_batches_in(k));
      std::set<int64_t> unique;
      for (const BatchTrace& b : trace->batches) {
        EXPECT_EQ(b.batch_index, batch++);
        EXPECT_EQ(b.num_seeds, b.batch_index == 6 ? 67 : 100);
        seen.insert(seen.end(), b.node_ids.begin(), b.node_ids.begin() + b.num_seeds);
        unique.insert(b.node_ids.begin(), b.node_ids.end());
      }
      EXPECT_EQ(stats.unique_nodes, static_cast<int64_t>(unique.size()));
    }
    EXPECT_EQ(seen, sampler->EpochOrder(e));
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, seeds);  // every seed exactly once
    if (e == 0) first_epoch = seen;
    else EXPECT_NE(seen, first_epoch);  // reshuffled
  }
}

TEST(SuperbatchSamplerTest, TracesIdenticalAcrossThreadsNeighborCacheAndFiles) {
  const uint64_t graph_seed = 77;
  std::printf("graph seed %llu\n", static_cast<unsigned long long>(graph_seed));
  const testing::RandomTrainGraph graph =
      testing::WriteRandomTrainGraph("determinism", 2500, graph_seed, /*step=*/4, /*first=*/1);
  const auto& lists = graph.lists;
  const std::vector<int64_t>& seeds = graph.seeds;
  const std::string& dir = graph.dir;
  int64_t num_edges = 0;
  for (const auto& l : lists) num_edges += static_cast<int64_t>(l.size());
  const int64_t table = 8 * 2500;

  auto plain = testing::OpenGraph(dir);
  const auto reference = SampleAll(plain.topology->view(), seeds, 1, 2);
  ASSERT_EQ(reference.size(), 2u * 5);
  for (int threads : {2, 8}) {
    EXPECT_TRUE(SameTraces(SampleAll(plain.topology->view(), seeds, threads, 2), reference)) << threads;
  }
  for (int64_t budget : {table + num_edges, table + num_edges * 4}) {  // partial, full
    auto cached = testing::OpenGraph(dir, budget);
    ASSERT_TRUE(cached.topology->ncache().enabled());
    SuperbatchStats stats;
    const auto traces = SampleAll(cached.topology->view(), seeds, 8, 2, &stats);
    EXPECT_TRUE(SameTraces(traces, reference)) << budget;
    EXPECT_GT(stats.sample.ncache_hits, 0);
    if (budget == table + num_edges * 4) {
      EXPECT_EQ(stats.sample.ncache_hits, stats.sample.neighbor_lookups);
      EXPECT_EQ(stats.sample.reads.device_reads, 0);  // cache hits need no I/O
    } else {
      EXPECT_LT(stats.sample.ncache_hits, stats.sample.neighbor_lookups);
    }
  }
  // Through a file and back: streamed (O_DIRECT and buffered) and read record by record.
  const std::string files = testing::MakeTempDir("files");
  for (bool direct : {true, false}) {
    for (const SuperbatchTrace& t : reference) {
      auto writer = TraceFileWriter::Create(files + "/t.sbt", t.epoch, t.superbatch_index, direct);
      ASSERT_TRUE(writer.ok()) << writer.status().ToString();
      for (const BatchTrace& b : t.batches) ASSERT_TRUE(writer->Append(b).ok());
      auto file = writer->Finish();
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      auto reader = TraceRecordReader::Open(*file);
      ASSERT_TRUE(reader.ok()) << reader.status().ToString();
      SuperbatchTrace back;
      back.epoch = file->epoch();
      back.superbatch_index = file->superbatch_index();
      back.batches.resize(static_cast<size_t>(file->num_batches()));
      for (BatchTrace& b : back.batches) ASSERT_TRUE(reader->Next(&b).ok());
      EXPECT_EQ(SerializeTrace(back), SerializeTrace(t)) << "direct=" << direct;
    }
  }
}

// The streamed trace file against an independent oracle: every batch sampled on its
// own with NeighborSampler::SampleBatch over EpochOrder, serialized with SerializeTrace.
TEST(SuperbatchSamplerTest, StreamedFileIsByteEqualToTheInRamTrace) {
  const testing::RandomTrainGraph graph = testing::WriteRandomTrainGraph("streamed", 2500, 31, /*step=*/3);
  const std::vector<int64_t>& seeds = graph.seeds;
  auto g = testing::OpenGraph(graph.dir);
  const std::string out = testing::MakeTempDir("streamed_out");
  for (int threads : {1, 3}) {
    SuperbatchOptions options;
    options.batch_size = 29;
    options.superbatch_size = 11;  // more batches than TraceChunkBatches: tokens recycle
    options.num_threads = threads;
    options.sampler = SamplerOptions{{5, 3}, 7};
    auto sampler = SuperbatchSampler::Create(g.topology->view(), seeds, options);
    ASSERT_TRUE(sampler.ok());
    NeighborSampler oracle(g.topology->view(), options.sampler);
    for (int64_t e = 0; e < 2; ++e) {
      const std::vector<int64_t> order = sampler->EpochOrder(e);
      for (int64_t k = 0; k < sampler->num_superbatches(); ++k) {
        SuperbatchTrace expected;
        expected.epoch = e;
        expected.superbatch_index = k;
        SampleStats expected_stats;
        for (int64_t i = 0; i < sampler->num_batches_in(k); ++i) {
          const int64_t b = k * options.superbatch_size + i;
          const int64_t begin = b * options.batch_size;
          const int64_t end = std::min<int64_t>(begin + options.batch_size, static_cast<int64_t>(order.size()));
          BatchTrace bt;
          ASSERT_TRUE(oracle.SampleBatch(order.data() + begin, end - begin, e, b, &bt, &expected_stats).ok());
          expected.batches.push_back(std::move(bt));
        }
        SuperbatchStats stats;
        auto file = sampler->SampleToFile(e, k, out + "/sb.sbt", &stats);
        ASSERT_TRUE(file.ok()) << file.status().ToString();
        auto bytes = ReadWholeFile(file->path());
        ASSERT_TRUE(bytes.ok());
        EXPECT_EQ(*bytes, SerializeTrace(expected)) << "threads " << threads << " e " << e << " k " << k;
        EXPECT_EQ(stats.sample.sampled_nodes, expected_stats.sampled_nodes);
        EXPECT_EQ(stats.sample.edges, expected_stats.edges);
        std::set<int64_t> unique;
        for (const BatchTrace& b : expected.batches) unique.insert(b.node_ids.begin(), b.node_ids.end());
        EXPECT_EQ(stats.unique_nodes, static_cast<int64_t>(unique.size()));
        auto in_ram = sampler->Sample(e, k);
        ASSERT_TRUE(in_ram.ok());
        EXPECT_EQ(SerializeTrace(*in_ram), *bytes);
      }
    }
  }
}

TEST(SuperbatchSamplerTest, RejectsBadSeedsAndOptions) {
  auto g = testing::WriteAndOpenGraph("bad", testing::Star(3), {0});
  EXPECT_EQ(SuperbatchSampler::Create(g.topology->view(), {0, 4}, {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SuperbatchSampler::Create(g.topology->view(), {1, 1}, {}).status().code(),
            StatusCode::kInvalidArgument);
  SuperbatchOptions zero_batch;
  zero_batch.batch_size = 0;
  EXPECT_FALSE(SuperbatchSampler::Create(g.topology->view(), {0}, zero_batch).ok());
  SuperbatchOptions bad_fanout;
  bad_fanout.sampler.fanouts = {10, 0};
  EXPECT_FALSE(SuperbatchSampler::Create(g.topology->view(), {0}, bad_fanout).ok());
}

// ---- Faults ---------------------------------------------------------------------------

class FailNthRead : public FaultInjector {
 public:
  explicit FailNthRead(int64_t n) : n_(n) {}
  int FilterResult(int64_t offset_bytes, int64_t, int result) override {
    if (count_.fetch_add(1) == n_) {
      failed_offset_ = offset_bytes;
      return -EIO;
    }
    return result;
  }
  std::atomic<int64_t> failed_offset_{-1};

 private:
  const int64_t n_;
  std::atomic<int64_t> count_{0};
};

TEST(SuperbatchSamplerTest, ReadErrorSurfacesWithPathAndOffsetAndStopsCleanly) {
  const testing::RandomTrainGraph graph = testing::WriteRandomTrainGraph("fault", 3000, 13, /*step=*/2);
  const std::vector<int64_t>& seeds = graph.seeds;
  auto faults = std::make_shared<FailNthRead>(40);
  auto g = testing::OpenGraph(graph.dir, 0, faults);
  SuperbatchOptions options;
  options.batch_size = 50;
  options.superbatch_size = 8;
  options.num_threads = 4;
  auto sampler = SuperbatchSampler::Create(g.topology->view(), seeds, options);
  ASSERT_TRUE(sampler.ok());
  auto trace = sampler->Sample(0, 0);
  ASSERT_FALSE(trace.ok());  // no partial trace handed out
  EXPECT_EQ(trace.status().code(), StatusCode::kIoError);
  EXPECT_EQ(trace.status().sys_errno(), EIO);
  const std::string msg = trace.status().message();
  EXPECT_NE(msg.find(graph.dir + "/indices.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(faults->failed_offset_.load())), std::string::npos) << msg;
  // The sampler is still usable: the next superbatch (no more faults) succeeds.
  auto next = sampler->Sample(0, 1);
  EXPECT_TRUE(next.ok()) << next.status().ToString();
}

}  // namespace
}  // namespace seer
