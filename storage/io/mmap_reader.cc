#include "storage/io/mmap_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

int64_t ThreadMajorFaults() {
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return usage.ru_majflt;
}

class MmapReader final : public BlockReader {
 public:
  MmapReader(std::string path, void* base, int64_t size_bytes)
      : path_(std::move(path)), base_(static_cast<const char*>(base)), size_bytes_(size_bytes),
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
    for (size_t i = 0; i < count; ++i) {
      if (requests[i].length_bytes > 0) {
        std::memcpy(requests[i].dest, base_ + requests[i].offset_bytes, static_cast<size_t>(requests[i].length_bytes));
      }
    }
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
  std::string path_;
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
  return std::unique_ptr<BlockReader>(new MmapReader(path, base, size));
}

}  // namespace seer
