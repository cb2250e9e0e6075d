// IdJoin: the one external join of `seer prep` between a table keyed by node id and the
// graph's nodes in id order, within a memory share (never a map of all ids). The
// table's records (IdSortKey of the id, uint64 payload) are sorted by RecordSorter
// (storage/prep/record_sorter.h); the nodes are then shown in id order (Match, keys
// ascending: IdRemap's renumbering, or 0..N-1 for integer ids) and the two sorted streams
// merge: each node gets the payload of its record, if any; the records of keys that are
// no node are passed over and counted. Records sharing a key arrive in payload order and
// go to the RepeatCheck, which decides (an error stops the join; Ok keeps the first).
// Users: the --node-ids join (storage/prep/node_rows.h), the labels and split tables
// (storage/prep/node_tables.h). Run files live in `dir` (owned by the caller). Blocking,
// single-threaded (the runs are sorted on the caller's TBB arena).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "storage/base/status.h"
#include "storage/prep/record_sorter.h"

namespace seer {

class IdJoin {
 public:
  // Called for every record whose key equals the previous record's: `kept` is the
  // payload the key keeps (its first), `repeat` this record's.
  using RepeatCheck = std::function<Status(std::string_view sort_key, uint64_t kept, uint64_t repeat)>;

  IdJoin(std::string dir, std::string name, int64_t sort_bytes, RepeatCheck on_repeat);

  // The reading phase.
  Status Add(std::string_view sort_key, uint64_t payload);
  // Ends it: the runs are merged from here on (the sort memory is given back).
  Status StartMerge();
  // The next node's key (strictly ascending from call to call): its record's payload, or
  // nullopt when the table has none; smaller keys are passed over.
  Result<std::optional<uint64_t>> Match(std::string_view sort_key);
  // After the last Match: passes over the rest.
  Status Finish();

  // Distinct keys of the table that matched no node (final after Finish).
  int64_t unmatched_keys() const { return unmatched_keys_; }
  int64_t records() const { return records_; }

 private:
  Status Advance();  // the next distinct key of the sorted table into key_/payload_

  RecordSorter sorter_;
  RepeatCheck on_repeat_;
  int64_t records_ = 0, unmatched_keys_ = 0;
  bool have_ = false;      // key_/payload_ hold the current key
  bool pending_ = false;   // next_key_/next_payload_ hold a record read ahead
  std::string key_, next_key_;
  uint64_t payload_ = 0, next_payload_ = 0;
};

}  // namespace seer
