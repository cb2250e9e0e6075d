// Pass 1's edges staged as uint32 pairs for the CSC builder's later passes
// (storage/prep/csc_builder.cc only): EdgeStager writes them (O_DIRECT where allowed, by
// the background writer), StagedEdgeSource reads them back as an EdgeSource. Internal to
// storage/prep.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "storage/base/aligned_buffer.h"
#include "storage/base/status.h"
#include "storage/prep/csc_parallel_internal.h"
#include "storage/prep/direct_file.h"
#include "storage/prep/edge_list.h"

namespace seer::csc_internal {

// Pass 1's edges kept as uint32 pairs (8 B per edge) in a temporary file, for a source
// that is costly to read again (text: parsing, or inflating): the later pass reads them
// back instead of parsing the input a second time. Written like the spill files (O_DIRECT
// where allowed, aligned blocks, the tail carried to the next batch), by the background
// writer while the next batch is parsed. Abandoned (the file dropped, the source read
// again) as soon as an id needs more than 32 bits.
class EdgeStager {
 public:
  static Result<std::unique_ptr<EdgeStager>> Create(const std::string& path) {
    SEER_ASSIGN_OR_RETURN(DirectAppendFile file, DirectAppendFile::Create(path));
    return std::unique_ptr<EdgeStager>(new EdgeStager(std::move(file)));
  }
  // Bytes held per edge of a batch (two buffers of 8 B pairs) and in all.
  static constexpr int64_t kBytesPerEdge = 16;
  static constexpr int64_t kFixedBytes = 4 * kDirectAlign;

  // Appends edges[0, n) (every id < 2^32; the caller checks). The previous batch's write
  // may still run; this batch's buffer was written two batches ago (Start waited).
  Status Add(const Edge* edges, int64_t n, BackgroundWriter& writer) {
    AlignedBuffer& buffer = buffers_[current_];
    const AlignedBuffer& previous = buffers_[current_ ^ 1];
    buffer.Reserve(AlignUp(tail_ + n * 8) + kDirectAlign);
    if (tail_ > 0) std::memcpy(buffer.data(), previous.data() + tail_at_, static_cast<size_t>(tail_));
    uint32_t* out = reinterpret_cast<uint32_t*>(buffer.data() + tail_);  // tail_ is whole pairs
    ParallelChunks(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        out[2 * i] = static_cast<uint32_t>(edges[i].src);
        out[2 * i + 1] = static_cast<uint32_t>(edges[i].dst);
      }
    });
    const int64_t bytes = tail_ + n * 8;
    const int64_t now = file_.direct() ? AlignDown(bytes) : bytes;
    tail_ = bytes - now;
    tail_at_ = now;
    edges_ += n;
    current_ ^= 1;
    if (now == 0) return Status::Ok();
    return writer.Start([this, &buffer, now]() -> Status { return file_.AppendAligned(buffer.data(), now); });
  }
  // Writes the last tail and closes the file.
  Status Finish(BackgroundWriter& writer) {
    SEER_RETURN_IF_ERROR(writer.Wait());
    for (AlignedBuffer& b : buffers_) {
      if (b.data() == nullptr) b.Reserve(kDirectAlign);
    }
    return file_.Finish(buffers_[current_ ^ 1].data() + tail_at_, tail_);
  }
  int64_t edges() const { return edges_; }
  bool direct() const { return file_.direct(); }
  const std::string& path() const { return file_.path(); }

 private:
  explicit EdgeStager(DirectAppendFile file) : file_(std::move(file)) {}
  DirectAppendFile file_;
  AlignedBuffer buffers_[2];
  int current_ = 0;
  int64_t tail_ = 0, tail_at_ = 0;  // bytes not yet written, where in the last buffer
  int64_t edges_ = 0;
};

// Reads a staged file back as edges (see EdgeStager), in chunks of whole aligned blocks.
class StagedEdgeSource : public EdgeSource {
 public:
  StagedEdgeSource(std::string path, int64_t num_edges, int64_t num_nodes, std::string name, bool direct)
      : path_(std::move(path)), num_edges_(num_edges), num_nodes_(num_nodes), name_(std::move(name)),
        direct_(direct) {}
  Status Rewind() override {
    SEER_ASSIGN_OR_RETURN(DirectReadFile file, DirectReadFile::Open(path_, direct_));
    if (file.size() != num_edges_ * 8) {
      return Corrupt("staged edges " + path_ + " have " + std::to_string(file.size()) + " bytes, expected " +
                     std::to_string(num_edges_ * 8));
    }
    file_ = std::make_unique<DirectReadFile>(std::move(file));
    offset_ = 0;
    at_ = have_ = 0;
    return Status::Ok();
  }
  Result<int64_t> Read(Edge* out, int64_t max_edges) override {
    if (!file_) SEER_RETURN_IF_ERROR(Rewind());
    if (at_ == have_) {
      const int64_t size = num_edges_ * 8;
      if (offset_ == size) return int64_t{0};
      const int64_t chunk = std::max(kDirectAlign, AlignDown(max_edges * 8));
      buffer_.Reserve(chunk);
      const int64_t len = std::min(chunk, size - offset_);
      SEER_RETURN_IF_ERROR(file_->Read(buffer_.data(), offset_, len));
      offset_ += len;
      at_ = 0;
      have_ = len / 8;
    }
    const int64_t n = std::min(max_edges, have_ - at_);
    const uint32_t* pairs = reinterpret_cast<const uint32_t*>(buffer_.data()) + 2 * at_;
    ParallelChunks(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = Edge{pairs[2 * i], pairs[2 * i + 1]};
    });
    at_ += n;
    return n;
  }
  int64_t num_nodes() const override { return num_nodes_; }
  int64_t num_edges_hint() const override { return num_edges_; }
  std::string name() const override { return name_; }
  int64_t BufferBytes(int64_t max_edges) const override { return AlignUp(max_edges * 8); }

 private:
  std::string path_;
  int64_t num_edges_, num_nodes_;
  std::string name_;
  bool direct_;
  std::unique_ptr<DirectReadFile> file_;
  AlignedBuffer buffer_;
  int64_t offset_ = 0, at_ = 0, have_ = 0;
};

}  // namespace seer::csc_internal
