// FeatureGatherer's block reads (--read-block) in waves (executor/feature_gather.h): with
// wave buffers from one row's blocks up to the whole batch, the rows delivered, the
// cache's final content and the GatherStats are the same and equal features.bin read
// directly and FeatureCache::Apply replayed with rows read directly; no block is read
// twice in a batch; rows straddling wave boundaries (48 B and 52 B rows in 64 B blocks,
// 160 B rows over three blocks) arrive whole. A changeset that contradicts the cache or
// admits a row the reads do not hold leaves the cache unchanged; a non-finite block row
// is refused like a missed one.
#include <fcntl.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/feature_cache.h"
#include "cache/read_blocks.h"
#include "executor/feature_gather.h"
#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/io/direct_reader.h"
#include "storage/io/mmap_reader.h"
#include "support/random_seed.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

// Passes reads through and records the offsets of the current batch's requests.
class RecordingReader final : public BlockReader {
 public:
  explicit RecordingReader(std::unique_ptr<BlockReader> inner) : inner_(std::move(inner)) {}
  Status ReadBatch(const ReadRequest* requests, size_t count, ReadStats* stats) override {
    ++calls;
    for (size_t i = 0; i < count; ++i) offsets.push_back(requests[i].offset_bytes);
    return inner_->ReadBatch(requests, count, stats);
  }
  const std::string& path() const override { return inner_->path(); }
  int64_t file_size_bytes() const override { return inner_->file_size_bytes(); }
  int64_t alignment_bytes() const override { return inner_->alignment_bytes(); }
  IoMode mode() const override { return inner_->mode(); }
  bool direct() const override { return inner_->direct(); }

  std::vector<int64_t> offsets;  // requests since the last clear
  int64_t calls = 0;             // ReadBatch calls in all

 private:
  std::unique_ptr<BlockReader> inner_;
};

struct WaveCase {
  const char* name;
  FeatureDtype dtype;
  int64_t dim;
  int64_t block_bytes;
  bool mmap;
  bool admits = true;  // the plans admit block rows (rows larger than a block hardly ever lie in a miss's blocks)
};

// features.bin of `nodes` rows (deterministic finite values; one value of each row listed
// in `nan_rows` is NaN), zero-padded to 4096 bytes like the datasets' files.
std::string WriteFeatures(const std::string& dir, const DatasetManifest& m, const std::set<int64_t>& nan_rows = {}) {
  std::vector<float> values(static_cast<size_t>(m.num_nodes * m.feature_dim));
  for (int64_t v = 0; v < m.num_nodes; ++v) {
    for (int64_t d = 0; d < m.feature_dim; ++d) {
      values[static_cast<size_t>(v * m.feature_dim + d)] = static_cast<float>((v * 7 + d * 3) % 101) * 0.25f - 12.0f;
    }
    if (nan_rows.count(v) != 0) values[static_cast<size_t>(v * m.feature_dim + 1)] = std::nanf("");
  }
  const int64_t bytes = m.num_nodes * m.feature_row_bytes();
  std::vector<char> stored(static_cast<size_t>((bytes + 4095) / 4096 * 4096), 0);
  EncodeFeatureRows(values.data(), m.feature_dtype, m.feature_dim, m.num_nodes, stored.data());
  const std::string path = dir + "/features.bin";
  auto fd = UniqueFd::Open(path, O_CREAT | O_TRUNC | O_RDWR);
  EXPECT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_TRUE(PwriteFull(fd->get(), stored.data(), static_cast<int64_t>(stored.size()), 0, path).ok());
  return path;
}

std::unique_ptr<RecordingReader> OpenRecording(const std::string& path, bool mmap) {
  auto reader = mmap ? OpenMmapReader(path) : OpenDirectReader(path, DirectReaderOptions{});
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  return std::make_unique<RecordingReader>(std::move(reader).value());
}

FeatureCache MakeCache(const DatasetManifest& m, int64_t capacity) {
  FeatureCacheOptions options;
  options.num_nodes = m.num_nodes;
  options.capacity_rows = capacity;
  options.row_bytes = m.feature_row_bytes();
  auto cache = FeatureCache::Create(options);
  EXPECT_TRUE(cache.ok()) << cache.status().ToString();
  return std::move(cache).value();
}

// Batches of unique ids, most near a random centre: the blocks of a batch's misses hold
// rows of later batches (block admits) and runs of adjacent blocks (straddling rows).
std::vector<std::vector<int64_t>> LocalBatches(std::mt19937_64& rng, int count, int64_t nodes, int max_size) {
  std::vector<std::vector<int64_t>> batches(static_cast<size_t>(count));
  for (auto& b : batches) {
    std::set<int64_t> seen;
    const int64_t centre = static_cast<int64_t>(rng() % static_cast<uint64_t>(nodes));
    const int size = 1 + static_cast<int>(rng() % static_cast<uint64_t>(max_size));
    while (static_cast<int>(seen.size()) < size) {
      const int64_t v = (rng() % 4) ? (centre + static_cast<int64_t>(rng() % 400)) % nodes
                                    : static_cast<int64_t>(rng() % static_cast<uint64_t>(nodes));
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  return batches;
}

class BlockWaveTest : public ::testing::TestWithParam<WaveCase> {};

TEST_P(BlockWaveTest, WavesDeliverWhatOneBufferDoes) {
  const WaveCase c = GetParam();
  testing::RandomTestSeed seed;
  const std::string dir = testing::MakeTempDir("block_waves");
  DatasetManifest m;
  m.num_nodes = 3001;
  m.feature_dim = c.dim;
  m.feature_dtype = c.dtype;
  const int64_t row_bytes = m.feature_row_bytes();
  const int64_t block = c.block_bytes;
  const std::string path = WriteFeatures(dir, m);
  // What features.bin holds, as floats (the gatherer's output) and as stored bytes.
  std::vector<char> file(static_cast<size_t>(m.num_nodes * row_bytes));
  {
    auto fd = UniqueFd::Open(path, O_RDONLY);
    ASSERT_TRUE(fd.ok());
    ASSERT_TRUE(PreadFull(fd->get(), file.data(), static_cast<int64_t>(file.size()), 0, path).ok());
  }
  std::vector<float> oracle(static_cast<size_t>(m.num_nodes * c.dim));
  ConvertRowsToFloat(file.data(), c.dtype, c.dim, m.num_nodes, oracle.data());

  const auto batches = LocalBatches(seed.rng, 40, m.num_nodes, 160);
  const int64_t capacity = 300;
  const std::vector<IdSpan> spans = MakeIdSpans(batches);
  const std::vector<int64_t> fill = BeladyInitialFill(spans, capacity);
  BeladyPlannerOptions planner;
  planner.device = PlannerDevice::kCpu;
  planner.read_blocks = ReadBlocks{row_bytes, block, m.num_nodes};
  auto plan = PlanBelady(fill, spans, planner);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  if (c.admits) ASSERT_GT(plan->num_block_admits, 0) << "the case must admit block rows";

  // The reference: FeatureCache::Apply with every row read straight from the file.
  FeatureCache reference = MakeCache(m, capacity);
  for (size_t s = 0; s < fill.size(); ++s) {
    if (fill[s] != kFreeSlot) reference.Install(static_cast<int32_t>(s), fill[s], file.data() + fill[s] * row_bytes);
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto& ids = batches[i];
    auto cs = plan->changesets.Get(static_cast<int64_t>(i));
    ASSERT_TRUE(cs.ok());
    std::vector<char> buffer(ids.size() * static_cast<size_t>(row_bytes)), block_rows;
    for (size_t p = 0; p < ids.size(); ++p) {
      std::memcpy(buffer.data() + p * static_cast<size_t>(row_bytes), file.data() + ids[p] * row_bytes,
                  static_cast<size_t>(row_bytes));
    }
    for (int64_t v : cs->block_ids) block_rows.insert(block_rows.end(), file.data() + v * row_bytes, file.data() + (v + 1) * row_bytes);
    reference.Apply(*cs, ids.data(), static_cast<int64_t>(ids.size()), buffer.data(), block_rows.data());
  }
  ASSERT_EQ(reference.SlotContents(), plan->final_slots);

  // One wave for the whole batch (the single buffer), then smaller and smaller waves
  // down to one row's blocks (0 = the minimum).
  const int64_t wave_sizes[] = {int64_t{1} << 40, 16 * block, 5 * block, 3 * block, 0};
  GatherStats first;
  int64_t first_calls = 0;
  for (int64_t wave : wave_sizes) {
    SCOPED_TRACE("wave bytes " + std::to_string(wave));
    auto reader = OpenRecording(path, c.mmap);
    FeatureCache cache = MakeCache(m, capacity);
    FeatureGatherer gatherer(reader.get(), m, &cache, block, wave);
    GatherStats stats;
    ASSERT_TRUE(gatherer.Fill(fill, &stats).ok());
    const int64_t calls_before = reader->calls;
    int64_t mismatches = 0;
    for (size_t i = 0; i < batches.size(); ++i) {
      BatchTrace batch;
      batch.batch_index = static_cast<int64_t>(i);
      batch.node_ids = batches[i];
      auto cs = plan->changesets.Get(static_cast<int64_t>(i));
      ASSERT_TRUE(cs.ok());
      reader->offsets.clear();
      GatherStats one;
      std::vector<float> rows;
      ASSERT_TRUE(gatherer.Gather(batch, &*cs, &rows, &one).ok()) << "batch " << i;
      ASSERT_EQ(rows.size(), batch.node_ids.size() * static_cast<size_t>(c.dim));
      for (size_t p = 0; p < batch.node_ids.size(); ++p) {
        if (std::memcmp(rows.data() + p * static_cast<size_t>(c.dim),
                        oracle.data() + batch.node_ids[p] * c.dim, static_cast<size_t>(c.dim) * sizeof(float)) != 0) {
          ++mismatches;
        }
      }
      // Every distinct block of the misses read exactly once, each at a block boundary.
      std::set<int64_t> distinct(reader->offsets.begin(), reader->offsets.end());
      EXPECT_EQ(distinct.size(), reader->offsets.size()) << "batch " << i << ": a block read twice";
      EXPECT_EQ(static_cast<int64_t>(reader->offsets.size()), one.block_reads) << "batch " << i;
      for (int64_t offset : reader->offsets) EXPECT_EQ(offset % block, 0);
      EXPECT_EQ(one.misses, cs->num_misses) << "batch " << i;
      EXPECT_EQ(one.block_admits, static_cast<int64_t>(cs->block_ids.size())) << "batch " << i;
      stats.Add(one);
    }
    EXPECT_EQ(mismatches, 0);
    // The cache ends where Apply with the file's rows ends: same slots, table and bytes.
    ASSERT_EQ(cache.SlotContents(), reference.SlotContents());
    EXPECT_EQ(cache.num_cached(), reference.num_cached());
    for (int32_t s = 0; s < capacity; ++s) {
      const int64_t v = cache.NodeInSlot(s);
      if (v == kFreeSlot) continue;
      EXPECT_EQ(cache.SlotOf(v), s);
      EXPECT_EQ(std::memcmp(cache.Row(s), file.data() + v * row_bytes, static_cast<size_t>(row_bytes)), 0)
          << "slot " << s << " node " << v;
    }
    EXPECT_EQ(stats.misses, plan->num_misses);
    EXPECT_EQ(stats.block_admits, plan->num_block_admits);
    EXPECT_GT(stats.block_reads, 0);
    EXPECT_EQ(stats.block_bytes, stats.block_reads * block);
    const int64_t calls = reader->calls - calls_before;
    if (wave == wave_sizes[0]) {
      first = stats;
      first_calls = calls;
      EXPECT_LE(calls, static_cast<int64_t>(batches.size()));  // one read per batch (with misses)
    } else {
      EXPECT_EQ(stats.rows, first.rows);
      EXPECT_EQ(stats.hits, first.hits);
      EXPECT_EQ(stats.misses, first.misses);
      EXPECT_EQ(stats.block_reads, first.block_reads);
      EXPECT_EQ(stats.block_bytes, first.block_bytes);
      EXPECT_EQ(stats.block_admits, first.block_admits);
      EXPECT_EQ(stats.reads.requests, first.reads.requests);
      // The waves ran: at most a wave of blocks per read (plus the carried ones' room).
      const int64_t wave_blocks = BlockWaveBufferBytes(row_bytes, block, wave) / block;
      EXPECT_GE(calls, stats.block_reads / wave_blocks);
      EXPECT_GT(calls, first_calls);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, BlockWaveTest,
    ::testing::Values(WaveCase{"f32_48B_rows_64B_blocks", FeatureDtype::kFloat32, 12, 64, false},
                      WaveCase{"f32_48B_rows_64B_blocks_mmap", FeatureDtype::kFloat32, 12, 64, true},
                      WaveCase{"f32_160B_rows_64B_blocks", FeatureDtype::kFloat32, 40, 64, false, false},
                      WaveCase{"f16_48B_rows_128B_blocks", FeatureDtype::kFloat16, 24, 128, false},
                      WaveCase{"int8_52B_rows_64B_blocks", FeatureDtype::kInt8, 44, 64, true},
                      WaveCase{"f32_188B_rows_4K_blocks", FeatureDtype::kFloat32, 47, 4096, false}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(BlockWaveBufferTest, HoldsAtLeastTheBlocksOfOneRow) {
  EXPECT_EQ(BlockWaveBufferBytes(512, 4096), kBlockWaveBytes);
  EXPECT_EQ(BlockWaveBufferBytes(48, 64, 0), 2 * 64);     // a 48 B row straddles two 64 B blocks
  EXPECT_EQ(BlockWaveBufferBytes(64, 64, 0), 64);         // aligned rows: one block
  EXPECT_EQ(BlockWaveBufferBytes(160, 64, 0), 3 * 64);    // 160 B rows start at 0 or 32: 3 blocks
  EXPECT_EQ(BlockWaveBufferBytes(100, 64, 0), 3 * 64);    // 100 B at offset 60: [60, 160) = 3 blocks
  EXPECT_EQ(BlockWaveBufferBytes(128, 64, 0), 2 * 64);    // 128 B rows stay aligned
  EXPECT_EQ(BlockWaveBufferBytes(48, 64, 1000), 15 * 64);  // rounded down to whole blocks
  EXPECT_EQ(BlockWaveBufferBytes(48, 0, 1000), 0);
}

// Hand-made block reads: 48 B rows, 64 B blocks. Row 2 = bytes [96, 144) = blocks 1-2;
// row 3 = [144, 192) lies inside block 2, so a miss of row 2 makes row 3 a free row.
class BlockChangesetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("block_changeset");
    m_.num_nodes = 100;
    m_.feature_dim = 12;
    m_.feature_dtype = FeatureDtype::kFloat32;
  }
  // A cache of 3 rows holding node 50 in slot 0 and 51 in slot 1.
  void Open(const std::set<int64_t>& nan_rows, int64_t wave) {
    path_ = WriteFeatures(dir_, m_, nan_rows);
    reader_ = OpenRecording(path_, false);
    cache_ = std::make_unique<FeatureCache>(MakeCache(m_, 3));
    gatherer_ = std::make_unique<FeatureGatherer>(reader_.get(), m_, cache_.get(), 64, wave);
    ASSERT_TRUE(gatherer_->Fill({50, 51, kFreeSlot}, nullptr).ok());
    cached_50_.assign(cache_->Row(0), cache_->Row(0) + 48);
  }
  void ExpectUnchanged() {
    EXPECT_EQ(cache_->SlotContents(), (std::vector<int64_t>{50, 51, kFreeSlot}));
    EXPECT_EQ(cache_->num_cached(), 2);
    EXPECT_EQ(cache_->SlotOf(50), 0);
    EXPECT_EQ(cache_->SlotOf(2), -1);
    EXPECT_EQ(cache_->SlotOf(3), -1);
    EXPECT_EQ(std::memcmp(cache_->Row(0), cached_50_.data(), 48), 0);
  }
  // Batch {50, 2}: 50 hits, 2 misses; evicts 50 (slot 0), inserts 2 into slot 2 and
  // admits row `block_row` into slot 0.
  static Changeset Evict50Admit(int64_t block_row) {
    Changeset cs;
    cs.num_accesses = 2;
    cs.num_misses = 1;
    cs.out_ids = {50};
    cs.out_slots = {0};
    cs.in_ids = {2};
    cs.in_positions = {1};
    cs.in_slots = {2};
    cs.block_ids = {block_row};
    cs.block_slots = {0};
    return cs;
  }
  BatchTrace Batch() const {
    BatchTrace b;
    b.node_ids = {50, 2};
    return b;
  }

  std::string dir_, path_;
  DatasetManifest m_;
  std::unique_ptr<RecordingReader> reader_;
  std::unique_ptr<FeatureCache> cache_;
  std::unique_ptr<FeatureGatherer> gatherer_;
  std::vector<char> cached_50_;
};

TEST_F(BlockChangesetTest, AppliesTheChangesetWithTheBlockRow) {
  for (int64_t wave : {int64_t{0}, kBlockWaveBytes}) {
    Open({}, wave);
    std::vector<float> rows;
    GatherStats stats;
    const Changeset cs = Evict50Admit(3);
    ASSERT_TRUE(gatherer_->Gather(Batch(), &cs, &rows, &stats).ok());
    EXPECT_EQ(stats.hits, 1);
    EXPECT_EQ(stats.block_reads, 2);
    EXPECT_EQ(stats.block_admits, 1);
    EXPECT_EQ(cache_->SlotContents(), (std::vector<int64_t>{3, 51, 2}));
    EXPECT_EQ(cache_->SlotOf(3), 0);
    EXPECT_EQ(cache_->SlotOf(2), 2);
    EXPECT_EQ(cache_->SlotOf(50), -1);
    EXPECT_EQ(std::memcmp(cache_->Row(2), rows.data() + 12, 48), 0);  // the miss as delivered
  }
}

// A contradicting changeset (evicts a node from a slot that holds another) throws
// through the gatherer's validate-then-commit path, the cache unchanged.
TEST_F(BlockChangesetTest, ContradictingChangesetThrowsAndLeavesTheCache) {
  for (int64_t wave : {int64_t{0}, kBlockWaveBytes}) {
    Open({}, wave);
    Changeset cs = Evict50Admit(3);
    cs.out_ids = {51};  // slot 0 holds 50
    std::vector<float> rows;
    EXPECT_THROW(gatherer_->Gather(Batch(), &cs, &rows, nullptr), std::logic_error);
    ExpectUnchanged();
    Changeset occupied = Evict50Admit(3);
    occupied.block_slots = {1};  // holds 51, not evicted
    EXPECT_THROW(gatherer_->Gather(Batch(), &occupied, &rows, nullptr), std::logic_error);
    ExpectUnchanged();
  }
}

// A changeset admitting a row the batch's blocks do not hold (row 4 = [192, 240), block 3)
// is an internal error before anything changes.
TEST_F(BlockChangesetTest, RowOutsideTheReadsIsRefusedUnchanged) {
  Open({}, 0);
  std::vector<float> rows;
  const Changeset cs = Evict50Admit(4);
  const Status status = gatherer_->Gather(Batch(), &cs, &rows, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("admits row 4"), std::string::npos) << status.message();
  ExpectUnchanged();
}

// A non-finite block row is kCorrupt naming it and is not cached; a non-finite miss in
// the same batch is reported first (the misses are checked first, as before waves).
TEST_F(BlockChangesetTest, NonFiniteBlockRowIsCorruptAndNotCached) {
  for (int64_t wave : {int64_t{0}, kBlockWaveBytes}) {
    Open({3}, wave);
    std::vector<float> rows;
    const Changeset cs = Evict50Admit(3);
    Status status = gatherer_->Gather(Batch(), &cs, &rows, nullptr);
    EXPECT_EQ(status.code(), StatusCode::kCorrupt);
    EXPECT_NE(status.message().find("node 3:"), std::string::npos) << status.message();
    EXPECT_EQ(cache_->SlotOf(3), -1);
    EXPECT_EQ(cache_->SlotOf(2), -1);  // the inserts did not happen
    EXPECT_EQ(cache_->SlotOf(51), 1);  // what it holds is right
    Open({2, 3}, wave);
    status = gatherer_->Gather(Batch(), &cs, &rows, nullptr);
    EXPECT_EQ(status.code(), StatusCode::kCorrupt);
    EXPECT_NE(status.message().find("node 2:"), std::string::npos) << status.message();
    EXPECT_EQ(cache_->SlotOf(2), -1);
    EXPECT_EQ(cache_->SlotOf(3), -1);
  }
}

}  // namespace
}  // namespace seer
