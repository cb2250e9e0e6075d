#include "cache/next_use_sort_internal.h"

#include <tbb/task_arena.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "cache/radix_sort_internal.h"
#include "storage/base/parallel.h"

namespace seer::belady_internal {

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

// One sorted run in RAM.
struct SortedRun {
  RunLayout layout;
  std::vector<uint64_t> words;
  int64_t num_records() const { return static_cast<int64_t>(words.size()) / layout.words_per_record(); }
};

// A run written to the runs file: [offset, offset + words * 8).
struct RunOnDisk {
  RunLayout layout;
  int64_t offset_bytes = 0;
  int64_t num_words = 0;
};

namespace {

constexpr char kCreateOperation[] = "create planner runtime file";

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
      RadixSortKeys(&w, scratch, shift, id_bits);
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

// Reads one on-disk run through a buffer of `buffer_words`.
class RunCursor {
 public:
  RunCursor(const RuntimeFile* file, const RunOnDisk& run, int64_t buffer_words)
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
  const RuntimeFile* file_;
  RunOnDisk run_;
  int64_t buffer_words_;
  std::vector<uint64_t> buffer_;
  int64_t at_ = 0;
  int64_t consumed_ = 0;
};

Status DuplicateInBatch(int64_t node, int32_t e, int32_t pos) {
  return InvalidArgument(fmt::format(
      "Belady planner: node {} appears twice in batch {} (position {}); batch ids must be unique",
      node, e - 1, pos));
}

}  // namespace

Result<std::unique_ptr<NextUseTable>> NextUseTable::Build(const std::vector<int64_t>& initial_slots,
                                                          BatchIdSource& source,
                                                          const std::string& runtime_dir,
                                                          int64_t working_memory_bytes,
                                                          int64_t accesses_hint) {
  auto t = std::make_unique<NextUseTable>();
  const int64_t num_batches = source.num_batches();
  if (num_batches < 0 || num_batches >= std::numeric_limits<int32_t>::max() - 1) {
    return InvalidArgument(fmt::format("Belady planner: {} batches is out of range", num_batches));
  }
  const int32_t inf = static_cast<int32_t>(num_batches);
  t->initial_next_.assign(initial_slots.size(), MakeNextRef(inf, 0));
  t->offsets_.assign(1, 0);
  t->runtime_dir_ = runtime_dir;
  const bool may_spill = !runtime_dir.empty();
  // Pass-1 buffer: 8 bytes of ids (packed into keys in place) + 8 of sort scratch per access.
  const int64_t run_capacity = may_spill ? std::max<int64_t>(1, working_memory_bytes / 16)
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
    if (!t->runs_file_.valid()) {
      SEER_ASSIGN_OR_RETURN(t->runs_file_, RuntimeFile::Create(runtime_dir, "belady-runs", kCreateOperation));
    }
    RunOnDisk d;
    d.layout = run.layout;
    d.num_words = static_cast<int64_t>(run.words.size());
    SEER_ASSIGN_OR_RETURN(d.offset_bytes, t->runs_file_.Append(run.words.data(), d.num_words * 8));
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
  SEER_RETURN_IF_ERROR(t->MergeRuns(on_disk, working_memory_bytes));
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
    SEER_ASSIGN_OR_RETURN(const int64_t at, next_file_.Append(buf.data(), bytes));
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
  SEER_ASSIGN_OR_RETURN(next_file_, RuntimeFile::Create(runtime_dir_, "belady-next", kCreateOperation));
  const int64_t half = std::max<int64_t>(working_memory_bytes / 2, 1);
  out_buffer_records_ = static_cast<size_t>(std::max<int64_t>(
      4096 / static_cast<int64_t>(sizeof(RangeRecord)),
      half / static_cast<int64_t>(sizeof(RangeRecord)) / static_cast<int64_t>(std::max<size_t>(ranges_.size(), 1))));
  out_buffers_.assign(ranges_.size(), {});
  const int64_t read_words = std::max<int64_t>(512, half / 8 / static_cast<int64_t>(runs.size()));

  std::vector<RunCursor> cursors;
  cursors.reserve(runs.size());
  for (const RunOnDisk& r : runs) cursors.emplace_back(&runs_file_, r, read_words);
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
    SEER_ASSIGN_OR_RETURN(const int64_t at, next_file_.Append(buf.data(), bytes));
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
      SEER_RETURN_IF_ERROR(next_file_.Read(chunk.data(), take, offset + done));
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


}  // namespace seer::belady_internal
