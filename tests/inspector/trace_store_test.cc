// Trace files, the trace store (RAM vs spill) and the trace directory.
#include "inspector/trace_store.h"

#include <cstring>
#include <fstream>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "storage/base/json_file.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;

// A structurally valid random superbatch (odd sizes, an empty batch, a 0-edge layer).
SuperbatchTrace RandomTrace(uint64_t seed, int64_t epoch, int64_t k, int num_batches) {
  std::mt19937_64 rng(seed);
  SuperbatchTrace t;
  t.epoch = epoch;
  t.superbatch_index = k;
  for (int b = 0; b < num_batches; ++b) {
    BatchTrace bt;
    bt.epoch = epoch;
    bt.batch_index = k * 100 + b;
    bt.num_seeds = b == 1 ? 0 : 1 + static_cast<int64_t>(rng() % 7);
    int64_t n = bt.num_seeds;
    for (int64_t i = 0; i < n; ++i) bt.node_ids.push_back(static_cast<int64_t>(rng() % (1LL << 40)));
    std::vector<LayerBlock> hops;
    for (int layer = 0; layer < 3; ++layer) {
      LayerBlock l;
      l.num_dst = n;
      const int64_t extra = n == 0 ? 0 : static_cast<int64_t>(rng() % 5);
      for (int64_t i = 0; i < extra; ++i) bt.node_ids.push_back(static_cast<int64_t>(rng() % 1000));
      l.num_src = n + extra;
      l.row_ptr.push_back(0);
      for (int64_t d = 0; d < l.num_dst; ++d) {
        const int64_t deg = layer == 1 ? 0 : static_cast<int64_t>(rng() % 4);
        for (int64_t j = 0; j < deg; ++j) l.col_idx.push_back(static_cast<int32_t>(rng() % l.num_src));
        l.row_ptr.push_back(static_cast<int64_t>(l.col_idx.size()));
      }
      n = l.num_src;
      hops.push_back(std::move(l));
    }
    bt.blocks.assign(hops.rbegin(), hops.rend());  // input layer first
    t.batches.push_back(std::move(bt));
  }
  return t;
}

bool Same(const SuperbatchTrace& a, const SuperbatchTrace& b) {
  return a.epoch == b.epoch && a.superbatch_index == b.superbatch_index && a.batches == b.batches;
}

TEST(TraceFileTest, RoundTripsThroughBytes) {
  for (uint64_t seed : {1, 2, 3}) {
    const SuperbatchTrace t = RandomTrace(seed, 3, 7, 5);
    const std::string bytes = SerializeTrace(t);
    EXPECT_EQ(static_cast<int64_t>(bytes.size()), SerializedTraceBytes(t));
    EXPECT_EQ(bytes.size() % 8, 0u);
    auto back = ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()), "mem");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(Same(*back, t)) << "seed " << seed;
  }
  SuperbatchTrace empty;
  const std::string bytes = SerializeTrace(empty);
  EXPECT_EQ(bytes.size(), 64u);
  ASSERT_TRUE(ParseTrace(bytes.data(), 64, "mem").ok());
}

TEST(TraceFileTest, LayoutIsReadableWithoutSeer) {
  // Walks the raw little-endian words exactly as inspector/README.md tells a numpy user.
  const SuperbatchTrace t = RandomTrace(9, 1, 2, 4);
  const std::string dir = MakeTempDir("layout");
  const std::string path = dir + "/x.sbt";
  ASSERT_TRUE(WriteTraceFile(path, t).ok());
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(raw.size() % 8, 0u);
  std::vector<int64_t> w(raw.size() / 8);
  std::memcpy(w.data(), raw.data(), raw.size());
  EXPECT_EQ(std::string(raw.data(), 8), "SEERSBT1");
  EXPECT_EQ(w[1], 1);
  EXPECT_EQ(w[2], 1);
  EXPECT_EQ(w[3], 2);
  ASSERT_EQ(w[4], 4);
  EXPECT_EQ(w[5], static_cast<int64_t>(raw.size()));
  size_t pos = 8;
  for (int64_t b = 0; b < w[4]; ++b) {
    const int64_t record_words = w[pos] / 8, num_seeds = w[pos + 3], num_nodes = w[pos + 4],
                  layers = w[pos + 5];
    EXPECT_EQ(w[pos + 2], t.batches[b].batch_index);
    EXPECT_EQ(num_seeds, t.batches[b].num_seeds);
    ASSERT_EQ(layers, 3);
    const std::vector<int64_t> ids(w.begin() + pos + 6 + 3 * layers,
                                   w.begin() + pos + 6 + 3 * layers + num_nodes);
    EXPECT_EQ(ids, t.batches[b].node_ids);
    // The first layer's row_ptr follows the node ids.
    const int64_t num_dst0 = w[pos + 6];
    EXPECT_EQ(num_dst0, t.batches[b].blocks[0].num_dst);
    const size_t rp = pos + 6 + 3 * layers + num_nodes;
    EXPECT_EQ(std::vector<int64_t>(w.begin() + rp, w.begin() + rp + num_dst0 + 1),
              t.batches[b].blocks[0].row_ptr);
    pos += record_words;
  }
  EXPECT_EQ(pos, w.size());
}

TEST(TraceFileTest, CorruptFilesAreRejectedWithPathAndOffset) {
  const SuperbatchTrace t = RandomTrace(4, 0, 0, 3);
  std::string bytes = SerializeTrace(t);
  auto truncated = ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()) - 8, "/x/t.sbt");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(truncated.status().message().find("/x/t.sbt"), std::string::npos);
  EXPECT_NE(truncated.status().message().find("offset"), std::string::npos);
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_FALSE(ParseTrace(bad_magic.data(), static_cast<int64_t>(bad_magic.size()), "m").ok());
  // A col_idx entry pointing past num_src.
  std::string bad_col = bytes;
  int32_t huge = 1 << 30;
  std::memcpy(&bad_col[bad_col.size() - 8], &huge, 4);
  auto r = ParseTrace(bad_col.data(), static_cast<int64_t>(bad_col.size()), "m");
  if (t.batches.back().blocks.back().col_idx.empty()) GTEST_SKIP() << "no edges in last layer";
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(ReadTraceFile("/nonexistent/seer.sbt").status().code(), StatusCode::kNotFound);
}

int CountFiles(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

TEST(TraceStoreTest, KeepsWhatFitsInRamAndSpillsTheRestInOrder) {
  std::vector<SuperbatchTrace> traces;
  for (int k = 0; k < 6; ++k) traces.push_back(RandomTrace(100 + k, 0, k, 3 + k));
  const int64_t budget = SerializedTraceBytes(traces[0]) + SerializedTraceBytes(traces[1]);
  const std::string runtime = MakeTempDir("store") + "/runtime";  // created on first spill
  {
    TraceStore store(budget, runtime);
    for (const auto& t : traces) ASSERT_TRUE(store.Push(t).ok());
    const TraceStoreStats s = store.stats();
    EXPECT_EQ(s.pushed, 6);
    EXPECT_EQ(s.spilled, 4);
    EXPECT_EQ(s.ram_bytes, budget);
    EXPECT_EQ(CountFiles(runtime), 4);
    for (int k = 0; k < 4; ++k) {
      auto t = store.Pop();
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      EXPECT_TRUE(Same(*t, traces[k])) << k;
    }
    EXPECT_EQ(CountFiles(runtime), 2);  // consumed spill files are removed
    EXPECT_EQ(store.size(), 2);
  }
  EXPECT_EQ(CountFiles(runtime), 0);  // the destructor removes files never popped
}

TraceRunInfo ExampleRunInfo() {
  TraceRunInfo info;
  info.dataset_dir = "/data/g";
  info.fanouts = {10, 5};
  info.batch_size = 64;
  info.superbatch = 3;
  info.epochs = 2;
  info.seed = 18446744073709551615ULL;
  return info;
}

TEST(TraceDirectoryTest, WriterAndReaderRoundTrip) {
  const std::string dir = MakeTempDir("tracedir") + "/out";
  const TraceRunInfo info = ExampleRunInfo();
  std::vector<SuperbatchTrace> traces{RandomTrace(1, 0, 0, 3), RandomTrace(2, 0, 1, 1),
                                      RandomTrace(3, 1, 0, 3)};
  {
    auto w = TraceDirectoryWriter::Create(dir, info, false);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (const auto& t : traces) ASSERT_TRUE(w->Add(t).ok());
    ASSERT_TRUE(w->Close().ok());
  }
  auto r = TraceDirectoryReader::Open(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->dataset_dir(), "/data/g");
  EXPECT_EQ(r->run_info().seed, info.seed);
  EXPECT_EQ(r->run_info().fanouts, info.fanouts);
  ASSERT_EQ(r->num_superbatches(), 3);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r->info(i).epoch, traces[i].epoch);
    EXPECT_EQ(r->info(i).superbatch_index, traces[i].superbatch_index);
    EXPECT_EQ(r->info(i).num_batches, static_cast<int64_t>(traces[i].batches.size()));
    auto t = r->Read(i);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_TRUE(Same(*t, traces[i]));
  }
  EXPECT_EQ(TraceDirectoryWriter::Create(dir, info, false).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(TraceDirectoryWriter::Create(dir, info, true).ok());
  // --force removed the old trace.json first: not a trace directory until Close().
  EXPECT_FALSE(TraceDirectoryReader::Open(dir).ok());
}

// trace.json fields of the wrong type or missing are refused with a message naming the
// file and the field: a fan-out "10" is not read as 10, nor as 0.
TEST(TraceDirectoryTest, ManifestFieldOfWrongTypeOrMissingIsRefused) {
  const std::string dir = MakeTempDir("tracejson");
  {
    auto w = TraceDirectoryWriter::Create(dir, ExampleRunInfo(), false);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE(w->Add(RandomTrace(1, 0, 0, 2)).ok());
    ASSERT_TRUE(w->Close().ok());
  }
  const std::string path = dir + "/trace.json";
  auto saved = ReadJsonFile(path);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  ASSERT_TRUE(TraceDirectoryReader::Open(dir).ok());
  struct Edit {
    Json::json_pointer where;
    Json value;          // discarded when remove
    bool remove = false;
    std::string field;   // what the message must name
  };
  const std::vector<Edit> edits = {
      {Json::json_pointer("/fanouts/0"), "10", false, "fanouts"},
      {Json::json_pointer("/fanouts"), 10, false, "fanouts"},
      {Json::json_pointer("/batch_size"), "64", false, "batch_size"},
      {Json::json_pointer("/epochs"), 2.5, false, "epochs"},
      {Json::json_pointer("/superbatch"), nullptr, true, "superbatch"},
      {Json::json_pointer("/seed"), 7, false, "seed"},
      {Json::json_pointer("/seed"), "7x", false, "seed"},
      {Json::json_pointer("/version"), "1", false, "version"},
      {Json::json_pointer("/format"), nullptr, true, "format"},
      {Json::json_pointer("/superbatches"), Json::object(), false, "superbatches"},
      {Json::json_pointer("/superbatches/0/num_batches"), "2", false, "num_batches"},
      {Json::json_pointer("/superbatches/0/file"), nullptr, true, "file"},
  };
  for (const Edit& edit : edits) {
    SCOPED_TRACE(edit.where.to_string() + (edit.remove ? " removed" : " = " + edit.value.dump()));
    Json edited = *saved;
    if (edit.remove) {
      edited[edit.where.parent_pointer()].erase(edit.where.back());
    } else {
      edited[edit.where] = edit.value;
    }
    ASSERT_TRUE(WriteJsonFileAtomically(path, edited).ok());
    auto reader = TraceDirectoryReader::Open(dir);
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.status().code(), StatusCode::kCorrupt);
    const std::string& message = reader.status().message();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("'" + edit.field + "'"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace seer
