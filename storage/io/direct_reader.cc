#include "storage/io/direct_reader.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <liburing.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "storage/base/aligned_buffer.h"
#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/io/direct_reader_internal.h"
#include "storage/io/pread_pool.h"

namespace seer {

namespace {

constexpr int64_t kFallbackAlignment = 4096;
constexpr int kMaxQueueDepth = 4096;
constexpr int kMaxRings = 64;
// rings = 0 (auto): one ring per CPU this process may run on, at most this many.
constexpr int kMaxAutoRings = 4;
// A batch is split only when every ring gets at least this many device reads.
constexpr size_t kMinReadsPerShard = 64;

int AutoRings() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = 0;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(cpus, 1, kMaxAutoRings);
}

// Logical block size of the block device (or partition) `dev` from sysfs, 0 if unknown.
int64_t SysfsLogicalBlockSize(dev_t dev) {
  const std::string base = "/sys/dev/block/" + std::to_string(major(dev)) + ":" +
                           std::to_string(minor(dev));
  for (const char* suffix : {"/queue/logical_block_size", "/../queue/logical_block_size"}) {
    std::ifstream in(base + suffix);
    int64_t value = 0;
    if (in >> value && value > 0) return value;
  }
  return 0;
}

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// ---- process-wide io_uring probe and one-time warnings ----------------------------

std::atomic<int> g_probe_override{1};  // 1 = no override (tests set 0 or -errno)
std::once_flag g_probe_once;
int g_probe_result = 0;

int IoUringProbeResult() {
  const int override_result = g_probe_override.load();
  if (override_result != 1) return override_result;
  std::call_once(g_probe_once, [] {
    struct io_uring ring;
    const int rc = io_uring_queue_init(4, &ring, 0);
    if (rc == 0) io_uring_queue_exit(&ring);
    g_probe_result = rc;
  });
  return g_probe_result;
}

// One warning per process and cause (exchange() makes the first caller print).
std::atomic<bool> g_uring_warned{false};
std::atomic<bool> g_direct_warned{false};

// ---- per-thread io_uring ----------------------------------------------------------

// One ring per calling thread (io_uring rings are single-issuer by design; sharing one
// across threads needs a lock on every submit). Rings are not tied to a file, so every
// reader used from a thread shares that thread's ring. A ReadBatch always drains its
// ring before returning, so nothing is in flight between calls.
class ThreadRing {
 public:
  static Result<std::unique_ptr<ThreadRing>> Create(unsigned entries) {
    auto ring = std::unique_ptr<ThreadRing>(new ThreadRing());
    // SINGLE_ISSUER + DEFER_TASKRUN (6.1+) run completions in our own io_uring_enter
    // instead of interrupting the thread; older kernels reject them with EINVAL.
    int rc = io_uring_queue_init(entries, &ring->ring_,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
    if (rc == -EINVAL) rc = io_uring_queue_init(entries, &ring->ring_, 0);
    if (rc < 0) return ErrnoStatus(rc, "io_uring_queue_init", "(per-thread ring)");
    ring->initialized_ = true;
    ring->entries_ = entries;
    return ring;
  }
  ~ThreadRing() {
    if (initialized_) io_uring_queue_exit(&ring_);
  }
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;

  io_uring* get() { return &ring_; }
  unsigned entries() const { return entries_; }

  // Bounce buffers, one per in-flight slot, kept between calls.
  std::vector<AlignedBuffer> buffers;

 private:
  ThreadRing() = default;
  io_uring ring_{};
  bool initialized_ = false;
  unsigned entries_ = 0;
};

thread_local std::unique_ptr<ThreadRing> t_ring;
thread_local internal::ReadPlan t_plan;

// Bounce buffers bigger than this are released at the end of a batch so a thread does
// not keep queue_depth x max_merge_bytes around after one large merged batch.
constexpr size_t kKeepBufferBytes = 256 << 10;

class DirectReader final : public BlockReader {
 public:
  DirectReader(std::string path, UniqueFd fd, int64_t file_size_bytes, int64_t alignment,
               IoMode mode, bool direct, const DirectReaderOptions& options)
      : path_(std::move(path)),
        fd_(std::move(fd)),
        file_size_bytes_(file_size_bytes),
        alignment_bytes_(alignment),
        mode_(mode),
        direct_(direct),
        queue_depth_(std::clamp(options.queue_depth, 1, kMaxQueueDepth)),
        rings_(options.rings > 0 ? std::min(options.rings, kMaxRings) : AutoRings()),
        submit_per_read_(options.submit_per_read),
        max_merge_bytes_(options.max_merge_bytes),
        faults_(options.faults) {
    if (mode_ == IoMode::kPread) {
      pool_ = std::make_unique<internal::PreadPool>(options.pread_threads);
    }
  }

  Status ReadBatch(const ReadRequest* requests, size_t count, ReadStats* stats) override {
    for (size_t i = 0; i < count; ++i) {
      const ReadRequest& r = requests[i];
      if (r.offset_bytes < 0 || r.length_bytes < 0 ||
          (r.length_bytes > 0 && r.dest == nullptr)) {
        throw std::invalid_argument("DirectReader::ReadBatch: request " + std::to_string(i) +
                                    " has a negative offset/length or a null destination");
      }
      if (r.length_bytes > 0 && r.offset_bytes + r.length_bytes > file_size_bytes_) {
        return Status(StatusCode::kUnexpectedEof,
                      "read " + path_ + " at offset " + std::to_string(r.offset_bytes) +
                          " (+" + std::to_string(r.length_bytes) +
                          " bytes): past end of file (size " +
                          std::to_string(file_size_bytes_) + ")");
      }
    }
    internal::ReadPlan& plan = t_plan;
    internal::BuildReadPlan(requests, count, alignment_bytes_, max_merge_bytes_, &plan);
    if (stats != nullptr) {
      ReadStats s;
      s.requests = static_cast<int64_t>(count);
      s.device_reads = static_cast<int64_t>(plan.reads.size());
      const int64_t device_end = AlignUp(file_size_bytes_, alignment_bytes_);
      for (const internal::DeviceRead& read : plan.reads) {
        s.device_bytes +=
            std::min(read.offset_bytes + read.length_bytes, device_end) - read.offset_bytes;
      }
      stats->Add(s);
    }
    if (plan.reads.empty()) return Status::Ok();
    return mode_ == IoMode::kUring ? ReadWithUring(plan) : ReadWithPool(plan);
  }

  const std::string& path() const override { return path_; }
  int64_t file_size_bytes() const override { return file_size_bytes_; }
  int64_t alignment_bytes() const override { return alignment_bytes_; }
  IoMode mode() const override { return mode_; }
  bool direct() const override { return direct_; }

 private:
  int FilterResult(int64_t offset, int64_t length, int result) const {
    return faults_ ? faults_->FilterResult(offset, length, result) : result;
  }
  int64_t ResubmitAlignment() const { return direct_ ? alignment_bytes_ : 1; }
  size_t BufferAlignment() const {
    return static_cast<size_t>(std::max<int64_t>(alignment_bytes_, 4096));
  }

  Status ReadWithUring(internal::ReadPlan& plan);
  // Reads plan.reads[begin, end) through the calling thread's ring with up to `depth`
  // reads in flight. Stops issuing new reads once *cancel is set (another shard failed)
  // and always reaps everything it submitted before returning.
  Status ReadShardWithUring(const internal::ReadPlan& plan, size_t begin, size_t end,
                            unsigned depth, std::atomic<bool>* cancel);
  Status ReadWithPool(internal::ReadPlan& plan);
  internal::PreadPool* RingHelpers(int helpers);

  const std::string path_;
  const UniqueFd fd_;
  const int64_t file_size_bytes_;
  const int64_t alignment_bytes_;
  const IoMode mode_;
  const bool direct_;
  const int queue_depth_;
  const int rings_;
  const bool submit_per_read_;
  const int64_t max_merge_bytes_;
  const std::shared_ptr<FaultInjector> faults_;
  std::unique_ptr<internal::PreadPool> pool_;
  // Helper threads for the extra rings of a split batch; started on first use.
  std::once_flag ring_helpers_once_;
  std::unique_ptr<internal::PreadPool> ring_helpers_;
};

internal::PreadPool* DirectReader::RingHelpers(int helpers) {
  std::call_once(ring_helpers_once_, [&] {
    ring_helpers_ = std::make_unique<internal::PreadPool>(helpers);
  });
  return ring_helpers_.get();
}

// Spreading one batch over a few rings on different threads. On the 2-vCPU virtio VM of
// bench/RESULTS.md ("Direct reader (issue 2)") two rings beat one at QD 16 and helped a
// little at QD 64 while the CPUs were shared with other work; at QD 256 it made no
// difference. Every shard gets a contiguous slice of the offset-sorted reads and an
// equal share of queue_depth; the caller runs one shard itself and helper threads the
// rest. Small batches stay on the caller's ring: waking a helper costs more than it saves.
// The shards share `plan` and `results`, which live on the caller's stack; that is safe
// because ParallelForWithCaller returns only after every running shard has returned.
Status DirectReader::ReadWithUring(internal::ReadPlan& plan) {
  const size_t num_reads = plan.reads.size();
  size_t shards = std::min<size_t>(static_cast<size_t>(rings_),
                                   static_cast<size_t>(queue_depth_));
  shards = std::min(shards, std::max<size_t>(1, num_reads / kMinReadsPerShard));
  if (shards <= 1) {
    return ReadShardWithUring(plan, 0, num_reads, static_cast<unsigned>(queue_depth_),
                              nullptr);
  }
  // Only as many extra rings as there are idle helpers: when other threads' batches keep
  // the helpers busy, this caller keeps the whole queue depth on its own ring instead of
  // running queue_depth / rings shards one after another.
  internal::PreadPool* helpers = RingHelpers(rings_ - 1);
  shards = std::min(shards, static_cast<size_t>(1 + helpers->IdleWorkers()));
  if (shards <= 1) {
    return ReadShardWithUring(plan, 0, num_reads, static_cast<unsigned>(queue_depth_),
                              nullptr);
  }
  std::atomic<bool> cancel{false};
  std::vector<Status> results(shards);
  const std::function<bool(size_t)> body = [&](size_t shard) -> bool {
    const size_t begin = num_reads * shard / shards;
    const size_t end = num_reads * (shard + 1) / shards;
    const unsigned depth = static_cast<unsigned>(
        static_cast<size_t>(queue_depth_) / shards +
        (shard < static_cast<size_t>(queue_depth_) % shards ? 1 : 0));
    try {
      results[shard] = ReadShardWithUring(plan, begin, end, depth, &cancel);
    } catch (...) {
      cancel.store(true, std::memory_order_relaxed);  // rethrown in the caller
      throw;
    }
    if (!results[shard].ok()) cancel.store(true, std::memory_order_relaxed);
    return true;  // the other shards stop through `cancel` after draining their rings
  };
  helpers->ParallelForWithCaller(shards, body);
  // A cancelled shard returns OK, so the first failure in shard order is the cause.
  for (Status& result : results) {
    if (!result.ok()) return std::move(result);
  }
  return Status::Ok();
}

Status DirectReader::ReadShardWithUring(const internal::ReadPlan& plan, size_t begin,
                                        size_t end, unsigned max_depth,
                                        std::atomic<bool>* cancel) {
  const unsigned depth =
      static_cast<unsigned>(std::min<size_t>(static_cast<size_t>(max_depth), end - begin));
  if (depth == 0) return Status::Ok();
  if (!t_ring || t_ring->entries() < depth) {
    unsigned entries = 1;
    while (entries < max_depth) entries <<= 1;
    t_ring.reset();
    SEER_ASSIGN_OR_RETURN(t_ring, ThreadRing::Create(entries));
  }
  ThreadRing& tr = *t_ring;
  io_uring* ring = tr.get();
  if (tr.buffers.size() < depth) tr.buffers.resize(depth);
  for (unsigned s = 0; s < depth; ++s) {
    if (tr.buffers[s].alignment() != BufferAlignment() && !tr.buffers[s].empty()) {
      tr.buffers[s] = AlignedBuffer();
    }
    if (tr.buffers[s].empty()) tr.buffers[s] = AlignedBuffer(0, BufferAlignment());
    tr.buffers[s].Reserve(plan.max_read_bytes);
  }

  struct Slot {
    uint32_t read_index = 0;
    internal::ReadProgress progress;
  };
  std::vector<Slot> slots(depth);
  std::vector<unsigned> free_slots;
  free_slots.reserve(depth);
  for (unsigned s = depth; s-- > 0;) free_slots.push_back(s);
  std::vector<unsigned> resubmit;
  resubmit.reserve(depth);

  size_t next_read = begin;
  unsigned in_flight = 0;  // prepared SQEs whose CQE we have not reaped
  bool stop = false;
  Status first_error;

  auto prepare = [&](unsigned s) -> bool {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    if (sqe == nullptr) return false;
    const internal::DeviceRead& read = plan.reads[slots[s].read_index];
    const int64_t done = slots[s].progress.done_bytes;
    io_uring_prep_read(sqe, fd_.get(), tr.buffers[s].data() + done,
                       static_cast<unsigned>(read.length_bytes - done),
                       static_cast<uint64_t>(read.offset_bytes + done));
    io_uring_sqe_set_data64(sqe, s);
    ++in_flight;
    return true;
  };

  for (;;) {
    if (cancel != nullptr && !stop && cancel->load(std::memory_order_relaxed)) {
      stop = true;  // another shard failed: issue nothing new, drain, report nothing
    }
    while (!stop) {
      if (!resubmit.empty()) {
        if (!prepare(resubmit.back())) break;
        resubmit.pop_back();
      } else if (next_read < end && !free_slots.empty()) {
        const unsigned s = free_slots.back();
        slots[s].read_index = static_cast<uint32_t>(next_read);
        slots[s].progress = internal::ReadProgress();
        if (!prepare(s)) break;
        free_slots.pop_back();
        ++next_read;
      } else {
        break;
      }
      if (submit_per_read_) {
        // One io_uring_enter per read (see DirectReaderOptions::submit_per_read). On
        // -EAGAIN/-EBUSY/-EINTR the SQE stays queued and goes with the next enter.
        const int rc = io_uring_submit(ring);
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
          (void)t_ring.release();  // see the comment at io_uring_submit_and_wait below
          return ErrnoStatus(rc, "io_uring_submit", path_);
        }
      }
    }
    if (in_flight == 0) break;

    const int rc = io_uring_submit_and_wait(ring, 1);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      // The ring itself failed: we cannot know which reads the kernel still owns, so
      // the ring and its bounce buffers are deliberately leaked (never freed while the
      // kernel might write into them). Next call on this thread makes a new ring.
      (void)t_ring.release();
      return ErrnoStatus(rc, "io_uring_submit_and_wait", path_);
    }

    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(ring, head, cqe) {
      ++seen;
      --in_flight;
      const unsigned s = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
      Slot& slot = slots[s];
      if (stop) {  // draining after an error: drop whatever came back
        free_slots.push_back(s);
        continue;
      }
      const internal::DeviceRead& read = plan.reads[slot.read_index];
      const int64_t done = slot.progress.done_bytes;
      const int result =
          FilterResult(read.offset_bytes + done, read.length_bytes - done, cqe->res);
      Status error;
      switch (internal::AdvanceRead(read, result, ResubmitAlignment(), path_, &slot.progress,
                                    &error)) {
        case internal::ReadStep::kComplete:
          internal::CopyOut(plan, read, tr.buffers[s].data());
          free_slots.push_back(s);
          break;
        case internal::ReadStep::kResubmit:
          resubmit.push_back(s);
          break;
        case internal::ReadStep::kFailed:
          first_error = std::move(error);
          stop = true;
          free_slots.push_back(s);
          break;
      }
    }
    io_uring_cq_advance(ring, seen);
  }

  for (AlignedBuffer& buffer : tr.buffers) {
    if (buffer.size() > kKeepBufferBytes) buffer = AlignedBuffer(0, BufferAlignment());
  }
  return first_error;
}

Status DirectReader::ReadWithPool(internal::ReadPlan& plan) {
  std::mutex error_mu;
  Status first_error;
  const std::function<bool(size_t)> body = [&](size_t i) -> bool {
    thread_local AlignedBuffer bounce;
    if (bounce.alignment() != BufferAlignment()) bounce = AlignedBuffer(0, BufferAlignment());
    const internal::DeviceRead& read = plan.reads[i];
    bounce.Reserve(read.length_bytes);
    internal::ReadProgress progress;
    for (;;) {
      const int64_t done = progress.done_bytes;
      const int64_t length = read.length_bytes - done;
      const ssize_t n = ::pread(fd_.get(), bounce.data() + done, static_cast<size_t>(length),
                                static_cast<off_t>(read.offset_bytes + done));
      const int result =
          FilterResult(read.offset_bytes + done, length, n < 0 ? -errno : static_cast<int>(n));
      Status error;
      switch (internal::AdvanceRead(read, result, ResubmitAlignment(), path_, &progress,
                                    &error)) {
        case internal::ReadStep::kComplete:
          internal::CopyOut(plan, read, bounce.data());
          if (bounce.size() > kKeepBufferBytes) bounce = AlignedBuffer(0, BufferAlignment());
          return true;
        case internal::ReadStep::kResubmit:
          continue;
        case internal::ReadStep::kFailed: {
          std::lock_guard<std::mutex> lock(error_mu);
          if (first_error.ok()) first_error = std::move(error);
          return false;
        }
      }
    }
  };
  pool_->ParallelFor(plan.reads.size(), body);
  return first_error;
}

}  // namespace

int64_t DirectIoAlignment(int fd) {
#ifdef STATX_DIOALIGN
  struct statx stx;
  std::memset(&stx, 0, sizeof(stx));
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN) != 0 && IsPowerOfTwo(stx.stx_dio_offset_align)) {
    return static_cast<int64_t>(stx.stx_dio_offset_align);
  }
#endif
  struct stat st;
  if (::fstat(fd, &st) == 0) {
    if (S_ISBLK(st.st_mode)) {
      int sector = 0;
      if (::ioctl(fd, BLKSSZGET, &sector) == 0 && IsPowerOfTwo(sector)) return sector;
    } else {
      const int64_t sector = SysfsLogicalBlockSize(st.st_dev);
      if (IsPowerOfTwo(sector)) return sector;
    }
  }
  return kFallbackAlignment;
}

Result<std::unique_ptr<BlockReader>> OpenDirectReader(const std::string& path,
                                                      const DirectReaderOptions& options) {
  if (options.queue_depth < 1 || options.pread_threads < 1 || options.max_merge_bytes < 0) {
    return InvalidArgument("open " + path +
                           ": queue_depth and pread_threads must be >= 1 and "
                           "max_merge_bytes >= 0");
  }
  IoMode backend = IoMode::kUring;
  if (options.mode == IoMode::kPread) {
    backend = IoMode::kPread;
  } else {
    const int probe = IoUringProbeResult();
    if (probe != 0) {
      if (options.mode == IoMode::kUring) {
        return Status(StatusCode::kUnsupported,
                      "open " + path + ": io_uring unavailable (io_uring_queue_init: " +
                          std::strerror(-probe) + "); use the pread mode instead",
                      -probe);
      }
      backend = IoMode::kPread;
      if (!options.quiet && !g_uring_warned.exchange(true)) {
        fmt::print(stderr,
                   "seer: warning: io_uring unavailable (io_uring_queue_init: {}); "
                   "using a {}-thread pread pool\n",
                   std::strerror(-probe), options.pread_threads);
      }
    }
  }

  bool direct = options.direct;
  std::string direct_refused;  // the cause, when O_DIRECT was refused
  UniqueFd fd;
  if (direct) {
    auto opened = UniqueFd::Open(path, O_RDONLY | O_DIRECT);
    if (opened.ok()) {
      fd = std::move(opened).value();
    } else if (opened.status().sys_errno() == EINVAL) {
      direct = false;
      direct_refused = "open: " + std::string(std::strerror(EINVAL));
    } else {
      return opened.status();
    }
  }
  if (!fd.valid()) {
    SEER_ASSIGN_OR_RETURN(fd, UniqueFd::Open(path, O_RDONLY));
  }
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  const int64_t alignment = DirectIoAlignment(fd.get());

  if (direct && size > 0) {
    // Some file systems accept O_DIRECT at open and refuse it on the first read.
    AlignedBuffer probe(static_cast<size_t>(alignment),
                        static_cast<size_t>(std::max<int64_t>(alignment, 4096)));
    ssize_t n;
    do {
      n = ::pread(fd.get(), probe.data(), static_cast<size_t>(alignment), 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EINVAL) {
      direct = false;
      direct_refused = "read: " + std::string(std::strerror(EINVAL));
      SEER_ASSIGN_OR_RETURN(fd, UniqueFd::Open(path, O_RDONLY));
    } else if (n < 0) {
      return ErrnoStatus(errno, "read", path, 0, alignment);
    }
  }
  if (!direct_refused.empty() && !options.quiet && !g_direct_warned.exchange(true)) {
    fmt::print(stderr, "seer: warning: O_DIRECT refused for {} ({}); using buffered reads\n", path,
               direct_refused);
  }
  return std::unique_ptr<BlockReader>(
      new DirectReader(path, std::move(fd), size, alignment, backend, direct, options));
}

namespace internal {
void OverrideIoUringProbeForTesting(int result) { g_probe_override.store(result); }
void ResetFallbackWarningsForTesting() {
  g_uring_warned.store(false);
  g_direct_warned.store(false);
}
}  // namespace internal

}  // namespace seer
