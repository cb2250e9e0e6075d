#pragma once
// CompactIndptr: the CSC offsets array (indptr.bin, int64[num_nodes+1]) held in ~4.1 bytes
// per node instead of 8, with O(1) exact lookups.
//
// Layout: entries are grouped in blocks of kBlock = 64 consecutive indices. Each block keeps
// one 64-bit anchor (the block's first value) and every entry a 32-bit offset from it:
//   indptr[i] = anchors_[i / 64] + offsets_[i]
// = 4 B/entry + 8 B/64 entries = 4.125 B per node.
// Fallback: a block whose span (last value - first value) is >= 2^32 edges cannot use 32-bit
// offsets; it is stored "wide": its anchor is -(1 + w) and its 64 entries are kept as absolute
// int64 values in wide_[w * 64 ..]. Such a block holds > 4 G edges for 64 nodes (a degree
// > 67 M on average), so wide blocks are rare; each costs 512 B extra. ResidentBytes() counts them.
//
// Built by streaming indptr.bin through a fixed 1 MiB buffer (no int64[N+1] copy in RAM),
// checking that it starts at 0, never decreases and ends at num_edges.
// Immutable after construction; concurrent const use is thread-safe.
#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"

namespace seer {

class Dataset;

class CompactIndptr {
 public:
  static constexpr int64_t kBlockShift = 6;
  static constexpr int64_t kBlock = int64_t{1} << kBlockShift;

  CompactIndptr() = default;
  // Implicit from a plain array (tests and small in-memory graphs pass std::vector<int64_t>
  // where a CompactIndptr is taken); std::invalid_argument when FromVector refuses it.
  CompactIndptr(const std::vector<int64_t>& values);  // NOLINT(google-explicit-constructor)

  // Streams DATASET/indptr.bin (num_nodes + 1 entries, from the manifest).
  static Result<CompactIndptr> Load(const Dataset& dataset);
  // Streams `count` int64 entries of `path`; `expect_last` < 0 skips the last-value check.
  static Result<CompactIndptr> LoadFile(const std::string& path, int64_t count, int64_t expect_last);
  // From values in RAM (tests, small graphs); same checks, `what` names the source in errors.
  static Result<CompactIndptr> FromValues(const int64_t* values, int64_t count,
                                          const std::string& what = "indptr");
  static Result<CompactIndptr> FromVector(const std::vector<int64_t>& values,
                                          const std::string& what = "indptr") {
    return FromValues(values.data(), static_cast<int64_t>(values.size()), what);
  }

  // Entry i, 0 <= i < size().
  int64_t operator[](int64_t i) const {
    const int64_t anchor = anchors_[static_cast<size_t>(i >> kBlockShift)];
    if (anchor >= 0) [[likely]] {
      return anchor + static_cast<int64_t>(offsets_[static_cast<size_t>(i)]);
    }
    return wide_[static_cast<size_t>(((-anchor - 1) << kBlockShift) + (i & (kBlock - 1)))];
  }
  int64_t size() const { return size_; }  // num_nodes + 1 (0 when empty)
  bool empty() const { return size_ == 0; }
  int64_t front() const { return (*this)[0]; }
  int64_t back() const { return (*this)[size_ - 1]; }
  int64_t num_nodes() const { return size_ > 0 ? size_ - 1 : 0; }
  // In-degree of v in the CSC graph: indptr[v+1] - indptr[v].
  int64_t Degree(int64_t v) const { return (*this)[v + 1] - (*this)[v]; }

  // Bytes held (anchors + offsets + wide blocks), what the memory split accounts for.
  int64_t ResidentBytes() const;
  // Bytes a CompactIndptr of `count` entries holds without wide blocks (for budgeting before
  // loading): 4 * count + 8 * ceil(count / 64).
  static int64_t EstimateBytes(int64_t count);
  int64_t wide_blocks() const { return static_cast<int64_t>(wide_.size()) >> kBlockShift; }

  std::vector<int64_t> ToVector() const;  // the whole array (tests, small graphs)

 private:
  class Builder;
  int64_t size_ = 0;
  std::vector<int64_t> anchors_;   // per block: first value, or -(1 + w) for wide block w
  std::vector<uint32_t> offsets_;  // per entry: value - anchor (unused in wide blocks)
  std::vector<int64_t> wide_;      // kBlock absolute values per wide block
};

}  // namespace seer
