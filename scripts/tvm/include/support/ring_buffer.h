/* webdlpack: a growable byte FIFO, the RPC endpoint's reader and writer queues. */
#ifndef WEBDLPACK_TVM_SHIM_SUPPORT_RING_BUFFER_H_
#define WEBDLPACK_TVM_SHIM_SUPPORT_RING_BUFFER_H_
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace tvm {
namespace support {

/*! \brief Bytes written at the back, read from the front; grows as needed. */
class RingBuffer {
 public:
  /*! \brief Bytes waiting to be read. */
  size_t bytes_available() const { return size_; }

  /*! \brief Make room for at least `n` bytes in all. */
  void Reserve(size_t n) {
    if (n <= data_.size()) return;
    std::vector<char> grown(std::max(n, data_.size() * 2));
    CopyOut(grown.data(), size_);
    data_.swap(grown);
    head_ = 0;
  }

  /*! \brief Take `size` bytes from the front (the caller checked they are there). */
  void Read(void *out, size_t size) {
    CopyOut(static_cast<char *>(out), size);
    Drop(size);
  }

  /*! \brief Append `size` bytes. */
  void Write(const void *in, size_t size) {
    Reserve(size_ + size);
    const char *src = static_cast<const char *>(in);
    for (size_t done = 0; done < size;) {
      size_t tail = (head_ + size_) % data_.size();
      size_t n = std::min(size - done, data_.size() - tail);
      if (tail < head_) n = std::min(n, head_ - tail);
      std::memcpy(data_.data() + tail, src + done, n);
      done += n;
      size_ += n;
    }
  }

  /*! \brief Give up to `max_nbytes` front bytes to `send(ptr, n) -> sent`; drops what was sent. */
  template <typename F>
  size_t ReadWithCallback(F send, size_t max_nbytes) {
    size_t n = std::min({max_nbytes, size_, data_.size() - head_});
    if (n == 0) return 0;
    size_t sent = send(data_.data() + head_, n);
    Drop(sent);
    return sent;
  }

  /*! \brief Let `recv(ptr, n) -> received` append up to `max_nbytes` bytes. */
  template <typename F>
  size_t WriteWithCallback(F recv, size_t max_nbytes) {
    std::vector<char> scratch(max_nbytes);
    size_t got = recv(scratch.data(), max_nbytes);
    Write(scratch.data(), got);
    return got;
  }

 private:
  void CopyOut(char *out, size_t size) const {
    for (size_t done = 0; done < size;) {
      size_t at = (head_ + done) % data_.size();
      size_t n = std::min(size - done, data_.size() - at);
      std::memcpy(out + done, data_.data() + at, n);
      done += n;
    }
  }

  void Drop(size_t n) {
    size_ -= n;
    head_ = size_ == 0 ? 0 : (head_ + n) % data_.size();
  }

  std::vector<char> data_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace support
}  // namespace tvm
#endif
