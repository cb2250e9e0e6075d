#include "storage/prep/id_remap.h"

#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "storage/base/progress.h"
#include "storage/prep/dense_scatter.h"
#include "storage/prep/record_sorter.h"

namespace seer {

IdRemap::~IdRemap() = default;  // the scratch directory takes its files with it

Result<std::unique_ptr<IdRemap>> IdRemap::Build(const std::string& text_path, const TextColumns& columns,
                                                int64_t memory_budget_bytes, const std::string& work_dir,
                                                AtomicFileWriter& node_ids, bool show_progress,
                                                const NodeVisitor& on_node) {
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
    for (int64_t e = 0;; ++e) {
      SEER_ASSIGN_OR_RETURN(bool more, reader->Next(&src, &dst));
      if (!more) break;
      IdSortKeyInto(src, &key);
      SEER_RETURN_IF_ERROR(by_id.Add(key, 2 * static_cast<uint64_t>(e)));
      IdSortKeyInto(dst, &key);
      SEER_RETURN_IF_ERROR(by_id.Add(key, 2 * static_cast<uint64_t>(e) + 1));
      ++remap->num_edges_;
      if ((e & 0xffff) == 0) progress.Set(e + 1);
    }
    progress.Set(remap->num_edges_);
    progress.Finish();
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
    SEER_RETURN_IF_ERROR(by_position.Set(static_cast<int64_t>(position), dense));
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
