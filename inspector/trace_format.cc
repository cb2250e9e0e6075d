#include "inspector/trace_format.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "storage/base/aligned_buffer.h"
#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"

namespace seer {

namespace {

int64_t WordAt(const char* data, int64_t at) {
  int64_t v;
  std::memcpy(&v, data + at, 8);
  return v;
}

// Word/Bytes/PadTo8 into a byte array that is large enough (EncodeTraceRecord's sink).
class MemorySink {
 public:
  explicit MemorySink(char* out) : out_(out) {}
  void Word(int64_t v) { Bytes(&v, 8); }
  void Bytes(const void* data, int64_t n) {
    if (n > 0) std::memcpy(out_ + pos_, data, static_cast<size_t>(n));
    pos_ += n;
  }
  void PadTo8() {
    while (pos_ % 8 != 0) out_[pos_++] = 0;
  }
  int64_t pos() const { return pos_; }

 private:
  char* out_;
  int64_t pos_ = 0;
};

}  // namespace

Status TraceCorrupt(const std::string& path, int64_t offset, const std::string& what) {
  return Corrupt(fmt::format("{}: trace file corrupt at byte offset {}: {}", path, offset, what));
}

// ---- File header ------------------------------------------------------------------------

std::array<int64_t, kTraceFileHeaderWords> EncodeTraceFileHeader(const TraceFileHeader& h) {
  return {static_cast<int64_t>(kTraceFileMagic), kTraceFileVersion, h.epoch, h.superbatch_index,
          h.num_batches, h.file_bytes, h.num_relations, 0};
}

Result<TraceFileHeader> DecodeTraceFileHeader(const char* data, int64_t file_size, const std::string& path) {
  if (file_size < kTraceFileHeaderBytes) return TraceCorrupt(path, 0, "shorter than the file header");
  if (static_cast<uint64_t>(WordAt(data, 0)) != kTraceFileMagic) return TraceCorrupt(path, 0, "bad magic");
  const int64_t version = WordAt(data, 8);
  if (version != kTraceFileVersion) {
    return TraceCorrupt(path, 8,
                        version == 1 ? std::string("version 1 (written by an older seer, before link prediction): "
                                                   "sample it again")
                                     : fmt::format("unsupported version {}", version));
  }
  TraceFileHeader h;
  h.epoch = WordAt(data, 16);
  h.superbatch_index = WordAt(data, 24);
  h.num_batches = WordAt(data, 32);
  h.file_bytes = WordAt(data, 40);
  if (h.file_bytes != file_size) {
    return TraceCorrupt(path, 40, fmt::format("header says {} bytes, file has {}", h.file_bytes, file_size));
  }
  if (h.num_batches < 0 || h.num_batches > file_size / 8) return TraceCorrupt(path, 32, "bad batch count");
  h.num_relations = WordAt(data, 48);
  if (h.num_relations < 0 || h.num_relations > kTraceMaxRelations) {
    return TraceCorrupt(path, 48, fmt::format("bad relation count {} (0 = homogeneous, at most {})", h.num_relations,
                                              kTraceMaxRelations));
  }
  return h;
}

// ---- One batch record -------------------------------------------------------------------

int64_t TraceRecordBytes(const BatchTrace& b) {
  int64_t bytes = 8 * (kTraceRecordHeaderWords + 3 * static_cast<int64_t>(b.blocks.size()));
  bytes += 8 * static_cast<int64_t>(b.node_ids.size());
  for (const LayerBlock& l : b.blocks) {
    bytes += 8 * (l.num_dst + 1);
    bytes += AlignUp(4 * static_cast<int64_t>(l.col_idx.size()), 8);
    bytes += AlignUp(static_cast<int64_t>(l.edge_rel.size()), 8);
  }
  if (!b.link.empty()) bytes += AlignUp(4 * (2 * b.link.num_pairs() + TraceLinkNegatives(b.link)), 8);
  return bytes;
}

void CheckTraceRecordKind(const BatchTrace& b, int64_t num_relations) {
  if (num_relations < 0 || num_relations > kTraceMaxRelations) {
    throw std::logic_error(fmt::format("trace record: {} relations (0 = homogeneous, at most {})", num_relations,
                                       kTraceMaxRelations));
  }
  for (const LayerBlock& l : b.blocks) {
    if (num_relations == 0) {
      if (!l.edge_rel.empty()) {
        throw std::logic_error("trace record: a typed batch (edge_rel) in a homogeneous trace: give the trace "
                               "the dataset's relation count (SuperbatchTrace::num_relations, TraceFileWriter::Create)");
      }
      continue;
    }
    if (l.edge_rel.size() != l.col_idx.size()) {
      throw std::logic_error(fmt::format("trace record: edge_rel has {} entries for {} edges in a typed trace",
                                         l.edge_rel.size(), l.col_idx.size()));
    }
    uint8_t most = 0;
    for (uint8_t r : l.edge_rel) most = std::max(most, r);
    if (!l.edge_rel.empty() && most >= num_relations) {
      throw std::logic_error(fmt::format("trace record: relation {} in a trace of {} relations", most, num_relations));
    }
  }
}

namespace {
// The link section's bytes for the header's counts (0 without pairs); -1 when the counts
// are out of range.
int64_t LinkSectionBytes(const TraceRecordHeader& h) {
  if (h.num_pairs == 0) return h.negatives_per_pair == 0 && !h.shared_negatives ? 0 : -1;
  if (h.num_pairs < 0 || h.negatives_per_pair < 0 || h.num_pairs > h.record_bytes ||
      h.negatives_per_pair > h.record_bytes) {
    return -1;
  }
  const int64_t negatives = h.shared_negatives ? h.negatives_per_pair : h.num_pairs * h.negatives_per_pair;
  if (negatives > h.record_bytes) return -1;
  return AlignUp(4 * (2 * h.num_pairs + negatives), 8);
}
}  // namespace

Result<TraceRecordHeader> DecodeTraceRecordHeader(const char* data, int64_t avail, int64_t file_offset,
                                                  const std::string& path) {
  if (avail < kTraceRecordHeaderBytes) return TraceCorrupt(path, file_offset, "truncated record");
  TraceRecordHeader h;
  h.record_bytes = WordAt(data, 0);
  h.epoch = WordAt(data, 8);
  h.batch_index = WordAt(data, 16);
  h.num_seeds = WordAt(data, 24);
  h.num_nodes = WordAt(data, 32);
  h.num_layers = WordAt(data, 40);
  h.num_pairs = WordAt(data, 48);
  h.negatives_per_pair = WordAt(data, 56);
  const int64_t shared = WordAt(data, 64);
  h.shared_negatives = shared == 1;
  const int64_t bytes = h.record_bytes;
  if ((shared != 0 && shared != 1) || LinkSectionBytes(h) < 0) {
    return TraceCorrupt(path, file_offset + 48, "bad link pair counts");
  }
  if (bytes <= 0 || bytes % 8 != 0 || bytes > avail || h.num_nodes < 0 || h.num_nodes > bytes / 8 ||
      h.num_layers < 0 || h.num_layers > bytes / 24 || h.num_seeds < 0 || h.num_seeds > h.num_nodes) {
    return TraceCorrupt(path, file_offset, "bad batch record header");
  }
  if (h.node_ids_offset() + 8 * h.num_nodes > bytes) {
    return TraceCorrupt(path, file_offset, "record size does not match its counts");
  }
  return h;
}

Status ParseTraceRecord(const char* data, int64_t avail, int64_t file_offset, const std::string& path,
                        BatchTrace* out, int64_t* record_bytes_out, int64_t num_relations) {
  if (num_relations < 0 || num_relations > kTraceMaxRelations) {
    throw std::logic_error(fmt::format("ParseTraceRecord: {} relations", num_relations));
  }
  auto corrupt = [&](int64_t local, const std::string& what) {
    return TraceCorrupt(path, file_offset + local, what);
  };
  SEER_ASSIGN_OR_RETURN(const TraceRecordHeader h, DecodeTraceRecordHeader(data, avail, file_offset, path));
  BatchTrace& b = *out;
  b.epoch = h.epoch;
  b.batch_index = h.batch_index;
  b.num_seeds = h.num_seeds;
  int64_t pos = kTraceRecordHeaderBytes;
  b.blocks.resize(static_cast<size_t>(h.num_layers));
  int64_t need = h.node_ids_offset() + 8 * h.num_nodes;
  for (LayerBlock& l : b.blocks) {
    l.num_dst = WordAt(data, pos);
    l.num_src = WordAt(data, pos + 8);
    const int64_t num_edges = WordAt(data, pos + 16);
    if (l.num_dst < 0 || l.num_src < l.num_dst || l.num_src > h.num_nodes || num_edges < 0 ||
        num_edges > h.record_bytes) {
      return corrupt(pos, "bad layer header");
    }
    l.col_idx.resize(static_cast<size_t>(num_edges));
    need += 8 * (l.num_dst + 1) + AlignUp(4 * num_edges, 8);
    if (num_relations > 0) need += AlignUp(num_edges, 8);
    pos += 24;
  }
  need += LinkSectionBytes(h);
  if (need != h.record_bytes) return corrupt(0, "record size does not match its counts");
  b.node_ids.resize(static_cast<size_t>(h.num_nodes));
  if (h.num_nodes > 0) std::memcpy(b.node_ids.data(), data + pos, static_cast<size_t>(8 * h.num_nodes));
  pos += 8 * h.num_nodes;
  for (LayerBlock& l : b.blocks) {
    l.row_ptr.resize(static_cast<size_t>(l.num_dst + 1));
    std::memcpy(l.row_ptr.data(), data + pos, static_cast<size_t>(8 * (l.num_dst + 1)));
    const int64_t row_ptr_at = pos;
    pos += 8 * (l.num_dst + 1);
    if (!l.col_idx.empty()) std::memcpy(l.col_idx.data(), data + pos, 4 * l.col_idx.size());
    if (l.row_ptr[0] != 0 || l.row_ptr.back() != static_cast<int64_t>(l.col_idx.size())) {
      return corrupt(row_ptr_at, "row_ptr does not span col_idx");
    }
    for (size_t d = 0; d + 1 < l.row_ptr.size(); ++d) {
      if (l.row_ptr[d] > l.row_ptr[d + 1]) return corrupt(row_ptr_at, "row_ptr decreases");
    }
    for (int32_t c : l.col_idx) {
      if (c < 0 || c >= l.num_src) return corrupt(pos, "col_idx entry outside [0, num_src)");
    }
    pos += AlignUp(4 * static_cast<int64_t>(l.col_idx.size()), 8);
    if (num_relations == 0) {
      l.edge_rel.clear();
      continue;
    }
    l.edge_rel.resize(l.col_idx.size());
    if (!l.edge_rel.empty()) std::memcpy(l.edge_rel.data(), data + pos, l.edge_rel.size());
    for (size_t j = 0; j < l.edge_rel.size(); ++j) {
      if (l.edge_rel[j] >= num_relations) {
        return corrupt(pos + static_cast<int64_t>(j),
                       fmt::format("edge_rel entry {} is not one of the trace's {} relations", l.edge_rel[j],
                                   num_relations));
      }
    }
    pos += AlignUp(static_cast<int64_t>(l.edge_rel.size()), 8);
  }
  b.link = LinkPairs();
  if (h.num_pairs > 0) {
    LinkPairs& link = b.link;
    link.negatives_per_pair = h.negatives_per_pair;
    link.shared_negatives = h.shared_negatives;
    const int64_t negatives = h.shared_negatives ? h.negatives_per_pair : h.num_pairs * h.negatives_per_pair;
    const int64_t link_at = pos;
    for (auto [field, count] : {std::pair{&link.src, h.num_pairs}, std::pair{&link.dst, h.num_pairs},
                                std::pair{&link.neg, negatives}}) {
      field->resize(static_cast<size_t>(count));
      if (count > 0) std::memcpy(field->data(), data + pos, static_cast<size_t>(4 * count));
      pos += 4 * count;
    }
    for (const auto* field : {&link.src, &link.dst, &link.neg}) {
      for (int32_t p : *field) {
        if (p < 0 || p >= h.num_seeds) return corrupt(link_at, "link pair position outside the seeds");
      }
    }
  }
  *record_bytes_out = h.record_bytes;
  return Status::Ok();
}

// ---- A whole superbatch in RAM ----------------------------------------------------------

int64_t SerializedTraceBytes(const SuperbatchTrace& trace) {
  int64_t bytes = kTraceFileHeaderBytes;
  for (const BatchTrace& b : trace.batches) bytes += TraceRecordBytes(b);
  return bytes;
}

std::string SerializeTrace(const SuperbatchTrace& trace) {
  const int64_t bytes = SerializedTraceBytes(trace);
  std::string out(static_cast<size_t>(bytes), '\0');
  const auto header = EncodeTraceFileHeader(
      {trace.epoch, trace.superbatch_index, static_cast<int64_t>(trace.batches.size()), bytes, trace.num_relations});
  MemorySink w(out.data());
  w.Bytes(header.data(), kTraceFileHeaderBytes);
  for (const BatchTrace& b : trace.batches) EncodeTraceRecord(w, b, trace.num_relations);
  if (w.pos() != bytes) throw std::logic_error("SerializeTrace: size mismatch");
  return out;
}

Result<SuperbatchTrace> ParseTrace(const char* data, int64_t size_bytes, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const TraceFileHeader header, DecodeTraceFileHeader(data, size_bytes, path));
  SuperbatchTrace trace;
  trace.epoch = header.epoch;
  trace.superbatch_index = header.superbatch_index;
  trace.num_relations = header.num_relations;
  trace.batches.resize(static_cast<size_t>(header.num_batches));
  int64_t pos = kTraceFileHeaderBytes;
  for (BatchTrace& b : trace.batches) {
    int64_t record_bytes = 0;
    SEER_RETURN_IF_ERROR(
        ParseTraceRecord(data + pos, size_bytes - pos, pos, path, &b, &record_bytes, header.num_relations));
    pos += record_bytes;
  }
  if (pos != size_bytes) return TraceCorrupt(path, pos, "trailing bytes after the last record");
  return trace;
}

Status WriteTraceFile(const std::string& path, const SuperbatchTrace& trace) {
  return WriteFileAtomically(path, SerializeTrace(trace));
}

Result<SuperbatchTrace> ReadTraceFile(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  return ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()), path);
}

}  // namespace seer
