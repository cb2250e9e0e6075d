// File helpers over raw descriptors and paths: size, full pread/pwrite/write loops
// (short transfers and EINTR handled), mkdir -p, and reading a small file whole. Every
// error is a Status naming the path (and the offset for positioned reads).
#pragma once

#include <cstdint>
#include <string>

#include "storage/base/status.h"

namespace seer {

// Size of an open file in bytes.
Result<int64_t> FileSizeBytes(int fd, const std::string& path_for_errors);
Result<int64_t> FileSizeBytes(const std::string& path);

// pread/pwrite loops that handle short transfers and EINTR; a pread that hits EOF
// before `length_bytes` returns kUnexpectedEof naming the path and offset.
Status PreadFull(int fd, void* dest, int64_t length_bytes, int64_t offset_bytes,
                 const std::string& path_for_errors);
Status PwriteFull(int fd, const void* src, int64_t length_bytes, int64_t offset_bytes,
                  const std::string& path_for_errors);
Status WriteFull(int fd, const void* src, int64_t length_bytes,
                 const std::string& path_for_errors);

// mkdir -p: creates `dir` and its missing parents; an existing directory is fine,
// an existing non-directory is kInvalidArgument naming it.
Status MakeDirectories(const std::string& dir);

// rm -r: removes `path` (a file, or a directory and everything below it, links not
// followed); a missing path is fine. POSIX nftw, not std::filesystem::remove_all: PyTorch's
// wheels export an older std::filesystem from libtorch.so whose remove_all calls through a
// null PLT slot (a jump to address 0, seen on the H200 with PyTorch 2.11), and the
// dynamic linker binds our calls to it. Errors name the entry that could not go.
Status RemoveTree(const std::string& path);
// Bytes of the regular files at or under `path` (links not followed); 0 when unreadable.
int64_t TreeBytes(const std::string& path);

// Reads a whole (small) file into a string.
Result<std::string> ReadWholeFile(const std::string& path);

}  // namespace seer
