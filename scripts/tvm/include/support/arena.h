/* webdlpack: a bump allocator for the RPC endpoint's per-message scratch memory (freed all at once). */
#ifndef WEBDLPACK_TVM_SHIM_SUPPORT_ARENA_H_
#define WEBDLPACK_TVM_SHIM_SUPPORT_ARENA_H_
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace tvm {
namespace support {

/*! \brief Hands out aligned blocks from large chunks; RecycleAll frees every block at once. */
class Arena {
 public:
  Arena() = default;
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;
  ~Arena() { Release(); }

  /*! \brief Room for `count` objects of trivial type T (not constructed). */
  template <typename T>
  T *allocate_(int count = 1) {
    return static_cast<T *>(Allocate(sizeof(T) * static_cast<size_t>(count < 0 ? 0 : count), alignof(T)));
  }

  /*! \brief Forget every block handed out (keeps no chunk). */
  void RecycleAll() { Release(); }

 private:
  static constexpr size_t kChunk = 64 * 1024;

  void *Allocate(size_t size, size_t align) {
    if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
    size_t start = (used_ + align - 1) / align * align;
    if (chunks_.empty() || start + size > capacity_) {
      capacity_ = size > kChunk ? size : kChunk;
      void *chunk = std::malloc(capacity_);
      if (chunk == nullptr) throw std::bad_alloc();
      chunks_.push_back(chunk);
      start = 0;
    }
    used_ = start + size;
    return static_cast<char *>(chunks_.back()) + start;
  }

  void Release() {
    for (void *chunk : chunks_) std::free(chunk);
    chunks_.clear();
    used_ = 0;
    capacity_ = 0;
  }

  std::vector<void *> chunks_;
  size_t used_ = 0;
  size_t capacity_ = 0;
};

}  // namespace support
}  // namespace tvm
#endif
