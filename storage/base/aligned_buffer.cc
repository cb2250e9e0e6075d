#include "storage/base/aligned_buffer.h"

#include <cstdlib>
#include <new>

namespace seer {

AlignedBuffer::AlignedBuffer(size_t size_bytes, size_t alignment) : alignment_(alignment) {
  if (size_bytes == 0) return;
  size_t rounded = (size_bytes + alignment - 1) / alignment * alignment;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, rounded) != 0) throw std::bad_alloc();
  data_ = p;
  size_ = rounded;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    alignment_ = other.alignment_;
  }
  return *this;
}

void AlignedBuffer::EnsureCapacity(size_t size_bytes) {
  if (size_bytes <= size_) return;
  *this = AlignedBuffer(size_bytes, alignment_);
}

}  // namespace seer
