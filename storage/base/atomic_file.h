// AtomicFileWriter: writes a file under a temporary name in the same directory and,
// on Close(), fsyncs it, renames it over the final name and fsyncs the directory.
// Destroying a writer that was not closed removes the temporary file, so a crash or
// an error never leaves a half-written file under the final name.
// Only a regular file (or a new name) is replaced: a symbolic link is followed (the
// file it names, existing or not, is written atomically; the link stays); a device,
// FIFO or socket is written through in place (no temporary, no rename); a directory is
// refused. A missing or read-only folder is an error naming the
// user's path, found at Create (CheckOutputPath finds it before any work).
// Sequential, buffered (1 MiB) writes; the bytes are hashed (xxh64) as they pass.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/aligned_buffer.h"
#include "storage/base/checksum.h"
#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

// Where an output path really writes (see above).
struct OutputTarget {
  std::string path;            // the file written: `path`, or what its symlink names
  bool write_through = false;  // a device, FIFO or socket: written in place
};
Result<OutputTarget> ResolveOutputPath(const std::string& path);
// ResolveOutputPath's verdict alone: tools call it on every output flag before any work.
Status CheckOutputPath(const std::string& path);

class AtomicFileWriter {
 public:
  static Result<AtomicFileWriter> Create(const std::string& final_path);
  AtomicFileWriter(AtomicFileWriter&&) noexcept = default;
  AtomicFileWriter& operator=(AtomicFileWriter&&) noexcept = default;
  ~AtomicFileWriter();

  Status Append(const void* data, int64_t length_bytes);
  template <typename T>
  Status AppendValues(const T* values, int64_t count) {
    return Append(values, count * static_cast<int64_t>(sizeof(T)));
  }
  // Opens a second descriptor on the temporary file with O_DIRECT, so AppendDirect can
  // write without a page-cache copy; false (and nothing changes) where the file system
  // refuses it (tmpfs). Call before the first Append.
  bool EnableDirect();
  bool direct() const { return direct_fd_.get() >= 0; }
  // Bytes AppendDirect's data, length and the file offset must be multiples of.
  // Appends like Append. With EnableDirect, a kDirectAlign-aligned `data`, a length that
  // is a multiple of it and an aligned file offset (bytes_written(), buffered bytes
  // included: they are flushed first), the bytes go to the file with O_DIRECT (the
  // caller's buffer is written as it is, no copy); otherwise they go through Append.
  Status AppendDirect(const void* data, int64_t length_bytes);
  // Appends zero bytes until the size is a multiple of `alignment`.
  Status PadTo(int64_t alignment);
  int64_t bytes_written() const { return bytes_written_; }
  // xxh64 of every byte appended so far (streamed, so no re-read is needed).
  uint64_t xxh64() const { return hash_.Digest(); }
  const std::string& final_path() const { return final_path_; }

  // Flush, fsync, rename to the final name, fsync the directory.
  Status Close();
  // Drops the temporary file without touching the final name.
  void Abandon();

 private:
  AtomicFileWriter(std::string final_path, std::string temp_path, UniqueFd fd);
  Status Flush();

  std::string final_path_;
  std::string temp_path_;
  UniqueFd fd_;
  UniqueFd direct_fd_;  // O_DIRECT descriptor of the same file (EnableDirect), else -1
  std::vector<char> buffer_;
  int64_t bytes_written_ = 0;
  Xxh64 hash_;
  bool closed_ = false;
};

// Writes `data` to `path` atomically.
Status WriteFileAtomically(const std::string& path, const std::string& data);
// fsync a directory (after renames inside it).
Status SyncDirectory(const std::string& dir);

// Before rewriting a directory whose manifest is written last (a neighbor cache, a trace
// directory): when `manifest_path` exists, refuse with kAlreadyExists "<path> exists:
// refusing to overwrite <what> (use --force)" unless `force`, in which case the manifest
// is removed (and the removal synced) first, so a crash mid-rewrite never leaves an old
// manifest describing new, half-written files.
Status RemoveManifestBeforeRewrite(const std::string& manifest_path, bool force,
                                   const std::string& what);

}  // namespace seer
