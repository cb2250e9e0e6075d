// Changeset and ChangesetStore: what a cache planner hands the executor for each batch
// of a superbatch (the planner's output, cache/belady_planner.h and cache/policies.h),
// and where a superbatch's changesets wait until the gather thread applies them.
//
// Changeset i turns the cache state C_i into C_{i+1}:
//  * out_slots / out_ids: the evicted nodes and the slots they held, ascending slot.
//  * in_ids / in_positions: the inserted nodes (always misses of iteration i) and their
//    positions in ids_i, ascending position — the executor copies their rows from the
//    batch buffer, no extra read.
//  * in_slots: where each inserted node goes (the slot rule is the planner's; for Belady
//    see cache/belady_planner.h).
//  * block_ids / block_slots: rows admitted from the blocks batch i read that are not in
//    ids_i (block-granular reads, cache/read_blocks.h), ascending id, and their slots
//    (given after the in_slots, by the same slot rule); empty unless --read-block is set.
//
// ChangesetStore keeps the changesets in RAM until `budget_bytes` of them are held; later
// ones are appended to a spill file in `spill_dir` (a RuntimeFile, cache/runtime_file.h:
// seer-trace-PID-changesets-XXXXXX, removed by the destructor). spill_dir "" = never
// spill.
//
// Spill file format (little-endian, one record per spilled changeset, back to back):
//   int64 magic 0x32475343524553 ("SERCSG2"), int64 num_accesses, int64 num_misses,
//   int64 n_in, int64 n_out, int64 in_ids[n_in], int32 in_positions[n_in],
//   int32 in_slots[n_in], int64 out_ids[n_out], int32 out_slots[n_out],
//   int64 n_block, int64 block_ids[n_block], int32 block_slots[n_block]
// The record offsets are kept in RAM; Get() reads one record back with pread.
//
// Ownership: the store owns its changesets and the spill file. Thread-safety: a
// ChangesetStore is a single-threaded object (Get() is const but shares the file).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/runtime_file.h"
#include "storage/base/status.h"

namespace seer {

struct Changeset {
  int64_t num_accesses = 0;           // |ids_i|
  int64_t num_misses = 0;             // |ids_i \ C_i|
  std::vector<int64_t> in_ids;        // ascending position
  std::vector<int32_t> in_positions;  // positions in ids_i
  std::vector<int32_t> in_slots;      // slot each in_id goes to
  std::vector<int64_t> out_ids;       // evicted nodes, ascending slot
  std::vector<int32_t> out_slots;
  std::vector<int64_t> block_ids;     // free rows of this batch's block reads, ascending id
  std::vector<int32_t> block_slots;   // slot each block_id goes to

  int64_t num_hits() const { return num_accesses - num_misses; }
  int64_t ByteSize() const;
  bool operator==(const Changeset& other) const;
};

// RAM per inserted row of a Changeset (in_ids, in_positions, in_slots: 8 + 4 + 4 B); the
// memory split's changeset estimate per changed row of a batch.
inline constexpr int64_t kChangesetBytesPerInsertedRow = 16;

// Changesets of a superbatch, in iteration order (format above).
class ChangesetStore {
 public:
  static constexpr int64_t kUnlimited = INT64_MAX;
  explicit ChangesetStore(int64_t budget_bytes = kUnlimited, std::string spill_dir = "");
  ChangesetStore(ChangesetStore&&) noexcept;
  // Removes this store's spill file before taking the other's.
  ChangesetStore& operator=(ChangesetStore&&) noexcept;
  ~ChangesetStore();

  // Errors: creating or writing the spill file (named).
  Status Append(Changeset changeset);
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  // Changeset i (a copy from RAM, or read back from the spill file; kCorrupt for a bad
  // record). An index outside [0, size()) throws std::out_of_range.
  Result<Changeset> Get(int64_t i) const;

  int64_t ram_bytes() const { return ram_bytes_; }
  int64_t spilled_bytes() const { return spilled_bytes_; }
  int64_t num_spilled() const { return num_spilled_; }
  const std::string& spill_path() const { return spill_file_.path(); }  // "" until a spill

 private:
  struct Entry {
    std::unique_ptr<Changeset> ram;  // null when spilled
    int64_t offset_bytes = -1;       // in the spill file
    int64_t length_bytes = 0;
  };
  int64_t budget_bytes_;
  std::string spill_dir_;
  RuntimeFile spill_file_;
  std::vector<Entry> entries_;
  int64_t ram_bytes_ = 0;
  int64_t spilled_bytes_ = 0;
  int64_t num_spilled_ = 0;
};

}  // namespace seer
