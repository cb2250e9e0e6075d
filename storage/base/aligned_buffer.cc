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

void AlignedBuffer::Reserve(int64_t size_bytes) {
  const size_t want = static_cast<size_t>(size_bytes < 1 ? 1 : size_bytes);
  if (want <= size_) return;
  Release();  // the old block goes first: peak memory is the new block alone
  *this = AlignedBuffer(want, alignment_);
}

void AlignedBuffer::Release() {
  std::free(data_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace seer
