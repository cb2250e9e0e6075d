// Streaming trace files: TraceFileWriter's bytes against the in-RAM serializer
// (SerializeTrace, the oracle), TraceRecordReader against the values written, the index,
// RAII removal and corruption reports.
#include "inspector/trace_stream.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "inspector/trace_format.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;

// A valid random superbatch; batch `big` (if >= 0) gets `big_nodes` node ids so its
// record spans several write buffers.
SuperbatchTrace MakeTrace(uint64_t seed, int num_batches, int big = -1, int64_t big_nodes = 0) {
  std::mt19937_64 rng(seed);
  SuperbatchTrace t;
  t.epoch = 2;
  t.superbatch_index = 5;
  for (int b = 0; b < num_batches; ++b) {
    BatchTrace bt;
    bt.epoch = 2;
    bt.batch_index = 500 + b;
    bt.num_seeds = b == 1 ? 0 : 1 + static_cast<int64_t>(rng() % 9);
    const int64_t total = b == big ? big_nodes : bt.num_seeds + static_cast<int64_t>(rng() % 40);
    for (int64_t i = 0; i < std::max(total, bt.num_seeds); ++i) {
      bt.node_ids.push_back(static_cast<int64_t>(rng() % (int64_t{1} << 40)));
    }
    const int64_t n = static_cast<int64_t>(bt.node_ids.size());
    LayerBlock l;  // one layer: every node of the batch feeds the seeds
    l.num_dst = bt.num_seeds;
    l.num_src = n;
    l.row_ptr.push_back(0);
    for (int64_t d = 0; d < l.num_dst; ++d) {
      const int64_t deg = static_cast<int64_t>(rng() % 5);
      for (int64_t j = 0; j < deg; ++j) l.col_idx.push_back(static_cast<int32_t>(rng() % n));
      l.row_ptr.push_back(static_cast<int64_t>(l.col_idx.size()));
    }
    bt.blocks.push_back(std::move(l));
    t.batches.push_back(std::move(bt));
  }
  return t;
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TraceFile WriteStreamed(const SuperbatchTrace& t, const std::string& path, bool direct) {
  auto writer = TraceFileWriter::Create(path, t.epoch, t.superbatch_index, direct);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  for (const BatchTrace& b : t.batches) EXPECT_TRUE(writer->Append(b).ok());
  auto file = writer->Finish();
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  return std::move(file).value();
}

TEST(TraceStreamTest, StreamedFileIsByteEqualToSerializeTrace) {
  const std::string dir = MakeTempDir("trace_stream");
  // 700K ids = 5.6 MB: the big record crosses the 4 MiB write buffer.
  for (const auto& [t, direct] : {std::pair{MakeTrace(1, 7), true}, std::pair{MakeTrace(2, 7), false},
                                  std::pair{MakeTrace(3, 4, 2, 700000), true},
                                  std::pair{MakeTrace(4, 4, 0, 700000), false}, std::pair{MakeTrace(5, 0), true}}) {
    const std::string path = dir + "/t.sbt";
    TraceFile file = WriteStreamed(t, path, direct);
    EXPECT_EQ(FileBytes(path), SerializeTrace(t)) << "direct=" << direct;
    ASSERT_EQ(file.num_batches(), static_cast<int64_t>(t.batches.size()));
    EXPECT_EQ(file.file_bytes(), SerializedTraceBytes(t));
    // The index read back from the file equals the writer's.
    auto opened = TraceFile::Open(path);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_FALSE(opened->owned());
    for (int64_t i = 0; i <= file.num_batches(); ++i) EXPECT_EQ(opened->record_offset(i), file.record_offset(i));
    // Records one at a time, with a read-ahead smaller than the big record.
    auto reader = TraceRecordReader::Open(file, 64 << 10);
    ASSERT_TRUE(reader.ok());
    for (const BatchTrace& expected : t.batches) {
      BatchTrace got;
      ASSERT_TRUE(reader->Next(&got).ok());
      EXPECT_EQ(got, expected);
    }
    EXPECT_TRUE(reader->done());
    reader->Rewind();
    for (const BatchTrace& expected : t.batches) {
      int64_t n = -1;
      auto ids = reader->NextIds(&n);
      ASSERT_TRUE(ids.ok());
      ASSERT_EQ(n, static_cast<int64_t>(expected.node_ids.size()));
      EXPECT_TRUE(std::equal(expected.node_ids.begin(), expected.node_ids.end(), *ids));
    }
    // And the whole file through the old parser.
    auto parsed = ReadTraceFile(path);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->batches, t.batches);
  }
}

TEST(TraceStreamTest, OwnedFilesAreRemovedOnEveryPath) {
  const std::string dir = MakeTempDir("trace_stream_raii");
  const std::string path = dir + "/a.sbt";
  {
    TraceFile file = WriteStreamed(MakeTrace(1, 3), path, true);
    EXPECT_TRUE(std::filesystem::exists(path));
    TraceFile moved = std::move(file);
    EXPECT_TRUE(std::filesystem::exists(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  {
    auto writer = TraceFileWriter::Create(path, 0, 0);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Append(MakeTrace(1, 1).batches[0]).ok());
    EXPECT_TRUE(std::filesystem::exists(path));
  }  // never finished
  EXPECT_FALSE(std::filesystem::exists(path));
  {
    TraceFile file = WriteStreamed(MakeTrace(1, 3), path, true);
    file.Release();
  }
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(TraceStreamTest, CorruptRecordIsReportedWithFileAndOffset) {
  const std::string dir = MakeTempDir("trace_stream_corrupt");
  const std::string path = dir + "/c.sbt";
  const SuperbatchTrace t = MakeTrace(9, 3);
  TraceFile file = WriteStreamed(t, path, false);
  // Record 1's num_layers word (record header word 5) becomes huge.
  const int64_t at = file.record_offset(1) + 40;
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(at);
    const int64_t bad = int64_t{1} << 40;
    f.write(reinterpret_cast<const char*>(&bad), 8);
  }
  auto reader = TraceRecordReader::Open(file);
  ASSERT_TRUE(reader.ok());
  BatchTrace b;
  ASSERT_TRUE(reader->Next(&b).ok());
  const Status st = reader->Next(&b);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("byte offset " + std::to_string(file.record_offset(1))), std::string::npos)
      << st.message();
}

TEST(TraceStreamTest, InspectorReservationIsTheSumOfItsParts) {
  const int64_t trace = 3 << 20;
  const StreamingInspectorParts p = StreamingInspectorPartsFor(trace, 2);
  EXPECT_EQ(p.sampling, (TraceChunkBatches(2) + kSamplerScratchPerTrace * 2) * trace);
  EXPECT_EQ(p.writer, kTraceIoBufferBytes);
  EXPECT_EQ(p.readers, 2 * (kTraceIoBufferBytes + trace));
  EXPECT_EQ(p.gather, kGatherBatchesInFlight * trace);
  EXPECT_EQ(p.changesets, kChangesetStoresInFlight * kChangesetRamBytes);
  EXPECT_EQ(StreamingInspectorBytes(trace, 2), p.sampling + p.writer + p.readers + p.gather + p.changesets);
  EXPECT_EQ(TraceChunkBatches(1), 4);
  EXPECT_EQ(TraceChunkBatches(8), 16);
}

}  // namespace
}  // namespace seer
