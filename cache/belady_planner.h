// BeladyPlanner: exact Belady changesets for one superbatch (DESIGN.md "Planner: exact
// Belady changesets", Ginex §3.3-3.4, with a horizon-aware tie rule), on the CPU or on a
// CUDA device, byte-identical.
//
// Input: the cache state C0 (slot -> node id, kFreeSlot = empty; its length is the
// capacity K in rows), carried over from the previous superbatch, ids_0..ids_{S-1}
// (each batch's unique node ids; an id may not repeat inside one batch), and optionally
// a static score per node (options.node_scores; higher = more worth keeping). The rule:
//
//   C_{i+1} = the K smallest elements of C_i ∪ ids_i under the key (lexicographic)
//     next use finite:  (0, next_use_i(v), v ∉ C_i, v)
//     next use = ∞:     (1, -score(v),     v ∉ C_i, v)
//   next_use_i(v) = first j > i with v ∈ ids_j, or ∞ (only this superbatch is known);
//   score(v) = node_scores(v) as uint32, 0 for every node when node_scores is empty
//   (then ∞ rows are ordered "cached first, then lower id": the pre-tie-rule planner).
//
// Why: inside the horizon any order among never-reused rows is optimal, so the misses
// of this superbatch are still Belady-optimal; but at a superbatch boundary every row
// with no further use inside the horizon ties at ∞, and ordering them by id threw the
// hot set away (it lost to a static top-degree cache at small capacities). With a score
// (the default is the out-degree, cache/degrees.h MakeBeladyNodeScores: the chance a
// node is sampled as a neighbor) the rows kept across the boundary are the ones the
// next superbatch most likely reads.
//
// Consequences worth knowing:
//  * When |C_i ∪ ids_i| <= K everything is kept, including nodes never used again:
//    free capacity is filled ("keep the K smallest"), so a cold cache fills on demand.
//    A free slot is "nothing there" and loses to any node.
//  * At the last iteration every key is ∞: the cache keeps the K best-scored rows of
//    C ∪ ids (at equal score a cached row beats a miss — no copy — then the lower id),
//    and the final state is carried into the next superbatch.
//  * misses_i = |ids_i \ C_i|; hits are served from the cache before the changeset of
//    iteration i is applied (the executor gathers, then applies).
//
// Changeset i (what turns C_i into C_{i+1}), all deterministic:
//  * out_slots / out_ids: the evicted nodes and the slots they held, ascending slot.
//  * in_ids / in_positions: the inserted nodes (always misses of iteration i) and their
//    positions in ids_i, ascending position — the executor copies their rows from the
//    batch buffer, no extra read.
//  * in_slots: where each inserted node goes. Slot rule: after the evictions of
//    iteration i, take the free slots (never-filled ones and those just freed) in
//    ascending slot order; the k-th inserted node (in ascending position) gets the k-th
//    smallest free slot.
//
// CPU algorithm (PlanBelady and PlanBeladyStreaming share it; two passes over the batches):
//  1. Next use of every access: records (node, batch+1, position), C0 as batch 0 with
//     position = slot (so C0's first uses come out of the same sort), sorted by an LSD
//     radix sort of 64-bit packed keys; consecutive records of a node link an access to
//     the next one: NextRef = (next batch (int32), position in it). In RAM this costs
//     16 bytes per access at the peak. PlanBeladyStreaming with a runtime_dir sorts runs
//     of working_memory_bytes / 16 accesses, writes each run with one sequential write,
//     k-way merges them and appends every NextRef (12-byte records) to the file segments
//     of its batch range (ranges of working_memory_bytes / 16 accesses).
//  2. Forward pass, one batch at a time: the cache is kept as buckets by next-use batch
//     (index S = ∞); bucket i is exactly the hits of batch i; evictions pop the highest
//     non-empty bucket (finite buckets are chunk lists of 16..256 entries, flattened into
//     a max-heap on id only when first evicted from; the ∞ bucket is kept as sorted runs
//     on (score, id) — each batch's new rows radix-sorted, runs merged geometrically);
//     misses are grouped by next-use batch only when the cut reaches past the ∞ group,
//     and only a group cut in part is ordered; the evicted slots are radix-sorted. So
//     iteration i costs O(|ids_i| log) amortized — never O(K).
// RAM: PlanBelady O(accesses) (16 B each) + O(K); PlanBeladyStreaming O(K + one batch +
// working_memory_bytes), with changesets spilled by ChangesetStore past its budget.
// The GPU path (kernels/belady_gpu.h) re-sorts C_i ∪ ids_i per iteration (O(K + |ids_i|)
// per iteration on the device), following Ginex; both obey the rule above exactly.
//
// Thread-safety: PlanBelady is a pure function; ChangesetStore is a single-threaded
// object; a BatchIdSource is read by one planner at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "storage/base/name_table.h"
#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

inline constexpr int64_t kFreeSlot = -1;

// A batch's unique node ids, borrowed (e.g. BatchTrace::node_ids).
struct IdSpan {
  const int64_t* data = nullptr;
  int64_t size = 0;
};
std::vector<IdSpan> MakeIdSpans(const std::vector<std::vector<int64_t>>& batches);

struct Changeset {
  int64_t num_accesses = 0;           // |ids_i|
  int64_t num_misses = 0;             // |ids_i \ C_i|
  std::vector<int64_t> in_ids;        // ascending position
  std::vector<int32_t> in_positions;  // positions in ids_i
  std::vector<int32_t> in_slots;      // slot each in_id goes to (rule above)
  std::vector<int64_t> out_ids;       // evicted nodes, ascending slot
  std::vector<int32_t> out_slots;

  int64_t num_hits() const { return num_accesses - num_misses; }
  int64_t ByteSize() const;
  bool operator==(const Changeset& other) const;
};

// Changesets of a superbatch, in iteration order. Kept in RAM until `budget_bytes` of
// changesets are held; later ones are appended to a spill file in `spill_dir`
// (runtime file, removed by the destructor). spill_dir "" = never spill.
//
// Spill file format (little-endian, one record per spilled changeset, back to back):
//   int64 magic 0x31475343524553 ("SERCSG1"), int64 num_accesses, int64 num_misses,
//   int64 n_in, int64 n_out, int64 in_ids[n_in], int32 in_positions[n_in],
//   int32 in_slots[n_in], int64 out_ids[n_out], int32 out_slots[n_out]
// The record offsets are kept in RAM; Get() reads one record back with pread.
class ChangesetStore {
 public:
  static constexpr int64_t kUnlimited = INT64_MAX;
  explicit ChangesetStore(int64_t budget_bytes = kUnlimited, std::string spill_dir = "");
  ChangesetStore(ChangesetStore&&) noexcept;
  ChangesetStore& operator=(ChangesetStore&&) noexcept;
  ~ChangesetStore();

  Status Append(Changeset changeset);
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  // Changeset i (a copy from RAM, or read back from the spill file).
  Result<Changeset> Get(int64_t i) const;

  int64_t ram_bytes() const { return ram_bytes_; }
  int64_t spilled_bytes() const { return spilled_bytes_; }
  int64_t num_spilled() const { return num_spilled_; }
  const std::string& spill_path() const { return spill_path_; }

 private:
  struct Entry {
    std::unique_ptr<Changeset> ram;  // null when spilled
    int64_t offset_bytes = -1;       // in the spill file
    int64_t length_bytes = 0;
  };
  int64_t budget_bytes_;
  std::string spill_dir_;
  std::string spill_path_;
  UniqueFd spill_fd_;
  std::vector<Entry> entries_;
  int64_t ram_bytes_ = 0;
  int64_t spilled_bytes_ = 0;
  int64_t num_spilled_ = 0;
};

enum class PlannerDevice { kAuto, kCpu, kGpu };
inline constexpr NameValue<PlannerDevice> kPlannerDeviceNames[] = {
    {"auto", PlannerDevice::kAuto}, {"cpu", PlannerDevice::kCpu}, {"gpu", PlannerDevice::kGpu}};
// "auto" | "cpu" | "gpu"; anything else is kInvalidArgument naming the value.
Result<PlannerDevice> ParsePlannerDevice(const std::string& text);
const char* PlannerDeviceName(PlannerDevice device);
// kAuto -> kGpu when built with CUDA and a device is present, else kCpu.
PlannerDevice ResolvePlannerDevice(PlannerDevice device);

// Static per-node score for the tie rule among rows with no further use in the
// superbatch (higher = more worth keeping). Fills scores[k] = score(ids[k]) for k < n.
using NodeScoreFn = std::function<void(const int64_t* ids, int64_t n, uint32_t* scores)>;

struct BeladyPlannerOptions {
  PlannerDevice device = PlannerDevice::kAuto;
  int64_t changeset_budget_bytes = ChangesetStore::kUnlimited;
  std::string spill_dir;  // "" = never spill
  // Fills scores[k] = score(ids[k]) for k < n; empty = every score 0 (the old rule).
  std::function<void(const int64_t* ids, int64_t n, uint32_t* scores)> node_scores;
  // PlanBeladyStreaming: the sort buffer budget for the next-use computation. When all
  // accesses fit, the in-RAM path is used (same output).
  int64_t working_memory_bytes = int64_t{256} << 20;
  // PlanBeladyStreaming: where sorted runs and next-use files spill ("" = keep in RAM).
  std::string runtime_dir;
};

struct BeladyPlan {
  ChangesetStore changesets;        // one per batch
  std::vector<int64_t> final_slots; // C_S: slot -> node id, carry into the next superbatch
  int64_t num_accesses = 0;
  int64_t num_misses = 0;
  PlannerDevice device_used = PlannerDevice::kCpu;
};

// Plans one superbatch. initial_slots = C0 (size = capacity K; ids unique, >= 0 or
// kFreeSlot). Errors: kInvalidArgument for a negative id, an id repeated inside a batch
// or inside C0; kUnsupported for kGpu on a build without CUDA or without a device (and
// for ids/shapes the GPU path cannot pack — kAuto then falls back to the CPU).
Result<BeladyPlan> PlanBelady(const std::vector<int64_t>& initial_slots,
                              const std::vector<IdSpan>& batches,
                              const BeladyPlannerOptions& options = {});

// A superbatch's per-batch unique ids, front to back, read one batch at a time (e.g.
// from a trace on the runtime directory). The planner may read the batches twice
// (Rewind), so a source must give the same ids each pass.
class BatchIdSource {
 public:
  virtual ~BatchIdSource() = default;
  virtual int64_t num_batches() const = 0;
  virtual Status Rewind() = 0;        // back to batch 0
  virtual Result<IdSpan> Next() = 0;  // the next batch's ids; valid until the next call
};

// A BatchIdSource over spans held in RAM (borrowed; they must outlive the source).
class VectorBatchIdSource : public BatchIdSource {
 public:
  explicit VectorBatchIdSource(std::vector<IdSpan> batches) : batches_(std::move(batches)) {}
  int64_t num_batches() const override { return static_cast<int64_t>(batches_.size()); }
  Status Rewind() override;
  Result<IdSpan> Next() override;

 private:
  std::vector<IdSpan> batches_;
  size_t next_ = 0;
};

// The same plan as PlanBelady (byte-identical changesets and final state, CPU rule),
// with RAM O(capacity rows + one batch + working_memory_bytes) instead of O(accesses):
// next uses come from an external sort whose runs spill to options.runtime_dir, and the
// forward pass reads one batch at a time from `source`. Changesets go to the
// ChangesetStore under options.changeset_budget_bytes / spill_dir. Errors as PlanBelady,
// plus source errors and runtime-file I/O errors (named file and offset). Always CPU.
Result<BeladyPlan> PlanBeladyStreaming(const std::vector<int64_t>& initial_slots,
                                       BatchIdSource& source,
                                       const BeladyPlannerOptions& options = {});

// The optimal prefetch (DESIGN.md "Fair comparison"): the K nodes whose first use in
// `batches` comes earliest (ties: lower id), in slots 0.. in that order. Slots left over
// (fewer than K distinct nodes in `batches`) take the nodes of `fill_ranking` (best
// first, e.g. by the tie rule's score) not already placed, in that order — the rule's
// "free capacity is filled" applied before the first batch; the rest stay free.
std::vector<int64_t> BeladyInitialFill(const std::vector<IdSpan>& batches, int64_t capacity_rows,
                                       const std::vector<int64_t>& fill_ranking = {});

// node_scores from a per-node table (index = node id): score = table[v] saturated to
// [0, 2^32-1]; ids outside the table score 0. The table is shared, not copied per call.
NodeScoreFn NodeScoresFromTable(const std::vector<int64_t>& table);

// An empty cache of `capacity_rows` slots.
inline std::vector<int64_t> EmptyCacheState(int64_t capacity_rows) {
  return std::vector<int64_t>(static_cast<size_t>(capacity_rows), kFreeSlot);
}

}  // namespace seer
