// Internal to inspector/: the byte layout of one .sbt batch record (inspector/README.md),
// written through any sink with Word(int64), Bytes(ptr, n) and PadTo8(), so the in-RAM
// serializer (trace_store.cc) and the streaming writer (trace_stream.cc) emit the same bytes.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "inspector/trace.h"
#include "storage/base/aligned_buffer.h"

namespace seer::trace_format {

inline int64_t RecordBytes(const BatchTrace& b) {
  int64_t bytes = 8 * (6 + 3 * static_cast<int64_t>(b.blocks.size()));
  bytes += 8 * static_cast<int64_t>(b.node_ids.size());
  for (const LayerBlock& l : b.blocks) {
    bytes += 8 * (l.num_dst + 1);
    bytes += AlignUp(4 * static_cast<int64_t>(l.col_idx.size()), 8);
  }
  return bytes;
}

template <typename Sink>
void WriteRecord(Sink& w, const BatchTrace& b) {
  w.Word(RecordBytes(b));
  w.Word(b.epoch);
  w.Word(b.batch_index);
  w.Word(b.num_seeds);
  w.Word(static_cast<int64_t>(b.node_ids.size()));
  w.Word(static_cast<int64_t>(b.blocks.size()));
  for (const LayerBlock& l : b.blocks) {
    w.Word(l.num_dst);
    w.Word(l.num_src);
    w.Word(static_cast<int64_t>(l.col_idx.size()));
  }
  w.Bytes(b.node_ids.data(), 8 * static_cast<int64_t>(b.node_ids.size()));
  for (const LayerBlock& l : b.blocks) {
    if (static_cast<int64_t>(l.row_ptr.size()) != l.num_dst + 1) {
      throw std::logic_error("trace record: row_ptr size != num_dst + 1");
    }
    w.Bytes(l.row_ptr.data(), 8 * static_cast<int64_t>(l.row_ptr.size()));
    w.Bytes(l.col_idx.data(), 4 * static_cast<int64_t>(l.col_idx.size()));
    w.PadTo8();
  }
}

// The 8-word file header.
template <typename Sink>
void WriteFileHeader(Sink& w, int64_t epoch, int64_t superbatch_index, int64_t num_batches, int64_t file_bytes) {
  w.Word(static_cast<int64_t>(0x3154425352454553ULL));
  w.Word(1);
  w.Word(epoch);
  w.Word(superbatch_index);
  w.Word(num_batches);
  w.Word(file_bytes);
  w.Word(0);
  w.Word(0);
}

}  // namespace seer::trace_format
