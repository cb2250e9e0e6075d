// FeatureGatherer: the executor's gather step for one batch (docs/design.md "Data flow"):
//   1. hits are copied from the FeatureCache into the batch buffer (rows in node_ids
//      order, disk dtype),
//   2. misses are read from features.bin through the BlockReader — one ReadBatch with
//      the requests sorted by offset (the reader merges same-block requests and keeps
//      a deep queue); with block reads (read_block_bytes > 0, `--read-block`,
//      cache/read_blocks.h) one request per distinct block the misses touch (a row
//      straddling a boundary = both blocks), read in waves (below),
//   3. the batch's changeset is applied (inserted rows copied from the batch buffer
//      into their slots, evictions),
//   4. the buffer is converted to float32 rows (float16 features are widened).
// Also: Fill() installs a policy's initial cache content with one sorted bulk read.
// Typed datasets cached by bytes (storage/dataset/feature_units.h): the gatherer is built
// over the cache rows' manifest (FeatureUnits::CacheRows) with the layout; Gather expands
// the batch's nodes into their units, gathers the units as above (hits, misses, changeset,
// stats all count units) and lays each node's units out as its row of `row_dim` floats
// (zeros past the type's own columns, a featureless node all zeros): the same rows the
// padded layout gives.
// Block reads in waves: the distinct blocks of a batch's misses (ascending) go through
// one wave buffer of BlockWaveBufferBytes (kBlockWaveBytes by default, at least the
// blocks one row can touch), so the buffer does not grow with the batch. Each block is
// read exactly once per batch: after a wave, the rows whose blocks are all in the buffer
// are delivered — misses copied into the batch buffer, the changeset's block_ids (free
// rows admitted to the cache) written straight into their cache slots — and the
// blocks a row not yet complete needs (a row straddling the wave's last boundary) are
// carried to the front of the buffer for the next wave. With a changeset the cache
// takes the steps of FeatureCache::Apply one by one: the changeset is checked (and the
// block rows found in the batch's blocks) before anything changes, evictions follow
// (the batch's hits were copied already), the block rows are written as their waves
// land, the inserts come last. When it can, a wave ends where the reader's aligned unit
// changes, so blocks smaller than the unit do not make two waves fetch the same unit.
// On an error status (a read failed, a row is not finite) the changeset is not applied;
// with block reads its evictions may have been, the cache then lacks the evicted rows
// (what it holds stays right).
// Every row read from features.bin (misses and fills) is checked for NaN/Inf before it
// is used or cached: a non-finite value is kCorrupt naming features.bin, the node and
// the byte offsets. Cached rows were checked when read, so hits cost nothing.
//
// The gatherer borrows the reader and the cache. Gather() mutates the cache when a
// changeset is given: one Gather/Fill at a time per cache. GatherReadOnly() never
// mutates it (evaluation and prediction share the training cache this way).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/feature_cache.h"
#include "inspector/trace.h"
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/feature_units.h"
#include "storage/io/block_reader.h"

namespace seer {

struct GatherStats {
  int64_t rows = 0;          // rows gathered (accesses)
  int64_t hits = 0;          // served by the feature cache
  int64_t misses = 0;        // read from the SSD
  int64_t fill_rows = 0;     // rows installed by fills
  // Host -> device: rows the model's device receives (feature_dim x 4 B each); with the
  // device tier (executor/device_feature_tier.h) only its misses, device_hits being served there.
  int64_t h2d_bytes = 0;
  int64_t device_hits = 0;
  // Feature reads as `seer stats` counts them (cache/hit_simulator.h): the distinct
  // aligned blocks of each batch's misses — blocks of read_block_bytes, or of the
  // reader's alignment with per-row reads — and blocks x block size bytes.
  int64_t block_reads = 0;
  int64_t block_bytes = 0;
  int64_t block_admits = 0;  // rows admitted to the cache from block reads
  ReadStats reads;           // miss reads
  ReadStats fill_reads;      // fill reads (reported separately)
  double gather_seconds = 0; // whole gather (hits + reads + apply + convert)
  double io_seconds = 0;     // waiting for miss reads
  double update_seconds = 0; // applying changesets + fills
  double convert_seconds = 0;// raw -> float32
  double check_seconds = 0;  // the NaN/Inf check of rows read from features.bin
  void Add(const GatherStats& o);
  double hit_ratio() const { return rows == 0 ? 0.0 : static_cast<double>(hits) / rows; }
};

// The block reads' wave buffer (see above): 8 MiB, ~2K reads of 4 KiB in flight per wave.
constexpr int64_t kBlockWaveBytes = int64_t{8} << 20;

// Bytes of the wave buffer for rows of row_bytes read in blocks of block_bytes (> 0):
// wave_bytes rounded down to whole blocks, at least the most blocks one row touches.
int64_t BlockWaveBufferBytes(int64_t row_bytes, int64_t block_bytes, int64_t wave_bytes = kBlockWaveBytes);

class FeatureGatherer {
 public:
  // cache may be null (no cache: everything is a miss). read_block_bytes 0 = per-row
  // reads; > 0 = block reads of that size, in waves of wave_bytes (BlockWaveBufferBytes;
  // tests pass tiny ones).
  FeatureGatherer(BlockReader* features, const DatasetManifest& manifest, FeatureCache* cache,
                  int64_t read_block_bytes = 0, int64_t wave_bytes = kBlockWaveBytes);
  // A typed dataset's cache rows: `cache_rows` = units.CacheRows(view), rows_out of
  // row_dim (the view's feature_dim) floats per node. Identity layouts gather directly.
  FeatureGatherer(BlockReader* features, const DatasetManifest& cache_rows, FeatureCache* cache,
                  const FeatureUnits& units, int64_t row_dim);

  // rows_out: resized to node_ids.size() * row_dim() floats. changeset may be null.
  Status Gather(const BatchTrace& batch, const Changeset* changeset, std::vector<float>* rows_out,
                GatherStats* stats);
  Status GatherReadOnly(const BatchTrace& batch, std::vector<float>* rows_out, GatherStats* stats);
  // Installs slot -> node (kFreeSlot entries skipped) with one sorted bulk read.
  Status Fill(const std::vector<int64_t>& slot_nodes, GatherStats* stats);

  int64_t feature_dim() const { return feature_dim_; }  // of a cache row
  int64_t row_dim() const { return units_ ? row_dim_ : feature_dim_; }  // of a node's row
  int64_t read_block_bytes() const { return read_block_bytes_; }

 private:
  Status GatherImpl(const BatchTrace& batch, const Changeset* changeset, std::vector<float>* rows_out,
                    GatherStats* stats);
  // By bytes: batch's nodes -> unit_batch_, GatherImpl over it into unit_rows_, rows laid out.
  Status GatherUnits(const BatchTrace& batch, const Changeset* changeset, std::vector<float>* rows_out,
                     GatherStats* stats);
  Status CheckFinite(const char* row, int64_t node) const;
  // Block reads (read_block_bytes_ > 0) of the misses at miss_positions_ in waves
  // through block_buffer_: the missed rows copied into `buffer`, and with a changeset
  // (cache_ set) its steps applied around the waves (block rows into their slots).
  // A block row that is not finite is not cached and its error goes to *block_row_error
  // (reported after the misses' check); other errors are returned.
  Status GatherMissBlocks(const BatchTrace& batch, const Changeset* changeset, char* buffer,
                          GatherStats* local, Status* block_row_error);
  // Index in blocks_ of `node`'s first block when every block of its row is in blocks_
  // (they are then consecutive there); -1 otherwise.
  int64_t HeldFirstBlock(int64_t node) const;
  int64_t num_rows_;
  int64_t read_block_bytes_;
  int64_t wave_bytes_;
  std::vector<int64_t> blocks_;           // distinct blocks of the batch's misses, ascending
  std::vector<char> block_buffer_;        // one wave (BlockWaveBufferBytes at most)
  std::vector<int32_t> miss_order_;       // miss positions by node id
  std::vector<int32_t> block_order_;      // changeset block_ids indices by id (when not ascending)
  std::vector<int64_t> miss_rows_;
  BlockReader* features_;
  FeatureCache* cache_;
  int64_t feature_dim_;
  int64_t row_bytes_;
  FeatureDtype dtype_;
  std::vector<char> raw_;                 // batch buffer (disk dtype)
  std::vector<int32_t> miss_positions_;
  std::vector<ReadRequest> requests_;
  std::optional<FeatureUnits> units_;     // set for non-identity layouts only
  int64_t row_dim_ = 0;
  BatchTrace unit_batch_;
  std::vector<float> unit_rows_;
};

// Widens `num_rows` stored rows of `dtype` at src into float32 at dst (int8: dequantized
// with each row's scale and bias).
void ConvertRowsToFloat(const char* src, FeatureDtype dtype, int64_t feature_dim, int64_t num_rows, float* dst);

}  // namespace seer
