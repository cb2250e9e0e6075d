// The optional node-id mapping of a dataset (`seer prep --remap-ids`): `node_ids.txt`,
// line k+1 = the original id of node k, recorded in dataset.json as "node_ids". Original
// ids are ordered: canonical non-negative integers (digits, no sign, no leading zero,
// < 2^63) first, by value, then every other token by bytes; the file lists them
// strictly ascending in that order, so a lookup is a binary search (or a merge).
// Pure functions and a whole-file load; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/base/status.h"

namespace seer {

namespace dataset_files {
inline constexpr const char* kNodeIds = "node_ids.txt";
}  // namespace dataset_files

// A byte string whose order is the id order above, and back.
std::string IdSortKey(std::string_view id);
// IdSortKey(id) into *key, reusing its buffer (no allocation per id in a loop).
void IdSortKeyInto(std::string_view id, std::string* key);
std::string IdFromSortKey(std::string_view key);
// 8 bytes, most significant first (byte order = numeric order): the integer part of
// the sort keys, also used by the external sorts of `seer prep --remap-ids`.
void PutBigEndian(uint64_t v, char* out);
uint64_t GetBigEndian(const char* in);
// True (and *value) for a canonical non-negative integer id.
bool CanonicalIntegerId(std::string_view id, int64_t* value);

// Why `id` cannot be one line of node_ids.txt that reads back unchanged (as a --node-ids
// file, by Python's str.splitlines, numpy or any line reader), or nullptr when it can: a
// '\n', '\r', NUL or other control byte (tab included), DEL, invalid UTF-8, a Unicode
// line break (U+0085, U+2028, U+2029), or a space at either end. Empty ids are not
// checked here. Cheap for ASCII ids (one pass, no allocation): `seer prep` checks every
// token.
const char* IdRoundTripProblem(std::string_view id);
// `id` as it may appear in a one-line message: bytes outside printable ASCII written as
// \xNN, cut after `max_chars` bytes (then "... (N bytes)").
std::string EscapeId(std::string_view id, size_t max_chars = 64);

// Reads a mapping file and checks it: `expected` lines (-1: any), none empty, strictly
// ascending. Errors name the file and line.
Result<std::vector<std::string>> LoadNodeIds(const std::string& path, int64_t expected);

// The same checks streamed (memory: one line), plus every id round-trips
// (IdRoundTripProblem): `seer check`.
Status CheckNodeIdsFile(const std::string& path, int64_t expected);

// Dense node number of `id` in the sorted mapping, or -1.
int64_t FindNodeId(const std::vector<std::string>& ids, std::string_view id);

}  // namespace seer
