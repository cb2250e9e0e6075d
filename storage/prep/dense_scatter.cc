#include "storage/prep/dense_scatter.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "storage/base/byte_size.h"

namespace seer {
namespace {

constexpr int64_t kBucketBufferBytes = 64 << 10;  // SequentialWriter's buffer

}  // namespace

Result<DenseScatter> DenseScatter::Create(const std::string& dir, const std::string& name, int64_t count,
                                          int64_t memory_bytes, int64_t unset) {
  DenseScatter s;
  s.count_ = std::max<int64_t>(count, 0);
  s.unset_ = unset;
  if (s.count_ * 8 <= memory_bytes) {
    s.range_ = std::max<int64_t>(s.count_, 1);
    s.table_.assign(static_cast<size_t>(s.count_), unset);
    return s;
  }
  // Half the memory for one range's table, the other half for the bucket buffers.
  s.range_ = std::max<int64_t>(memory_bytes / 2 / 8, 1);
  const int64_t buckets = (s.count_ + s.range_ - 1) / s.range_;
  if (buckets * kBucketBufferBytes > memory_bytes / 2) {
    return Status(StatusCode::kResourceExhausted,
                  fmt::format("{}: {} entries need {} buckets of {} in {}; raise --memory-budget", dir + "/" + name,
                              s.count_, buckets, FormatBytes(kBucketBufferBytes), FormatBytes(memory_bytes)));
  }
  for (int64_t b = 0; b < buckets; ++b) {
    s.bucket_paths_.push_back(fmt::format("{}/{}-{}.bucket", dir, name, b));
    SEER_ASSIGN_OR_RETURN(SequentialWriter writer, SequentialWriter::Create(s.bucket_paths_.back()));
    s.buckets_.push_back(std::move(writer));
  }
  return s;
}

DenseScatter::~DenseScatter() { RemoveBuckets(); }

Status DenseScatter::Set(int64_t index, int64_t value) {
  if (index < 0 || index >= count_) {
    return InvalidArgument(fmt::format("DenseScatter: index {} outside [0, {})", index, count_));
  }
  if (buckets_.empty()) {
    Store(index, value);
    return Status::Ok();
  }
  const Entry entry{index, value};
  return buckets_[static_cast<size_t>(index / range_)].Write(&entry, sizeof entry);
}

// Random stores into a large table miss the cache: each slot is prefetched when stored
// and written kBatch stores later, so the misses overlap instead of stalling in turn.
void DenseScatter::Store(int64_t slot, int64_t value) {
  __builtin_prefetch(&table_[static_cast<size_t>(slot)], 1);
  pending_[pending_count_++] = Entry{slot, value};
  if (pending_count_ == kBatch) FlushPending();
}

void DenseScatter::FlushPending() {
  for (int i = 0; i < pending_count_; ++i) table_[static_cast<size_t>(pending_[i].index)] = pending_[i].value;
  pending_count_ = 0;
}

Status DenseScatter::WriteTo(SequentialWriter& out) {
  if (buckets_.empty()) {
    FlushPending();
    SEER_RETURN_IF_ERROR(out.Write(table_.data(), table_.size() * sizeof(int64_t)));
    std::vector<int64_t>().swap(table_);
    return Status::Ok();
  }
  for (auto& bucket : buckets_) SEER_RETURN_IF_ERROR(bucket.Close());
  buckets_.clear();
  for (size_t b = 0; b < bucket_paths_.size(); ++b) {
    const int64_t first = static_cast<int64_t>(b) * range_;
    const int64_t n = std::min(range_, count_ - first);
    table_.assign(static_cast<size_t>(n), unset_);
    SEER_ASSIGN_OR_RETURN(SequentialReader in, SequentialReader::Open(bucket_paths_[b]));
    for (;;) {
      Entry entry;
      SEER_ASSIGN_OR_RETURN(bool more, in.Read(&entry, sizeof entry));
      if (!more) break;
      Store(entry.index - first, entry.value);
    }
    FlushPending();
    SEER_RETURN_IF_ERROR(out.Write(table_.data(), table_.size() * sizeof(int64_t)));
    ::unlink(bucket_paths_[b].c_str());
  }
  std::vector<int64_t>().swap(table_);
  bucket_paths_.clear();
  return Status::Ok();
}

void DenseScatter::RemoveBuckets() {
  buckets_.clear();
  for (const std::string& path : bucket_paths_) ::unlink(path.c_str());
  bucket_paths_.clear();
}

}  // namespace seer
