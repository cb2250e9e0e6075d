#include "cache/device_tier.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace seer {

const char* DeviceTierPolicyName(DeviceTierPolicy policy) { return NameOf(kDeviceTierPolicyNames, policy); }

std::vector<DeviceTierPolicy> AllDeviceTierPolicies() {
  std::vector<DeviceTierPolicy> out;
  for (const auto& entry : kDeviceTierPolicyNames) out.push_back(entry.value);
  return out;
}

TierState::TierState(std::vector<int64_t> slots) : slots_(std::move(slots)) {
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s] == kFreeSlot) continue;
    if (!slot_of_.emplace(slots_[s], static_cast<int32_t>(s)).second) {
      throw std::logic_error(fmt::format("tier state: node {} held by two slots", slots_[s]));
    }
  }
}

int64_t TierState::Lookup(const IdSpan& batch, std::vector<int32_t>* miss_positions) const {
  int64_t hits = 0;
  for (int64_t p = 0; p < batch.size; ++p) {
    if (slot_of_.count(batch.data[p])) {
      ++hits;
    } else if (miss_positions != nullptr) {
      miss_positions->push_back(static_cast<int32_t>(p));
    }
  }
  return hits;
}

void TierState::Apply(const Changeset& cs, const IdSpan& batch) {
  if (cs.in_ids.size() != cs.in_positions.size() || cs.in_ids.size() != cs.in_slots.size() ||
      cs.out_ids.size() != cs.out_slots.size()) {
    throw std::logic_error("tier state: changeset arrays of different lengths");
  }
  const int64_t capacity = static_cast<int64_t>(slots_.size());
  for (size_t k = 0; k < cs.out_ids.size(); ++k) {
    const int32_t slot = cs.out_slots[k];
    if (slot < 0 || slot >= capacity || slots_[static_cast<size_t>(slot)] != cs.out_ids[k]) {
      throw std::logic_error(fmt::format("tier state: evicts node {} from slot {} that does not hold it",
                                         cs.out_ids[k], slot));
    }
  }
  for (size_t k = 0; k < cs.out_ids.size(); ++k) {
    slots_[static_cast<size_t>(cs.out_slots[k])] = kFreeSlot;
    slot_of_.erase(cs.out_ids[k]);
  }
  for (size_t k = 0; k < cs.in_ids.size(); ++k) {
    const int32_t slot = cs.in_slots[k];
    const int32_t pos = cs.in_positions[k];
    if (pos < 0 || pos >= batch.size || batch.data[pos] != cs.in_ids[k]) {
      throw std::logic_error(fmt::format("tier state: inserted node {} is not at position {}", cs.in_ids[k], pos));
    }
    if (slot < 0 || slot >= capacity || slots_[static_cast<size_t>(slot)] != kFreeSlot) {
      throw std::logic_error(fmt::format("tier state: inserts node {} into slot {} that is not free", cs.in_ids[k], slot));
    }
    if (!slot_of_.emplace(cs.in_ids[k], slot).second) {
      throw std::logic_error(fmt::format("tier state: inserts node {} that is already held", cs.in_ids[k]));
    }
    slots_[static_cast<size_t>(slot)] = cs.in_ids[k];
  }
}

Result<DeviceMissStream> ReplayDeviceTier(std::vector<int64_t> device_slots, const std::vector<IdSpan>& batches,
                                          const ChangesetStore& device_changesets) {
  if (device_changesets.size() != static_cast<int64_t>(batches.size())) {
    return InvalidArgument(fmt::format("device tier: {} changesets for {} batches", device_changesets.size(),
                                       batches.size()));
  }
  TierState state(std::move(device_slots));
  DeviceMissStream out;
  out.positions.resize(batches.size());
  out.ids.resize(batches.size());
  for (size_t i = 0; i < batches.size(); ++i) {
    const IdSpan& b = batches[i];
    state.Lookup(b, &out.positions[i]);
    for (int32_t p : out.positions[i]) out.ids[i].push_back(b.data[p]);
    SEER_ASSIGN_OR_RETURN(Changeset cs, device_changesets.Get(static_cast<int64_t>(i)));
    if (cs.num_misses != static_cast<int64_t>(out.positions[i].size())) {
      throw std::logic_error(fmt::format("device tier: changeset {} counts {} misses, the state {}", i,
                                         cs.num_misses, out.positions[i].size()));
    }
    out.num_misses += cs.num_misses;
    state.Apply(cs, b);
  }
  out.final_slots = state.slots();
  return out;
}

Result<ChangesetStore> PlanPreviousBatchReuse(const std::vector<int64_t>& initial_slots,
                                              const std::vector<IdSpan>& batches) {
  std::vector<int64_t> slots = initial_slots;
  const int64_t capacity = static_cast<int64_t>(slots.size());
  std::unordered_map<int64_t, int32_t> slot_of;
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s] != kFreeSlot && !slot_of.emplace(slots[s], static_cast<int32_t>(s)).second) {
      return InvalidArgument(fmt::format("previous-batch reuse: node {} twice in the initial state", slots[s]));
    }
  }
  ChangesetStore store;
  std::unordered_map<int64_t, int32_t> kept;  // node -> position in the batch
  for (const IdSpan& b : batches) {
    Changeset cs;
    cs.num_accesses = b.size;
    kept.clear();
    // Hits first (no copy), then misses, each in ascending position; the first K stay.
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t p = 0; p < b.size && static_cast<int64_t>(kept.size()) < capacity; ++p) {
        const bool hit = slot_of.count(b.data[p]) > 0;
        if (hit != (pass == 0)) continue;
        if (!kept.emplace(b.data[p], static_cast<int32_t>(p)).second) {
          return InvalidArgument(fmt::format("previous-batch reuse: node {} twice in one batch", b.data[p]));
        }
      }
    }
    for (int64_t p = 0; p < b.size; ++p) cs.num_misses += slot_of.count(b.data[p]) ? 0 : 1;
    for (int64_t s = 0; s < capacity; ++s) {
      const int64_t v = slots[static_cast<size_t>(s)];
      if (v == kFreeSlot || kept.count(v)) continue;
      cs.out_slots.push_back(static_cast<int32_t>(s));
      cs.out_ids.push_back(v);
      slots[static_cast<size_t>(s)] = kFreeSlot;
      slot_of.erase(v);
    }
    int64_t next_free = 0;
    for (int64_t p = 0; p < b.size; ++p) {
      const int64_t v = b.data[p];
      if (slot_of.count(v) || !kept.count(v)) continue;
      while (slots[static_cast<size_t>(next_free)] != kFreeSlot) ++next_free;
      cs.in_ids.push_back(v);
      cs.in_positions.push_back(static_cast<int32_t>(p));
      cs.in_slots.push_back(static_cast<int32_t>(next_free));
      slots[static_cast<size_t>(next_free)] = v;
      slot_of.emplace(v, static_cast<int32_t>(next_free));
    }
    SEER_RETURN_IF_ERROR(store.Append(std::move(cs)));
  }
  return store;
}

Result<TwoTierPlan> PlanTwoTierBelady(const std::vector<int64_t>& device_slots,
                                      const std::vector<int64_t>& host_slots, const std::vector<IdSpan>& batches,
                                      const BeladyPlannerOptions& options) {
  TwoTierPlan plan;
  SEER_ASSIGN_OR_RETURN(plan.device, PlanBelady(device_slots, batches, options));
  SEER_ASSIGN_OR_RETURN(plan.misses, ReplayDeviceTier(device_slots, batches, plan.device.changesets));
  SEER_ASSIGN_OR_RETURN(plan.host, PlanBelady(host_slots, plan.misses.Spans(), options));
  return plan;
}

namespace {

// The device tier's content before the first batch.
std::vector<int64_t> DeviceInitialSlots(DeviceTierPolicy policy, int64_t rows, const std::vector<int64_t>& ranking,
                                        const std::vector<IdSpan>& first_superbatch) {
  std::vector<int64_t> slots = EmptyCacheState(rows);
  if (policy == DeviceTierPolicy::kBelady) return BeladyInitialFill(first_superbatch, rows);
  if (policy == DeviceTierPolicy::kPresc) {
    for (int64_t s = 0; s < rows && s < static_cast<int64_t>(ranking.size()); ++s) {
      slots[static_cast<size_t>(s)] = ranking[static_cast<size_t>(s)];
    }
  }
  return slots;
}

// Device changesets for one superbatch under `policy` (static presc and off: misses only).
Result<ChangesetStore> PlanDeviceTier(DeviceTierPolicy policy, const std::vector<int64_t>& slots,
                                      const std::vector<IdSpan>& batches, const BeladyPlannerOptions& planner) {
  switch (policy) {
    case DeviceTierPolicy::kBelady: {
      SEER_ASSIGN_OR_RETURN(BeladyPlan plan, PlanBelady(slots, batches, planner));
      return std::move(plan.changesets);
    }
    case DeviceTierPolicy::kPreviousBatch:
      return PlanPreviousBatchReuse(slots, batches);
    case DeviceTierPolicy::kOff:
    case DeviceTierPolicy::kPresc: {
      TierState state(slots);
      ChangesetStore store;
      for (const IdSpan& b : batches) {
        Changeset cs;
        cs.num_accesses = b.size;
        cs.num_misses = b.size - state.Lookup(b, nullptr);
        SEER_RETURN_IF_ERROR(store.Append(std::move(cs)));
      }
      return store;
    }
  }
  return InvalidArgument("unknown device tier policy");
}

}  // namespace

Result<TwoTierStats> SimulateTwoTier(DeviceTierPolicy policy, int64_t device_rows, int64_t host_rows,
                                     const std::vector<int64_t>& presc_ranking,
                                     const std::vector<std::vector<IdSpan>>& superbatches,
                                     const TwoTierOptions& options) {
  if (device_rows < 0 || host_rows < 0) return InvalidArgument("two-tier simulation: negative capacity");
  if (policy == DeviceTierPolicy::kOff) device_rows = 0;
  if (policy == DeviceTierPolicy::kPresc && device_rows > 0 && presc_ranking.empty()) {
    return InvalidArgument("two-tier simulation: presc needs a node ranking");
  }
  TwoTierStats stats;
  stats.device_policy = DeviceTierPolicyName(policy);
  stats.device_capacity_rows = device_rows;
  stats.device_capacity_bytes = device_rows * options.transfer_row_bytes;
  stats.host_capacity_rows = host_rows;

  // Device tier first, over the whole trace (its plan does not depend on the host's).
  std::vector<int64_t> device_slots =
      DeviceInitialSlots(policy, device_rows, presc_ranking, superbatches.empty() ? std::vector<IdSpan>{} : superbatches.front());
  for (int64_t v : device_slots) stats.device_fill_rows += v == kFreeSlot ? 0 : 1;
  std::vector<DeviceMissStream> streams;
  streams.reserve(superbatches.size());
  for (const auto& sb : superbatches) {
    SEER_ASSIGN_OR_RETURN(ChangesetStore device_cs, PlanDeviceTier(policy, device_slots, sb, options.planner));
    SEER_ASSIGN_OR_RETURN(DeviceMissStream stream, ReplayDeviceTier(std::move(device_slots), sb, device_cs));
    device_slots = stream.final_slots;
    for (const IdSpan& b : sb) stats.accesses += b.size;
    stats.h2d_rows += stream.num_misses;
    streams.push_back(std::move(stream));
  }
  stats.device_hits = stats.accesses - stats.h2d_rows;
  stats.h2d_bytes = stats.h2d_rows * options.transfer_row_bytes;
  stats.h2d_fill_bytes = stats.device_fill_rows * options.transfer_row_bytes;

  // Host tier: Belady on the device misses, replayed and checked by the hit simulator.
  std::vector<std::vector<IdSpan>> host_superbatches;
  host_superbatches.reserve(streams.size());
  for (const DeviceMissStream& s : streams) host_superbatches.push_back(s.Spans());
  PolicyOptions host_options;
  host_options.capacity_rows = host_rows;
  host_options.planner = options.planner;
  host_options.planner.node_scores = options.host_node_scores;
  host_options.ranking = options.host_fill_ranking;
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<CachePolicy> host_policy,
                        MakeCachePolicy(PolicyKind::kBelady, std::move(host_options)));
  SEER_ASSIGN_OR_RETURN(PolicyStats host, SimulatePolicy(*host_policy, host_superbatches, options.sim));
  if (host.accesses != stats.h2d_rows) {
    throw std::logic_error("two-tier simulation: host accesses differ from device misses");
  }
  stats.host_misses = host.misses;
  stats.host_fill_rows = host.fill_rows;
  stats.ssd_blocks = host.blocks_read;
  stats.ssd_bytes = host.bytes_read;
  stats.ssd_fill_bytes = host.fill_bytes;
  return stats;
}

}  // namespace seer
