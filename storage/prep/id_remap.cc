#include "storage/prep/id_remap.h"

#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "storage/base/parse_number.h"
#include "storage/base/progress.h"
#include "storage/prep/dense_scatter.h"
#include "storage/prep/node_rows.h"
#include "storage/prep/text_reader.h"
#include "storage/prep/record_sorter.h"

namespace seer {

IdRemap::~IdRemap() = default;  // the scratch directory takes its files with it

namespace {

// The payload of an extra id's record (no endpoint position): sorts after every position.
constexpr uint64_t kNoEdge = ~uint64_t{0};

Status BadId(const std::string& where, std::string_view id, const char* problem) {
  return InvalidArgument(where + ": node id '" + EscapeId(id) + "' has " + problem +
                         ": node_ids.txt (one id per line) could not give it back; clean the ids first");
}

bool IntegerToken(std::string_view token) { return ParseNumber<int64_t>(token).has_value(); }

}  // namespace

Result<std::unique_ptr<IdRemap>> IdRemap::Build(const std::string& text_path, const TextColumns& columns,
                                                int64_t memory_budget_bytes, const std::string& work_dir,
                                                AtomicFileWriter& node_ids, bool show_progress,
                                                const NodeVisitor& on_node, const std::string& extra_ids_path) {
  std::unique_ptr<IdRemap> remap(new IdRemap());
  SEER_ASSIGN_OR_RETURN(remap->scratch_, ScratchDir::Create(work_dir, "remap"));
  // Half the budget for the run being sorted; the rest covers the readers and buffers.
  const int64_t sort_bytes = std::max<int64_t>(memory_budget_bytes / 2, 256 << 10);
  RecordSorter by_id(remap->scratch_.path(), "ids", sort_bytes);
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<TextPairReader> reader, TextPairReader::Open(text_path, columns));
  {
    ProgressReporter progress("remap: reading ids", -1, "edges", show_progress);
    std::string_view src, dst;
    std::string key;
    // The header rule: the first data line waits (held_*) until the file is read.
    bool first = true, held = false, held_elsewhere = false;
    std::string held_src, held_dst, held_line;
    int64_t held_line_number = 0;
    const bool may_hold = columns.header == HeaderRule::kAuto && !columns.named();
    int64_t e = 0;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, reader->Next(&src, &dst));
      if (!more) break;
      if (const char* problem = IdRoundTripProblem(src)) return BadId(reader->Where(), src, problem);
      if (const char* problem = IdRoundTripProblem(dst)) return BadId(reader->Where(), dst, problem);
      if (first) {
        first = false;
        if (may_hold && !IntegerToken(src) && !IntegerToken(dst)) {
          held = true;
          held_src.assign(src);
          held_dst.assign(dst);
          held_line.assign(reader->line());
          held_line_number = reader->line_number();
          continue;
        }
      } else if (held && !held_elsewhere) {
        held_elsewhere = src == held_src || src == held_dst || dst == held_src || dst == held_dst;
      }
      IdSortKeyInto(src, &key);
      SEER_RETURN_IF_ERROR(by_id.Add(key, 2 * static_cast<uint64_t>(e)));
      IdSortKeyInto(dst, &key);
      SEER_RETURN_IF_ERROR(by_id.Add(key, 2 * static_cast<uint64_t>(e) + 1));
      ++e;
      if ((e & 0xffff) == 0) progress.Set(e);
    }
    if (held && !held_elsewhere) {  // a header: "src,dst" names no node
      remap->header_line_ = held_line;
      remap->header_line_number_ = held_line_number;
    } else if (held) {  // data after all: the last edge
      IdSortKeyInto(held_src, &key);
      SEER_RETURN_IF_ERROR(by_id.Add(key, 2 * static_cast<uint64_t>(e)));
      IdSortKeyInto(held_dst, &key);
      SEER_RETURN_IF_ERROR(by_id.Add(key, 2 * static_cast<uint64_t>(e) + 1));
      ++e;
    }
    remap->num_edges_ = e;
    remap->comments_after_data_ = reader->comments_after_data();
    progress.Set(remap->num_edges_);
    progress.Finish();
  }
  if (!extra_ids_path.empty()) {  // checked line by line by NodeRowJoin::Start
    SEER_ASSIGN_OR_RETURN(TextLineReader ids, TextLineReader::Open(extra_ids_path));
    std::string_view line;
    std::string key;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, ids.NextLine(&line));
      if (!more) break;
      const std::string_view id = NodeIdsFileId(line);
      if (id.empty()) continue;
      IdSortKeyInto(id, &key);
      SEER_RETURN_IF_ERROR(by_id.Add(key, kNoEdge));
    }
  }
  // Merge 1: distinct ids in order -> dense numbers, the mapping file, and the dense id
  // of every endpoint position (a DenseScatter: positions are 0..2E-1, no sort needed).
  SEER_RETURN_IF_ERROR(by_id.StartMerge());
  SEER_ASSIGN_OR_RETURN(DenseScatter by_position, DenseScatter::Create(remap->scratch_.path(), "positions",
                                                                       2 * remap->num_edges_, sort_bytes));
  remap->original_ids_path_ = remap->scratch_.File("original_ids.bin");
  SEER_ASSIGN_OR_RETURN(SequentialWriter originals, SequentialWriter::Create(remap->original_ids_path_));
  std::string previous;
  bool any = false;
  int64_t dense = -1;
  std::string line;
  for (;;) {
    std::string_view key;
    uint64_t position;
    SEER_ASSIGN_OR_RETURN(bool more, by_id.Next(&key, &position));
    if (!more) break;
    if (!any || key != previous) {
      any = true;
      if (position == kNoEdge) ++remap->isolated_nodes_;  // sorts last: the id has no endpoint
      previous.assign(key);
      ++dense;
      line = IdFromSortKey(key);
      line.push_back('\n');
      SEER_RETURN_IF_ERROR(node_ids.Append(line.data(), static_cast<int64_t>(line.size())));
      if (key[0] == '\0') {
        const int64_t value = static_cast<int64_t>(GetBigEndian(key.data() + 1));
        SEER_RETURN_IF_ERROR(originals.Write(&value, sizeof value));
      } else {
        remap->integer_ids_ = false;
      }
      if (on_node) SEER_RETURN_IF_ERROR(on_node(key, dense));
    }
    if (position != kNoEdge) SEER_RETURN_IF_ERROR(by_position.Set(static_cast<int64_t>(position), dense));
  }
  SEER_RETURN_IF_ERROR(originals.Close());
  remap->num_nodes_ = dense + 1;
  // The dense ids back in edge order, as int64 pairs.
  remap->edges_path_ = remap->scratch_.File("edges.bin64");
  SEER_ASSIGN_OR_RETURN(SequentialWriter edges, SequentialWriter::Create(remap->edges_path_));
  SEER_RETURN_IF_ERROR(by_position.WriteTo(edges));
  SEER_RETURN_IF_ERROR(edges.Close());
  return remap;
}

}  // namespace seer
