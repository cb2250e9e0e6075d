#include "cache/belady_planner.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

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

namespace {

// Flattened accesses: access g (global position) belongs to batch BatchOf(g).
struct Accesses {
  std::vector<int64_t> offsets;  // num_batches + 1
  int64_t total = 0;
  int64_t BatchOf(int64_t g) const {
    return static_cast<int64_t>(std::upper_bound(offsets.begin(), offsets.end(), g) -
                                offsets.begin()) - 1;
  }
};

// next_g[g] = global position of the next access to the same node, -1 if none; also the
// distinct nodes (ascending) with their first access. Sorting (node, position) pairs is
// O(T log T) with memory proportional to T, whatever the node id range; when
// id << bits(T) fits in 64 bits the pair is packed into one word (the common case).
struct NextUse {
  std::vector<int64_t> next_g;
  std::vector<std::pair<int64_t, int64_t>> first_access;  // (node, g), ascending node
};

Result<NextUse> ComputeNextUse(const std::vector<IdSpan>& batches, const Accesses& acc) {
  const int64_t total = acc.total;
  NextUse out;
  out.next_g.assign(static_cast<size_t>(total), -1);
  if (total == 0) return out;

  std::atomic<int64_t> max_id{0};
  std::atomic<bool> negative{false};
  tbb::parallel_for(tbb::blocked_range<size_t>(0, batches.size()), [&](const auto& r) {
    int64_t local_max = 0;
    bool neg = false;
    for (size_t b = r.begin(); b != r.end(); ++b) {
      for (int64_t p = 0; p < batches[b].size; ++p) {
        local_max = std::max(local_max, batches[b].data[p]);
        neg |= batches[b].data[p] < 0;
      }
    }
    int64_t cur = max_id.load();
    while (local_max > cur && !max_id.compare_exchange_weak(cur, local_max)) {
    }
    if (neg) negative = true;
  });
  if (negative) return InvalidArgument("Belady planner: negative node id in a batch");

  int g_bits = 1;
  while ((int64_t{1} << g_bits) < total) ++g_bits;
  int id_bits = 1;
  while (id_bits < 63 && (int64_t{1} << id_bits) <= max_id.load()) ++id_bits;

  // Sorted (node, g) sequence, accessed through two small lambdas.
  std::vector<uint64_t> packed;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const bool use_packed = id_bits + g_bits <= 64;
  auto fill = [&](auto&& put) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, batches.size()), [&](const auto& r) {
      for (size_t b = r.begin(); b != r.end(); ++b) {
        const int64_t base = acc.offsets[b];
        for (int64_t p = 0; p < batches[b].size; ++p) put(base + p, batches[b].data[p]);
      }
    });
  };
  if (use_packed) {
    packed.resize(static_cast<size_t>(total));
    fill([&](int64_t g, int64_t v) {
      packed[static_cast<size_t>(g)] = (static_cast<uint64_t>(v) << g_bits) | static_cast<uint64_t>(g);
    });
    tbb::parallel_sort(packed.begin(), packed.end());
  } else {
    pairs.resize(static_cast<size_t>(total));
    fill([&](int64_t g, int64_t v) { pairs[static_cast<size_t>(g)] = {v, g}; });
    tbb::parallel_sort(pairs.begin(), pairs.end());
  }
  const uint64_t g_mask = g_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << g_bits) - 1;
  auto node_at = [&](int64_t t) -> int64_t {
    return use_packed ? static_cast<int64_t>(packed[static_cast<size_t>(t)] >> g_bits)
                      : pairs[static_cast<size_t>(t)].first;
  };
  auto g_at = [&](int64_t t) -> int64_t {
    return use_packed ? static_cast<int64_t>(packed[static_cast<size_t>(t)] & g_mask)
                      : pairs[static_cast<size_t>(t)].second;
  };

  std::atomic<int64_t> duplicate_g{-1};
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, total), [&](const auto& r) {
    for (int64_t t = r.begin(); t != r.end(); ++t) {
      if (t + 1 < total && node_at(t + 1) == node_at(t)) {
        const int64_t g = g_at(t), g_next = g_at(t + 1);
        if (acc.BatchOf(g) == acc.BatchOf(g_next)) duplicate_g = g_next;
        out.next_g[static_cast<size_t>(g)] = g_next;
      }
    }
  });
  if (duplicate_g.load() >= 0) {
    const int64_t g = duplicate_g.load();
    const int64_t b = acc.BatchOf(g);
    return InvalidArgument(fmt::format(
        "Belady planner: node {} appears twice in batch {} (position {}); batch ids must be unique",
        batches[static_cast<size_t>(b)].data[g - acc.offsets[static_cast<size_t>(b)]], b,
        g - acc.offsets[static_cast<size_t>(b)]));
  }
  for (int64_t t = 0; t < total; ++t) {
    if (t == 0 || node_at(t) != node_at(t - 1)) out.first_access.emplace_back(node_at(t), g_at(t));
  }
  return out;
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

// A cached node: its id, the global position of its next access (-1 = none), its slot.
struct CachedEntry {
  int64_t node;
  int64_t next_g;
  int32_t slot;
};
// Within one next-use bucket the largest id is evicted first: a max-heap on node.
struct ByNode {
  bool operator()(const CachedEntry& a, const CachedEntry& b) const { return a.node < b.node; }
};

// The cache as buckets by next-use iteration (index num_batches = ∞). Iteration i drains
// bucket i (exactly the hits of iteration i), and evictions take from the highest
// non-empty bucket, so no iteration touches the whole cache.
class BucketedCache {
 public:
  explicit BucketedCache(int64_t num_batches)
      : buckets_(static_cast<size_t>(num_batches + 1)),
        nonempty_((static_cast<size_t>(num_batches) + 64) / 64, 0) {}

  void Push(int64_t bucket, const CachedEntry& e) {
    auto& h = buckets_[static_cast<size_t>(bucket)];
    h.push_back(e);
    std::push_heap(h.begin(), h.end(), ByNode());
    nonempty_[static_cast<size_t>(bucket) / 64] |= uint64_t{1} << (bucket % 64);
    ++size_;
  }
  // Removes and returns bucket b's entries (any order).
  std::vector<CachedEntry> Drain(int64_t b) {
    std::vector<CachedEntry> out;
    out.swap(buckets_[static_cast<size_t>(b)]);
    nonempty_[static_cast<size_t>(b) / 64] &= ~(uint64_t{1} << (b % 64));
    size_ -= static_cast<int64_t>(out.size());
    return out;
  }
  // Highest non-empty bucket, or -1.
  int64_t TopBucket() const {
    for (int64_t w = static_cast<int64_t>(nonempty_.size()) - 1; w >= 0; --w) {
      if (nonempty_[static_cast<size_t>(w)] != 0) {
        return w * 64 + 63 - __builtin_clzll(nonempty_[static_cast<size_t>(w)]);
      }
    }
    return -1;
  }
  const CachedEntry& Top(int64_t b) const { return buckets_[static_cast<size_t>(b)].front(); }
  CachedEntry Pop(int64_t b) {
    auto& h = buckets_[static_cast<size_t>(b)];
    std::pop_heap(h.begin(), h.end(), ByNode());
    CachedEntry e = h.back();
    h.pop_back();
    if (h.empty()) nonempty_[static_cast<size_t>(b) / 64] &= ~(uint64_t{1} << (b % 64));
    --size_;
    return e;
  }
  int64_t size() const { return size_; }

 private:
  std::vector<std::vector<CachedEntry>> buckets_;
  std::vector<uint64_t> nonempty_;
  int64_t size_ = 0;
};

Result<BeladyPlan> PlanBeladyCpu(const std::vector<int64_t>& initial_slots,
                                 const std::vector<IdSpan>& batches, const Accesses& acc,
                                 const BeladyPlannerOptions& options) {
  const int64_t num_batches = static_cast<int64_t>(batches.size());
  const int64_t capacity = static_cast<int64_t>(initial_slots.size());
  SEER_ASSIGN_OR_RETURN(NextUse next_use, ComputeNextUse(batches, acc));
  auto bucket_of = [&](int64_t g) { return g < 0 ? num_batches : acc.BatchOf(g); };

  BeladyPlan plan;
  plan.changesets = ChangesetStore(options.changeset_budget_bytes, options.spill_dir);
  plan.final_slots = initial_slots;
  std::vector<int64_t>& slot_nodes = plan.final_slots;
  BucketedCache cache(num_batches);
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> free_slots;
  {
    std::vector<int32_t> free_list;
    for (int64_t s = 0; s < capacity; ++s) {
      const int64_t v = initial_slots[static_cast<size_t>(s)];
      if (v == kFreeSlot) {
        free_list.push_back(static_cast<int32_t>(s));
        continue;
      }
      auto it = std::lower_bound(next_use.first_access.begin(), next_use.first_access.end(),
                                 std::make_pair(v, std::numeric_limits<int64_t>::min()));
      const int64_t first_g =
          (it != next_use.first_access.end() && it->first == v) ? it->second : -1;
      cache.Push(bucket_of(first_g), CachedEntry{v, first_g, static_cast<int32_t>(s)});
    }
    // Ascending order is already a valid min-heap.
    free_slots = decltype(free_slots)(std::greater<int32_t>(), std::move(free_list));
  }

  struct Miss {
    int64_t bucket;
    int64_t node;
    int32_t position;
  };
  std::vector<int32_t> hit_slot;
  std::vector<char> dropped;
  std::vector<Miss> misses;
  for (int64_t i = 0; i < num_batches; ++i) {
    const IdSpan& ids = batches[static_cast<size_t>(i)];
    const int64_t base = acc.offsets[static_cast<size_t>(i)];
    const int64_t n = ids.size;
    hit_slot.assign(static_cast<size_t>(n), -1);
    dropped.assign(static_cast<size_t>(n), 0);

    // Hits: exactly the cached entries whose next access is in batch i. Their key moves
    // to their following access.
    for (const CachedEntry& e : cache.Drain(i)) {
      hit_slot[static_cast<size_t>(e.next_g - base)] = e.slot;
      const int64_t g = next_use.next_g[static_cast<size_t>(e.next_g)];
      cache.Push(bucket_of(g), CachedEntry{e.node, g, e.slot});
    }
    misses.clear();
    for (int64_t p = 0; p < n; ++p) {
      if (hit_slot[static_cast<size_t>(p)] >= 0) continue;
      misses.push_back(Miss{bucket_of(next_use.next_g[static_cast<size_t>(base + p)]),
                            ids.data[p], static_cast<int32_t>(p)});
    }
    Changeset cs;
    cs.num_accesses = n;
    cs.num_misses = static_cast<int64_t>(misses.size());

    // Cut the `excess` largest keys of C_i ∪ misses. Key (next_use, not cached, id): a miss
    // beats a cached node of the same next use.
    int64_t excess = cache.size() + static_cast<int64_t>(misses.size()) - capacity;
    if (excess > 0) {
      std::sort(misses.begin(), misses.end(), [](const Miss& a, const Miss& b) {
        return a.bucket != b.bucket ? a.bucket > b.bucket : a.node > b.node;
      });
      size_t m = 0;
      std::vector<std::pair<int32_t, int64_t>> evicted;  // (slot, node)
      for (; excess > 0; --excess) {
        const int64_t top = cache.TopBucket();
        if (m < misses.size() && (top < 0 || misses[m].bucket >= top)) {
          dropped[static_cast<size_t>(misses[m].position)] = 1;
          ++m;
        } else {
          CachedEntry e = cache.Pop(top);
          evicted.emplace_back(e.slot, e.node);
          slot_nodes[static_cast<size_t>(e.slot)] = kFreeSlot;
          free_slots.push(e.slot);
        }
      }
      std::sort(evicted.begin(), evicted.end());
      cs.out_slots.reserve(evicted.size());
      cs.out_ids.reserve(evicted.size());
      for (const auto& [slot, node] : evicted) {
        cs.out_slots.push_back(slot);
        cs.out_ids.push_back(node);
      }
    }
    // Insert the surviving misses in ascending position into the smallest free slots.
    for (int64_t p = 0; p < n; ++p) {
      if (hit_slot[static_cast<size_t>(p)] >= 0 || dropped[static_cast<size_t>(p)]) continue;
      const int32_t slot = free_slots.top();
      free_slots.pop();
      const int64_t g = next_use.next_g[static_cast<size_t>(base + p)];
      cache.Push(bucket_of(g), CachedEntry{ids.data[p], g, slot});
      slot_nodes[static_cast<size_t>(slot)] = ids.data[p];
      cs.in_ids.push_back(ids.data[p]);
      cs.in_positions.push_back(static_cast<int32_t>(p));
      cs.in_slots.push_back(slot);
    }
    plan.num_accesses += cs.num_accesses;
    plan.num_misses += cs.num_misses;
    SEER_RETURN_IF_ERROR(plan.changesets.Append(std::move(cs)));
  }
  plan.device_used = PlannerDevice::kCpu;
  return plan;
}

Result<BeladyPlan> PlanBeladyGpu(const std::vector<int64_t>& initial_slots,
                                 const std::vector<IdSpan>& batches, const Accesses& acc,
                                 const BeladyPlannerOptions& options) {
  std::vector<int64_t> flat(static_cast<size_t>(acc.total));
  tbb::parallel_for(size_t{0}, batches.size(), [&](size_t b) {
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

  const PlannerDevice device = ResolvePlannerDevice(options.device);
  if (device == PlannerDevice::kGpu) {
    auto gpu = PlanBeladyGpu(initial_slots, batches, acc, options);
    // auto: fall back to the CPU when the GPU path cannot handle this input.
    if (gpu.ok() || options.device == PlannerDevice::kGpu ||
        gpu.status().code() != StatusCode::kUnsupported) {
      return gpu;
    }
  }
  return PlanBeladyCpu(initial_slots, batches, acc, options);
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
  // Simple first implementation: copy the batches and plan in RAM.
  SEER_RETURN_IF_ERROR(source.Rewind());
  const int64_t num_batches = source.num_batches();
  std::vector<std::vector<int64_t>> copies(static_cast<size_t>(num_batches));
  for (int64_t b = 0; b < num_batches; ++b) {
    SEER_ASSIGN_OR_RETURN(IdSpan span, source.Next());
    copies[static_cast<size_t>(b)].assign(span.data, span.data + span.size);
  }
  BeladyPlannerOptions cpu = options;
  cpu.device = PlannerDevice::kCpu;
  return PlanBelady(initial_slots, MakeIdSpans(copies), cpu);
}

std::vector<int64_t> BeladyInitialFill(const std::vector<IdSpan>& batches, int64_t capacity_rows) {
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
  return slots;
}

}  // namespace seer
