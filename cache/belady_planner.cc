#include "cache/belady_planner.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <queue>
#include <unordered_set>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include "storage/base/parallel.h"
#include <tbb/task_arena.h>

#include "kernels/belady_gpu.h"
#include "kernels/device.h"
#include "storage/base/file_io.h"

namespace seer {

std::vector<IdSpan> MakeIdSpans(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<IdSpan> spans;
  spans.reserve(batches.size());
  for (const auto& b : batches) spans.push_back({b.data(), static_cast<int64_t>(b.size())});
  return spans;
}

// ---- Changeset / ChangesetStore ---------------------------------------------------

int64_t Changeset::ByteSize() const {
  return static_cast<int64_t>(sizeof(Changeset)) +
         static_cast<int64_t>(in_ids.size()) * 16 + static_cast<int64_t>(out_ids.size()) * 12;
}

bool Changeset::operator==(const Changeset& o) const {
  return num_accesses == o.num_accesses && num_misses == o.num_misses && in_ids == o.in_ids &&
         in_positions == o.in_positions && in_slots == o.in_slots && out_ids == o.out_ids &&
         out_slots == o.out_slots;
}

namespace {
constexpr int64_t kChangesetMagic = 0x31475343524553;  // "SERCSG1"
constexpr int64_t kRecordHeaderBytes = 5 * 8;

int64_t RecordBytes(const Changeset& c) {
  return kRecordHeaderBytes + static_cast<int64_t>(c.in_ids.size()) * 16 +
         static_cast<int64_t>(c.out_ids.size()) * 12;
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
ChangesetStore& ChangesetStore::operator=(ChangesetStore&& other) noexcept {
  if (this != &other) {
    if (!spill_path_.empty()) ::unlink(spill_path_.c_str());
    budget_bytes_ = other.budget_bytes_;
    spill_dir_ = std::move(other.spill_dir_);
    spill_path_ = std::exchange(other.spill_path_, std::string());
    spill_fd_ = std::move(other.spill_fd_);
    entries_ = std::move(other.entries_);
    ram_bytes_ = other.ram_bytes_;
    spilled_bytes_ = other.spilled_bytes_;
    num_spilled_ = other.num_spilled_;
  }
  return *this;
}
ChangesetStore::~ChangesetStore() {
  if (!spill_path_.empty()) ::unlink(spill_path_.c_str());
}

Status ChangesetStore::Append(Changeset changeset) {
  const int64_t bytes = changeset.ByteSize();
  const bool fits = num_spilled_ == 0 && (budget_bytes_ == kUnlimited || ram_bytes_ + bytes <= budget_bytes_);
  if (fits || spill_dir_.empty()) {
    ram_bytes_ += bytes;
    entries_.push_back(Entry{std::make_unique<Changeset>(std::move(changeset)), -1, 0});
    return Status::Ok();
  }
  if (!spill_fd_.valid()) {
    std::string pattern = spill_dir_ + "/changesets-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = ::mkstemp(name.data());
    if (fd < 0) return ErrnoStatus(errno, "create changeset spill file", pattern);
    spill_fd_ = UniqueFd(fd);
    spill_path_ = name.data();
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
  const int64_t offset = spilled_bytes_;
  SEER_RETURN_IF_ERROR(PwriteFull(spill_fd_.get(), record.data(),
                                  static_cast<int64_t>(record.size()), offset, spill_path_));
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
  SEER_RETURN_IF_ERROR(PreadFull(spill_fd_.get(), record.data(), e.length_bytes,
                                 e.offset_bytes, spill_path_));
  int64_t header[5];
  std::memcpy(header, record.data(), sizeof header);
  const int64_t n_in = header[3], n_out = header[4];
  if (header[0] != kChangesetMagic || n_in < 0 || n_out < 0 ||
      kRecordHeaderBytes + n_in * 16 + n_out * 12 != e.length_bytes) {
    return Corrupt(fmt::format("{}: bad changeset record at offset {}", spill_path_, e.offset_bytes));
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
  return c;
}

// ---- device choice ------------------------------------------------------------------

Result<PlannerDevice> ParsePlannerDevice(const std::string& text) {
  return ParseName(kPlannerDeviceNames, text, "planner");
}

const char* PlannerDeviceName(PlannerDevice device) { return NameOf(kPlannerDeviceNames, device); }

PlannerDevice ResolvePlannerDevice(PlannerDevice device) {
  if (device != PlannerDevice::kAuto) return device;
  return kernels::BuiltWithCuda() && kernels::CudaDeviceCount() > 0 ? PlannerDevice::kGpu
                                                                     : PlannerDevice::kCpu;
}

// ---- CPU planner ----------------------------------------------------------------------
//
// Two passes over the batches. Pass 1 computes, for every access, where the same node is
// accessed next (NextRef) by sorting (node, e, position) records, e = batch + 1 and e = 0
// for C0 (position = slot), so the first use of every cached node comes out of the same
// sort. Records are collected in access order into a run buffer; a full buffer is sorted
// (LSD radix sort of packed 64-bit keys) and, when the whole superbatch does not fit in
// the working memory, written to a runs file in the runtime directory; the runs are then
// merged and each NextRef is appended to the file segment of its batch range. Pass 2
// (BeladyForward) reads the batches again, one at a time, with their NextRefs.

namespace {

// The next access to the same node, packed in one word (so the sort's scratch buffer
// can hold the table): batch (high 32 bits; num_batches = none in this superbatch),
// position in it (low 32 bits).
using NextRef = uint64_t;
inline NextRef MakeNextRef(int32_t batch, int32_t pos) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(batch)) << 32) | static_cast<uint32_t>(pos);
}
inline int32_t NextBatch(NextRef r) { return static_cast<int32_t>(r >> 32); }
inline int32_t NextPos(NextRef r) { return static_cast<int32_t>(r & 0xffffffffu); }

int BitWidth(uint64_t max_value) { return max_value == 0 ? 0 : 64 - __builtin_clzll(max_value); }

// A sorted access record: node, e (batch + 1; 0 = C0), position (slot for C0).
struct AccessRecord {
  int64_t node;
  int32_t e;
  int32_t pos;
};

// How a run's records are stored: packed into one word (node | e - first_e | pos) when
// the widths fit in 64 bits, else two words (node, (e - first_e) << 32 | pos).
struct RunLayout {
  bool packed = true;
  int pos_bits = 0;
  int e_bits = 0;
  int32_t first_e = 0;
  int words_per_record() const { return packed ? 1 : 2; }
  AccessRecord Decode(const uint64_t* w) const {
    if (packed) {
      const uint64_t pos_mask = pos_bits == 0 ? 0 : (~uint64_t{0} >> (64 - pos_bits));
      const uint64_t e_mask = e_bits == 0 ? 0 : (~uint64_t{0} >> (64 - e_bits));
      const int shift = pos_bits + e_bits;
      return AccessRecord{shift == 64 ? 0 : static_cast<int64_t>(w[0] >> shift),
                          first_e + static_cast<int32_t>((w[0] >> pos_bits) & e_mask),
                          static_cast<int32_t>(w[0] & pos_mask)};
    }
    return AccessRecord{static_cast<int64_t>(w[0]), first_e + static_cast<int32_t>(w[1] >> 32),
                        static_cast<int32_t>(w[1] & 0xffffffffu)};
  }
};

// Stable LSD radix sort of keys on bits [low_bit, low_bit + bits) (digits of at most
// kMaxKeyDigit bits, as few passes as the width needs: two passes up to 2^24 nodes;
// digits on which all keys agree are skipped). Keys that are already in order of their
// lower bits (records appended in access order) end up sorted on all bits. `tmp` is
// scratch of the same size.
constexpr int kMaxKeyDigit = 12;
// The forward pass's smaller radix sorts (evicted slots, pending ∞ rows).
constexpr int kMaxRadixDigit = 11;
void RadixSort(std::vector<uint64_t>* keys, std::vector<uint64_t>* tmp, int low_bit, int bits) {
  const size_t n = keys->size();
  if (n < 2 || bits == 0) return;
  if (n < 256) {
    std::stable_sort(keys->begin(), keys->end(), [low_bit](uint64_t a, uint64_t b) {
      return (a >> low_bit) < (b >> low_bit);
    });
    return;
  }
  const int passes = (bits + kMaxKeyDigit - 1) / kMaxKeyDigit;
  const int digit = (bits + passes - 1) / passes;
  const size_t buckets = size_t{1} << digit;
  const uint64_t mask = buckets - 1;
  tmp->resize(n);
  // Chunks sorted by separate threads (same result: each chunk scatters to its own
  // offsets, chunk order kept, so the sort stays stable).
  const size_t chunks = n < (size_t{1} << 14)
                            ? 1
                            : static_cast<size_t>(std::clamp(tbb::this_task_arena::max_concurrency(), 1, 8));
  std::vector<size_t> bounds(chunks + 1);
  for (size_t c = 0; c <= chunks; ++c) bounds[c] = n * c / chunks;
  // Per pass, each chunk's digit histogram of the current order.
  std::vector<size_t> hist(chunks * buckets);
  uint64_t* src = keys->data();
  uint64_t* dst = tmp->data();
  for (int p = 0; p < passes; ++p) {
    const int shift = low_bit + p * digit;
    std::fill(hist.begin(), hist.end(), 0);
    ParallelFor(size_t{0}, chunks, [&, src, shift](size_t c) {
      size_t* h = hist.data() + c * buckets;
      const uint64_t* from = src + bounds[c];
      const uint64_t* to = src + bounds[c + 1];
      for (; from != to; ++from) ++h[(*from >> shift) & mask];
    });
    size_t total_first = 0;
    for (size_t c = 0; c < chunks; ++c) total_first += hist[c * buckets + ((src[0] >> shift) & mask)];
    if (total_first == n) continue;  // one digit value: no-op pass
    size_t sum = 0;
    for (size_t d = 0; d < buckets; ++d) {
      for (size_t c = 0; c < chunks; ++c) {
        const size_t count = hist[c * buckets + d];
        hist[c * buckets + d] = sum;
        sum += count;
      }
    }
    ParallelFor(size_t{0}, chunks, [&, src, dst, shift](size_t c) {
      size_t* h = hist.data() + c * buckets;
      const uint64_t* from = src + bounds[c];
      const uint64_t* to = src + bounds[c + 1];
      for (; from != to; ++from) {
        const uint64_t v = *from;
        dst[h[(v >> shift) & mask]++] = v;
      }
    });
    std::swap(src, dst);
  }
  if (src != keys->data()) keys->swap(*tmp);
}

// One sorted run in RAM.
struct SortedRun {
  RunLayout layout;
  std::vector<uint64_t> words;
  int64_t num_records() const { return static_cast<int64_t>(words.size()) / layout.words_per_record(); }
};

// Pass-1 buffer: the accesses of consecutive batches (and, for the first run, C0), in
// access order, until Seal() sorts them into a run.
class RunBuilder {
 public:
  void Reset(int32_t first_e) {
    first_e_ = first_e;
    next_e_ = first_e;
    ids_.clear();
    pos_of_c0_.clear();
    batch_sizes_.clear();
    max_id_ = 0;
    max_pos_ = 0;
  }
  // C0 as e = 0: position = slot. Only for the first run, before any batch.
  void AddInitialSlots(const std::vector<int64_t>& slots) {
    for (size_t s = 0; s < slots.size(); ++s) {
      if (slots[s] == kFreeSlot) continue;
      ids_.push_back(static_cast<uint64_t>(slots[s]));
      pos_of_c0_.push_back(static_cast<int32_t>(s));
      max_id_ = std::max(max_id_, slots[s]);
      max_pos_ = std::max<int64_t>(max_pos_, static_cast<int64_t>(s));
    }
    batch_sizes_.assign(1, static_cast<int64_t>(pos_of_c0_.size()));
    next_e_ = 1;
  }
  // Appends a batch (e = next_e_). kInvalidArgument for a negative id.
  Status AddBatch(const IdSpan& ids, int64_t batch_index) {
    const size_t at = ids_.size();
    ids_.resize(at + static_cast<size_t>(ids.size));
    uint64_t* out = ids_.data() + at;
    int64_t max_id = max_id_;
    bool negative = false;
    for (int64_t p = 0; p < ids.size; ++p) {
      const int64_t v = ids.data[p];
      negative |= v < 0;
      max_id = std::max(max_id, v);
      out[p] = static_cast<uint64_t>(v);
    }
    if (negative) {
      ids_.resize(at);
      const int64_t p = std::find_if(ids.data, ids.data + ids.size, [](int64_t v) { return v < 0; }) - ids.data;
      return InvalidArgument(fmt::format("Belady planner: negative node id {} in batch {} (position {})",
                                         ids.data[p], batch_index, p));
    }
    max_id_ = max_id;
    max_pos_ = std::max<int64_t>(max_pos_, ids.size - 1);
    batch_sizes_.push_back(ids.size);
    ++next_e_;
    return Status::Ok();
  }
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  // Room for `accesses` more ids without regrowing (and re-copying) the buffer.
  void Reserve(int64_t accesses) { ids_.reserve(ids_.size() + static_cast<size_t>(accesses)); }
  int32_t num_e() const { return next_e_ - first_e_; }

  // Sorts the buffered accesses by (node, e, position) into `run` (its words buffer is
  // reused); `scratch` is the radix sort's scratch.
  void Seal(SortedRun* run, std::vector<uint64_t>* scratch) {
    RunLayout& L = run->layout;
    L.first_e = first_e_;
    L.pos_bits = BitWidth(static_cast<uint64_t>(std::max<int64_t>(0, max_pos_)));
    L.e_bits = BitWidth(static_cast<uint64_t>(std::max(0, num_e() - 1)));
    const int id_bits = BitWidth(static_cast<uint64_t>(max_id_));
    L.packed = id_bits + L.e_bits + L.pos_bits <= 64;
    const int shift = L.pos_bits + L.e_bits;
    // The ids become the run's words in place (packed), or are spread to two words per
    // record from the back (unpacked), so the buffer is never copied.
    auto& w = run->words;
    w.swap(ids_);
    const size_t n = w.size();
    if (!L.packed) w.resize(2 * n);
    size_t g = n;
    for (size_t b = batch_sizes_.size(); b-- > 0;) {
      const uint64_t e_rel = b;
      const bool c0 = first_e_ == 0 && b == 0;
      for (int64_t p = batch_sizes_[b] - 1; p >= 0; --p) {
        --g;
        const uint64_t pos = c0 ? static_cast<uint64_t>(pos_of_c0_[static_cast<size_t>(p)]) : static_cast<uint64_t>(p);
        const uint64_t node = w[g];
        if (L.packed) {
          w[g] = (shift == 64 ? 0 : node << shift) | (e_rel << L.pos_bits) | pos;
        } else {
          w[2 * g + 1] = (e_rel << 32) | pos;
          w[2 * g] = node;
        }
      }
    }
    g = n;
    ids_.clear();
    if (L.packed) {
      // Appended in (e, pos) order: sorting on the node bits keeps that order per node.
      RadixSort(&w, scratch, shift, id_bits);
    } else {
      std::vector<std::pair<uint64_t, uint64_t>> pairs(g);
      for (size_t t = 0; t < g; ++t) pairs[t] = {w[2 * t], w[2 * t + 1]};
      std::sort(pairs.begin(), pairs.end());
      for (size_t t = 0; t < g; ++t) std::tie(w[2 * t], w[2 * t + 1]) = pairs[t];
    }
  }

 private:
  int32_t first_e_ = 0;
  int32_t next_e_ = 0;
  std::vector<uint64_t> ids_;  // node ids in access order (becomes the run's words)
  std::vector<int32_t> pos_of_c0_;
  std::vector<int64_t> batch_sizes_;
  int64_t max_id_ = 0;
  int64_t max_pos_ = 0;
};

// A runtime file removed by the destructor.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  Status Create(const std::string& dir, const std::string& stem) {
    std::string pattern = dir + "/" + stem + "-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) return ErrnoStatus(errno, "create planner runtime file", pattern);
    fd_ = UniqueFd(fd);
    path_ = name.data();
    return Status::Ok();
  }
  // Appends at the end; returns the offset written at.
  Result<int64_t> Append(const void* data, int64_t bytes) {
    const int64_t at = size_;
    SEER_RETURN_IF_ERROR(PwriteFull(fd_.get(), data, bytes, at, path_));
    size_ += bytes;
    return at;
  }
  Status Read(void* dest, int64_t bytes, int64_t offset) const {
    return PreadFull(fd_.get(), dest, bytes, offset, path_);
  }
  int64_t size() const { return size_; }
  bool valid() const { return fd_.valid(); }

 private:
  UniqueFd fd_;
  std::string path_;
  int64_t size_ = 0;
};

// A run written to the runs file: [offset, offset + words * 8).
struct RunOnDisk {
  RunLayout layout;
  int64_t offset_bytes = 0;
  int64_t num_words = 0;
};

// Reads one on-disk run through a buffer of `buffer_words`.
class RunCursor {
 public:
  RunCursor(const TempFile* file, const RunOnDisk& run, int64_t buffer_words)
      : file_(file), run_(run),
        buffer_words_(std::max<int64_t>(buffer_words - buffer_words % 2, 2)) {}
  // Advances to the next record; false at the end.
  Result<bool> Next(AccessRecord* out) {
    const int wpr = run_.layout.words_per_record();
    if (at_ + wpr > static_cast<int64_t>(buffer_.size())) {
      const int64_t left = run_.num_words - consumed_;
      if (left <= 0) return false;
      const int64_t take = std::min(left, buffer_words_);
      buffer_.resize(static_cast<size_t>(take));
      SEER_RETURN_IF_ERROR(file_->Read(buffer_.data(), take * 8, run_.offset_bytes + consumed_ * 8));
      consumed_ += take;
      at_ = 0;
    }
    *out = run_.layout.Decode(buffer_.data() + at_);
    at_ += wpr;
    return true;
  }

 private:
  const TempFile* file_;
  RunOnDisk run_;
  int64_t buffer_words_;
  std::vector<uint64_t> buffer_;
  int64_t at_ = 0;
  int64_t consumed_ = 0;
};

// Every access's NextRef, for the forward pass: all in RAM, or spilled by batch range.
// Batches are read back in order 0..S-1.
class NextUseTable {
 public:
  // Pass 1 over `source` (which it rewinds first).
  // accesses_hint: the superbatch's total accesses when known (-1 = unknown).
  static Result<std::unique_ptr<NextUseTable>> Build(const std::vector<int64_t>& initial_slots,
                                                     BatchIdSource& source,
                                                     const BeladyPlannerOptions& options,
                                                     int64_t accesses_hint);

  const std::vector<NextRef>& initial_next() const { return initial_next_; }
  int64_t num_batches() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  int64_t batch_size(int64_t b) const { return offsets_[static_cast<size_t>(b) + 1] - offsets_[static_cast<size_t>(b)]; }
  int64_t total() const { return offsets_.back(); }
  // NextRefs of batch b's accesses, valid until the next call; b ascending.
  Result<const NextRef*> BatchNext(int64_t b);

 private:
  // A batch range's NextRef segments in the next-use file.
  struct Range {
    int64_t first_batch = 0;
    int64_t end_batch = 0;
    std::vector<std::pair<int64_t, int64_t>> segments;  // (offset, bytes)
  };
  // Spilled record: index within the range, and the NextRef's batch and position.
  struct RangeRecord {
    uint32_t local;
    int32_t batch;
    int32_t pos;
  };
  static_assert(sizeof(RangeRecord) == 12);

  Status Walk(SortedRun& run);
  Status MergeRuns(const std::vector<RunOnDisk>& runs, int64_t working_memory_bytes);
  Status Emit(const AccessRecord& prev, NextRef ref);
  Status LoadRange(size_t r);

  std::vector<int64_t> offsets_;    // batch -> first access (num_batches + 1)
  std::vector<NextRef> initial_next_;
  std::vector<NextRef> in_ram_;     // all accesses (RAM mode) or the loaded range
  bool spilled_ = false;
  std::string runtime_dir_;
  std::unique_ptr<TempFile> runs_file_;
  std::unique_ptr<TempFile> next_file_;
  std::vector<Range> ranges_;
  std::vector<int32_t> range_of_batch_;
  std::vector<std::vector<RangeRecord>> out_buffers_;
  size_t out_buffer_records_ = 0;
  size_t loaded_range_ = SIZE_MAX;
};

Status DuplicateInBatch(int64_t node, int32_t e, int32_t pos) {
  return InvalidArgument(fmt::format(
      "Belady planner: node {} appears twice in batch {} (position {}); batch ids must be unique",
      node, e - 1, pos));
}

Result<std::unique_ptr<NextUseTable>> NextUseTable::Build(const std::vector<int64_t>& initial_slots,
                                                          BatchIdSource& source,
                                                          const BeladyPlannerOptions& options,
                                                          int64_t accesses_hint) {
  auto t = std::make_unique<NextUseTable>();
  const int64_t num_batches = source.num_batches();
  if (num_batches < 0 || num_batches >= std::numeric_limits<int32_t>::max() - 1) {
    return InvalidArgument(fmt::format("Belady planner: {} batches is out of range", num_batches));
  }
  const int32_t inf = static_cast<int32_t>(num_batches);
  t->initial_next_.assign(initial_slots.size(), MakeNextRef(inf, 0));
  t->offsets_.assign(1, 0);
  t->runtime_dir_ = options.runtime_dir;
  const bool may_spill = !options.runtime_dir.empty();
  // Pass-1 buffer: 8 bytes of ids (packed into keys in place) + 8 of sort scratch per access.
  const int64_t run_capacity = may_spill ? std::max<int64_t>(1, options.working_memory_bytes / 16)
                                         : std::numeric_limits<int64_t>::max();
  RunBuilder builder;
  builder.Reset(0);
  builder.AddInitialSlots(initial_slots);
  if (accesses_hint > 0 && accesses_hint <= run_capacity) builder.Reserve(accesses_hint);
  SortedRun run;
  std::vector<uint64_t> scratch;
  std::vector<RunOnDisk> on_disk;
  auto spill = [&]() -> Status {
    builder.Seal(&run, &scratch);
    if (!t->runs_file_) {
      t->runs_file_ = std::make_unique<TempFile>();
      SEER_RETURN_IF_ERROR(t->runs_file_->Create(options.runtime_dir, "belady-runs"));
    }
    RunOnDisk d;
    d.layout = run.layout;
    d.num_words = static_cast<int64_t>(run.words.size());
    SEER_ASSIGN_OR_RETURN(d.offset_bytes, t->runs_file_->Append(run.words.data(), d.num_words * 8));
    on_disk.push_back(d);
    return Status::Ok();
  };
  SEER_RETURN_IF_ERROR(source.Rewind());
  for (int64_t b = 0; b < num_batches; ++b) {
    SEER_ASSIGN_OR_RETURN(IdSpan ids, source.Next());
    if (ids.size < 0 || ids.size > std::numeric_limits<int32_t>::max()) {
      return InvalidArgument(fmt::format("Belady planner: batch {} has invalid size {}", b, ids.size));
    }
    if (builder.size() > 0 && builder.size() + ids.size > run_capacity) {
      SEER_RETURN_IF_ERROR(spill());
      builder.Reset(static_cast<int32_t>(b + 1));
    }
    SEER_RETURN_IF_ERROR(builder.AddBatch(ids, b));
    t->offsets_.push_back(t->offsets_.back() + ids.size);
  }
  if (on_disk.empty()) {
    // Everything fit: one run in RAM, NextRefs of all accesses in RAM.
    builder.Seal(&run, &scratch);
    // The sort's scratch becomes the table (no second allocation); Walk writes every entry.
    t->in_ram_.swap(scratch);
    std::vector<uint64_t>().swap(scratch);
    t->in_ram_.resize(static_cast<size_t>(t->total()));
    SEER_RETURN_IF_ERROR(t->Walk(run));
    return t;
  }
  if (builder.size() > 0 || builder.num_e() > 0) SEER_RETURN_IF_ERROR(spill());
  std::vector<uint64_t>().swap(run.words);
  std::vector<uint64_t>().swap(scratch);
  t->spilled_ = true;
  SEER_RETURN_IF_ERROR(t->MergeRuns(on_disk, options.working_memory_bytes));
  return t;
}

// RAM mode: consecutive records of the same node link each access to the next one.
Status NextUseTable::Walk(SortedRun& run) {
  const int64_t n = run.num_records();
  // Decode with the layout's shifts and masks computed once (not per record).
  const RunLayout layout = run.layout;
  const uint64_t* const words = run.words.data();
  const int id_shift = (layout.pos_bits + layout.e_bits) & 63;
  const uint64_t id_mask = layout.pos_bits + layout.e_bits == 64 ? 0 : ~uint64_t{0};
  const uint64_t e_mask = layout.e_bits == 0 ? 0 : (~uint64_t{0} >> (64 - layout.e_bits));
  const uint64_t pos_mask = layout.pos_bits == 0 ? 0 : (~uint64_t{0} >> (64 - layout.pos_bits));
  auto decode = [&](int64_t t) {
    if (!layout.packed) return layout.Decode(words + 2 * t);
    const uint64_t w = words[t];
    return AccessRecord{static_cast<int64_t>((w >> id_shift) & id_mask),
                        layout.first_e + static_cast<int32_t>((w >> layout.pos_bits) & e_mask),
                        static_cast<int32_t>(w & pos_mask)};
  };
  auto node_at = [&](int64_t t) { return decode(t).node; };
  // Chunks cut at node boundaries walk in parallel: every access (and C0 slot) is
  // written by exactly one chunk.
  const int64_t chunks = n < (int64_t{1} << 14)
                             ? 1
                             : static_cast<int64_t>(std::clamp(tbb::this_task_arena::max_concurrency(), 1, 8));
  std::vector<int64_t> bounds(static_cast<size_t>(chunks) + 1, n);
  bounds[0] = 0;
  for (int64_t c = 1; c < chunks; ++c) {
    int64_t t = std::max(bounds[static_cast<size_t>(c) - 1], n * c / chunks);
    while (t > 0 && t < n && node_at(t) == node_at(t - 1)) ++t;
    bounds[static_cast<size_t>(c)] = t;
  }
  std::vector<Status> errors(static_cast<size_t>(chunks));
  // Every access gets its entry (the table is not pre-filled): the next record of the
  // same node, or "none" (batch = num_batches) for a node's last record.
  const NextRef none = MakeNextRef(static_cast<int32_t>(num_batches()), 0);
  ParallelFor(int64_t{0}, chunks, [&](int64_t c) {
    AccessRecord prev{-1, 0, 0};
    auto set = [&](const AccessRecord& at, NextRef ref) {
      if (at.e == 0) {
        initial_next_[static_cast<size_t>(at.pos)] = ref;
      } else {
        in_ram_[static_cast<size_t>(offsets_[static_cast<size_t>(at.e - 1)] + at.pos)] = ref;
      }
    };
    for (int64_t t = bounds[static_cast<size_t>(c)]; t < bounds[static_cast<size_t>(c) + 1]; ++t) {
      const AccessRecord cur = decode(t);
      if (cur.node == prev.node) {
        if (cur.e == prev.e) {
          errors[static_cast<size_t>(c)] = DuplicateInBatch(cur.node, cur.e, cur.pos);
          return;
        }
        set(prev, MakeNextRef(cur.e - 1, cur.pos));
      } else if (prev.node >= 0) {
        set(prev, none);
      }
      prev = cur;
    }
    if (prev.node >= 0) set(prev, none);  // chunks end at node boundaries
  });
  for (const Status& e : errors) SEER_RETURN_IF_ERROR(e);
  return Status::Ok();
}

Status NextUseTable::Emit(const AccessRecord& prev, NextRef ref) {
  if (prev.e == 0) {
    initial_next_[static_cast<size_t>(prev.pos)] = ref;
    return Status::Ok();
  }
  const int64_t b = prev.e - 1;
  const size_t r = static_cast<size_t>(range_of_batch_[static_cast<size_t>(b)]);
  const int64_t local = offsets_[static_cast<size_t>(b)] + prev.pos -
                        offsets_[static_cast<size_t>(ranges_[r].first_batch)];
  auto& buf = out_buffers_[r];
  buf.push_back(RangeRecord{static_cast<uint32_t>(local), NextBatch(ref), NextPos(ref)});
  if (buf.size() >= out_buffer_records_) {
    const int64_t bytes = static_cast<int64_t>(buf.size() * sizeof(RangeRecord));
    SEER_ASSIGN_OR_RETURN(const int64_t at, next_file_->Append(buf.data(), bytes));
    ranges_[r].segments.emplace_back(at, bytes);
    buf.clear();
  }
  return Status::Ok();
}

// Spill mode: k-way merge of the runs (ties between runs: the earlier run holds the
// earlier batches), NextRefs appended to their batch range's segments.
Status NextUseTable::MergeRuns(const std::vector<RunOnDisk>& runs, int64_t working_memory_bytes) {
  const int64_t num_batches = this->num_batches();
  // Ranges: consecutive batches whose NextRefs (8 bytes each) fill at most half the
  // working memory (a larger batch is a range of its own).
  // (At most 2^31 accesses, so an index inside a range fits the records' uint32.)
  const int64_t range_capacity =
      std::clamp<int64_t>(working_memory_bytes / 2 / 8, 1, std::numeric_limits<int32_t>::max());
  range_of_batch_.assign(static_cast<size_t>(num_batches), 0);
  for (int64_t b = 0; b < num_batches; ++b) {
    const int64_t start = ranges_.empty() ? 0 : offsets_[static_cast<size_t>(ranges_.back().first_batch)];
    if (ranges_.empty() || (offsets_[static_cast<size_t>(b) + 1] - start > range_capacity &&
                            ranges_.back().end_batch > ranges_.back().first_batch)) {
      ranges_.push_back(Range{b, b, {}});
    }
    ranges_.back().end_batch = b + 1;
    range_of_batch_[static_cast<size_t>(b)] = static_cast<int32_t>(ranges_.size() - 1);
  }
  next_file_ = std::make_unique<TempFile>();
  SEER_RETURN_IF_ERROR(next_file_->Create(runtime_dir_, "belady-next"));
  const int64_t half = std::max<int64_t>(working_memory_bytes / 2, 1);
  out_buffer_records_ = static_cast<size_t>(std::max<int64_t>(
      4096 / static_cast<int64_t>(sizeof(RangeRecord)),
      half / static_cast<int64_t>(sizeof(RangeRecord)) / static_cast<int64_t>(std::max<size_t>(ranges_.size(), 1))));
  out_buffers_.assign(ranges_.size(), {});
  const int64_t read_words = std::max<int64_t>(512, half / 8 / static_cast<int64_t>(runs.size()));

  std::vector<RunCursor> cursors;
  cursors.reserve(runs.size());
  for (const RunOnDisk& r : runs) cursors.emplace_back(runs_file_.get(), r, read_words);
  // Min-heap on (node, run index).
  std::vector<std::pair<AccessRecord, int32_t>> heap;
  auto later = [](const std::pair<AccessRecord, int32_t>& a, const std::pair<AccessRecord, int32_t>& b) {
    return a.first.node != b.first.node ? a.first.node > b.first.node : a.second > b.second;
  };
  for (size_t r = 0; r < cursors.size(); ++r) {
    AccessRecord rec;
    SEER_ASSIGN_OR_RETURN(const bool more, cursors[r].Next(&rec));
    if (more) heap.emplace_back(rec, static_cast<int32_t>(r));
  }
  std::make_heap(heap.begin(), heap.end(), later);
  // The front (earliest record) is consumed and replaced by its run's next record, which
  // is sifted down once (two comparisons when it is still the earliest), instead of a pop
  // and a push per change of run: with many runs nearly every record changes run.
  auto sift_down = [&heap, &later](size_t i) {
    const size_t n = heap.size();
    const std::pair<AccessRecord, int32_t> x = heap[i];
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && later(heap[c], heap[c + 1])) ++c;
      if (!later(x, heap[c])) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = x;
  };
  AccessRecord prev{-1, 0, 0};
  while (!heap.empty()) {
    const AccessRecord cur = heap.front().first;
    const int32_t r = heap.front().second;
    if (cur.node == prev.node) {
      if (cur.e == prev.e) return DuplicateInBatch(cur.node, cur.e, cur.pos);
      SEER_RETURN_IF_ERROR(Emit(prev, MakeNextRef(cur.e - 1, cur.pos)));
    }
    prev = cur;
    AccessRecord nxt;
    SEER_ASSIGN_OR_RETURN(const bool more, cursors[static_cast<size_t>(r)].Next(&nxt));
    if (more) {
      heap.front().first = nxt;
    } else {
      heap.front() = heap.back();
      heap.pop_back();
    }
    if (!heap.empty()) sift_down(0);
  }
  for (size_t r = 0; r < ranges_.size(); ++r) {
    auto& buf = out_buffers_[r];
    if (buf.empty()) continue;
    const int64_t bytes = static_cast<int64_t>(buf.size() * sizeof(RangeRecord));
    SEER_ASSIGN_OR_RETURN(const int64_t at, next_file_->Append(buf.data(), bytes));
    ranges_[r].segments.emplace_back(at, bytes);
  }
  std::vector<std::vector<RangeRecord>>().swap(out_buffers_);
  return Status::Ok();
}

Status NextUseTable::LoadRange(size_t r) {
  const Range& range = ranges_[r];
  const int64_t start = offsets_[static_cast<size_t>(range.first_batch)];
  const int64_t n = offsets_[static_cast<size_t>(range.end_batch)] - start;
  in_ram_.assign(static_cast<size_t>(n), MakeNextRef(static_cast<int32_t>(num_batches()), 0));
  std::vector<RangeRecord> chunk;
  constexpr int64_t kChunkRecords = (4 << 20) / sizeof(RangeRecord);
  for (const auto& [offset, bytes] : range.segments) {
    for (int64_t done = 0; done < bytes;) {
      const int64_t take = std::min<int64_t>(bytes - done, kChunkRecords * static_cast<int64_t>(sizeof(RangeRecord)));
      chunk.resize(static_cast<size_t>(take) / sizeof(RangeRecord));
      SEER_RETURN_IF_ERROR(next_file_->Read(chunk.data(), take, offset + done));
      for (const RangeRecord& rec : chunk) {
        if (rec.local >= static_cast<uint64_t>(n)) {
          return Corrupt(fmt::format("Belady planner: next-use record {} out of range {} at offset {}",
                                     rec.local, r, offset + done));
        }
        in_ram_[rec.local] = MakeNextRef(rec.batch, rec.pos);
      }
      done += take;
    }
  }
  loaded_range_ = r;
  return Status::Ok();
}

Result<const NextRef*> NextUseTable::BatchNext(int64_t b) {
  if (!spilled_) return in_ram_.data() + offsets_[static_cast<size_t>(b)];
  const size_t r = static_cast<size_t>(range_of_batch_[static_cast<size_t>(b)]);
  if (r != loaded_range_) SEER_RETURN_IF_ERROR(LoadRange(r));
  return in_ram_.data() + (offsets_[static_cast<size_t>(b)] - offsets_[static_cast<size_t>(ranges_[r].first_batch)]);
}

Status ValidateInitialSlots(const std::vector<int64_t>& initial_slots) {
  if (initial_slots.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidArgument(fmt::format("Belady planner: capacity {} rows exceeds 2^31-1",
                                       initial_slots.size()));
  }
  std::vector<int64_t> ids;
  for (size_t s = 0; s < initial_slots.size(); ++s) {
    const int64_t v = initial_slots[s];
    if (v == kFreeSlot) continue;
    if (v < 0) {
      return InvalidArgument(fmt::format("Belady planner: slot {} of the initial cache holds invalid id {}", s, v));
    }
    ids.push_back(v);
  }
  std::sort(ids.begin(), ids.end());
  auto dup = std::adjacent_find(ids.begin(), ids.end());
  if (dup != ids.end()) {
    return InvalidArgument(fmt::format("Belady planner: node {} is in two slots of the initial cache", *dup));
  }
  return Status::Ok();
}

// A cached node. aux = the position of its next access (finite buckets) or its score
// (the ∞ bucket).
struct CachedEntry {
  int64_t node;
  int32_t slot;
  uint32_t aux;
};
// Eviction order inside a finite bucket: larger id first (max-heap on node).
struct FiniteEvictsLater {
  bool operator()(const CachedEntry& a, const CachedEntry& b) const { return a.node < b.node; }
};
// Inside the ∞ bucket: lower score first, then larger id.
struct InfiniteEvictsFirst {
  bool operator()(const CachedEntry& a, const CachedEntry& b) const {
    return a.aux != b.aux ? a.aux < b.aux : a.node > b.node;
  }
};

// The ∞ bucket: rows with no further use, evicted lowest score first, then larger id.
// Rows only enter (pushes) and leave by eviction (pops of the first to evict), so it is
// kept as sorted runs of geometrically decreasing size (the logarithmic method): pushes
// are appended to a pending buffer, sorted into a run before the next pop, and runs of
// similar size are merged. A pop compares the ends of the few runs — sequential memory
// instead of a binary heap's cache misses over K rows.
class InfiniteBucket {
 public:
  void Push(const CachedEntry& e) {
    pending_.push_back(e);
    ++size_;
    best_ = -1;
  }
  int64_t size() const { return size_; }
  const CachedEntry& Top() {
    if (best_ < 0) FindBest();
    return runs_[static_cast<size_t>(best_)].back();
  }
  CachedEntry Pop() {
    if (best_ < 0) FindBest();
    auto& run = runs_[static_cast<size_t>(best_)];
    const CachedEntry e = run.back();
    run.pop_back();
    if (run.empty()) runs_.erase(runs_.begin() + best_);
    --size_;
    best_ = -1;
    return e;
  }
  // Pops the k (<= size()) first to evict, appending their slots to `out` (the same rows
  // as k Pop()s): from the run holding the first while it stays ahead of the others'.
  void PopSlots(int64_t k, std::vector<int32_t>* out) {
    while (k > 0) {
      if (best_ < 0) FindBest();
      auto& run = runs_[static_cast<size_t>(best_)];
      const CachedEntry* runner_up = nullptr;
      for (size_t r = 0; r < runs_.size(); ++r) {
        if (static_cast<int64_t>(r) != best_ &&
            (runner_up == nullptr || InfiniteEvictsFirst()(runs_[r].back(), *runner_up))) {
          runner_up = &runs_[r].back();
        }
      }
      do {
        out->push_back(run.back().slot);
        run.pop_back();
        --size_;
        --k;
      } while (k > 0 && !run.empty() &&
               (runner_up == nullptr || InfiniteEvictsFirst()(run.back(), *runner_up)));
      if (run.empty()) runs_.erase(runs_.begin() + best_);
      best_ = -1;
    }
  }

 private:
  // Runs are sorted with the first to evict at the back.
  static bool EvictedLater(const CachedEntry& a, const CachedEntry& b) { return InfiniteEvictsFirst()(b, a); }
  // Sorts pending_ into EvictedLater order: score descending, then id ascending. LSD
  // radix sort (stable): passes over the id's bits, then over the inverted score's,
  // skipping digits on which all entries agree; std::sort for small inputs.
  void SortPending() {
    const size_t n = pending_.size();
    // Large pending sets (a cache filling for many batches before its first eviction)
    // are sorted in place: the radix sort's scratch would double the bucket's RAM.
    if (n < 1024 || n > kMaxRadixPending) {
      std::sort(pending_.begin(), pending_.end(), EvictedLater);
      return;
    }
    uint64_t max_node = 0;
    uint32_t aux_or = 0, aux_and = ~uint32_t{0};
    for (const CachedEntry& e : pending_) {
      max_node = std::max(max_node, static_cast<uint64_t>(e.node));
      aux_or |= e.aux;
      aux_and &= e.aux;
    }
    // The scratch is the merge buffer (kept anyway, as large as the largest merge), so
    // sorting adds no RAM once runs have been merged.
    merged_.resize(n);
    CachedEntry* src = pending_.data();
    CachedEntry* dst = merged_.data();
    std::vector<size_t> count;
    // One stable counting pass on digit(e) in [0, 2^bits).
    auto pass = [&](int bits, auto digit) {
      count.assign(size_t{1} << bits, 0);
      for (size_t k = 0; k < n; ++k) ++count[digit(src[k])];
      if (count[digit(src[0])] == n) return;  // one digit value: no-op pass
      size_t sum = 0;
      for (size_t& c : count) sum += std::exchange(c, sum);
      for (size_t k = 0; k < n; ++k) dst[count[digit(src[k])]++] = src[k];
      std::swap(src, dst);
    };
    // Digits of equal width (24 id bits: two passes of 12).
    const int node_bits = BitWidth(max_node);
    const int node_passes = (node_bits + kMaxKeyDigit - 1) / kMaxKeyDigit;
    const int node_digit = node_passes == 0 ? 0 : (node_bits + node_passes - 1) / node_passes;
    for (int shift = 0; shift < node_bits; shift += node_digit) {
      const int bits = std::min(node_digit, node_bits - shift);
      const uint64_t mask = (uint64_t{1} << bits) - 1;
      pass(bits, [shift, mask](const CachedEntry& e) {
        return static_cast<size_t>((static_cast<uint64_t>(e.node) >> shift) & mask);
      });
    }
    const int aux_bits = aux_or == aux_and ? 0 : BitWidth(aux_or);
    const int aux_passes = (aux_bits + kMaxKeyDigit - 1) / kMaxKeyDigit;
    const int aux_digit = aux_passes == 0 ? 0 : (aux_bits + aux_passes - 1) / aux_passes;
    for (int shift = 0; shift < aux_bits; shift += aux_digit) {
      const int bits = std::min(aux_digit, aux_bits - shift);
      const uint32_t mask = (uint32_t{1} << bits) - 1;
      pass(bits, [shift, mask](const CachedEntry& e) {
        return static_cast<size_t>((~e.aux >> shift) & mask);
      });
    }
    if (src != pending_.data()) std::copy(src, src + n, pending_.begin());
  }
  void FindBest() {
    if (!pending_.empty()) {
      SortPending();
      runs_.push_back(std::move(pending_));
      pending_ = {};
      while (runs_.size() >= 2 && runs_[runs_.size() - 2].size() <= 2 * runs_.back().size()) {
        auto& x = runs_[runs_.size() - 2];
        auto& y = runs_.back();
        merged_.resize(x.size() + y.size());
        std::merge(x.begin(), x.end(), y.begin(), y.end(), merged_.begin(), EvictedLater);
        x.swap(merged_);
        runs_.pop_back();
      }
    }
    best_ = 0;
    for (size_t r = 1; r < runs_.size(); ++r) {
      if (InfiniteEvictsFirst()(runs_[r].back(), runs_[static_cast<size_t>(best_)].back())) {
        best_ = static_cast<int64_t>(r);
      }
    }
  }
  static constexpr size_t kMaxRadixPending = size_t{1} << 16;  // 1 MiB of rows
  std::vector<CachedEntry> pending_;
  std::vector<std::vector<CachedEntry>> runs_;  // decreasing size
  std::vector<CachedEntry> merged_;
  int64_t size_ = 0;
  int64_t best_ = -1;  // run holding the first to evict; -1 = unknown
};

// A finite bucket's entries, in chunks of 16, 32, then 64 entries: filling a bucket
// never copies it, and its blocks are small allocations that the allocator recycles when
// buckets are released (a vector per bucket re-copied every entry while doubling and
// mapped fresh pages for every large bucket, ~10 % of the forward pass). Waste: one
// partly filled chunk (at most 1 KiB) or about half the entries, as a vector's.
// Once something is evicted from it (rare) the bucket is flattened into a max-heap on id.
class FiniteBucket {
 public:
  static constexpr uint32_t kFirstChunk = 16;
  static constexpr uint32_t kMaxChunk = 64;
  int64_t size() const { return size_; }
  bool is_heap() const { return is_heap_; }
  void Push(const CachedEntry& e) {
    ++size_;
    if (is_heap_) {
      heap_.push_back(e);
      std::push_heap(heap_.begin(), heap_.end(), FiniteEvictsLater());
      return;
    }
    if (last_fill_ == last_cap_) {
      last_cap_ = chunks_.empty() ? kFirstChunk : std::min(last_cap_ * 2, kMaxChunk);
      chunks_.emplace_back(new CachedEntry[last_cap_]);
      last_fill_ = 0;
    }
    chunks_.back()[last_fill_++] = e;
  }
  // Appends the entries as (pointer, count) spans, any order.
  void Spans(std::vector<std::pair<const CachedEntry*, size_t>>* out) const {
    if (is_heap_) {
      if (!heap_.empty()) out->emplace_back(heap_.data(), heap_.size());
      return;
    }
    uint32_t cap = kFirstChunk;
    for (size_t c = 0; c < chunks_.size(); ++c) {
      out->emplace_back(chunks_[c].get(), c + 1 == chunks_.size() ? last_fill_ : cap);
      cap = std::min(cap * 2, kMaxChunk);
    }
  }
  // The max-heap on id (flattened on first use).
  std::vector<CachedEntry>& Heap() {
    if (!is_heap_) {
      std::vector<std::pair<const CachedEntry*, size_t>> spans;
      Spans(&spans);
      heap_.reserve(static_cast<size_t>(size_));
      for (const auto& [p, n] : spans) heap_.insert(heap_.end(), p, p + n);
      ReleaseChunks();
      std::make_heap(heap_.begin(), heap_.end(), FiniteEvictsLater());
      is_heap_ = true;
    }
    return heap_;
  }
  void PopHeap() {
    std::pop_heap(heap_.begin(), heap_.end(), FiniteEvictsLater());
    heap_.pop_back();
    --size_;
  }
  // Removes the k (<= size()) entries evicted first (the largest ids), appending their
  // slots to `out`: the whole bucket, k heap pops when few, else a selection.
  void PopSlots(int64_t k, std::vector<int32_t>* out) {
    if (k >= size_) {
      std::vector<std::pair<const CachedEntry*, size_t>> spans;
      Spans(&spans);
      for (const auto& [p, n] : spans) {
        for (size_t j = 0; j < n; ++j) out->push_back(p[j].slot);
      }
      Clear();
      return;
    }
    if (is_heap_ && k * 16 < size_) {
      for (; k > 0; --k) {
        out->push_back(heap_.front().slot);
        PopHeap();
      }
      return;
    }
    auto& h = Heap();
    auto cut = h.begin() + k;
    std::nth_element(h.begin(), cut, h.end(), [](const CachedEntry& a, const CachedEntry& b) { return a.node > b.node; });
    for (auto it = h.begin(); it != cut; ++it) out->push_back(it->slot);
    h.erase(h.begin(), cut);
    std::make_heap(h.begin(), h.end(), FiniteEvictsLater());
    size_ -= k;
  }
  void Clear() {
    ReleaseChunks();
    std::vector<CachedEntry>().swap(heap_);
    is_heap_ = false;
    size_ = 0;
  }

 private:
  void ReleaseChunks() {
    std::vector<std::unique_ptr<CachedEntry[]>>().swap(chunks_);
    last_fill_ = last_cap_ = 0;
  }
  std::vector<std::unique_ptr<CachedEntry[]>> chunks_;
  uint32_t last_fill_ = 0;
  uint32_t last_cap_ = 0;
  bool is_heap_ = false;
  int64_t size_ = 0;
  std::vector<CachedEntry> heap_;
};

// The cache as buckets by next-use batch (index num_batches = ∞). Iteration i takes
// bucket i (exactly the hits of iteration i); evictions take from the highest non-empty
// bucket, so no iteration touches the whole cache. A finite bucket becomes a heap only
// once something is evicted from it (most never are); the ∞ bucket is always a heap.
class BucketedCache {
 public:
  explicit BucketedCache(int64_t num_batches)
      : inf_(num_batches), buckets_(static_cast<size_t>(num_batches)),
        nonempty_((static_cast<size_t>(num_batches) + 64) / 64, 0) {}

  void Push(int64_t bucket, const CachedEntry& e) {
    if (bucket == inf_) {
      inf_bucket_.Push(e);
    } else {
      buckets_[static_cast<size_t>(bucket)].Push(e);
    }
    nonempty_[static_cast<size_t>(bucket) / 64] |= uint64_t{1} << (bucket % 64);
    top_ = std::max(top_, bucket);
    ++size_;
  }
  // Finite bucket b's entries as spans (any order), appended to `out`; Release(b)
  // afterwards. Pushes during the walk must go to other buckets.
  void Peek(int64_t b, std::vector<std::pair<const CachedEntry*, size_t>>* out) const {
    buckets_[static_cast<size_t>(b)].Spans(out);
  }
  void Release(int64_t b) {
    auto& v = buckets_[static_cast<size_t>(b)];
    size_ -= v.size();
    v.Clear();
    nonempty_[static_cast<size_t>(b) / 64] &= ~(uint64_t{1} << (b % 64));
    if (b == top_) top_ = ScanTop();
  }
  // Highest non-empty bucket, or -1.
  int64_t TopBucket() const { return top_; }
  // The entry evicted first from bucket b (b non-empty).
  const CachedEntry& Top(int64_t b) {
    if (b == inf_) return inf_bucket_.Top();
    return buckets_[static_cast<size_t>(b)].Heap().front();
  }
  CachedEntry Pop(int64_t b) {
    CachedEntry e;
    bool now_empty;
    if (b == inf_) {
      e = inf_bucket_.Pop();
      now_empty = inf_bucket_.size() == 0;
    } else {
      auto& bucket = buckets_[static_cast<size_t>(b)];
      e = bucket.Heap().front();
      bucket.PopHeap();
      now_empty = bucket.size() == 0;
    }
    --size_;
    if (now_empty) {
      nonempty_[static_cast<size_t>(b) / 64] &= ~(uint64_t{1} << (b % 64));
      if (b == top_) top_ = ScanTop();
    }
    return e;
  }
  int64_t size() const { return size_; }
  // Evicts min(k, rows with no further use) of the ∞ bucket, first to evict first,
  // appending their slots to `out`; returns how many.
  // Evicts min(k, size) rows of finite bucket b, first to evict first, appending their
  // slots to `out`; returns how many.
  int64_t PopFinite(int64_t b, int64_t k, std::vector<int32_t>* out) {
    auto& bucket = buckets_[static_cast<size_t>(b)];
    k = std::min(k, bucket.size());
    bucket.PopSlots(k, out);
    size_ -= k;
    if (bucket.size() == 0) {
      nonempty_[static_cast<size_t>(b) / 64] &= ~(uint64_t{1} << (b % 64));
      if (b == top_) top_ = ScanTop();
    }
    return k;
  }
  int64_t PopInfinite(int64_t k, std::vector<int32_t>* out) {
    k = std::min(k, inf_bucket_.size());
    inf_bucket_.PopSlots(k, out);
    size_ -= k;
    if (inf_bucket_.size() == 0) {
      nonempty_[static_cast<size_t>(inf_) / 64] &= ~(uint64_t{1} << (inf_ % 64));
      if (inf_ == top_) top_ = ScanTop();
    }
    return k;
  }

 private:
  int64_t ScanTop() const {
    for (int64_t w = static_cast<int64_t>(nonempty_.size()) - 1; w >= 0; --w) {
      if (nonempty_[static_cast<size_t>(w)] != 0) {
        return w * 64 + 63 - __builtin_clzll(nonempty_[static_cast<size_t>(w)]);
      }
    }
    return -1;
  }
  int64_t inf_;
  std::vector<FiniteBucket> buckets_;  // finite buckets 0..S-1
  InfiniteBucket inf_bucket_;
  std::vector<uint64_t> nonempty_;
  int64_t top_ = -1;
  int64_t size_ = 0;
};

// Pass 2: one iteration per batch, holding only the cache state and the current batch.
class BeladyForward {
 public:
  BeladyForward(const std::vector<int64_t>& initial_slots, const std::vector<NextRef>& initial_next,
                int64_t num_batches, const BeladyPlannerOptions& options)
      : num_batches_(num_batches), capacity_(static_cast<int64_t>(initial_slots.size())),
        scores_fn_(options.node_scores), slot_nodes_(initial_slots), cache_(num_batches) {
    std::vector<int64_t> occupied;
    std::vector<int32_t> free_list;
    for (int64_t s = 0; s < capacity_; ++s) {
      if (initial_slots[static_cast<size_t>(s)] == kFreeSlot) {
        free_list.push_back(static_cast<int32_t>(s));
      } else {
        occupied.push_back(initial_slots[static_cast<size_t>(s)]);
      }
    }
    std::vector<uint32_t> scores(occupied.size(), 0);
    if (scores_fn_ && !occupied.empty()) scores_fn_(occupied.data(), static_cast<int64_t>(occupied.size()), scores.data());
    size_t k = 0;
    for (int64_t s = 0; s < capacity_; ++s) {
      const int64_t v = initial_slots[static_cast<size_t>(s)];
      if (v == kFreeSlot) continue;
      const NextRef ref = initial_next[static_cast<size_t>(s)];
      cache_.Push(NextBatch(ref), CachedEntry{v, static_cast<int32_t>(s),
                                              NextBatch(ref) == num_batches_ ? scores[k] : static_cast<uint32_t>(NextPos(ref))});
      ++k;
    }
    free_slots_ = std::move(free_list);
  }

  Status Step(int64_t i, const IdSpan& ids, const NextRef* next, Changeset* cs) {
    const int64_t n = ids.size;
    hit_slot_.assign(static_cast<size_t>(n), -1);
    if (scores_fn_) {
      scores_.resize(static_cast<size_t>(n));
      if (n > 0) scores_fn_(ids.data, n, scores_.data());
    }
    auto aux_of = [&](int64_t p) -> uint32_t {
      const NextRef r = next[p];
      if (NextBatch(r) != num_batches_) return static_cast<uint32_t>(NextPos(r));
      return scores_fn_ ? scores_[static_cast<size_t>(p)] : 0u;
    };
    spans_.clear();
    cache_.Peek(i, &spans_);
    for (const auto& [entries, count] : spans_) {
      for (size_t k = 0; k < count; ++k) {
        // The positions are in random order: fetch a few entries ahead.
        constexpr size_t kAhead = 8;
        if (k + kAhead < count) {
          const uint32_t q = entries[k + kAhead].aux;
          if (q < n) {
            __builtin_prefetch(next + q);
            __builtin_prefetch(ids.data + q);
            __builtin_prefetch(hit_slot_.data() + q, 1);
          }
        }
        const CachedEntry& e = entries[k];
        const int64_t p = e.aux;
        if (p >= n || ids.data[p] != e.node) {
          return Status(StatusCode::kInternal,
                        fmt::format("Belady planner: batch {} changed between the two passes (position {})", i, p));
        }
        hit_slot_[static_cast<size_t>(p)] = e.slot;
        cache_.Push(NextBatch(next[p]), CachedEntry{e.node, e.slot, aux_of(p)});
      }
    }
    cache_.Release(i);
    misses_.clear();
    for (int64_t p = 0; p < n; ++p) {
      if (hit_slot_[static_cast<size_t>(p)] >= 0) continue;
      const int32_t b = NextBatch(next[p]);
      misses_.push_back(Miss{b, aux_of(p), ids.data[p], static_cast<int32_t>(p)});
    }
    cs->num_accesses = n;
    cs->num_misses = static_cast<int64_t>(misses_.size());

    // Cut the `excess` largest keys of C_i ∪ misses (belady_planner.h's key).
    int64_t excess = cache_.size() + static_cast<int64_t>(misses_.size()) - capacity_;
    if (excess > 0) {
      CutExcess(i, excess);
      if (!evicted_.empty()) {
        // Ascending slot; each slot's node is still in slot_nodes_ until now.
        SortSlots(&evicted_);
        cs->out_slots = evicted_;
        cs->out_ids.resize(evicted_.size());
        for (size_t k = 0; k < evicted_.size(); ++k) {
          const size_t slot = static_cast<size_t>(evicted_[k]);
          cs->out_ids[k] = slot_nodes_[slot];
          slot_nodes_[slot] = kFreeSlot;
        }
        // Free slots: the unused ones merged with the evicted ones, ascending.
        merged_free_.clear();
        std::merge(free_slots_.begin() + static_cast<std::ptrdiff_t>(free_next_), free_slots_.end(),
                   cs->out_slots.begin(), cs->out_slots.end(), std::back_inserter(merged_free_));
        free_slots_.swap(merged_free_);
        free_next_ = 0;
      }
    }
    const size_t inserts = static_cast<size_t>(
        std::min<int64_t>(static_cast<int64_t>(misses_.size()), capacity_ - cache_.size()));
    cs->in_ids.reserve(inserts);
    cs->in_positions.reserve(inserts);
    cs->in_slots.reserve(inserts);
    // The misses not cut, in ascending position (misses_ is in position order).
    for (const Miss& x : misses_) {
      if (hit_slot_[static_cast<size_t>(x.position)] == kDropped) continue;
      const int32_t slot = free_slots_[free_next_++];
      cache_.Push(x.bucket, CachedEntry{x.node, slot, x.aux});
      slot_nodes_[static_cast<size_t>(slot)] = x.node;
      cs->in_ids.push_back(x.node);
      cs->in_positions.push_back(x.position);
      cs->in_slots.push_back(slot);
    }
    return Status::Ok();
  }

  std::vector<int64_t> TakeFinalSlots() { return std::move(slot_nodes_); }

  // Sorts distinct slots ascending: LSD radix sort on the bits the capacity needs
  // (at most three passes of up to 11 bits), std::sort for small inputs.
  void SortSlots(std::vector<int32_t>* slots) {
    const size_t n = slots->size();
    if (n < 1024) {
      std::sort(slots->begin(), slots->end());
      return;
    }
    const int bits = BitWidth(static_cast<uint64_t>(std::max<int64_t>(capacity_ - 1, 1)));
    const int passes = (bits + kMaxRadixDigit - 1) / kMaxRadixDigit;
    const int digit = (bits + passes - 1) / passes;
    const uint32_t mask = (uint32_t{1} << digit) - 1;
    sort_scratch_.resize(n);
    std::vector<size_t> count(size_t{1} << digit);
    int32_t* src = slots->data();
    int32_t* dst = sort_scratch_.data();
    for (int p = 0; p < passes; ++p) {
      const int shift = p * digit;
      std::fill(count.begin(), count.end(), 0);
      for (size_t k = 0; k < n; ++k) ++count[(static_cast<uint32_t>(src[k]) >> shift) & mask];
      size_t sum = 0;
      for (size_t& c : count) sum += std::exchange(c, sum);
      for (size_t k = 0; k < n; ++k) dst[count[(static_cast<uint32_t>(src[k]) >> shift) & mask]++] = src[k];
      std::swap(src, dst);
    }
    if (src != slots->data()) slots->swap(sort_scratch_);
  }

 private:
  // Cuts the `excess` largest keys of C_i ∪ misses_: dropped misses are marked kDropped
  // in hit_slot_, evicted rows go to evicted_. Misses are grouped by next-use bucket
  // (counting sort, highest first); a group that is cut whole needs no inner order, and
  // only a group cut in part is ordered (a heap in cut order: among ∞, lower score
  // first; then larger id) and popped one miss at a time.
  void CutExcess(int64_t i, int64_t excess) {
    const size_t m = misses_.size();
    // The ∞ group first; the finite misses are grouped by bucket (counting sort, highest
    // first) only when the cut reaches them (usually evicting cached ∞ rows suffices).
    grouped_.resize(m);
    size_t inf_count = 0;
    for (const Miss& x : misses_) {
      if (x.bucket == num_batches_) grouped_[inf_count++] = x;
    }
    bool finite_grouped = inf_count == m;
    auto group_finite = [&] {
      const size_t range = static_cast<size_t>(num_batches_ - i);  // buckets i+1 .. S-1
      group_start_.assign(range + 1, 0);
      for (const Miss& x : misses_) {
        if (x.bucket != num_batches_) ++group_start_[static_cast<size_t>(num_batches_ - x.bucket)];
      }
      group_start_[0] = inf_count;
      for (size_t k = 1; k <= range; ++k) group_start_[k] += group_start_[k - 1];
      for (const Miss& x : misses_) {
        if (x.bucket != num_batches_) grouped_[group_start_[static_cast<size_t>(num_batches_ - x.bucket) - 1]++] = x;
      }
      finite_grouped = true;
    };
    // Inside a group (one bucket): in the ∞ group lower score first, then larger id;
    // in a finite group larger id first.
    auto cut_later = [inf = num_batches_](const Miss& a, const Miss& b) {
      if (a.bucket == inf && a.aux != b.aux) return a.aux > b.aux;
      return a.node < b.node;
    };
    size_t g = 0, g_end = 0, group_next = 0;
    bool ordered = false;
    uint32_t group_max_score = 0;
    auto open_group = [&] {
      if (!finite_grouped && group_next >= inf_count) group_finite();
      g = group_next;
      g_end = g;
      group_max_score = 0;
      const size_t filled = finite_grouped ? m : inf_count;  // grouped_[filled..] not written yet
      while (g_end < filled && grouped_[g_end].bucket == grouped_[g].bucket) {
        group_max_score = std::max(group_max_score, grouped_[g_end].aux);
        ++g_end;
      }
      group_next = g_end;
      ordered = false;
    };
    auto drop = [&](const Miss& x) { hit_slot_[static_cast<size_t>(x.position)] = kDropped; };
    auto evict = [&](int64_t top) {
      evicted_.push_back(cache_.Pop(top).slot);
    };
    open_group();
    evicted_.clear();
    while (excess > 0) {
      const int64_t top = cache_.TopBucket();
      if (g == g_end || top > grouped_[g].bucket) {
        // Every remaining miss key is below the top bucket's: evict from it, at once.
        excess -= top == num_batches_ ? cache_.PopInfinite(excess, &evicted_)
                                      : cache_.PopFinite(top, excess, &evicted_);
        continue;
      }
      const int32_t gb = grouped_[g].bucket;
      // Keys of this group vs the cached rows of bucket `top` (<= gb): a miss loses to
      // a cached row of the same next use; in the ∞ bucket the score decides first.
      const bool by_score = top == gb && gb == num_batches_;
      if (!ordered && (!by_score || group_max_score <= cache_.Top(top).aux) &&
          static_cast<int64_t>(g_end - g) <= excess) {
        for (size_t k = g; k < g_end; ++k) drop(grouped_[k]);
        excess -= static_cast<int64_t>(g_end - g);
        open_group();
        continue;
      }
      if (!ordered) {
        std::make_heap(grouped_.begin() + static_cast<std::ptrdiff_t>(g),
                       grouped_.begin() + static_cast<std::ptrdiff_t>(g_end), cut_later);
        ordered = true;
      }
      if (!by_score || grouped_[g].aux <= cache_.Top(top).aux) {
        drop(grouped_[g]);
        std::pop_heap(grouped_.begin() + static_cast<std::ptrdiff_t>(g),
                      grouped_.begin() + static_cast<std::ptrdiff_t>(g_end), cut_later);
        --g_end;
        if (g == g_end) open_group();
      } else {
        evict(top);
      }
      --excess;
    }
  }

 private:
  static constexpr int32_t kDropped = -2;  // hit_slot_ mark: a miss cut from the cache
  struct Miss {
    int32_t bucket;   // next-use batch (num_batches = ∞)
    uint32_t aux;     // as CachedEntry::aux: the score (∞) or the next use's position
    int64_t node;
    int32_t position;
  };
  int64_t num_batches_;
  int64_t capacity_;
  const std::function<void(const int64_t*, int64_t, uint32_t*)>& scores_fn_;
  std::vector<int64_t> slot_nodes_;
  BucketedCache cache_;
  // Free slots, ascending; free_slots_[free_next_..] are still free.
  std::vector<int32_t> free_slots_;
  size_t free_next_ = 0;
  std::vector<int32_t> merged_free_;
  std::vector<int32_t> hit_slot_;
  std::vector<std::pair<const CachedEntry*, size_t>> spans_;
  std::vector<uint32_t> scores_;
  std::vector<Miss> misses_;
  std::vector<Miss> grouped_;
  std::vector<size_t> group_start_;
  std::vector<int32_t> evicted_;       // slots evicted by the current iteration
  std::vector<int32_t> sort_scratch_;
};

Result<BeladyPlan> PlanBeladyCpu(const std::vector<int64_t>& initial_slots, BatchIdSource& source,
                                 const BeladyPlannerOptions& options, int64_t accesses_hint = -1) {
  SEER_RETURN_IF_ERROR(ValidateInitialSlots(initial_slots));
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<NextUseTable> table,
                        NextUseTable::Build(initial_slots, source, options, accesses_hint));
  const int64_t num_batches = table->num_batches();
  BeladyPlan plan;
  plan.changesets = ChangesetStore(options.changeset_budget_bytes, options.spill_dir);
  BeladyForward forward(initial_slots, table->initial_next(), num_batches, options);
  SEER_RETURN_IF_ERROR(source.Rewind());
  for (int64_t i = 0; i < num_batches; ++i) {
    SEER_ASSIGN_OR_RETURN(IdSpan ids, source.Next());
    if (ids.size != table->batch_size(i)) {
      return InvalidArgument(fmt::format(
          "Belady planner: batch {} had {} ids on the first pass and {} on the second", i,
          table->batch_size(i), ids.size));
    }
    SEER_ASSIGN_OR_RETURN(const NextRef* next, table->BatchNext(i));
    Changeset cs;
    SEER_RETURN_IF_ERROR(forward.Step(i, ids, next, &cs));
    plan.num_accesses += cs.num_accesses;
    plan.num_misses += cs.num_misses;
    SEER_RETURN_IF_ERROR(plan.changesets.Append(std::move(cs)));
  }
  plan.final_slots = forward.TakeFinalSlots();
  plan.device_used = PlannerDevice::kCpu;
  return plan;
}

// Flattened accesses for the GPU input: access g belongs to batch b when
// offsets[b] <= g < offsets[b + 1].
struct Accesses {
  std::vector<int64_t> offsets;  // num_batches + 1
  int64_t total = 0;
};

Result<BeladyPlan> PlanBeladyGpu(const std::vector<int64_t>& initial_slots,
                                 const std::vector<IdSpan>& batches, const Accesses& acc,
                                 const BeladyPlannerOptions& options) {
  std::vector<int64_t> flat(static_cast<size_t>(acc.total));
  ParallelFor(size_t{0}, batches.size(), [&](size_t b) {
    if (batches[b].size > 0) {
      std::memcpy(flat.data() + acc.offsets[b], batches[b].data,
                  static_cast<size_t>(batches[b].size) * sizeof(int64_t));
    }
  });
  for (int64_t v : flat) {
    if (v < 0) return InvalidArgument("Belady planner: negative node id in a batch");
  }
  kernels::BeladyGpuInput in;
  in.initial_slots = initial_slots.data();
  in.capacity = static_cast<int64_t>(initial_slots.size());
  in.ids = flat.data();
  in.batch_offsets = acc.offsets.data();
  in.num_batches = static_cast<int64_t>(batches.size());
  // The tie rule's scores, per access and per slot of C0 (free slots: 0, unused).
  std::vector<uint32_t> scores, initial_scores;
  if (options.node_scores) {
    scores.assign(flat.size(), 0);
    if (!flat.empty()) options.node_scores(flat.data(), static_cast<int64_t>(flat.size()), scores.data());
    std::vector<int64_t> slot_ids = initial_slots;
    for (int64_t& v : slot_ids) v = v == kFreeSlot ? 0 : v;
    initial_scores.assign(slot_ids.size(), 0);
    if (!slot_ids.empty()) {
      options.node_scores(slot_ids.data(), static_cast<int64_t>(slot_ids.size()), initial_scores.data());
    }
    in.scores = scores.data();
    in.initial_scores = initial_scores.data();
  }
  kernels::BeladyGpuOutput out;
  std::string message;
  switch (kernels::PlanBeladyGpu(in, &out, &message)) {
    case kernels::GpuPlanCode::kOk: break;
    case kernels::GpuPlanCode::kUnsupported:
      return Status(StatusCode::kUnsupported, "GPU planner: " + message);
    case kernels::GpuPlanCode::kInvalidArgument:
      return InvalidArgument("Belady planner (GPU): " + message);
    case kernels::GpuPlanCode::kError:
      return Status(StatusCode::kIoError, "GPU planner: " + message);
  }
  BeladyPlan plan;
  plan.changesets = ChangesetStore(options.changeset_budget_bytes, options.spill_dir);
  for (int64_t i = 0; i < in.num_batches; ++i) {
    Changeset cs;
    cs.num_accesses = batches[static_cast<size_t>(i)].size;
    cs.num_misses = out.num_misses[static_cast<size_t>(i)];
    const auto ib = out.in_offsets[static_cast<size_t>(i)], ie = out.in_offsets[static_cast<size_t>(i) + 1];
    const auto ob = out.out_offsets[static_cast<size_t>(i)], oe = out.out_offsets[static_cast<size_t>(i) + 1];
    cs.in_ids.assign(out.in_ids.begin() + ib, out.in_ids.begin() + ie);
    cs.in_positions.assign(out.in_positions.begin() + ib, out.in_positions.begin() + ie);
    cs.in_slots.assign(out.in_slots.begin() + ib, out.in_slots.begin() + ie);
    cs.out_ids.assign(out.out_ids.begin() + ob, out.out_ids.begin() + oe);
    cs.out_slots.assign(out.out_slots.begin() + ob, out.out_slots.begin() + oe);
    plan.num_accesses += cs.num_accesses;
    plan.num_misses += cs.num_misses;
    SEER_RETURN_IF_ERROR(plan.changesets.Append(std::move(cs)));
  }
  plan.final_slots = std::move(out.final_slots);
  plan.device_used = PlannerDevice::kGpu;
  return plan;
}


}  // namespace

Result<BeladyPlan> PlanBelady(const std::vector<int64_t>& initial_slots,
                              const std::vector<IdSpan>& batches,
                              const BeladyPlannerOptions& options) {
  const PlannerDevice device = ResolvePlannerDevice(options.device);
  if (device == PlannerDevice::kGpu) {
    SEER_RETURN_IF_ERROR(ValidateInitialSlots(initial_slots));
    Accesses acc;
    acc.offsets.resize(batches.size() + 1, 0);
    for (size_t b = 0; b < batches.size(); ++b) {
      if (batches[b].size < 0 || batches[b].size > std::numeric_limits<int32_t>::max()) {
        return InvalidArgument(fmt::format("Belady planner: batch {} has invalid size {}", b, batches[b].size));
      }
      acc.offsets[b + 1] = acc.offsets[b] + batches[b].size;
    }
    acc.total = acc.offsets.back();
    auto gpu = PlanBeladyGpu(initial_slots, batches, acc, options);
    // auto: fall back to the CPU when the GPU path cannot handle this input.
    if (gpu.ok() || options.device == PlannerDevice::kGpu ||
        gpu.status().code() != StatusCode::kUnsupported) {
      return gpu;
    }
  }
  VectorBatchIdSource source(batches);
  int64_t accesses = 0;
  for (const IdSpan& b : batches) accesses += std::max<int64_t>(b.size, 0);
  return PlanBeladyCpu(initial_slots, source, options, accesses);
}

Status VectorBatchIdSource::Rewind() {
  next_ = 0;
  return Status::Ok();
}

Result<IdSpan> VectorBatchIdSource::Next() {
  if (next_ >= batches_.size()) {
    return InvalidArgument(fmt::format("batch source: read past the last of {} batches", batches_.size()));
  }
  return batches_[next_++];
}

Result<BeladyPlan> PlanBeladyStreaming(const std::vector<int64_t>& initial_slots,
                                       BatchIdSource& source,
                                       const BeladyPlannerOptions& options) {
  return PlanBeladyCpu(initial_slots, source, options);
}

std::vector<int64_t> BeladyInitialFill(const std::vector<IdSpan>& batches, int64_t capacity_rows,
                                       const std::vector<int64_t>& fill_ranking) {
  std::vector<int64_t> slots = EmptyCacheState(capacity_rows);
  std::unordered_set<int64_t> seen;
  int64_t filled = 0;
  std::vector<int64_t> fresh;
  for (const IdSpan& b : batches) {
    if (filled >= capacity_rows) break;
    fresh.clear();
    for (int64_t p = 0; p < b.size; ++p) {
      if (seen.insert(b.data[p]).second) fresh.push_back(b.data[p]);
    }
    std::sort(fresh.begin(), fresh.end());  // same first use: lower id first
    for (int64_t v : fresh) {
      if (filled >= capacity_rows) break;
      slots[static_cast<size_t>(filled++)] = v;
    }
  }
  for (size_t k = 0; k < fill_ranking.size() && filled < capacity_rows; ++k) {
    if (fill_ranking[k] >= 0 && seen.insert(fill_ranking[k]).second) {
      slots[static_cast<size_t>(filled++)] = fill_ranking[k];
    }
  }
  return slots;
}

NodeScoreFn NodeScoresFromTable(const std::vector<int64_t>& table) {
  auto scores = std::make_shared<std::vector<uint32_t>>(table.size());
  for (size_t v = 0; v < table.size(); ++v) {
    (*scores)[v] = static_cast<uint32_t>(std::clamp<int64_t>(table[v], 0, std::numeric_limits<uint32_t>::max()));
  }
  return [scores](const int64_t* ids, int64_t n, uint32_t* out) {
    const uint32_t* t = scores->data();
    const uint64_t size = scores->size();
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t v = static_cast<uint64_t>(ids[k]);
      out[k] = v < size ? t[v] : 0u;
    }
  };
}

}  // namespace seer
