#include "executor/feature_gather.h"

#include "cache/hit_simulator.h"
#include "cache/read_blocks.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>


namespace seer {
namespace {

// resize() on a growing vector may double its capacity; batch buffers are the largest
// allocations of the executor, so they grow to exactly what a batch needs (the contents
// are overwritten anyway).
template <typename T>
void ResizeExact(std::vector<T>* v, size_t n) {
  if (n > v->capacity()) {
    std::vector<T>().swap(*v);
    v->reserve(n);
  }
  v->resize(n);
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The first non-finite value (NaN or +-Inf: all exponent bits set) of a row of `dim`
// values in the disk dtype; -1 when every value is finite. The first pass ORs 0/1 flags
// into an integer, which vectorizes (as fast as a memcpy of the row, measured; a bool
// accumulator ran 3x slower) and uses no float compares that -ffast-math could fold.
template <typename Bits>
int64_t FirstAllOnes(const char* row, int64_t dim, Bits mask) {
  uint32_t any = 0;
  for (int64_t i = 0; i < dim; ++i) {
    Bits bits;
    std::memcpy(&bits, row + sizeof(Bits) * i, sizeof(Bits));
    any |= static_cast<uint32_t>((bits & mask) == mask);
  }
  if (any == 0) return -1;
  for (int64_t i = 0; i < dim; ++i) {
    Bits bits;
    std::memcpy(&bits, row + sizeof(Bits) * i, sizeof(Bits));
    if ((bits & mask) == mask) return i;
  }
  return -1;
}

int64_t FirstNonFinite(const char* row, FeatureDtype dtype, int64_t dim) {
  switch (dtype) {
    case FeatureDtype::kFloat32: return FirstAllOnes<uint32_t>(row, dim, 0x7f800000u);
    case FeatureDtype::kFloat16: return FirstAllOnes<uint16_t>(row, dim, 0x7c00);
    case FeatureDtype::kBFloat16: return FirstAllOnes<uint16_t>(row, dim, 0x7f80);
    case FeatureDtype::kInt8:  // codes are always finite; the row's scale and bias may not be
      if (dim == 0) return -1;
      return FirstAllOnes<uint32_t>(row + dim, 2, 0x7f800000u) < 0 ? -1 : 0;
  }
  return -1;
}

}  // namespace

Status FeatureGatherer::CheckFinite(const char* row, int64_t node) const {
  const int64_t column = FirstNonFinite(row, dtype_, feature_dim_);
  if (column < 0) return Status::Ok();
  return Corrupt(features_->path() + ": node " + std::to_string(node) + ": feature row at byte offset " +
                 std::to_string(node * row_bytes_) + " has a non-finite value (NaN or Inf) in column " +
                 std::to_string(column) + " (byte offset " +
                 std::to_string(node * row_bytes_ + column * (row_bytes_ / feature_dim_)) + ")");
}

void GatherStats::Add(const GatherStats& o) {
  rows += o.rows;
  hits += o.hits;
  misses += o.misses;
  block_reads += o.block_reads;
  block_bytes += o.block_bytes;
  block_admits += o.block_admits;
  fill_rows += o.fill_rows;
  h2d_bytes += o.h2d_bytes;
  device_hits += o.device_hits;
  reads.Add(o.reads);
  fill_reads.Add(o.fill_reads);
  gather_seconds += o.gather_seconds;
  io_seconds += o.io_seconds;
  update_seconds += o.update_seconds;
  convert_seconds += o.convert_seconds;
  check_seconds += o.check_seconds;
}

void ConvertRowsToFloat(const char* src, FeatureDtype dtype, int64_t feature_dim, int64_t num_rows, float* dst) {
  DecodeFeatureRows(src, dtype, feature_dim, num_rows, dst);  // float32, float16, bfloat16 or int8
}

int64_t BlockWaveBufferBytes(int64_t row_bytes, int64_t block_bytes, int64_t wave_bytes) {
  if (block_bytes <= 0) return 0;
  // Rows start at multiples of row_bytes, so inside a block at multiples of
  // g = gcd(row, B), the last at B - g: a row touches at most (B - g + row - 1) / B + 1 blocks.
  int64_t row_blocks = 1;
  if (row_bytes > 0) {
    const int64_t g = std::gcd(row_bytes, block_bytes);
    row_blocks = (block_bytes - g + row_bytes - 1) / block_bytes + 1;
  }
  return std::max(std::max<int64_t>(wave_bytes, 0) / block_bytes, row_blocks) * block_bytes;
}

FeatureGatherer::FeatureGatherer(BlockReader* features, const DatasetManifest& manifest,
                                 FeatureCache* cache, int64_t read_block_bytes, int64_t wave_bytes)
    : num_rows_(manifest.num_nodes),
      read_block_bytes_(read_block_bytes),
      wave_bytes_(wave_bytes),
      features_(features),
      cache_(cache),
      feature_dim_(manifest.feature_dim),
      row_bytes_(manifest.feature_row_bytes()),
      dtype_(manifest.feature_dtype) {}

FeatureGatherer::FeatureGatherer(BlockReader* features, const DatasetManifest& cache_rows, FeatureCache* cache,
                                 const FeatureUnits& units, int64_t row_dim)
    : FeatureGatherer(features, cache_rows, cache, 0) {
  if (!units.identity()) units_.emplace(units);
  row_dim_ = row_dim;
}

int64_t FeatureGatherer::HeldFirstBlock(int64_t node) const {
  if (node < 0 || node >= num_rows_) return -1;
  const int64_t offset = node * row_bytes_;
  const int64_t first = offset / read_block_bytes_, last = (offset + row_bytes_ - 1) / read_block_bytes_;
  auto it = std::lower_bound(blocks_.begin(), blocks_.end(), first);
  if (it == blocks_.end() || *it != first) return -1;
  const size_t k = static_cast<size_t>(it - blocks_.begin());
  // Blocks are ascending and distinct: first..last are held iff they sit at k..k+(last-first).
  const size_t k_last = k + static_cast<size_t>(last - first);
  if (k_last >= blocks_.size() || blocks_[k_last] != last) return -1;
  return static_cast<int64_t>(k);
}

Status FeatureGatherer::GatherMissBlocks(const BatchTrace& batch, const Changeset* changeset, char* buffer,
                                         GatherStats* local, Status* block_row_error) {
  const auto start = std::chrono::steady_clock::now();
  double update_seconds = 0;
  const ReadBlocks geometry{row_bytes_, read_block_bytes_, num_rows_};
  const int64_t block = read_block_bytes_;
  const int64_t* ids = batch.node_ids.data();
  // The misses by node id (= by file offset): their blocks come out ascending, and a
  // row's blocks are all read once the wave holding its last block has landed.
  miss_order_.assign(miss_positions_.begin(), miss_positions_.end());
  std::sort(miss_order_.begin(), miss_order_.end(),
            [ids](int32_t a, int32_t b) { return ids[a] != ids[b] ? ids[a] < ids[b] : a < b; });
  blocks_.clear();
  for (int32_t p : miss_order_) {
    const int64_t last = geometry.LastBlock(ids[p]);
    int64_t b = geometry.FirstBlock(ids[p]);
    if (!blocks_.empty()) b = std::max(b, blocks_.back() + 1);
    for (; b <= last; ++b) blocks_.push_back(b);
  }
  const size_t num_blocks = blocks_.size();
  local->block_reads = static_cast<int64_t>(num_blocks);
  local->block_bytes = local->block_reads * block;

  // The changeset's first steps, before any read: its block rows must lie in this
  // batch's blocks and it must fit the cache (nothing changes otherwise); then the
  // evictions, whose slots the block rows are written into as their waves land.
  const bool apply = changeset != nullptr && cache_ != nullptr;
  const std::vector<int64_t> no_rows;
  const std::vector<int64_t>& block_ids = apply ? changeset->block_ids : no_rows;
  block_order_.clear();
  if (apply) {
    const auto update_start = std::chrono::steady_clock::now();
    for (int64_t node : block_ids) {
      if (HeldFirstBlock(node) < 0) {
        return Status(StatusCode::kInternal, "feature gather: the changeset admits row " + std::to_string(node) +
                                                 ", which this batch's block reads do not hold");
      }
    }
    if (!std::is_sorted(block_ids.begin(), block_ids.end())) {  // the planner's are ascending
      block_order_.resize(block_ids.size());
      for (size_t k = 0; k < block_ids.size(); ++k) block_order_[k] = static_cast<int32_t>(k);
      std::stable_sort(block_order_.begin(), block_order_.end(),
                       [&block_ids](int32_t a, int32_t b) { return block_ids[a] < block_ids[b]; });
    }
    cache_->CheckChangeset(*changeset, ids, static_cast<int64_t>(batch.node_ids.size()));
    cache_->ApplyEvictions(*changeset);
    local->block_admits = static_cast<int64_t>(block_ids.size());
    update_seconds += Since(update_start);
  }

  // Waves: the buffer holds blocks_[lo, hi); each wave reads blocks_[hi, end) behind the
  // blocks carried over, then delivers every row whose last block has landed.
  const int64_t wave_blocks = BlockWaveBufferBytes(row_bytes_, block, wave_bytes_) / block;
  ResizeExact(&block_buffer_, std::min<size_t>(static_cast<size_t>(wave_blocks), num_blocks) * static_cast<size_t>(block));
  const int64_t unit = std::max<int64_t>(1, features_->alignment_bytes() / block);  // blocks per aligned unit
  const int64_t file_bytes = features_->file_size_bytes();
  size_t lo = 0, hi = 0;
  size_t next_miss = 0, next_block_row = 0;    // in miss_order_ / block rows by id
  size_t miss_cursor = 0, block_row_cursor = 0;  // index in blocks_ of the last row's first block
  int64_t bad_block_row = -1;                    // lowest index in block_ids of a non-finite row
  // The bytes of a row whose blocks are in the buffer (ascending rows: the cursor only moves up).
  auto row_in_wave = [&](int64_t node, size_t* cursor) -> const char* {
    const int64_t offset = node * row_bytes_, first = offset / block;
    while (*cursor < hi && blocks_[*cursor] < first) ++*cursor;
    if (*cursor < lo || *cursor >= hi || blocks_[*cursor] != first) return nullptr;
    return block_buffer_.data() + static_cast<int64_t>(*cursor - lo) * block + (offset - first * block);
  };
  while (hi < num_blocks) {
    size_t end = std::min(num_blocks, lo + static_cast<size_t>(wave_blocks));
    if (end < num_blocks && unit > 1) {
      // End the wave where the aligned unit changes, if that leaves a block to read.
      size_t e = end;
      while (e > hi && blocks_[e - 1] / unit == blocks_[end] / unit) --e;
      if (e > hi) end = e;
    }
    if (end <= hi) return Status(StatusCode::kInternal, "feature gather: a block wave has no room to read");
    requests_.clear();
    for (size_t k = hi; k < end; ++k) {
      const int64_t offset = blocks_[k] * block;
      // The last block of the file is read up to its end.
      requests_.push_back(ReadRequest{offset, std::min(block, file_bytes - offset),
                                      block_buffer_.data() + static_cast<int64_t>(k - lo) * block});
    }
    SEER_RETURN_IF_ERROR(features_->ReadBatch(requests_, &local->reads));
    hi = end;
    const int64_t wave_last = blocks_[hi - 1];
    for (; next_miss < miss_order_.size(); ++next_miss) {
      const int32_t p = miss_order_[next_miss];
      if (geometry.LastBlock(ids[p]) > wave_last) break;
      const char* row = row_in_wave(ids[p], &miss_cursor);
      if (row == nullptr) return Status(StatusCode::kInternal, "feature gather: a missed row's block was not read");
      std::memcpy(buffer + int64_t{p} * row_bytes_, row, static_cast<size_t>(row_bytes_));
    }
    if (next_block_row < block_ids.size()) {
      const auto update_start = std::chrono::steady_clock::now();
      // Free rows admitted from the reads: checked like every row read from features.bin,
      // then straight into their (free) slots; a non-finite one is reported after the
      // misses' check, as before.
      for (; next_block_row < block_ids.size(); ++next_block_row) {
        const size_t k = block_order_.empty() ? next_block_row : static_cast<size_t>(block_order_[next_block_row]);
        const int64_t node = block_ids[k];
        if (geometry.LastBlock(node) > wave_last) break;
        const char* row = row_in_wave(node, &block_row_cursor);
        if (row == nullptr) return Status(StatusCode::kInternal, "feature gather: an admitted row's block was not read");
        Status finite = CheckFinite(row, node);
        if (!finite.ok()) {
          if (bad_block_row < 0 || static_cast<int64_t>(k) < bad_block_row) {
            bad_block_row = static_cast<int64_t>(k);
            *block_row_error = std::move(finite);
          }
          continue;
        }
        cache_->WriteFreeSlot(changeset->block_slots[k], row);
      }
      update_seconds += Since(update_start);
    }
    if (hi < num_blocks) {
      // Carry the blocks from the first block of the first row not yet delivered.
      int64_t keep = std::numeric_limits<int64_t>::max();
      if (next_miss < miss_order_.size()) keep = geometry.FirstBlock(ids[miss_order_[next_miss]]);
      if (next_block_row < block_ids.size()) {
        const size_t k = block_order_.empty() ? next_block_row : static_cast<size_t>(block_order_[next_block_row]);
        keep = std::min(keep, geometry.FirstBlock(block_ids[k]));
      }
      const size_t from = static_cast<size_t>(
          std::lower_bound(blocks_.begin() + static_cast<std::ptrdiff_t>(lo), blocks_.begin() + static_cast<std::ptrdiff_t>(hi),
                           keep) - blocks_.begin());
      if (from > lo) {
        std::memmove(block_buffer_.data(), block_buffer_.data() + static_cast<int64_t>(from - lo) * block,
                     static_cast<size_t>(static_cast<int64_t>(hi - from) * block));
        lo = from;
      }
    }
  }
  if (next_miss < miss_order_.size() || next_block_row < block_ids.size()) {
    return Status(StatusCode::kInternal, "feature gather: rows left after the last block read");
  }
  local->update_seconds += update_seconds;
  local->io_seconds += Since(start) - update_seconds;
  return Status::Ok();
}

Status FeatureGatherer::Gather(const BatchTrace& batch, const Changeset* changeset,
                               std::vector<float>* rows_out, GatherStats* stats) {
  if (units_) return GatherUnits(batch, changeset, rows_out, stats);
  return GatherImpl(batch, changeset, rows_out, stats);
}

Status FeatureGatherer::GatherReadOnly(const BatchTrace& batch, std::vector<float>* rows_out,
                                       GatherStats* stats) {
  if (units_) return GatherUnits(batch, nullptr, rows_out, stats);
  return GatherImpl(batch, nullptr, rows_out, stats);
}

Status FeatureGatherer::GatherUnits(const BatchTrace& batch, const Changeset* changeset,
                                    std::vector<float>* rows_out, GatherStats* stats) {
  unit_batch_.node_ids.clear();
  units_->Expand(batch.node_ids.data(), static_cast<int64_t>(batch.node_ids.size()), &unit_batch_.node_ids);
  SEER_RETURN_IF_ERROR(GatherImpl(unit_batch_, changeset, &unit_rows_, stats));
  const auto start = std::chrono::steady_clock::now();
  const int64_t n = static_cast<int64_t>(batch.node_ids.size());
  ResizeExact(rows_out, static_cast<size_t>(n * row_dim_));
  const float* unit = unit_rows_.data();  // the batch's units, node by node
  for (int64_t p = 0; p < n; ++p) {
    float* row = rows_out->data() + p * row_dim_;
    const int64_t floats = units_->UnitsOf(batch.node_ids[static_cast<size_t>(p)]) * feature_dim_;
    const int64_t have = std::min(row_dim_, floats);  // the rest of the last unit is zeros
    std::memcpy(row, unit, static_cast<size_t>(have) * sizeof(float));
    std::fill(row + have, row + row_dim_, 0.0f);
    unit += floats;
  }
  if (stats) {
    const double seconds = Since(start);
    stats->convert_seconds += seconds;
    stats->gather_seconds += seconds;
  }
  return Status::Ok();
}

Status FeatureGatherer::GatherImpl(const BatchTrace& batch, const Changeset* changeset,
                                   std::vector<float>* rows_out, GatherStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t n = static_cast<int64_t>(batch.node_ids.size());
  GatherStats local;
  local.rows = n;
  // float32 rows are gathered straight into the output (no second buffer, no copy);
  // float16 rows go through the raw buffer and are widened at the end.
  ResizeExact(rows_out, static_cast<size_t>(n * feature_dim_));
  char* buffer = reinterpret_cast<char*>(rows_out->data());
  if (dtype_ != FeatureDtype::kFloat32) {
    ResizeExact(&raw_, static_cast<size_t>(n * row_bytes_));
    buffer = raw_.data();
  }
  miss_positions_.clear();
  if (cache_ != nullptr && cache_->capacity_rows() > 0) {
    local.hits = cache_->Gather(batch.node_ids.data(), n, buffer, &miss_positions_);
  } else {
    miss_positions_.resize(static_cast<size_t>(n));
    for (int64_t p = 0; p < n; ++p) miss_positions_[static_cast<size_t>(p)] = static_cast<int32_t>(p);
  }
  local.misses = static_cast<int64_t>(miss_positions_.size());

  // With block reads and a changeset the cache is updated in steps around the waves
  // (GatherMissBlocks): evictions and the admitted block rows there, inserts below.
  const bool staged = read_block_bytes_ > 0 && changeset != nullptr && cache_ != nullptr;
  Status block_row_error;
  if (read_block_bytes_ > 0) {
    SEER_RETURN_IF_ERROR(GatherMissBlocks(batch, changeset, buffer, &local, &block_row_error));
  } else {
    const auto io_start = std::chrono::steady_clock::now();
    // Misses sorted by file offset: the reader then merges neighbours in one pass.
    requests_.clear();
    requests_.reserve(miss_positions_.size());
    miss_rows_.clear();
    for (int32_t p : miss_positions_) {
      const int64_t node = batch.node_ids[static_cast<size_t>(p)];
      requests_.push_back(ReadRequest{node * row_bytes_, row_bytes_, buffer + int64_t{p} * row_bytes_});
      miss_rows_.push_back(node);
    }
    std::sort(requests_.begin(), requests_.end(),
              [](const ReadRequest& a, const ReadRequest& b) { return a.offset_bytes < b.offset_bytes; });
    if (!requests_.empty()) {
      SEER_RETURN_IF_ERROR(features_->ReadBatch(requests_, &local.reads));
    }
    const int64_t unit = features_->alignment_bytes();
    local.block_reads = CountDistinctBlocks(miss_rows_, row_bytes_, unit);
    local.block_bytes = local.block_reads * unit;
    local.io_seconds = Since(io_start);
  }
  // Rows read from the SSD are checked once, here and in Fill; cached rows were checked
  // when they were read, so hits cost nothing.
  const auto check_start = std::chrono::steady_clock::now();
  for (int32_t p : miss_positions_) {
    SEER_RETURN_IF_ERROR(CheckFinite(buffer + int64_t{p} * row_bytes_, batch.node_ids[static_cast<size_t>(p)]));
  }
  local.check_seconds = Since(check_start);
  SEER_RETURN_IF_ERROR(block_row_error);  // an admitted block row that is not finite

  if (changeset != nullptr && cache_ != nullptr) {
    const auto update_start = std::chrono::steady_clock::now();
    if (staged) {
      cache_->ApplyInsertions(*changeset, buffer);
    } else {
      if (!changeset->block_ids.empty()) {
        return Status(StatusCode::kInternal, "feature gather: the changeset admits row " +
                                                 std::to_string(changeset->block_ids[0]) +
                                                 ", which this batch's block reads do not hold");
      }
      cache_->Apply(*changeset, batch.node_ids.data(), n, buffer);
    }
    local.update_seconds += Since(update_start);
  }

  if (dtype_ != FeatureDtype::kFloat32) {
    const auto convert_start = std::chrono::steady_clock::now();
    ConvertRowsToFloat(raw_.data(), dtype_, feature_dim_, n, rows_out->data());
    local.convert_seconds = Since(convert_start);
  }
  local.gather_seconds = Since(start);
  if (stats) stats->Add(local);
  return Status::Ok();
}

Status FeatureGatherer::Fill(const std::vector<int64_t>& slot_nodes, GatherStats* stats) {
  if (cache_ == nullptr) return Status::Ok();
  const auto start = std::chrono::steady_clock::now();
  GatherStats local;
  std::vector<std::pair<int64_t, int32_t>> wanted;  // (node, slot)
  for (size_t slot = 0; slot < slot_nodes.size(); ++slot) {
    if (slot_nodes[slot] != kFreeSlot) wanted.emplace_back(slot_nodes[slot], static_cast<int32_t>(slot));
  }
  std::sort(wanted.begin(), wanted.end());
  cache_->Clear();
  // Bounded chunks so a large fill does not need a second cache-sized buffer.
  constexpr size_t kChunkRows = 1 << 14;
  std::vector<char> buffer;
  for (size_t begin = 0; begin < wanted.size(); begin += kChunkRows) {
    const size_t end = std::min(wanted.size(), begin + kChunkRows);
    buffer.resize((end - begin) * static_cast<size_t>(row_bytes_));
    std::vector<ReadRequest> requests;
    for (size_t i = begin; i < end; ++i) {
      requests.push_back(ReadRequest{wanted[i].first * row_bytes_, row_bytes_,
                                     buffer.data() + (i - begin) * row_bytes_});
    }
    const auto io_start = std::chrono::steady_clock::now();
    SEER_RETURN_IF_ERROR(features_->ReadBatch(requests, &local.fill_reads));
    local.io_seconds += Since(io_start);
    const auto check_start = std::chrono::steady_clock::now();
    for (size_t i = begin; i < end; ++i) {
      SEER_RETURN_IF_ERROR(CheckFinite(buffer.data() + (i - begin) * row_bytes_, wanted[i].first));
    }
    local.check_seconds += Since(check_start);
    for (size_t i = begin; i < end; ++i) {
      cache_->Install(wanted[i].second, wanted[i].first, buffer.data() + (i - begin) * row_bytes_);
    }
  }
  local.fill_rows = static_cast<int64_t>(wanted.size());
  local.update_seconds = Since(start) - local.io_seconds;
  local.gather_seconds = Since(start);
  if (stats) stats->Add(local);
  return Status::Ok();
}

}  // namespace seer
