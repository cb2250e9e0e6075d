// Two-level feature cache: a device tier (rows kept on the training device) in front of
// the host tier (the FeatureCache in host memory, cache/feature_cache.h), in front of
// features.bin on the SSD.
//
// A batch's rows are looked up in the device tier first; only its misses (the "device
// miss stream" D_i = ids_i minus the device hits, in ascending position) go on to the host
// tier, and only the host misses are read from the SSD. Every device miss is one row
// copied host -> device; every host miss costs blocks read from features.bin.
//
// Why the device tier is planned first, on each batch's full reference string, and the
// host tier second, on the device misses: a device hit never reaches the host tier, so
// the host tier's reference string *is* D_0..D_{S-1}, and Belady over that string is the
// host tier's optimal plan given the device plan. The device plan does not depend on the
// host plan at all (a device miss is a transfer whatever the host holds). Planning the
// device tier by Belady on ids_i therefore minimises host->device rows, and the host
// plan then minimises SSD misses for exactly the stream it will see — the lexicographic
// optimum (transfers first, then SSD reads). Planning the host first would optimise it
// for accesses it never gets. The tiers are not inclusive: a row may sit in both, in one,
// or in neither; each tier has its own slots and follows the planner's rule and
// changeset layout (cache/belady_planner.h) on its own reference string.
//
// Changesets: device changeset i has positions in ids_i (inserted rows are copied from
// the assembled batch on the device, no extra transfer); host changeset i has positions
// in D_i (inserted rows come from the batch's host buffer of device misses).
//
// Device-tier policies (what `seer stats --device-capacity` compares at equal memory):
//   off             capacity 0: every access is a transfer (today's single-tier path)
//   previous-batch  FastGL's Match: after batch i the device holds only rows of batch i —
//                   C_{i+1} = the K smallest of ids_i under (v ∉ C_i, position); rows of
//                   C_i not in ids_i are evicted even when capacity is free. Needs no
//                   lookahead; equals "keep the previous batch" whenever |ids_i| <= K.
//   presc           GNNLab's PreSC on the device: top-K rows by pre-sampling visit
//                   counts, installed once, never changed
//   belady          the planner (cache/belady_planner.h) on ids_0..ids_{S-1}
// The host tier is Belady in every case (planned on that policy's device miss stream).
//
// Pure functions and single-threaded objects (the planner uses TBB inside).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/hit_simulator.h"
#include "cache/policies.h"
#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

enum class DeviceTierPolicy { kOff, kPreviousBatch, kPresc, kBelady };
inline constexpr NameValue<DeviceTierPolicy> kDeviceTierPolicyNames[] = {
    {"off", DeviceTierPolicy::kOff},
    {"previous-batch", DeviceTierPolicy::kPreviousBatch},
    {"presc", DeviceTierPolicy::kPresc},
    {"belady", DeviceTierPolicy::kBelady}};
const char* DeviceTierPolicyName(DeviceTierPolicy policy);
std::vector<DeviceTierPolicy> AllDeviceTierPolicies();

// Which node sits in which slot of one tier, keyed by node id (ids may be large). Replays
// changesets and answers lookups; a changeset that contradicts the state is a
// std::logic_error (as in FeatureCache::Apply).
class TierState {
 public:
  explicit TierState(std::vector<int64_t> slots);  // slot -> node, kFreeSlot
  // Appends the positions p of batch.data[p] not held, ascending; returns the hits.
  int64_t Lookup(const IdSpan& batch, std::vector<int32_t>* miss_positions) const;
  void Apply(const Changeset& changeset, const IdSpan& batch);
  const std::vector<int64_t>& slots() const { return slots_; }

 private:
  std::vector<int64_t> slots_;
  std::unordered_map<int64_t, int32_t> slot_of_;
};

// The device tier's misses of each batch: positions in ids_i and the ids (= D_i, the host
// tier's reference string), after replaying `device_changesets` from `device_slots`.
struct DeviceMissStream {
  std::vector<std::vector<int32_t>> positions;
  std::vector<std::vector<int64_t>> ids;
  std::vector<int64_t> final_slots;  // the device content after the last batch
  int64_t num_misses = 0;
  std::vector<IdSpan> Spans() const { return MakeIdSpans(ids); }
};
Result<DeviceMissStream> ReplayDeviceTier(std::vector<int64_t> device_slots, const std::vector<IdSpan>& batches,
                                          const ChangesetStore& device_changesets);

// Previous-batch reuse (FastGL Match): one changeset per batch, rule above.
Result<ChangesetStore> PlanPreviousBatchReuse(const std::vector<int64_t>& slots, const std::vector<IdSpan>& batches);

// Both tiers planned by Belady for one superbatch, device first (see above).
struct TwoTierPlan {
  BeladyPlan device;         // on ids_i
  DeviceMissStream misses;   // D_i
  BeladyPlan host;           // on D_i
};
// device_slots / host_slots = each tier's carried content (its length is that tier's
// capacity). Errors as PlanBelady's.
Result<TwoTierPlan> PlanTwoTierBelady(const std::vector<int64_t>& device_slots,
                                      const std::vector<int64_t>& host_slots, const std::vector<IdSpan>& batches,
                                      const BeladyPlannerOptions& options = {});

// What one (device policy, device capacity, host capacity) costs over a trace.
struct TwoTierStats {
  std::string device_policy;
  int64_t device_capacity_rows = 0;
  int64_t device_capacity_bytes = 0;
  int64_t host_capacity_rows = 0;
  int64_t accesses = 0;
  int64_t device_hits = 0;
  int64_t device_fill_rows = 0;   // installed on the device before the first batch
  int64_t h2d_rows = 0;           // device misses (= host tier accesses)
  int64_t h2d_bytes = 0;          // h2d_rows x transfer_row_bytes
  int64_t h2d_fill_bytes = 0;     // device_fill_rows x transfer_row_bytes
  int64_t host_misses = 0;
  int64_t host_fill_rows = 0;
  int64_t ssd_blocks = 0;         // per batch, as SimulatePolicy counts them
  int64_t ssd_bytes = 0;          // ssd_blocks x block_bytes
  int64_t ssd_fill_bytes = 0;     // the host fill's blocks x block_bytes
  double device_hit_ratio() const {
    return accesses == 0 ? 0.0 : static_cast<double>(device_hits) / static_cast<double>(accesses);
  }
};

struct TwoTierOptions {
  SimulationOptions sim;             // num_nodes, row_bytes (disk), block_bytes
  int64_t transfer_row_bytes = 0;    // bytes of one row sent to the device (float32 rows)
  BeladyPlannerOptions planner;      // both tiers' planner (device, working memory)
  // The host tier's Belady scores, as training's host policy has them (tie rule + fill
  // ranking: MakeBeladyNodeScores); empty = none. The device tier plans without scores.
  std::function<void(const int64_t*, int64_t, uint32_t*)> host_node_scores;
  std::vector<int64_t> host_fill_ranking;
};

// Replays `superbatches` with the device tier under `policy` (capacity device_rows; presc
// takes its rows from `presc_ranking`, best first) and a Belady host tier of host_rows
// planned on the device misses. Each tier's initial content is chosen from the first
// superbatch's batches, as SimulatePolicy does (Belady: optimal prefetch on its own
// reference string; previous-batch and off: empty). Every changeset is checked by
// replaying it.
Result<TwoTierStats> SimulateTwoTier(DeviceTierPolicy policy, int64_t device_rows, int64_t host_rows,
                                     const std::vector<int64_t>& presc_ranking,
                                     const std::vector<std::vector<IdSpan>>& superbatches,
                                     const TwoTierOptions& options);

}  // namespace seer
