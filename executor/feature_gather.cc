#include "executor/feature_gather.h"

#include <algorithm>
#include <chrono>
#include <cstring>


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

FeatureGatherer::FeatureGatherer(BlockReader* features, const DatasetManifest& manifest,
                                 FeatureCache* cache)
    : features_(features),
      cache_(cache),
      feature_dim_(manifest.feature_dim),
      row_bytes_(manifest.feature_row_bytes()),
      dtype_(manifest.feature_dtype) {}

Status FeatureGatherer::Gather(const BatchTrace& batch, const Changeset* changeset,
                               std::vector<float>* rows_out, GatherStats* stats) {
  return GatherImpl(batch, changeset, rows_out, stats);
}

Status FeatureGatherer::GatherReadOnly(const BatchTrace& batch, std::vector<float>* rows_out,
                                       GatherStats* stats) {
  return GatherImpl(batch, nullptr, rows_out, stats);
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

  // Misses sorted by file offset: the reader then merges neighbours in one pass.
  requests_.clear();
  requests_.reserve(miss_positions_.size());
  for (int32_t p : miss_positions_) {
    const int64_t node = batch.node_ids[static_cast<size_t>(p)];
    requests_.push_back(ReadRequest{node * row_bytes_, row_bytes_, buffer + int64_t{p} * row_bytes_});
  }
  std::sort(requests_.begin(), requests_.end(),
            [](const ReadRequest& a, const ReadRequest& b) { return a.offset_bytes < b.offset_bytes; });
  const auto io_start = std::chrono::steady_clock::now();
  if (!requests_.empty()) {
    SEER_RETURN_IF_ERROR(features_->ReadBatch(requests_, &local.reads));
  }
  local.io_seconds = Since(io_start);
  // Rows read from the SSD are checked once, here and in Fill; cached rows were checked
  // when they were read, so hits cost nothing.
  const auto check_start = std::chrono::steady_clock::now();
  for (int32_t p : miss_positions_) {
    SEER_RETURN_IF_ERROR(CheckFinite(buffer + int64_t{p} * row_bytes_, batch.node_ids[static_cast<size_t>(p)]));
  }
  local.check_seconds = Since(check_start);

  if (changeset != nullptr && cache_ != nullptr) {
    const auto update_start = std::chrono::steady_clock::now();
    cache_->Apply(*changeset, batch.node_ids.data(), n, buffer);
    local.update_seconds = Since(update_start);
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
