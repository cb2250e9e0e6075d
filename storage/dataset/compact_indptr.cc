#include "storage/dataset/compact_indptr.h"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/dataset.h"

namespace seer {

// Takes the values in order, one block at a time; checks start, order and count.
class CompactIndptr::Builder {
 public:
  Builder(int64_t count, std::string what) : what_(std::move(what)) {
    out_.size_ = count;
    out_.offsets_.resize(static_cast<size_t>(count));
    out_.anchors_.reserve(static_cast<size_t>((count + kBlock - 1) >> kBlockShift));
  }

  Status Append(const int64_t* values, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t v = values[k];
      if (next_ == 0 && v != 0) {
        return Corrupt(what_ + ": indptr must start at 0 (found " + std::to_string(v) + ")");
      }
      if (v < prev_) {
        return Corrupt(what_ + ": indptr decreases at entry " + std::to_string(next_) + " (" +
                       std::to_string(prev_) + " then " + std::to_string(v) + ")");
      }
      prev_ = v;
      block_[static_cast<size_t>(next_ & (kBlock - 1))] = v;
      ++next_;
      if ((next_ & (kBlock - 1)) == 0) Flush();
    }
    return Status::Ok();
  }

  Result<CompactIndptr> Finish(int64_t expect_last) {
    if (next_ != out_.size_) {
      return Corrupt(what_ + ": " + std::to_string(next_) + " entries, expected " +
                     std::to_string(out_.size_));
    }
    if ((next_ & (kBlock - 1)) != 0) Flush();
    if (expect_last >= 0 && out_.size_ > 0 && prev_ != expect_last) {
      return Corrupt(what_ + ": indptr must end at num_edges=" + std::to_string(expect_last) +
                     " (found " + std::to_string(prev_) + ")");
    }
    return std::move(out_);
  }

 private:
  void Flush() {
    const int64_t first_index = ((next_ - 1) >> kBlockShift) << kBlockShift;
    const int64_t n = next_ - first_index;
    const int64_t first = block_[0];
    const int64_t span = block_[static_cast<size_t>(n - 1)] - first;
    if (span <= int64_t{0xFFFFFFFF}) {
      out_.anchors_.push_back(first);
      for (int64_t k = 0; k < n; ++k) {
        out_.offsets_[static_cast<size_t>(first_index + k)] =
            static_cast<uint32_t>(block_[static_cast<size_t>(k)] - first);
      }
    } else {
      const int64_t w = static_cast<int64_t>(out_.wide_.size()) >> kBlockShift;
      out_.anchors_.push_back(-(w + 1));
      out_.wide_.insert(out_.wide_.end(), block_.begin(), block_.end());
      for (int64_t k = 0; k < n; ++k) out_.offsets_[static_cast<size_t>(first_index + k)] = 0;
    }
  }

  std::string what_;
  CompactIndptr out_;
  std::array<int64_t, kBlock> block_{};
  int64_t next_ = 0;
  int64_t prev_ = 0;
};

Result<CompactIndptr> CompactIndptr::FromValues(const int64_t* values, int64_t count,
                                                const std::string& what) {
  if (count < 0) return InvalidArgument(what + ": negative entry count");
  Builder b(count, what);
  SEER_RETURN_IF_ERROR(b.Append(values, count));
  return b.Finish(-1);
}

CompactIndptr::CompactIndptr(const std::vector<int64_t>& values) {
  Result<CompactIndptr> built = FromVector(values);
  if (!built.ok()) throw std::invalid_argument(built.status().message());
  *this = std::move(built).value();
}

Result<CompactIndptr> CompactIndptr::LoadFile(const std::string& path, int64_t count,
                                              int64_t expect_last) {
  if (count < 0) return InvalidArgument(path + ": negative entry count");
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  const int64_t want = count * static_cast<int64_t>(sizeof(int64_t));
  if (size < want) {
    return Status(StatusCode::kUnexpectedEof,
                  path + ": " + std::to_string(size) + " bytes, expected " + std::to_string(want));
  }
  Builder b(count, path);
  constexpr int64_t kChunk = int64_t{1} << 17;  // entries per read: 1 MiB
  std::vector<int64_t> buf(static_cast<size_t>(std::min(count, kChunk)));
  for (int64_t at = 0; at < count; at += kChunk) {
    const int64_t n = std::min(kChunk, count - at);
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), buf.data(), n * 8, at * 8, path));
    SEER_RETURN_IF_ERROR(b.Append(buf.data(), n));
  }
  return b.Finish(expect_last);
}

Result<CompactIndptr> CompactIndptr::Load(const Dataset& dataset) {
  return LoadFile(dataset.PathOf(dataset_files::kIndptr), dataset.manifest().num_nodes + 1,
                  dataset.manifest().num_edges);
}

int64_t CompactIndptr::ResidentBytes() const {
  return static_cast<int64_t>(anchors_.capacity() * sizeof(int64_t) +
                              offsets_.capacity() * sizeof(uint32_t) +
                              wide_.capacity() * sizeof(int64_t));
}

int64_t CompactIndptr::EstimateBytes(int64_t count) {
  return 4 * count + 8 * ((count + kBlock - 1) >> kBlockShift);
}

std::vector<int64_t> CompactIndptr::ToVector() const {
  std::vector<int64_t> out(static_cast<size_t>(size_));
  for (int64_t i = 0; i < size_; ++i) out[static_cast<size_t>(i)] = (*this)[i];
  return out;
}

}  // namespace seer
