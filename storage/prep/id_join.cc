#include "storage/prep/id_join.h"

#include <utility>

namespace seer {

IdJoin::IdJoin(std::string dir, std::string name, int64_t sort_bytes, RepeatCheck on_repeat)
    : sorter_(std::move(dir), std::move(name), sort_bytes), on_repeat_(std::move(on_repeat)) {}

Status IdJoin::Add(std::string_view sort_key, uint64_t payload) {
  ++records_;
  return sorter_.Add(sort_key, payload);
}

Status IdJoin::StartMerge() {
  SEER_RETURN_IF_ERROR(sorter_.StartMerge());
  return Advance();
}

// Reads one record ahead: the first record of the next key ends the current key's
// repeats and waits in next_key_.
Status IdJoin::Advance() {
  have_ = false;
  std::string_view key;
  uint64_t payload;
  if (!pending_) {
    SEER_ASSIGN_OR_RETURN(bool more, sorter_.Next(&key, &payload));
    if (!more) return Status::Ok();
    next_key_.assign(key);
    next_payload_ = payload;
  }
  pending_ = false;
  key_.swap(next_key_);
  payload_ = next_payload_;
  have_ = true;
  for (;;) {
    SEER_ASSIGN_OR_RETURN(bool more, sorter_.Next(&key, &payload));
    if (!more) return Status::Ok();
    if (key != std::string_view(key_)) {
      next_key_.assign(key);
      next_payload_ = payload;
      pending_ = true;
      return Status::Ok();
    }
    SEER_RETURN_IF_ERROR(on_repeat_(key_, payload_, payload));
  }
}

Result<std::optional<uint64_t>> IdJoin::Match(std::string_view sort_key) {
  while (have_ && std::string_view(key_) < sort_key) {
    ++unmatched_keys_;
    SEER_RETURN_IF_ERROR(Advance());
  }
  if (!have_ || std::string_view(key_) != sort_key) return std::optional<uint64_t>();
  const uint64_t payload = payload_;
  SEER_RETURN_IF_ERROR(Advance());
  return std::optional<uint64_t>(payload);
}

Status IdJoin::Finish() {
  while (have_) {
    ++unmatched_keys_;
    SEER_RETURN_IF_ERROR(Advance());
  }
  return Status::Ok();
}

}  // namespace seer
