// AlignedBuffer: move-only heap buffer whose start is aligned (default 4096 bytes,
// what O_DIRECT needs). Size is rounded up to the alignment. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace seer {

class AlignedBuffer {
 public:
  static constexpr size_t kDefaultAlignment = 4096;

  AlignedBuffer() = default;
  // Allocates at least size_bytes (rounded up to alignment); throws std::bad_alloc.
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
  size_t size() const { return size_; }
  size_t alignment() const { return alignment_; }
  bool empty() const { return size_ == 0; }
  // Grows (never shrinks) to hold at least size_bytes; contents are not preserved.
  void EnsureCapacity(size_t size_bytes);

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  size_t alignment_ = kDefaultAlignment;
};

inline int64_t AlignDown(int64_t value, int64_t alignment) { return value / alignment * alignment; }
inline int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace seer
