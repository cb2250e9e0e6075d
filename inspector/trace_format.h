// The superbatch trace file format (".sbt", version 2; docs/formats.md "Trace files"):
// its one home. Everything that knows where a word sits in a .sbt file is here — the
// magic, version and header sizes, the file header, one batch record's layout, its size,
// its encoding and its checked decoding — plus the whole-superbatch codec in RAM.
//
//   file header, 8 words: magic 0x3154425352454553 ("SEERSBT1"), version 2, epoch,
//     superbatch_index, num_batches, file_bytes, num_relations, 0
//     (num_relations: 0 for a homogeneous dataset's trace — files written before typed
//     datasets have 0 there — else the typed dataset's relation count, 1..256)
//   then num_batches batch records, each:
//     9 words: record_bytes (this record, header included; a multiple of 8), epoch,
//              batch_index, num_seeds, num_nodes, num_layers,
//              num_pairs, negatives_per_pair, shared_negatives (0/1) (link prediction;
//              0, 0, 0 for node classification)
//     3 words per layer (input layer first): num_dst, num_src, num_edges
//     int64 node_ids[num_nodes]                           (seeds first)
//     per layer: int64 row_ptr[num_dst+1], int32 col_idx[num_edges], zero-padded to 8 bytes,
//       and only when num_relations > 0: uint8 edge_rel[num_edges] (each < num_relations),
//       zero-padded to 8 bytes (a homogeneous trace's records are as they always were)
//     link pairs: int32 src[num_pairs], int32 dst[num_pairs], int32 neg[num_pairs *
//       negatives_per_pair, or negatives_per_pair when shared], zero-padded to 8 bytes
//       (positions into the seeds: inspector/trace.h LinkPairs); absent when num_pairs = 0
// Version 1 (before link prediction) had 6-word record headers and no pairs: such files
// are refused by their version (they are derived data: sample again).
//
// Every word is a little-endian int64, so numpy reads a file with np.fromfile(path, "<i8").
// The streaming writer and readers (trace_stream.h) and the trace directory
// (trace_directory.h) build on this file; it builds on nothing of theirs.
//
// Decoding never trusts the bytes: every error is kCorrupt "PATH: trace file corrupt at
// byte offset N: WHAT", N the absolute offset of the first inconsistency. Plain
// functions, no state: thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "inspector/trace.h"
#include "storage/base/status.h"

namespace seer {

inline constexpr uint64_t kTraceFileMagic = 0x3154425352454553ULL;  // "SEERSBT1" LE
inline constexpr int64_t kTraceFileVersion = 2;
inline constexpr int64_t kTraceFileHeaderWords = 8;
inline constexpr int64_t kTraceFileHeaderBytes = 8 * kTraceFileHeaderWords;
inline constexpr int64_t kTraceRecordHeaderWords = 9;
inline constexpr int64_t kTraceRecordHeaderBytes = 8 * kTraceRecordHeaderWords;
// LayerBlock::edge_rel is a uint8: a typed trace has 1..256 relations.
inline constexpr int64_t kTraceMaxRelations = 256;

// kCorrupt "PATH: trace file corrupt at byte offset OFFSET: WHAT".
Status TraceCorrupt(const std::string& path, int64_t offset, const std::string& what);

// ---- File header ------------------------------------------------------------------------

struct TraceFileHeader {
  int64_t epoch = 0;
  int64_t superbatch_index = 0;
  int64_t num_batches = 0;
  int64_t file_bytes = 0;  // the whole file, header included
  int64_t num_relations = 0;  // 0 = homogeneous; a typed trace's relation count (1..256)
};

std::array<int64_t, kTraceFileHeaderWords> EncodeTraceFileHeader(const TraceFileHeader& header);
// Checks and decodes the header of a file of `file_size` bytes. `data` holds the file's
// first min(file_size, kTraceFileHeaderBytes) bytes. Checks the size, magic, version,
// file_bytes == file_size, a plausible batch count and num_relations in [0, 256]; the
// records are not looked at.
Result<TraceFileHeader> DecodeTraceFileHeader(const char* data, int64_t file_size, const std::string& path);

// ---- One batch record -------------------------------------------------------------------

// How many negative positions `link` holds: num_pairs * k, or k when shared.
inline int64_t TraceLinkNegatives(const LinkPairs& link) {
  return link.empty() ? 0 : (link.shared_negatives ? link.negatives_per_pair : link.num_pairs() * link.negatives_per_pair);
}

// The serialized size of one batch record (in a trace of its kind: edge_rel counted).
int64_t TraceRecordBytes(const BatchTrace& batch);

// Throws std::logic_error unless `batch` fits a trace of `num_relations` relations: with
// 0, no block has edge_rel; else every block's edge_rel is as long as its col_idx and
// below num_relations (<= 256). EncodeTraceRecord checks it before writing anything.
void CheckTraceRecordKind(const BatchTrace& batch, int64_t num_relations);

// Writes one record through `sink`, which has Word(int64_t), Bytes(const void*, int64_t)
// and PadTo8() (the in-RAM serializer and the streaming writer emit the same bytes), for
// a trace of `num_relations` relations (the file header's; 0 = homogeneous).
// Throws std::logic_error when a block's row_ptr is not num_dst + 1 long, or
// CheckTraceRecordKind's.
template <typename Sink>
void EncodeTraceRecord(Sink& w, const BatchTrace& b, int64_t num_relations = 0) {
  CheckTraceRecordKind(b, num_relations);
  w.Word(TraceRecordBytes(b));
  w.Word(b.epoch);
  w.Word(b.batch_index);
  w.Word(b.num_seeds);
  w.Word(static_cast<int64_t>(b.node_ids.size()));
  w.Word(static_cast<int64_t>(b.blocks.size()));
  w.Word(b.link.num_pairs());  // without pairs: 0, 0, 0
  w.Word(b.link.empty() ? 0 : b.link.negatives_per_pair);
  w.Word(!b.link.empty() && b.link.shared_negatives ? 1 : 0);
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
    if (num_relations > 0) {
      w.Bytes(l.edge_rel.data(), static_cast<int64_t>(l.edge_rel.size()));
      w.PadTo8();
    }
  }
  if (!b.link.empty()) {
    if (b.link.dst.size() != b.link.src.size() ||
        static_cast<int64_t>(b.link.neg.size()) != TraceLinkNegatives(b.link)) {
      throw std::logic_error("trace record: link pairs of inconsistent sizes");
    }
    w.Bytes(b.link.src.data(), 4 * b.link.num_pairs());
    w.Bytes(b.link.dst.data(), 4 * b.link.num_pairs());
    w.Bytes(b.link.neg.data(), 4 * static_cast<int64_t>(b.link.neg.size()));
    w.PadTo8();
  }
}

// A record's header words, checked against each other (not its blocks).
struct TraceRecordHeader {
  int64_t record_bytes = 0;  // this record, header included
  int64_t epoch = 0, batch_index = 0;
  int64_t num_seeds = 0, num_nodes = 0, num_layers = 0;
  int64_t num_pairs = 0, negatives_per_pair = 0;
  bool shared_negatives = false;
  // Byte offset of node_ids within the record.
  int64_t node_ids_offset() const { return 8 * (kTraceRecordHeaderWords + 3 * num_layers); }
};
// Checks the record header at `data` (avail bytes resident; the record starts at byte
// `file_offset` of `path`): sizes consistent with the counts and within avail.
Result<TraceRecordHeader> DecodeTraceRecordHeader(const char* data, int64_t avail, int64_t file_offset,
                                                  const std::string& path);
// Parses and checks one whole batch record (avail bytes resident at `data`, which starts
// at byte `file_offset` of `path`) of a trace of `num_relations` relations (the file
// header's: 0 = homogeneous, no edge_rel; else every block's edge_rel, each entry checked
// to be below it). *record_bytes = its size.
Status ParseTraceRecord(const char* data, int64_t avail, int64_t file_offset, const std::string& path,
                        BatchTrace* out, int64_t* record_bytes, int64_t num_relations = 0);

// ---- A whole superbatch in RAM ----------------------------------------------------------

// Serialized size in bytes of a superbatch trace file (header + records).
int64_t SerializedTraceBytes(const SuperbatchTrace& trace);
// Serializes into a byte string laid out as above.
std::string SerializeTrace(const SuperbatchTrace& trace);
// Parses bytes laid out as above; `path` only names the source in errors.
Result<SuperbatchTrace> ParseTrace(const char* data, int64_t size_bytes, const std::string& path);

// Writes a whole trace file atomically (AtomicFileWriter: temp + fsync + rename).
Status WriteTraceFile(const std::string& path, const SuperbatchTrace& trace);
// Reads and parses a whole trace file.
Result<SuperbatchTrace> ReadTraceFile(const std::string& path);

}  // namespace seer
