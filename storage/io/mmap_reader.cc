#include "storage/io/mmap_reader.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

// SIGBUS guard. A page of a MAP_SHARED mapping beyond the file's current end (the file was
// truncated after mmap) raises SIGBUS on access. One process-wide handler, installed on
// the first OpenMmapReader: on a thread inside ReadBatch's copy loop (t_bus_jump set) it
// records the faulting address and siglongjmps back to ReadBatch, which returns an error
// naming the file and offset; anywhere else it restores the previous disposition and
// re-raises, so other bus errors behave as before. Only async-signal-safe calls
// (sigaction, raise, siglongjmp) run in the handler. sigsetjmp saves the signal mask
// (one sigprocmask per ReadBatch), so SIGBUS is unblocked again after the jump even where
// SA_NODEFER is not honoured (ThreadSanitizer installs its own handler in front of ours).
thread_local sigjmp_buf* volatile t_bus_jump = nullptr;  // volatile: the stores around the copy must stay
thread_local void* volatile t_bus_address = nullptr;
struct sigaction g_previous_bus_action;

void BusHandler(int /*signo*/, siginfo_t* info, void* /*context*/) {
  sigjmp_buf* jump = t_bus_jump;
  if (jump != nullptr) {
    t_bus_address = info->si_addr;
    t_bus_jump = nullptr;
    siglongjmp(*jump, 1);
  }
  sigaction(SIGBUS, &g_previous_bus_action, nullptr);
  raise(SIGBUS);
}

void InstallBusHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = &BusHandler;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &g_previous_bus_action);
  });
}

int64_t ThreadMajorFaults() {
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return usage.ru_majflt;
}

class MmapReader final : public BlockReader {
 public:
  MmapReader(std::string path, UniqueFd fd, void* base, int64_t size_bytes)
      : path_(std::move(path)), fd_(std::move(fd)), base_(static_cast<const char*>(base)), size_bytes_(size_bytes),
        page_bytes_(sysconf(_SC_PAGESIZE)) {}
  ~MmapReader() override {
    if (size_bytes_ > 0) munmap(const_cast<char*>(base_), static_cast<size_t>(size_bytes_));
  }
  MmapReader(const MmapReader&) = delete;
  MmapReader& operator=(const MmapReader&) = delete;

  Status ReadBatch(const ReadRequest* requests, size_t count, ReadStats* stats) override {
    // Check every request first, so a bad one copies nothing.
    for (size_t i = 0; i < count; ++i) {
      const ReadRequest& r = requests[i];
      if (r.offset_bytes < 0 || r.length_bytes < 0 || r.offset_bytes > size_bytes_ ||
          r.length_bytes > size_bytes_ - r.offset_bytes) {
        return Status(StatusCode::kUnexpectedEof,
                      "read " + path_ + " at offset " + std::to_string(r.offset_bytes) + " length " +
                          std::to_string(r.length_bytes) + ": beyond the end of the file (" +
                          std::to_string(size_bytes_) + " bytes)");
      }
    }
    const int64_t faults_before = stats ? ThreadMajorFaults() : 0;
    sigjmp_buf jump;
    if (sigsetjmp(jump, 1) != 0) return BusError();
    t_bus_jump = &jump;
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the copies stay inside the guard
    for (size_t i = 0; i < count; ++i) {
      if (requests[i].length_bytes > 0) {
        std::memcpy(requests[i].dest, base_ + requests[i].offset_bytes, static_cast<size_t>(requests[i].length_bytes));
      }
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_bus_jump = nullptr;
    if (stats) {
      const int64_t faults = ThreadMajorFaults() - faults_before;
      stats->requests += static_cast<int64_t>(count);
      stats->device_reads += faults;
      stats->device_bytes += faults * page_bytes_;
    }
    return Status::Ok();
  }
  const std::string& path() const override { return path_; }
  int64_t file_size_bytes() const override { return size_bytes_; }
  int64_t alignment_bytes() const override { return page_bytes_; }
  IoMode mode() const override { return IoMode::kPread; }
  bool direct() const override { return false; }

 private:
  // After a SIGBUS in the copy loop: the faulting page's offset and the file's size now.
  Status BusError() const {
    const char* address = static_cast<const char*>(t_bus_address);
    const int64_t offset = address - base_;
    const int64_t page_offset = offset - offset % page_bytes_;
    auto now = FileSizeBytes(fd_.get(), path_);
    return Status(StatusCode::kUnexpectedEof,
                  "read " + path_ + " at offset " + std::to_string(page_offset) +
                      ": bus error in the memory mapping (--io mmap): the file is now " +
                      (now.ok() ? std::to_string(*now) : std::string("of unknown size")) + " bytes, " +
                      std::to_string(size_bytes_) + " when mapped; it was truncated while in use");
  }

  std::string path_;
  UniqueFd fd_;  // kept open to report the file's current size after a bus error
  const char* base_;
  int64_t size_bytes_;
  int64_t page_bytes_;
};

}  // namespace

Result<std::unique_ptr<BlockReader>> OpenMmapReader(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  void* base = nullptr;
  if (size > 0) {
    base = mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd.get(), 0);
    if (base == MAP_FAILED) return ErrnoStatus(errno, "mmap", path, 0, size);
    // No read-ahead: a random row read faults in its own pages only (PyG+ in Ginex §5).
    if (madvise(base, static_cast<size_t>(size), MADV_RANDOM) != 0) {
      const int err = errno;
      munmap(base, static_cast<size_t>(size));
      return ErrnoStatus(err, "madvise(MADV_RANDOM)", path, 0, size);
    }
  }
  InstallBusHandler();
  return std::unique_ptr<BlockReader>(new MmapReader(path, std::move(fd), base, size));
}

}  // namespace seer
