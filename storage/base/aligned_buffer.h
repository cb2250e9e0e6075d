// AlignedBuffer: the one move-only heap buffer whose start is aligned (default 4096 bytes,
// what O_DIRECT needs: kDirectAlign). Its size is always a multiple of the alignment.
// Used by every O_DIRECT path: the io_uring reader, the trace files, prep's spill and
// staging files. Not thread-safe; one owner at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace seer {

// O_DIRECT alignment of buffers, file offsets and lengths (the largest usual logical
// block size). Every O_DIRECT writer and reader in Seer uses this one value.
inline constexpr int64_t kDirectAlign = 4096;

inline constexpr int64_t AlignDown(int64_t value, int64_t alignment = kDirectAlign) {
  return value / alignment * alignment;
}
inline constexpr int64_t AlignUp(int64_t value, int64_t alignment = kDirectAlign) {
  return (value + alignment - 1) / alignment * alignment;
}

class AlignedBuffer {
 public:
  static constexpr size_t kDefaultAlignment = static_cast<size_t>(kDirectAlign);

  AlignedBuffer() = default;
  // Allocates at least size_bytes (rounded up to alignment; 0 allocates nothing);
  // throws std::bad_alloc.
  explicit AlignedBuffer(size_t size_bytes, size_t alignment = kDefaultAlignment);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        alignment_(other.alignment_) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  char* data() { return static_cast<char*>(data_); }
  const char* data() const { return static_cast<const char*>(data_); }
  template <typename T>
  T* as() { return static_cast<T*>(data_); }
  template <typename T>
  const T* as() const { return static_cast<const T*>(data_); }
  // Bytes allocated (a multiple of alignment()).
  size_t size() const { return size_; }
  size_t alignment() const { return alignment_; }
  bool empty() const { return size_ == 0; }
  // Grows (never shrinks) to hold at least max(size_bytes, 1) bytes; the contents are
  // NOT preserved when it grows. std::bad_alloc when the allocation fails.
  void Reserve(int64_t size_bytes);
  // Frees the memory (size() becomes 0; the alignment is kept).
  void Release();

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  size_t alignment_ = kDefaultAlignment;
};

}  // namespace seer
