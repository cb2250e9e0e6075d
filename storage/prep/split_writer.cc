#include "storage/prep/split_writer.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>

#include "storage/base/parse_number.h"
#include "storage/prep/record_sorter.h"
#include "storage/prep/text_reader.h"
#include "storage/prep/text_table.h"

namespace seer {
namespace {

const char* const kSplitFiles[] = {dataset_files::kTrain, dataset_files::kValid, dataset_files::kTest};
constexpr size_t kFlushIds = 65536;

// Appends ids once kFlushIds have gathered (all of them with `all`).
Status FlushIds(AtomicFileWriter* file, std::vector<int64_t>* ids, bool all) {
  if (ids->empty() || (!all && ids->size() < kFlushIds)) return Status::Ok();
  SEER_RETURN_IF_ERROR(file->AppendValues(ids->data(), static_cast<int64_t>(ids->size())));
  ids->clear();
  return Status::Ok();
}

// A NodeTable id list: (node, line) pairs, ascending.
Status WriteTableSplit(const NodeTable& table, NodeSplit split, SplitRegistry& registry, AtomicFileWriter* file) {
  SEER_ASSIGN_OR_RETURN(SequentialReader in, SequentialReader::Open(table.result_path()));
  std::vector<int64_t> ids;
  for (;;) {
    int64_t entry[2];
    SEER_ASSIGN_OR_RETURN(bool more, in.Read(entry, sizeof entry));
    if (!more) break;
    SEER_RETURN_IF_ERROR(registry.Add(entry[0], split, table.path() + ":" + std::to_string(entry[1])));
    ids.push_back(entry[0]);
    SEER_RETURN_IF_ERROR(FlushIds(file, &ids, false));
  }
  return FlushIds(file, &ids, true);
}

Status WriteNpySplit(const NpyFile& npy, const NodeRows* node_rows, int64_t chunk, NodeSplit split,
                     SplitRegistry& registry, AtomicFileWriter* file) {
  const int64_t total = npy.header().shape[0];
  std::vector<int64_t> ids;
  for (int64_t first = 0; first < total; first += chunk) {
    const int64_t n = std::min(chunk, total - first);
    ids.resize(static_cast<size_t>(n));
    SEER_RETURN_IF_ERROR(npy.ReadAsInt64(first, n, ids.data()));
    for (int64_t i = 0; node_rows && i < n; ++i) {  // original ids, or rows, -> nodes
      SEER_ASSIGN_OR_RETURN(int64_t node, node_rows->NodeOf(ids[i]));
      if (node < 0) {
        return InvalidArgument(npy.path() + ": element " + std::to_string(first + i) + ": " +
                               node_rows->NotANode(ids[i]));
      }
      ids[i] = node;
    }
    for (int64_t i = 0; i < n; ++i) {
      SEER_RETURN_IF_ERROR(registry.Add(ids[i], split, npy.path() + ": element " + std::to_string(first + i)));
    }
    SEER_RETURN_IF_ERROR(file->AppendValues(ids.data(), n));
  }
  return Status::Ok();
}

// OGB split/<scheme>/*.csv: one node id per line, blank lines skipped.
Result<int64_t> WriteOgbSplit(const std::string& path, NodeSplit split, SplitRegistry& registry,
                              AtomicFileWriter* file) {
  SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(path));
  std::vector<int64_t> ids;
  int64_t count = 0;
  std::string_view line;
  for (;;) {
    SEER_ASSIGN_OR_RETURN(bool more, reader.NextLine(&line));
    if (!more) break;
    const std::string_view token = TrimField(line);
    if (token.empty()) continue;
    const std::string where = path + ":" + std::to_string(reader.line_number());
    const std::optional<int64_t> id = ParseNumber<int64_t>(token);
    if (!id) return InvalidArgument(where + ": non-numeric node id '" + std::string(token) + "'");
    SEER_RETURN_IF_ERROR(registry.Add(*id, split, where));
    ids.push_back(*id);
    ++count;
    SEER_RETURN_IF_ERROR(FlushIds(file, &ids, false));
  }
  SEER_RETURN_IF_ERROR(FlushIds(file, &ids, true));
  return count;
}

}  // namespace

Status WriteGivenSplits(const GivenSplit (&splits)[3], const NodeRows* node_rows, int64_t num_nodes,
                        int64_t chunk_values, DatasetWriter& writer, int64_t counts[3]) {
  std::unique_ptr<SplitRegistry> registry;
  for (int s = 0; s < 3; ++s) {
    const GivenSplit& given = splits[s];
    if (given.empty()) continue;
    if (!registry) registry = std::make_unique<SplitRegistry>(num_nodes);
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(kSplitFiles[s]));
    const NodeSplit split = static_cast<NodeSplit>(s + 1);
    if (given.table != nullptr) {
      SEER_RETURN_IF_ERROR(WriteTableSplit(*given.table, split, *registry, file));
      counts[s] = given.table->matched();
    } else if (given.npy != nullptr) {
      SEER_RETURN_IF_ERROR(WriteNpySplit(*given.npy, node_rows, chunk_values, split, *registry, file));
      counts[s] = given.npy->header().shape[0];
    } else {
      SEER_ASSIGN_OR_RETURN(counts[s], WriteOgbSplit(given.ogb_csv, split, *registry, file));
    }
  }
  return Status::Ok();
}

Result<DrawnSplits> DrawnSplits::Open(DatasetWriter& writer, const SplitFractions& fractions, uint64_t seed) {
  DrawnSplits drawn;
  drawn.fractions_ = fractions;
  drawn.seed_ = seed;
  for (int s = 0; s < 3; ++s) {
    SEER_ASSIGN_OR_RETURN(drawn.files_[s], writer.OpenFile(kSplitFiles[s]));
  }
  return drawn;
}

Status DrawnSplits::Add(int64_t first_node, const int32_t* labels, int64_t n) {
  for (auto& ids : ids_) ids.clear();
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] < 0) continue;
    const NodeSplit split = DrawNodeSplit(fractions_, seed_, first_node + i);
    if (split != NodeSplit::kNone) ids_[static_cast<int>(split) - 1].push_back(first_node + i);
  }
  for (int s = 0; s < 3; ++s) {
    SEER_RETURN_IF_ERROR(files_[s]->AppendValues(ids_[s].data(), static_cast<int64_t>(ids_[s].size())));
    counts_[s] += static_cast<int64_t>(ids_[s].size());
  }
  return Status::Ok();
}

}  // namespace seer
