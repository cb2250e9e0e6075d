#include "storage/prep/edge_split.h"

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "storage/base/atomic_file.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/edge_splits.h"

namespace seer {
namespace {

constexpr uint64_t kEdgeSplitSalt = 0x5e11ed9e5a1b0c3dull;  // the edge split's stream
constexpr int64_t kCopyChunkBytes = int64_t{4} << 20;
constexpr int64_t kWriteChunk = int64_t{1} << 16;  // elements buffered per output file

Status CheckFraction(const char* flag, double value) {
  if (value >= 0 && value < 1) return Status::Ok();
  return InvalidArgument(fmt::format("{} = {} is out of range [0, 1)", flag, value));
}

// The candidates of one in-neighbor list (of node v), in the order they are drawn:
// its distinct sources ascending; undirected, only those <= v.
void Candidates(int64_t v, bool undirected, const std::vector<int64_t>& sources, std::vector<int64_t>* out) {
  out->assign(sources.begin(), sources.end());
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  if (undirected) out->erase(std::upper_bound(out->begin(), out->end(), v), out->end());
}

// Copies a listed file of the input into the writer, refusing it when its bytes do not
// hash to the input manifest's xxh64 (a damaged input is not passed on with a fresh
// checksum).
Status CopyFile(const Dataset& in, const std::string& name, DatasetWriter* writer) {
  const std::string path = in.PathOf(name);
  const DatasetFileEntry& listed = in.manifest().files.at(name);
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  if (size != listed.bytes) {
    return Corrupt(path + ": size is " + std::to_string(size) + " bytes but the manifest records " +
                   std::to_string(listed.bytes));
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter * file, writer->OpenFile(name));
  std::vector<char> buffer(static_cast<size_t>(std::min(kCopyChunkBytes, std::max<int64_t>(size, 1))));
  Xxh64 hash;
  for (int64_t offset = 0; offset < size;) {
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(buffer.size()), size - offset);
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), buffer.data(), n, offset, path));
    hash.Update(buffer.data(), static_cast<size_t>(n));
    SEER_RETURN_IF_ERROR(file->Append(buffer.data(), n));
    offset += n;
  }
  if (listed.checksum_kind == "xxh64" && Xxh64::ToHex(hash.Digest()) != listed.checksum) {
    return Corrupt(path + ": xxh64 " + Xxh64::ToHex(hash.Digest()) + " does not match the manifest's " +
                   listed.checksum + " (the file changed after it was written); nothing was written");
  }
  return Status::Ok();
}

// Appends int64 values to a writer through a buffer.
class BufferedValues {
 public:
  explicit BufferedValues(AtomicFileWriter* file) : file_(file) { values_.reserve(kWriteChunk); }
  Status Push(int64_t value) {
    values_.push_back(value);
    return static_cast<int64_t>(values_.size()) >= kWriteChunk ? Flush() : Status::Ok();
  }
  Status Flush() {
    Status st = file_->AppendValues(values_.data(), static_cast<int64_t>(values_.size()));
    values_.clear();
    return st;
  }

 private:
  AtomicFileWriter* file_;
  std::vector<int64_t> values_;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

Status ValidateEdgeSplitFractions(double valid_fraction, double test_fraction) {
  SEER_RETURN_IF_ERROR(CheckFraction("--valid-fraction", valid_fraction));
  SEER_RETURN_IF_ERROR(CheckFraction("--test-fraction", test_fraction));
  if (!(valid_fraction + test_fraction < 1)) {
    return InvalidArgument(fmt::format("--valid-fraction + --test-fraction = {} must be below 1 (some edges must "
                                       "stay for training)",
                                       valid_fraction + test_fraction));
  }
  return Status::Ok();
}

Status ValidateEvalNegatives(int64_t eval_negatives) {
  if (eval_negatives >= 0 && eval_negatives <= DatasetEdgeSplits::kMaxNegativesPerEdge) return Status::Ok();
  return InvalidArgument(fmt::format("--eval-negatives = {} is out of range [0, {}]", eval_negatives,
                                     DatasetEdgeSplits::kMaxNegativesPerEdge));
}

EdgeSplitDraw::EdgeSplitDraw(int64_t candidates, int64_t num_valid, int64_t num_test, uint64_t seed)
    : rng_(SplitMixFinalize(seed ^ kEdgeSplitSalt)),
      left_candidates_(candidates),
      left_valid_(num_valid),
      left_test_(num_test) {
  if (num_valid < 0 || num_test < 0 || num_valid + num_test > candidates) {
    throw std::logic_error("EdgeSplitDraw: more edges to hold out than candidates");
  }
}

EdgeSplitDraw::Slot EdgeSplitDraw::Next() {
  if (left_candidates_ <= 0) throw std::logic_error("EdgeSplitDraw::Next past the last candidate");
  const int64_t wanted = left_valid_ + left_test_;
  Slot slot = Slot::kTrain;
  if (wanted > 0 && rng_.Below(static_cast<uint64_t>(left_candidates_)) < static_cast<uint64_t>(wanted)) {
    if (rng_.Below(static_cast<uint64_t>(wanted)) < static_cast<uint64_t>(left_valid_)) {
      slot = Slot::kValid;
      --left_valid_;
    } else {
      slot = Slot::kTest;
      --left_test_;
    }
  }
  --left_candidates_;
  return slot;
}

Result<EdgeSplitSummary> SplitEdges(const std::string& in_dir, const std::string& out_dir,
                                    const EdgeSplitOptions& options) {
  SEER_RETURN_IF_ERROR(ValidateEdgeSplitFractions(options.valid_fraction, options.test_fraction));
  SEER_RETURN_IF_ERROR(ValidateEvalNegatives(options.eval_negatives));
  const auto start = std::chrono::steady_clock::now();
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::Open(in_dir));
  const DatasetManifest& m = dataset.manifest();
  if (m.edge_splits.present()) {
    return InvalidArgument(in_dir + " already has edge splits (" + m.edge_splits.valid + ", " + m.edge_splits.test +
                           "; their edges are gone from its topology): split the dataset they were made from");
  }
  for (const char* name : {dataset_files::kEdgesValid, dataset_files::kEdgesTest, dataset_files::kEdgesValidNegatives,
                           dataset_files::kEdgesTestNegatives}) {
    if (m.files.count(name) != 0) {
      return InvalidArgument(dataset.PathOf(dataset_files::kManifest) + " lists " + name +
                             " without edge_splits: not a file this command can write over");
    }
  }
  SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(out_dir, options.force));
  EdgeSplitSummary summary;
  summary.input_edges = m.num_edges;
  summary.num_nodes = m.num_nodes;
  ProgressReporter progress("split-edges: edges", 3 * m.num_edges, "edges", options.show_progress);
  std::vector<int64_t> sources, candidates;
  int64_t node = 0;

  // Pass 1: count the candidates.
  {
    SEER_ASSIGN_OR_RETURN(NeighborListReader lists, NeighborListReader::Open(dataset));
    while (true) {
      SEER_ASSIGN_OR_RETURN(bool more, lists.Next(&node, &sources));
      if (!more) break;
      Candidates(node, options.undirected, sources, &candidates);
      summary.candidate_edges += static_cast<int64_t>(candidates.size());
      progress.Add(static_cast<int64_t>(sources.size()));
    }
    SEER_RETURN_IF_ERROR(lists.Finish());
  }
  summary.num_valid = HeldOutCount(options.valid_fraction, summary.candidate_edges);
  summary.num_test = HeldOutCount(options.test_fraction, summary.candidate_edges);

  // Pass 2: draw, in the candidates' order (by node, then source); the split files are
  // written as the edges are drawn, so they are in CSC order.
  HeldOutEdgeSet held_out(options.undirected);
  {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * valid_file, writer.OpenFile(dataset_files::kEdgesValid));
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * test_file, writer.OpenFile(dataset_files::kEdgesTest));
    BufferedValues valid_out(valid_file), test_out(test_file);
    EdgeSplitDraw draw(summary.candidate_edges, summary.num_valid, summary.num_test, options.seed);
    // --eval-negatives K: each split's negatives, drawn as its edges are (so in its file's order).
    const int64_t k = options.eval_negatives;
    std::unique_ptr<BufferedValues> negatives_out[2];
    SplitMix64 negatives_rng[2] = {EvalNegativesStream(options.seed, "valid"), EvalNegativesStream(options.seed, "test")};
    if (k > 0) {
      SEER_ASSIGN_OR_RETURN(AtomicFileWriter * valid_neg, writer.OpenFile(dataset_files::kEdgesValidNegatives));
      SEER_ASSIGN_OR_RETURN(AtomicFileWriter * test_neg, writer.OpenFile(dataset_files::kEdgesTestNegatives));
      negatives_out[0] = std::make_unique<BufferedValues>(valid_neg);
      negatives_out[1] = std::make_unique<BufferedValues>(test_neg);
    }
    SEER_ASSIGN_OR_RETURN(NeighborListReader lists, NeighborListReader::Open(dataset));
    int64_t drawn[2] = {0, 0};
    while (true) {
      SEER_ASSIGN_OR_RETURN(bool more, lists.Next(&node, &sources));
      if (!more) break;
      Candidates(node, options.undirected, sources, &candidates);
      for (int64_t u : candidates) {
        const EdgeSplitDraw::Slot slot = draw.Next();
        if (slot == EdgeSplitDraw::Slot::kTrain) continue;
        const int f = slot == EdgeSplitDraw::Slot::kValid ? 0 : 1;
        BufferedValues& out = f == 0 ? valid_out : test_out;
        SEER_RETURN_IF_ERROR(out.Push(u));
        SEER_RETURN_IF_ERROR(out.Push(node));
        held_out.Add(u, node, 2 * drawn[f]++ + f);
        for (int64_t j = 0; j < k; ++j) {
          const auto negative = static_cast<int64_t>(negatives_rng[f].Below(static_cast<uint64_t>(m.num_nodes)));
          SEER_RETURN_IF_ERROR(negatives_out[f]->Push(negative));
        }
      }
      progress.Add(static_cast<int64_t>(sources.size()));
    }
    SEER_RETURN_IF_ERROR(lists.Finish());
    SEER_RETURN_IF_ERROR(valid_out.Flush());
    SEER_RETURN_IF_ERROR(test_out.Flush());
    for (auto& out : negatives_out) {
      if (out) SEER_RETURN_IF_ERROR(out->Flush());
    }
  }
  if (held_out.Seal()) throw std::logic_error("SplitEdges: a candidate was drawn twice");

  // Pass 3: the topology without the held-out edges (every copy; undirected, reverses too).
  {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * indptr_file, writer.OpenFile(dataset_files::kIndptr));
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter * indices_file, writer.OpenFile(dataset_files::kIndices));
    BufferedValues indptr_out(indptr_file);
    const bool narrow = m.index_dtype == IndexDtype::kUint32;
    std::vector<uint32_t> out32;
    std::vector<int64_t> out64;
    auto flush_indices = [&]() -> Status {
      Status st = narrow ? indices_file->AppendValues(out32.data(), static_cast<int64_t>(out32.size()))
                         : indices_file->AppendValues(out64.data(), static_cast<int64_t>(out64.size()));
      out32.clear();
      out64.clear();
      return st;
    };
    SEER_RETURN_IF_ERROR(indptr_out.Push(0));
    int64_t kept = 0;
    SEER_ASSIGN_OR_RETURN(NeighborListReader lists, NeighborListReader::Open(dataset));
    while (true) {
      SEER_ASSIGN_OR_RETURN(bool more, lists.Next(&node, &sources));
      if (!more) break;
      for (int64_t u : sources) {
        if (held_out.size() > 0 && held_out.Find(u, node) >= 0) continue;
        if (narrow) out32.push_back(static_cast<uint32_t>(u)); else out64.push_back(u);
        ++kept;
      }
      SEER_RETURN_IF_ERROR(indptr_out.Push(kept));
      if (static_cast<int64_t>(narrow ? out32.size() : out64.size()) >= kWriteChunk) {
        SEER_RETURN_IF_ERROR(flush_indices());
      }
      progress.Add(static_cast<int64_t>(sources.size()));
    }
    SEER_RETURN_IF_ERROR(lists.Finish());
    SEER_RETURN_IF_ERROR(indptr_out.Flush());
    SEER_RETURN_IF_ERROR(flush_indices());
    summary.output_edges = kept;
  }
  progress.Finish();
  // Everything else as it is: features, labels, node splits, node_ids.txt, node_order.bin.
  for (const auto& [name, entry] : m.files) {
    if (name == dataset_files::kIndptr || name == dataset_files::kIndices) continue;
    SEER_RETURN_IF_ERROR(CopyFile(dataset, name, &writer));
  }
  DatasetManifest out = m;
  out.files.clear();
  out.num_edges = summary.output_edges;
  out.created_by = options.created_by;
  DatasetEdgeSplits& e = out.edge_splits;
  e.valid = dataset_files::kEdgesValid;
  e.test = dataset_files::kEdgesTest;
  e.num_valid = summary.num_valid;
  e.num_test = summary.num_test;
  e.valid_fraction = options.valid_fraction;
  e.test_fraction = options.test_fraction;
  e.seed = options.seed;
  e.undirected = options.undirected;
  e.candidate_edges = summary.candidate_edges;
  e.input_num_edges = m.num_edges;
  if (options.eval_negatives > 0) {
    e.negatives_per_edge = options.eval_negatives;
    e.valid_negatives = dataset_files::kEdgesValidNegatives;
    e.test_negatives = dataset_files::kEdgesTestNegatives;
  }
  SEER_RETURN_IF_ERROR(writer.Commit(std::move(out)));
  summary.seconds = Seconds(start);
  return summary;
}

}  // namespace seer
