#include "cache/changeset_store.h"

#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace seer {

int64_t Changeset::ByteSize() const {
  return static_cast<int64_t>(sizeof(Changeset)) +
         static_cast<int64_t>(in_ids.size()) * 16 + static_cast<int64_t>(out_ids.size()) * 12 +
         static_cast<int64_t>(block_ids.size()) * 12;
}

bool Changeset::operator==(const Changeset& o) const {
  return num_accesses == o.num_accesses && num_misses == o.num_misses && in_ids == o.in_ids &&
         in_positions == o.in_positions && in_slots == o.in_slots && out_ids == o.out_ids &&
         out_slots == o.out_slots && block_ids == o.block_ids && block_slots == o.block_slots;
}

namespace {
constexpr int64_t kChangesetMagic = 0x32475343524553;  // "SERCSG2"
constexpr int64_t kRecordHeaderBytes = 5 * 8;

int64_t RecordBytes(const Changeset& c) {
  return kRecordHeaderBytes + static_cast<int64_t>(c.in_ids.size()) * 16 +
         static_cast<int64_t>(c.out_ids.size()) * 12 + 8 + static_cast<int64_t>(c.block_ids.size()) * 12;
}

template <typename T>
void AppendRaw(std::vector<char>* out, const T* data, size_t count) {
  const char* p = reinterpret_cast<const char*>(data);
  out->insert(out->end(), p, p + count * sizeof(T));
}
}  // namespace

ChangesetStore::ChangesetStore(int64_t budget_bytes, std::string spill_dir)
    : budget_bytes_(budget_bytes), spill_dir_(std::move(spill_dir)) {}
ChangesetStore::ChangesetStore(ChangesetStore&&) noexcept = default;
ChangesetStore& ChangesetStore::operator=(ChangesetStore&&) noexcept = default;
ChangesetStore::~ChangesetStore() = default;

Status ChangesetStore::Append(Changeset changeset) {
  const int64_t bytes = changeset.ByteSize();
  const bool fits = num_spilled_ == 0 && (budget_bytes_ == kUnlimited || ram_bytes_ + bytes <= budget_bytes_);
  if (fits || spill_dir_.empty()) {
    ram_bytes_ += bytes;
    entries_.push_back(Entry{std::make_unique<Changeset>(std::move(changeset)), -1, 0});
    return Status::Ok();
  }
  if (!spill_file_.valid()) {
    SEER_ASSIGN_OR_RETURN(spill_file_, RuntimeFile::Create(spill_dir_, "changesets", "create changeset spill file"));
  }
  std::vector<char> record;
  record.reserve(static_cast<size_t>(RecordBytes(changeset)));
  const int64_t header[5] = {kChangesetMagic, changeset.num_accesses, changeset.num_misses,
                             static_cast<int64_t>(changeset.in_ids.size()),
                             static_cast<int64_t>(changeset.out_ids.size())};
  AppendRaw(&record, header, 5);
  AppendRaw(&record, changeset.in_ids.data(), changeset.in_ids.size());
  AppendRaw(&record, changeset.in_positions.data(), changeset.in_positions.size());
  AppendRaw(&record, changeset.in_slots.data(), changeset.in_slots.size());
  AppendRaw(&record, changeset.out_ids.data(), changeset.out_ids.size());
  AppendRaw(&record, changeset.out_slots.data(), changeset.out_slots.size());
  const int64_t n_block = static_cast<int64_t>(changeset.block_ids.size());
  AppendRaw(&record, &n_block, 1);
  AppendRaw(&record, changeset.block_ids.data(), changeset.block_ids.size());
  AppendRaw(&record, changeset.block_slots.data(), changeset.block_slots.size());
  SEER_ASSIGN_OR_RETURN(const int64_t offset,
                        spill_file_.Append(record.data(), static_cast<int64_t>(record.size())));
  spilled_bytes_ += static_cast<int64_t>(record.size());
  ++num_spilled_;
  entries_.push_back(Entry{nullptr, offset, static_cast<int64_t>(record.size())});
  return Status::Ok();
}

Result<Changeset> ChangesetStore::Get(int64_t i) const {
  if (i < 0 || i >= size()) {
    throw std::out_of_range(fmt::format("changeset {} of {}", i, size()));
  }
  const Entry& e = entries_[static_cast<size_t>(i)];
  if (e.ram) return *e.ram;
  std::vector<char> record(static_cast<size_t>(e.length_bytes));
  SEER_RETURN_IF_ERROR(spill_file_.Read(record.data(), e.length_bytes, e.offset_bytes));
  int64_t header[5];
  std::memcpy(header, record.data(), sizeof header);
  const int64_t n_in = header[3], n_out = header[4];
  const int64_t fixed = kRecordHeaderBytes + n_in * 16 + n_out * 12 + 8;
  int64_t n_block = -1;
  if (n_in >= 0 && n_out >= 0 && fixed <= e.length_bytes) {
    std::memcpy(&n_block, record.data() + fixed - 8, sizeof n_block);
  }
  if (header[0] != kChangesetMagic || n_in < 0 || n_out < 0 || n_block < 0 ||
      fixed + n_block * 12 != e.length_bytes) {
    return Corrupt(fmt::format("{}: bad changeset record at offset {}", spill_file_.path(), e.offset_bytes));
  }
  Changeset c;
  c.num_accesses = header[1];
  c.num_misses = header[2];
  const char* p = record.data() + kRecordHeaderBytes;
  auto take = [&p](auto* vec, int64_t n) {
    using T = typename std::remove_pointer_t<decltype(vec)>::value_type;
    vec->resize(static_cast<size_t>(n));
    if (n > 0) std::memcpy(vec->data(), p, static_cast<size_t>(n) * sizeof(T));  // data() may be null
    p += n * static_cast<int64_t>(sizeof(T));
  };
  take(&c.in_ids, n_in);
  take(&c.in_positions, n_in);
  take(&c.in_slots, n_in);
  take(&c.out_ids, n_out);
  take(&c.out_slots, n_out);
  p += 8;  // n_block
  take(&c.block_ids, n_block);
  take(&c.block_slots, n_block);
  return c;
}

}  // namespace seer
